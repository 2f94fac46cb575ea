/**
 * contract/error-examples.ts: every example the document shows is a body
 * its error schema (contract/errors.ts, pools.ts, webhooks.ts) accepts, and
 * each has its schema named here (a new example without one fails to compile).
 */
import { describe, expect, test } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import type { TSchema } from '@sinclair/typebox';
import { errorExamples, type ErrorExample } from '../../src/contract/error-examples';
import * as e from '../../src/contract/errors';
import { PoolTooManyRequests } from '../../src/contract/pools';
import { WebhookTooManyRequests } from '../../src/contract/webhooks';

const schemaOf: Record<ErrorExample, TSchema> = {
  missingKey: e.Unauthorized, invalidKey: e.Unauthorized, internal: e.InternalError, rate: e.TooManyRequests,
  notJson: e.UnsupportedMediaType, bodySlots: e.ServiceUnavailable, region: e.BadRequest, type: e.BadRequest,
  timeout: e.BadRequest, none: e.BadRequest, jobId: e.InvalidJobId, checkShape: e.BadRequest,
  insufficient: e.InsufficientChecks, jobRunning: e.JobAlreadyRunning, jobCancelled: e.JobCancelled,
  proxies: e.TooLarge, body: e.TooLarge, customUrls: e.TooLarge, shutdown: e.ServiceUnavailable,
  regionDown: e.RegionUnavailable, nodeDown: e.ServiceUnavailable, noJob: e.NotFound, jobEnded: e.JobNotRunning,
  badToken: e.Forbidden, noResult: e.NotFound, linkExpired: e.LinkExpired, noPool: e.NotFound,
  pools: PoolTooManyRequests, poolProxies: e.TooLarge, accountProxies: e.TooLarge, poolShape: e.BadRequest,
  poolPatchShape: e.BadRequest, pageShape: e.BadRequest, noWebhook: e.NotFound, webhooks: WebhookTooManyRequests,
  url: e.BadRequest, private: e.BadRequest, event: e.BadRequest, pool: e.BadRequest, webhookPatchShape: e.BadRequest,
};

describe('the contract\'s error examples', () => {
  for (const [name, example] of Object.entries(errorExamples)) {
    test(`${name} is a body its schema accepts`, () => {
      expect([...Value.Errors(schemaOf[name as ErrorExample], example)].map((x) => `${x.path}: ${x.message}`)).toEqual([]);
    });
  }
  test('a body the schema refuses is caught (the check can fail)', () => {
    expect(Value.Check(e.Unauthorized, { ...errorExamples.missingKey, error: 'Not an auth error' })).toBe(false);
  });
});
