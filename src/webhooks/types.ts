/**
 * Webhooks' words and shapes (DECISIONS "Webhooks"; docs/API.md "Webhooks").
 * Pure: constants and types only. The events, the test event, the URL's
 * length and the deliveries listed are the contract's (src/contract/webhooks.ts).
 *
 *   endpoint   a webhook: an account's URL, the events it wants, the pools
 *              it follows (null: all of them, future ones too)
 *   message    one event, stored in the outbox before its first attempt;
 *              its id is the `webhook-id` of every attempt
 *   delivery   one message to one endpoint: pending -> delivered | failed
 *              (src/webhooks/delivery-states.ts), with its attempts
 */
import type { WebhookBody, WebhookDeliveryBody } from '../contract/webhooks';
import { TEST_EVENT, WEBHOOK_EVENTS } from '../contract/webhooks';

export { MAX_DELIVERIES_LISTED, TEST_EVENT, WEBHOOK_EVENTS, WEBHOOK_URL_MAX } from '../contract/webhooks';

/** An event an endpoint may ask for. */
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
/** What an endpoint gets when it names none: the three pool events (check.completed only when named). */
export const DEFAULT_WEBHOOK_EVENTS: readonly WebhookEvent[] = Object.freeze(['pool.proxies_changed', 'pool.paused', 'pool.resumed']);
/** What a message is: an event, or the test event (POST /webhooks/{id}/test). */
export type MessageType = WebhookEvent | typeof TEST_EVENT;

/** Endpoints per account (DECISIONS: at most 10; 429 with `limit` past it). */
export const MAX_WEBHOOKS_PER_ACCOUNT = 10;
/** Proxies in one pool.proxies_changed message (ups and downs together); a larger batch is several messages. */
export const MAX_PROXIES_PER_MESSAGE = 1000;

export type WebhookState = 'enabled' | 'disabled';
export type DeliveryState = 'pending' | 'delivered' | 'failed';

/** The endpoint object (no secret: that is shown only by create and rotate-secret), one delivery and its attempts: the contract's (src/contract/webhooks.ts). */
export type WebhookObject = WebhookBody;
export type DeliveryObject = WebhookDeliveryBody;
export type Attempt = WebhookDeliveryBody['attempts'][number];

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
