/**
 * The OpenAPI content of the webhooks (src/http/routes/webhooks.ts): each
 * route's `detail` and `response` (webhookDocs: descriptions, answers with examples; its
 * path parameter and body the plugin writes from the route's schemas),
 * the Webhooks tag, the events your URL receives (OpenAPI 3.1 `webhooks`;
 * their payloads, like every schema, are the contract's: src/contract/webhooks.ts),
 * and withWebhooks(), which docs.ts applies to the document after withPools().
 */
import { Type as t } from '@sinclair/typebox';
import { MAX_DELIVERIES_LISTED, MAX_WEBHOOKS_PER_ACCOUNT } from '../webhooks/types';
import { errorExamples as X } from '../contract/error-examples';
import { webhookPayloads } from '../contract/webhooks';
import { bodyErrors, E400, err, keyed200, keyed204, keyedErrors, keyedOperations, pick, too } from './openapi';

const E404 = err(X.noWebhook, 'No webhook with this id in this account (another account\'s answers the same)', 'NotFound');
const E413 = err(X.body, 'Body over MAX_BODY_BYTES', 'TooLarge');
const BAD = pick('url', 'private', 'event', 'pool');
const E429_WEBHOOKS = too(`Over the account's request rate (Retry-After), or (POST) the account has ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks (\`limit\`, no Retry-After: delete one)`, 'WebhookTooManyRequests', pick('webhooks'));
const one = (path: string, methods: string) => keyedErrors(path, methods, E404);

export const webhookDocs = keyedOperations('Webhooks', {
  create: {
    operationId: 'createWebhook',
    summary: 'Add a webhook: events pushed to your URL, signed (Standard Webhooks)',
    description:
      'Each delivery is `POST url` with `{type, timestamp, data}` and the headers `webhook-id` (the same on every retry), `webhook-timestamp` and `webhook-signature` (`v1,<base64 HMAC-SHA256>`). Verify it with any Standard Webhooks library and the `secret`, which is shown only in this answer (and by rotate-secret). Retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (+-10 %); a webhook with no success for 3 days of attempts is disabled.',
    responses: {
      '201': keyed200('WebhookCreated', 'The new webhook and its secret (shown only here)', { Location: t.String({ description: '/webhooks/{id}' }) }),
      '400': E400(BAD),
      ...keyedErrors('/webhooks', 'GET, POST'),
      ...bodyErrors(E413),
      '429': E429_WEBHOOKS,
    },
  },
  list: {
    operationId: 'listWebhooks',
    summary: 'The account\'s webhooks',
    responses: { '200': keyed200('WebhookList', 'Oldest first'), ...keyedErrors('/webhooks', 'GET, POST') },
  },
  get: {
    operationId: 'getWebhook',
    summary: 'One webhook',
    responses: { '200': keyed200('Webhook', 'The webhook'), ...one('/webhooks/{id}', 'GET, PATCH, DELETE') },
  },
  update: {
    operationId: 'updateWebhook',
    summary: 'Change a webhook: url, events, pools, or enable / disable it',
    description: '`state: "enabled"` after it was disabled clears `disabled_reason`; its waiting deliveries go out again.',
    responses: {
      '200': keyed200('Webhook', 'The webhook after the change'),
      '400': E400({ none: X.webhookPatchShape, ...BAD }),
      ...one('/webhooks/{id}', 'GET, PATCH, DELETE'),
      ...bodyErrors(E413),
    },
  },
  delete: {
    operationId: 'deleteWebhook',
    summary: 'Delete a webhook (its deliveries go with it)',
    responses: { '204': keyed204('Deleted'), ...one('/webhooks/{id}', 'GET, PATCH, DELETE') },
  },
  test: {
    operationId: 'testWebhook',
    summary: 'Send a webhook.test event now',
    description: 'Written to the outbox and sent at once, retried like any message; see GET /webhooks/{id}/deliveries.',
    responses: { '202': keyed200('WebhookTestSent', 'Queued'), ...one('/webhooks/{id}/test', 'POST') },
  },
  rotate: {
    operationId: 'rotateWebhookSecret',
    summary: 'A new signing secret; the old one stops signing at once',
    responses: { '200': keyed200('WebhookSecret', 'The new secret (shown only here)'), ...one('/webhooks/{id}/rotate-secret', 'POST') },
  },
  deliveries: {
    operationId: 'listWebhookDeliveries',
    summary: `The webhook's deliveries, newest first (at most ${MAX_DELIVERIES_LISTED}), with their attempts`,
    responses: { '200': keyed200('WebhookDeliveryList', 'Newest first'), ...one('/webhooks/{id}/deliveries', 'GET') },
  },
});

export const WEBHOOKS_TAG = { name: 'Webhooks', description: 'Pool changes and finished async checks pushed to your URL, signed with Standard Webhooks' };

const delivery = (type: keyof typeof webhookPayloads, summary: string): Record<string, unknown> => ({
  post: {
    operationId: `webhook_${type.replace('.', '_')}`,
    tags: ['Webhooks'],
    summary,
    description:
      'Sent to your URL (`POST`) with the headers `webhook-id` (the same on every retry of this message), `webhook-timestamp` (Unix seconds of this attempt) and `webhook-signature` (`v1,<base64 HMAC-SHA256(secret, id.timestamp.body)>`, Standard Webhooks). Answer 2xx within 15 s; anything else is retried.',
    parameters: ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => ({ name, in: 'header', required: true, schema: { type: 'string' } })),
    requestBody: { required: true, content: { 'application/json': { schema: webhookPayloads[type] } } },
    responses: { '2XX': { description: 'Delivered' } },
  },
});

/** The events as OpenAPI 3.1 `webhooks`: what your URL receives. */
export const webhookEvents = {
  'pool.proxies_changed': delivery('pool.proxies_changed', "A batch of a pool's proxies went up or down (at most 1 000 a message)"),
  'pool.paused': delivery('pool.paused', 'A pool stopped (its owner, or a round the balance could not pay)'),
  'pool.resumed': delivery('pool.resumed', 'A pool runs again'),
  'check.completed': delivery('check.completed', 'A check submitted async ended'),
  'webhook.test': delivery('webhook.test', 'POST /webhooks/{id}/test'),
};

/** The document with the webhooks' tag and events (`webhooks`; the routes' operations are generated from them, with webhookDocs as their `detail`); their schemas are the contract's (src/contract/webhooks.ts). */
export function withWebhooks<D extends { tags: { name: string; description: string }[]; paths: Record<string, unknown> }>(doc: D): D {
  return { ...doc, tags: [...doc.tags, WEBHOOKS_TAG], webhooks: webhookEvents };
}
