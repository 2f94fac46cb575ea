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
import { webhookPayloads } from '../contract/webhooks';
import { answer, E401, E405, E415, E429, E500, E503_BODIES, err, keyed200, keyed204, operations, security, too } from './openapi';

const E404 = err({ error: 'Not found', message: 'No webhook with this id in this account' }, 'No webhook with this id in this account (another account\'s answers the same)', 'NotFound');
const E413 = err({ error: 'Payload too large', message: 'The request body may be at most 16777216 bytes (server setting MAX_BODY_BYTES)', max: 16777216 }, 'Body over MAX_BODY_BYTES', 'TooLarge');
const E400 = (examples: Record<string, string>) =>
  answer('BadRequest', 'Invalid input', { examples: Object.fromEntries(Object.entries(examples).map(([k, v]) => [k, { error: 'Invalid request', message: v }])) });
const BAD = {
  url: 'url: expected an http or https URL',
  private: 'url: 10.0.0.5 is in a private, loopback or reserved range; refused unless the server sets ALLOW_PRIVATE_TARGETS=true',
  event: 'events[0]: unknown event "proxy.up"; expected one of pool.proxies_changed, pool.paused, pool.resumed, check.completed',
  pool: 'pools[0]: no pool k3v9q2m7x1c8b5n4z6w0 in this account',
};
const E429_WEBHOOKS = too(
  `Over the account's request rate (Retry-After), or (POST) the account has ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks (\`limit\`, no Retry-After: delete one)`,
  'WebhookTooManyRequests',
  { webhooks: { error: 'Too many requests', message: `At most ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks per account; delete one to add another`, limit: MAX_WEBHOOKS_PER_ACCOUNT } },
);
const one = (path: string, methods: string) => ({ '401': E401, '404': E404, '405': E405(path, methods), '429': E429, '500': E500 });

export const webhookDocs = operations({
  create: {
    operationId: 'createWebhook',
    tags: ['Webhooks'],
    summary: 'Add a webhook: events pushed to your URL, signed (Standard Webhooks)',
    description:
      'Each delivery is `POST url` with `{type, timestamp, data}` and the headers `webhook-id` (the same on every retry), `webhook-timestamp` and `webhook-signature` (`v1,<base64 HMAC-SHA256>`). Verify it with any Standard Webhooks library and the `secret`, which is shown only in this answer (and by rotate-secret). Retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (+-10 %); a webhook with no success for 3 days of attempts is disabled.',
    security,
    responses: {
      '201': keyed200('WebhookCreated', 'The new webhook and its secret (shown only here)', { Location: t.String({ description: '/webhooks/{id}' }) }),
      '400': E400(BAD),
      '401': E401,
      '405': E405('/webhooks', 'GET, POST'),
      '413': E413,
      '415': E415,
      '429': E429_WEBHOOKS,
      '500': E500,
      '503': E503_BODIES,
    },
  },
  list: {
    operationId: 'listWebhooks',
    tags: ['Webhooks'],
    summary: 'The account\'s webhooks',
    security,
    responses: { '200': keyed200('WebhookList', 'Oldest first'), '401': E401, '405': E405('/webhooks', 'GET, POST'), '429': E429, '500': E500 },
  },
  get: {
    operationId: 'getWebhook',
    tags: ['Webhooks'],
    summary: 'One webhook',
    security,
    responses: { '200': keyed200('Webhook', 'The webhook'), ...one('/webhooks/{id}', 'GET, PATCH, DELETE') },
  },
  update: {
    operationId: 'updateWebhook',
    tags: ['Webhooks'],
    summary: 'Change a webhook: url, events, pools, or enable / disable it',
    description: '`state: "enabled"` after it was disabled clears `disabled_reason`; its waiting deliveries go out again.',
    security,
    responses: {
      '200': keyed200('Webhook', 'The webhook after the change'),
      '400': E400({ none: 'body: expected at least one of url, events, pools, state', ...BAD }),
      ...one('/webhooks/{id}', 'GET, PATCH, DELETE'),
      '413': E413,
      '415': E415,
      '503': E503_BODIES,
    },
  },
  delete: {
    operationId: 'deleteWebhook',
    tags: ['Webhooks'],
    summary: 'Delete a webhook (its deliveries go with it)',
    security,
    responses: { '204': keyed204('Deleted'), ...one('/webhooks/{id}', 'GET, PATCH, DELETE') },
  },
  test: {
    operationId: 'testWebhook',
    tags: ['Webhooks'],
    summary: 'Send a webhook.test event now',
    description: 'Written to the outbox and sent at once, retried like any message; see GET /webhooks/{id}/deliveries.',
    security,
    responses: { '202': keyed200('WebhookTestSent', 'Queued'), ...one('/webhooks/{id}/test', 'POST') },
  },
  rotate: {
    operationId: 'rotateWebhookSecret',
    tags: ['Webhooks'],
    summary: 'A new signing secret; the old one stops signing at once',
    security,
    responses: { '200': keyed200('WebhookSecret', 'The new secret (shown only here)'), ...one('/webhooks/{id}/rotate-secret', 'POST') },
  },
  deliveries: {
    operationId: 'listWebhookDeliveries',
    tags: ['Webhooks'],
    summary: `The webhook's deliveries, newest first (at most ${MAX_DELIVERIES_LISTED}), with their attempts`,
    security,
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
    parameters: [
      { name: 'webhook-id', in: 'header', required: true, schema: { type: 'string' } },
      { name: 'webhook-timestamp', in: 'header', required: true, schema: { type: 'string' } },
      { name: 'webhook-signature', in: 'header', required: true, schema: { type: 'string' } },
    ],
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
  return {
    ...doc,
    tags: [...doc.tags, WEBHOOKS_TAG],
    webhooks: webhookEvents,
  };
}
