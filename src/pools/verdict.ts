/**
 * What one check result does to a pooled proxy's state, and which event it
 * makes (DECISIONS "Pools", events). Pure.
 *
 * A check's outcome (outcomeOf a ProbeResult):
 *   working    the probe passed
 *   failed     the probe failed on the proxy's account (any error code but one)
 *   not_tried  `checker_overloaded`: this process ran out of a local resource
 *              and never tried the proxy; no verdict, nothing changes
 *
 * The state machine of a proxy's status (every other pair is "no change"):
 *
 *   unchecked ──working──> working     (no event: the first verdict)
 *   unchecked ──failed───> failed      (no event: the first verdict)
 *   failed ────working──> working     proxy.up
 *   working ───failed───> failed      proxy.down
 *   working ───working──> working     (failures back to 0)
 *   failed ────failed───> failed      (failures + 1: the back-off grows)
 *   any ───────not_tried─> the same   (nothing changes; tried again soon)
 *
 * Events are changes between working and failed only. A proxy's FIRST
 * verdict (unchecked -> working or failed) makes no event: a new pool of
 * 100 000 proxies would otherwise open with a burst of proxy.up, one per
 * working proxy, that tells a watcher nothing the round's `round.completed`
 * counts and GET /pools/{id}/proxies do not; a watcher learns the first
 * verdicts there and follows the changes from the events.
 *
 * One failure is enough for proxy.down: a proxy that dies is reported within
 * one interval (+ the probe timeout), as the contract wants; the back-off
 * starts only from the second failure (schedule.ts), so a proxy that failed
 * once is looked at again one interval later. `lastChangeAt` moves whenever
 * the status changes (unchecked -> failed included).
 */
import type { ProbeResult } from '../probe/types';
import type { PoolCounts, ProxyStatus } from './types';

export type CheckOutcome = 'working' | 'failed' | 'not_tried';
export type ProxyEventName = 'proxy.up' | 'proxy.down';

export interface VerdictState {
  status: ProxyStatus;
  /** Consecutive failures (0 unless failed). */
  failures: number;
  /** Epoch ms of the last status change; null while unchecked. */
  lastChangeAt: number | null;
}

export interface VerdictStep {
  next: VerdictState;
  event: ProxyEventName | null;
}

/** The outcome of a probe result for the pool. */
export function outcomeOf(result: Pick<ProbeResult, 'status' | 'error'>): CheckOutcome {
  if (result.status === 'working') return 'working';
  return result.error?.code === 'checker_overloaded' ? 'not_tried' : 'failed';
}

/** The state after `outcome` at `atMs`, and the event it makes (null: none). */
export function applyVerdict(prev: VerdictState, outcome: CheckOutcome, atMs: number): VerdictStep {
  if (outcome === 'not_tried') return { next: prev, event: null };
  const status: ProxyStatus = outcome;
  const next: VerdictState = {
    status,
    failures: status === 'working' ? 0 : prev.failures + 1,
    lastChangeAt: status === prev.status ? prev.lastChangeAt : atMs,
  };
  let event: ProxyEventName | null = null;
  if (status === 'working' && prev.status === 'failed') event = 'proxy.up';
  else if (status === 'failed' && prev.status === 'working') event = 'proxy.down';
  return { next, event };
}

/** The pool's counts after one proxy moved from `from` to `to` (a new object). */
export function moveCount(counts: PoolCounts, from: ProxyStatus, to: ProxyStatus): PoolCounts {
  if (from === to) return { ...counts };
  return { ...counts, [from]: counts[from] - 1, [to]: counts[to] + 1 };
}
