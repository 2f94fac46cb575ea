/**
 * Validation of POST /webhooks and PATCH /webhooks/{id} bodies (DECISIONS
 * "Webhooks") into typed values. Pure: no I/O, throws ApiError only. The
 * caller has handled Content-Type (415), body size (413) and malformed JSON
 * (400); what needs the database or DNS (the pools are the account's, the
 * URL's name is not a private address, at most 10 endpoints) is the route's,
 * after this.
 *
 * Order of checks (the first failure wins), each a 400 Invalid request
 * "<field>: <what is wrong>":
 *   1. the body is an object
 *   2. url: required (POST), a string of at most 2 048 characters, an http or
 *      https URL with a host (the /check custom URL rule, check-request.ts
 *      httpUrl); a literal private, loopback, link-local or reserved address
 *      is refused here unless ALLOW_PRIVATE_TARGETS
 *   3. events: an array, non-empty, of known event names, no repeats
 *      (default: the three pool events)
 *   4. pools: null (all of the account's pools, future ones too) or an array
 *      of at most 100 pool ids, no repeats (default null)
 *   5. PATCH only: state "enabled" | "disabled"; a body with none of url,
 *      events, pools, state is 400 (a misspelt field is not a silent no-op)
 * Unknown fields are ignored; absent and null mean "not given", except that
 * `pools: null` in a PATCH means "all pools" again.
 */
import { invalidRequest } from './api-errors';
import { httpUrl, isAbsent, isObject } from './check-request';
import { blockedTargetMessage, isBlockedAddress } from '../probe/codec/ssrf';
import { isPoolId } from '../pools/pool-id';
import { DEFAULT_WEBHOOK_EVENTS, WEBHOOK_EVENTS, WEBHOOK_URL_MAX, type WebhookCreate, type WebhookEvent, type WebhookPatch } from '../webhooks/types';

/** Pool ids one endpoint may list: the contract's bound. */
export { MAX_WEBHOOK_POOLS } from '../contract/webhooks';
import { MAX_WEBHOOK_POOLS } from '../contract/webhooks';

export interface WebhookRequestOptions {
  allowPrivateTargets: boolean;
}

const PATCH_FIELDS = Object.freeze(['url', 'events', 'pools', 'state'] as const);

function isIpLiteral(host: string): boolean {
  return /^[0-9.]+$/.test(host) || host.includes(':');
}

function checkUrl(v: unknown, o: WebhookRequestOptions): string {
  if (typeof v === 'string' && v.length > WEBHOOK_URL_MAX) throw invalidRequest(`url: longer than ${WEBHOOK_URL_MAX} characters`);
  const url = httpUrl(v, 'url');
  const u = new URL(url);
  const host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
  if (!o.allowPrivateTargets && isIpLiteral(host) && isBlockedAddress(host)) throw invalidRequest(`url: ${blockedTargetMessage(host)}`);
  return url;
}

function checkEvents(v: unknown): WebhookEvent[] {
  if (!Array.isArray(v) || v.length === 0) throw invalidRequest(`events: expected a non-empty array of ${WEBHOOK_EVENTS.join(', ')}`);
  const seen = new Set<string>();
  return v.map((e: unknown, i) => {
    if (typeof e !== 'string' || !(WEBHOOK_EVENTS as readonly string[]).includes(e)) {
      throw invalidRequest(`events[${i}]: unknown event ${JSON.stringify(e)}; expected one of ${WEBHOOK_EVENTS.join(', ')}`);
    }
    if (seen.has(e)) throw invalidRequest(`events[${i}]: ${e} given twice`);
    seen.add(e);
    return e as WebhookEvent;
  });
}

function checkPools(v: unknown): string[] | null {
  if (v === null) return null;
  if (!Array.isArray(v) || v.length > MAX_WEBHOOK_POOLS) throw invalidRequest(`pools: expected null or an array of at most ${MAX_WEBHOOK_POOLS} pool ids`);
  const seen = new Set<string>();
  return v.map((p: unknown, i) => {
    if (typeof p !== 'string' || !isPoolId(p)) throw invalidRequest(`pools[${i}]: expected a pool id`);
    if (seen.has(p)) throw invalidRequest(`pools[${i}]: ${p} given twice`);
    seen.add(p);
    return p;
  });
}

export function validateWebhookCreate(json: unknown, o: WebhookRequestOptions): WebhookCreate {
  if (!isObject(json)) throw invalidRequest('body: expected a JSON object');
  const url = checkUrl(json.url, o);
  const events = isAbsent(json.events) ? [...DEFAULT_WEBHOOK_EVENTS] : checkEvents(json.events);
  const pools = isAbsent(json.pools) ? null : checkPools(json.pools);
  return { url, events, pools };
}

export function validateWebhookPatch(json: unknown, o: WebhookRequestOptions): WebhookPatch {
  if (!isObject(json)) throw invalidRequest('body: expected a JSON object');
  if (!PATCH_FIELDS.some((f) => f in json && (f === 'pools' || !isAbsent(json[f])))) throw invalidRequest(`body: expected at least one of ${PATCH_FIELDS.join(', ')}`);
  const patch: WebhookPatch = {};
  if (!isAbsent(json.url)) patch.url = checkUrl(json.url, o);
  if (!isAbsent(json.events)) patch.events = checkEvents(json.events);
  if ('pools' in json && json.pools !== undefined) patch.pools = checkPools(json.pools);
  if (!isAbsent(json.state)) {
    if (json.state !== 'enabled' && json.state !== 'disabled') throw invalidRequest('state: expected "enabled" or "disabled"');
    patch.state = json.state;
  }
  return patch;
}
