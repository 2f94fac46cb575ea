/**
 * The events of a pool (DECISIONS "Pools"): the messages `GET /ws?pool={id}`
 * streams, `{pool, event, at, proxy?, counts}`. Pure builders; the verdict
 * that makes proxy.up / proxy.down is verdict.ts's, the round decisions that
 * make pool.paused / pool.resumed are round.ts's.
 *
 *   proxy.up         a failed proxy passed (a first check that passes is no
 *                    event: verdict.ts); `proxy` is its address, plus `responseTime`
 *   proxy.down       a working proxy failed; plus `error {code, message}`
 *   round.completed  a round's results are all in; plus `round {checked,
 *                    working, failed, not_tried, charged}`
 *   pool.paused      the pool stopped: `reason` "insufficient_checks" (a round
 *                    the balance could not pay, with `required`, `available`)
 *                    or "owner"
 *   pool.resumed     the pool runs again
 *
 * `counts` are the pool's counts right after the event; `at` an ISO 8601
 * time. The fields after `counts` are additions to the contract's shape.
 */
import type { ProbeError } from '../probe/types';
import type { ProxyAddress } from '../proxy/types';
import { formatResponseTime } from '../results/format';
import { addressObject, type ProxyAddressObject } from './shape';
import type { PausedReason, PoolCounts } from './types';
import type { ProxyEventName } from './verdict';

export const POOL_EVENT_NAMES = Object.freeze(['proxy.up', 'proxy.down', 'round.completed', 'pool.paused', 'pool.resumed'] as const);
export type PoolEventName = (typeof POOL_EVENT_NAMES)[number];

export interface RoundTally {
  checked: number;
  working: number;
  failed: number;
  not_tried: number;
  charged: number;
}

export interface PoolEvent {
  pool: string;
  event: PoolEventName;
  at: string;
  proxy?: ProxyAddressObject;
  counts: PoolCounts;
  responseTime?: string;
  error?: { code: string; message: string };
  round?: RoundTally;
  reason?: PausedReason;
  required?: number;
  available?: number;
}

const base = (pool: string, event: PoolEventName, atMs: number, counts: PoolCounts): PoolEvent => ({
  pool,
  event,
  at: new Date(atMs).toISOString(),
  counts: { ...counts },
});

/** proxy.up (with the passing check's time) or proxy.down (with its error). */
export function proxyEvent(
  pool: string,
  event: ProxyEventName,
  atMs: number,
  address: ProxyAddress,
  counts: PoolCounts,
  detail: { responseTimeMs?: number; error?: Pick<ProbeError, 'code' | 'message'> | null },
): PoolEvent {
  const e = base(pool, event, atMs, counts);
  e.proxy = addressObject(address);
  if (event === 'proxy.up' && detail.responseTimeMs !== undefined) e.responseTime = formatResponseTime(detail.responseTimeMs);
  if (event === 'proxy.down' && detail.error) e.error = { code: detail.error.code, message: detail.error.message };
  return e;
}

export function roundCompletedEvent(pool: string, atMs: number, counts: PoolCounts, round: RoundTally): PoolEvent {
  return { ...base(pool, 'round.completed', atMs, counts), round: { ...round } };
}

export function pausedEvent(pool: string, atMs: number, counts: PoolCounts, reason: PausedReason, shortfall?: { required: number; available: number }): PoolEvent {
  const e: PoolEvent = { ...base(pool, 'pool.paused', atMs, counts), reason };
  if (shortfall !== undefined) {
    e.required = shortfall.required;
    e.available = shortfall.available;
  }
  return e;
}

export function resumedEvent(pool: string, atMs: number, counts: PoolCounts): PoolEvent {
  return base(pool, 'pool.resumed', atMs, counts);
}
