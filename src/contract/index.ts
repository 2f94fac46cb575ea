/**
 * The API contract, one schema per shape (TypeBox: Elysia's `t`): the
 * component schemas of the OpenAPI document served at /docs/json, and
 * through Static<> the types of the server, the CLI and the dashboard (which
 * imports these modules for their types only: .dependency-cruiser.cjs).
 * Small files by area: checks, jobs, pools, service (regions, health,
 * judge), me, ws (the WebSocket messages), webhooks (with the events an
 * endpoint receives), errors; bounds.ts holds the
 * request bounds the validators enforce.
 */
import * as checks from './checks';
import * as errors from './errors';
import * as jobs from './jobs';
import * as me from './me';
import * as pools from './pools';
import * as service from './service';
import * as webhooks from './webhooks';
import * as ws from './ws';

/** The document's `components.schemas`, by name. */
export const componentSchemas = {
  Error: errors.ErrorBody,
  BadRequest: errors.BadRequest,
  InvalidJobId: errors.InvalidJobId,
  Unauthorized: errors.Unauthorized,
  InsufficientChecks: errors.InsufficientChecks,
  Forbidden: errors.Forbidden,
  NotFound: errors.NotFound,
  MethodNotAllowed: errors.MethodNotAllowed,
  JobAlreadyRunning: errors.JobAlreadyRunning,
  LinkExpired: errors.LinkExpired,
  JobCancelled: errors.JobCancelled,
  JobNotRunning: errors.JobNotRunning,
  TooLarge: errors.TooLarge,
  UnsupportedMediaType: errors.UnsupportedMediaType,
  InternalError: errors.InternalError,
  ServiceUnavailable: errors.ServiceUnavailable,
  RegionUnavailable: errors.RegionUnavailable,
  TooManyRequests: errors.TooManyRequests,
  CustomUrl: checks.CustomUrl,
  CheckBody: checks.CheckBody,
  SubscriptionDetail: checks.SubscriptionDetail,
  Summary: checks.Summary,
  CheckMetadata: checks.CheckMetadata,
  CheckResponse: checks.CheckResponse,
  CheckAccepted: jobs.CheckAccepted,
  CheckJob: jobs.CheckJob,
  ProxyRecord: checks.ProxyRecord,
  SamplesBlock: checks.SamplesBlock,
  CustomUrlValidation: checks.CustomUrlValidation,
  InvalidLine: checks.InvalidLine,
  ProxyRef: checks.ProxyRef,
  ResultFile: checks.ResultFile,
  Me: me.Me,
  RegionList: service.RegionList,
  Health: service.Health,
  JudgeEcho: service.JudgeEcho,
  ProgressMessage: ws.ProgressMessage,
  PoolSource: pools.PoolSource,
  Pool: pools.Pool,
  PoolChanged: pools.PoolChanged,
  PoolList: pools.PoolList,
  PoolProxy: pools.PoolProxy,
  PoolProxyPage: pools.PoolProxyPage,
  PoolCreateBody: pools.PoolCreateBody,
  PoolPatchBody: pools.PoolPatchBody,
  PoolTooManyRequests: pools.PoolTooManyRequests,
  Webhook: webhooks.Webhook,
  WebhookCreated: webhooks.WebhookCreated,
  WebhookList: webhooks.WebhookList,
  WebhookSecret: webhooks.WebhookSecret,
  WebhookTestSent: webhooks.WebhookTestSent,
  WebhookDelivery: webhooks.WebhookDelivery,
  WebhookDeliveryList: webhooks.WebhookDeliveryList,
  WebhookCreateBody: webhooks.WebhookCreateBody,
  WebhookPatchBody: webhooks.WebhookPatchBody,
  WebhookTooManyRequests: webhooks.WebhookTooManyRequests,
} as const;
export type ComponentName = keyof typeof componentSchemas;
