/**
 * The webhooks' shapes (DECISIONS "Webhooks"; src/http/routes/webhooks.ts):
 * the endpoint object (with its secret once), the deliveries, the request
 * bodies, and the events an endpoint's URL receives (the document's
 * `webhooks`: test/e2e/webhooks.test.ts checks real deliveries against them).
 */
import { Type as t, type Static, type TSchema } from '@sinclair/typebox';
import { POOL_ID_PATTERN } from '../pools/pool-id';
import { closed, CodeMessage, dateTime, dateTimeOrNull, errorBody, int0, oneOf, orNull, ProxyAddress } from './common';
import { TooManyRequests } from './errors';
import { PAUSED_REASONS, PoolCounts } from './pools';

/** The examples the document shows on these schemas (OpenAPI `examples`). */
export const WEBHOOK_EXAMPLE = {
  id: 'wh_k3v9q2m7x1c8b5n4z6w0',
  url: 'https://hooks.example.com/proxycheck',
  events: ['pool.proxies_changed', 'pool.paused', 'pool.resumed'],
  pools: null,
  state: 'enabled',
  disabled_reason: null,
  created_at: '2026-11-22T10:00:00.000Z',
  last_success_at: '2026-11-22T10:10:00.000Z',
};
export const SECRET_EXAMPLE = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw6gOSD7yTA4Y=';
export const DELIVERY_EXAMPLE = {
  id: 'msg_2k9d8f7g6h5j4k3l2m1n0p9q',
  event: 'pool.proxies_changed',
  created_at: '2026-11-22T10:10:00.000Z',
  attempts: [
    { at: '2026-11-22T10:10:00.120Z', status: 500, error: 'HTTP 500', duration_ms: 41 },
    { at: '2026-11-22T10:10:05.310Z', status: 204, error: null, duration_ms: 12 },
  ],
  state: 'delivered',
  next_attempt_at: null,
};

/** The events an endpoint may ask for. */
export const WEBHOOK_EVENTS = Object.freeze(['pool.proxies_changed', 'pool.paused', 'pool.resumed', 'check.completed'] as const);
/** The event POST /webhooks/{id}/test sends (to that endpoint only, whatever it subscribed to). */
export const TEST_EVENT = 'webhook.test';
/** The longest URL an endpoint may have. */
export const WEBHOOK_URL_MAX = 2048;
/** GET /webhooks/{id}/deliveries: the newest this many. */
export const MAX_DELIVERIES_LISTED = 100;
/** Pools one endpoint may follow by id. */
export const MAX_WEBHOOK_POOLS = 100;
export const WEBHOOK_ID_PATTERN = '^wh_[a-z0-9]{20}$';
const WEBHOOK_STATES = ['enabled', 'disabled'] as const;

const events = () => t.Array(oneOf(WEBHOOK_EVENTS), { minItems: 1, uniqueItems: true });
const pools = () =>
  orNull(t.Array(t.String({ pattern: POOL_ID_PATTERN }), { maxItems: MAX_WEBHOOK_POOLS }), { description: 'null: all of the account\'s pools, future ones too' });
const secret = () => t.String({ pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$', description: 'The signing secret (Standard Webhooks); shown only here' });
const webhookId = () => t.String({ pattern: WEBHOOK_ID_PATTERN });

const webhookProperties = {
  id: webhookId(),
  url: t.String({ format: 'uri', maxLength: WEBHOOK_URL_MAX }),
  events: events(),
  pools: pools(),
  state: oneOf(WEBHOOK_STATES),
  disabled_reason: orNull(t.String(), { description: 'Why it is disabled (3 days of attempts without a success, or its owner); null while enabled' }),
  created_at: dateTime(),
  last_success_at: dateTimeOrNull({ description: 'When it last answered a delivery with a 2xx (to the minute)' }),
};

export const Webhook = t.Object(webhookProperties, { ...closed, examples: [WEBHOOK_EXAMPLE] });
export type WebhookBody = Static<typeof Webhook>;
export const WebhookCreated = t.Object({ ...webhookProperties, secret: secret() }, { ...closed, examples: [{ ...WEBHOOK_EXAMPLE, last_success_at: null, secret: SECRET_EXAMPLE }] });
export const WebhookList = t.Object({ webhooks: t.Array(Webhook) }, { ...closed, examples: [{ webhooks: [WEBHOOK_EXAMPLE] }] });
export const WebhookSecret = t.Object({ id: webhookId(), secret: secret() }, { ...closed, examples: [{ id: WEBHOOK_EXAMPLE.id, secret: SECRET_EXAMPLE }] });
export const WebhookTestSent = t.Object({ id: webhookId(), event: t.Literal(TEST_EVENT) }, { ...closed, examples: [{ id: WEBHOOK_EXAMPLE.id, event: 'webhook.test' }] });

export const WebhookAttempt = t.Object(
  {
    at: dateTime(),
    status: orNull(t.Integer(), { description: 'The HTTP status answered; null when none came' }),
    error: orNull(t.String(), { description: 'null on a 2xx; else what went wrong (HTTP 500, timeout, connect_failed, blocked_target, redirect not followed, ...)' }),
    duration_ms: int0(),
  },
  closed,
);
export const WebhookDelivery = t.Object(
  {
    id: t.String({ description: 'The message id: the webhook-id header of every attempt' }),
    event: oneOf([...WEBHOOK_EVENTS, TEST_EVENT] as const),
    created_at: dateTime(),
    attempts: t.Array(WebhookAttempt),
    state: oneOf(['pending', 'delivered', 'failed'] as const),
    next_attempt_at: dateTimeOrNull({ description: 'When it is tried next (pending only)' }),
  },
  closed,
);
export type WebhookDeliveryBody = Static<typeof WebhookDelivery>;
export const WebhookDeliveryList = t.Object({ deliveries: t.Array(WebhookDelivery, { maxItems: MAX_DELIVERIES_LISTED }) }, { ...closed, examples: [{ deliveries: [DELIVERY_EXAMPLE] }] });

export const WebhookCreateBody = t.Object(
  {
    url: t.String({ maxLength: WEBHOOK_URL_MAX }),
    events: t.Optional(t.Array(oneOf(WEBHOOK_EVENTS), { minItems: 1, uniqueItems: true, description: 'Default: the three pool events' })),
    pools: t.Optional(pools()),
  },
  { examples: [{ url: 'https://hooks.example.com/proxycheck', events: ['pool.proxies_changed', 'check.completed'] }] },
);
export const WebhookPatchBody = t.Object(
  { url: t.Optional(t.String({ maxLength: WEBHOOK_URL_MAX })), events: t.Optional(events()), pools: t.Optional(pools()), state: t.Optional(oneOf(WEBHOOK_STATES)) },
  { minProperties: 1, examples: [{ state: 'enabled' }] },
);
export const WebhookTooManyRequests = t.Union([TooManyRequests, errorBody(t.Literal('Too many requests'), { limit: int0() })]);
export const WebhookIdParams = t.Object({ id: t.String({ pattern: WEBHOOK_ID_PATTERN, description: 'The webhook\'s id' }) });

// ---- what an endpoint's URL receives ------------------------------------------------------

/** `{type, timestamp, data}`: every message. */
/** An event's payload (`example`: the document's). */
const envelope = <D extends TSchema>(type: string, data: D, example: unknown) =>
  t.Object({ type: t.Literal(type), timestamp: dateTime({ description: 'When the event happened' }), data }, { ...closed, examples: [example] });
// counts stay open: the pools may add to them
const counts = () => t.Object(PoolCounts.properties);

export const webhookPayloads = {
  'pool.proxies_changed': envelope(
    'pool.proxies_changed',
    t.Object(
      {
        pool: t.String(),
        up: t.Array(t.Object({ proxy: ProxyAddress, at: dateTime() }, closed)),
        down: t.Array(t.Object({ proxy: ProxyAddress, at: dateTime(), error: orNull(CodeMessage) }, closed)),
        counts: counts(),
        part: t.Object({ index: t.Integer({ minimum: 1 }), of: t.Integer({ minimum: 1 }) }, closed),
      },
      closed,
    ),
    {
      type: 'pool.proxies_changed',
      timestamp: '2026-11-22T10:10:00.000Z',
      data: { pool: 'k3v9q2m7x1c8b5n4z6w0', up: [], down: [{ proxy: { host: '203.0.113.7', port: 8080, hasAuth: false }, at: '2026-11-22T10:09:58.000Z', error: { code: 'timeout', message: 'timeout: no answer within 5000 ms' } }], counts: { total: 3, working: 2, failed: 1, unchecked: 0 }, part: { index: 1, of: 1 } },
    },
  ),
  'pool.paused': envelope(
    'pool.paused',
    t.Object(
      { pool: t.String(), at: dateTime(), counts: counts(), reason: oneOf(PAUSED_REASONS), required: t.Optional(int0()), available: t.Optional(int0()) },
      closed,
    ),
    {
      type: 'pool.paused',
      timestamp: '2026-11-22T10:12:00.000Z',
      data: { pool: 'k3v9q2m7x1c8b5n4z6w0', at: '2026-11-22T10:12:00.000Z', counts: { total: 3, working: 2, failed: 1, unchecked: 0 }, reason: 'owner' },
    },
  ),
  'pool.resumed': envelope('pool.resumed', t.Object({ pool: t.String(), at: dateTime(), counts: counts() }, closed), {
    type: 'pool.resumed',
    timestamp: '2026-11-22T10:20:00.000Z',
    data: { pool: 'k3v9q2m7x1c8b5n4z6w0', at: '2026-11-22T10:20:00.000Z', counts: { total: 3, working: 2, failed: 1, unchecked: 0 } },
  }),
  'check.completed': envelope(
    'check.completed',
    t.Object(
      {
        jobId: t.String(),
        status: oneOf(['completed', 'failed', 'cancelled'] as const),
        total_checked: int0(),
        total_working: int0(),
        result_url: orNull(t.String(), { description: 'Signed for 12 hours from the end; null unless completed' }),
      },
      closed,
    ),
    { type: 'check.completed', timestamp: '2026-11-22T10:00:12.000Z', data: { jobId: 'my-job-1', status: 'completed', total_checked: 3, total_working: 2, result_url: 'http://127.0.0.1:3000/result/3q2-7wEAAABh1nLpAAAAAA.json?token=5f0c…&expires=1790000000' } },
  ),
  'webhook.test': envelope('webhook.test', t.Object({ webhook: t.String(), at: dateTime() }, closed), {
    type: 'webhook.test',
    timestamp: '2026-11-22T10:00:00.000Z',
    data: { webhook: 'wh_k3v9q2m7x1c8b5n4z6w0', at: '2026-11-22T10:00:00.000Z' },
  }),
} as const;
