/**
 * Pool events on NATS (pure: the subject and the message's codec; no I/O).
 *
 *   API node -> pc.pool.<accountId>   PoolEventsWire (core NATS, no stream)
 *
 * One subject per account: a node subscribes to an account's subject while
 * something on it listens to that account (a `/ws?pool=` subscriber, a
 * gateway working set), so events of accounts nobody follows on a node never
 * reach it. A message carries the publishing node's id (a node drops its own
 * echo: its hub already had the event), the account, and either one event
 * (src/pools/events.ts) or `closed`: the pool was deleted (its subscribers are
 * closed on every node).
 *
 * `decodePoolEventsWire` accepts only what `encodePoolEventsWire` produces
 * (known event names, bounded strings, counts as non-negative integers) and
 * returns null for anything else.
 */
import { POOL_EVENT_NAMES, type PoolEvent } from '../pools/events';
import { isSubjectToken } from './protocol';

export const POOL_EVENTS_WIRE_VERSION = 1;
export const POOL_EVENTS_SUBJECT_PREFIX = 'pc.pool.';
/** Longest encoded message accepted (an event is ~300 bytes). */
export const MAX_POOL_WIRE_BYTES = 16 * 1024;

export type PoolEventsWire =
  | { v: typeof POOL_EVENTS_WIRE_VERSION; node: string; account: string; event: PoolEvent }
  | { v: typeof POOL_EVENTS_WIRE_VERSION; node: string; account: string; closed: string };

/** `pc.pool.<accountId>`; throws on an account id that is not one subject token. */
export function poolEventsSubject(accountId: string): string {
  if (!isSubjectToken(accountId)) throw new Error(`not a subject token: ${JSON.stringify(accountId)}`);
  return `${POOL_EVENTS_SUBJECT_PREFIX}${accountId}`;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

export function encodePoolEventsWire(node: string, account: string, what: { event: PoolEvent } | { closed: string }): Uint8Array {
  const w: PoolEventsWire = 'event' in what ? { v: POOL_EVENTS_WIRE_VERSION, node, account, event: what.event } : { v: POOL_EVENTS_WIRE_VERSION, node, account, closed: what.closed };
  return encoder.encode(JSON.stringify(w));
}

const NAMES = new Set<string>(POOL_EVENT_NAMES);
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStr = (v: unknown, max: number): v is string => typeof v === 'string' && v.length > 0 && v.length <= max;
const isCount = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && v >= 0;

function isEvent(e: unknown): e is PoolEvent {
  if (!isObj(e) || !isStr(e.pool, 64) || typeof e.event !== 'string' || !NAMES.has(e.event) || !isStr(e.at, 64)) return false;
  const c = e.counts;
  return isObj(c) && isCount(c.total) && isCount(c.working) && isCount(c.failed) && isCount(c.unchecked);
}

export function decodePoolEventsWire(bytes: Uint8Array): PoolEventsWire | null {
  if (bytes.byteLength > MAX_POOL_WIRE_BYTES) return null;
  let m: unknown;
  try {
    m = JSON.parse(decoder.decode(bytes));
  } catch {
    return null;
  }
  if (!isObj(m) || m.v !== POOL_EVENTS_WIRE_VERSION || !isSubjectToken(m.node) || !isSubjectToken(m.account)) return null;
  if ('event' in m) return isEvent(m.event) ? { v: POOL_EVENTS_WIRE_VERSION, node: m.node, account: m.account, event: m.event } : null;
  if ('closed' in m) return isStr(m.closed, 64) ? { v: POOL_EVENTS_WIRE_VERSION, node: m.node, account: m.account, closed: m.closed } : null;
  return null;
}
