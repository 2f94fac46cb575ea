/**
 * Webhooks' words and shapes (DECISIONS "Webhooks"; docs/API.md "Webhooks").
 * Pure: constants and types only.
 *
 *   endpoint   a webhook: an account's URL, the events it wants, the pools
 *              it follows (null: all of them, future ones too)
 *   message    one event, stored in the outbox before its first attempt;
 *              its id is the `webhook-id` of every attempt
 *   delivery   one message to one endpoint: pending -> delivered | failed
 *              (src/webhooks/delivery-states.ts), with its attempts
 */

/** The events an endpoint may ask for. */
export const WEBHOOK_EVENTS = Object.freeze(['pool.proxies_changed', 'pool.paused', 'pool.resumed', 'check.completed'] as const);
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
/** What an endpoint gets when it names none: the three pool events (check.completed only when named). */
export const DEFAULT_WEBHOOK_EVENTS: readonly WebhookEvent[] = Object.freeze(['pool.proxies_changed', 'pool.paused', 'pool.resumed']);
/** The event POST /webhooks/{id}/test sends (to that endpoint only, whatever it subscribed to). */
export const TEST_EVENT = 'webhook.test';
export type MessageType = WebhookEvent | typeof TEST_EVENT;

/** Endpoints per account (DECISIONS: at most 10; 429 with `limit` past it). */
export const MAX_WEBHOOKS_PER_ACCOUNT = 10;
/** The longest URL an endpoint may have. */
export const WEBHOOK_URL_MAX = 2048;
/** Proxies in one pool.proxies_changed message (ups and downs together); a larger batch is several messages. */
export const MAX_PROXIES_PER_MESSAGE = 1000;
/** GET /webhooks/{id}/deliveries: the newest this many. */
export const MAX_DELIVERIES_LISTED = 100;

export type WebhookState = 'enabled' | 'disabled';
export type DeliveryState = 'pending' | 'delivered' | 'failed';

/** The public endpoint object (no secret: that is shown only by create and rotate-secret). */
export interface WebhookObject {
  id: string;
  url: string;
  events: WebhookEvent[];
  pools: string[] | null;
  state: WebhookState;
  disabled_reason: string | null;
  created_at: string;
  last_success_at: string | null;
}

/** One attempt as stored and as listed. */
export interface Attempt {
  at: string;
  /** The HTTP status answered; null when none came (refused, timeout, blocked target). */
  status: number | null;
  error: string | null;
  duration_ms: number;
}

export interface DeliveryObject {
  id: string;
  event: string;
  created_at: string;
  attempts: Attempt[];
  state: DeliveryState;
  next_attempt_at: string | null;
}

/** POST /webhooks, validated (src/http/webhook-request.ts). */
export interface WebhookCreate {
  url: string;
  events: WebhookEvent[];
  pools: string[] | null;
}

/** PATCH /webhooks/{id}, validated: only what was given. */
export interface WebhookPatch {
  url?: string;
  events?: WebhookEvent[];
  pools?: string[] | null;
  state?: WebhookState;
}
