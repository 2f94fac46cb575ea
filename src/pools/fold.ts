/**
 * One check result folded into a pooled proxy's row: the verdict
 * (verdict.ts), the history (history.ts), the next due time (schedule.ts)
 * and the fields of the last passing check, in one pure step. The round
 * folds each result it gets, collects the rows and writes them with one
 * statement (proxies-sql.ts applyResultsStatement), and publishes the events.
 *
 * - working: every verdict field from this check (type and protocols,
 *   anonymity, https, origin, geo), the error cleared.
 * - failed: the error from this check; the fields of the last passing check
 *   stay (shape.ts says why).
 * - both: status, failures, last_change_at (verdict.ts), checks + 1,
 *   last_checked_at = now, the last check's status code and response time,
 *   the history with this check, and from it the stored `latency_p50_ms` and
 *   `uptime_h24_ppm` the query filters and sorts by, and the next due time.
 * - not tried (`checker_overloaded`, or a round cut short before the
 *   proxy's probe: notTried): only the due time moves (soon).
 */
import type { GeoInfo } from '../geo/geo';
import { autoType } from '../probe/codec/auto-verdict';
import type { ProbeResult } from '../probe/types';
import type { CheckType } from '../proxy/types';
import { foldHistory, latencyP50, uptimeH24 } from './history';
import { nextCheckAt, type Random } from './schedule';
import { protocolBit, protocolsMask, type PoolProxyRow } from './shape';
import { applyVerdict, outcomeOf, type CheckOutcome, type ProxyEventName } from './verdict';

/** A fraction 0..1 in parts per million (null stays null). */
export function ppm(fraction: number | null): number | null {
  return fraction === null ? null : Math.round(fraction * 1_000_000);
}

export type PoolProbeResult = Pick<ProbeResult, 'status' | 'statusCode' | 'responseTimeMs' | 'anonymity' | 'origin' | 'error' | 'protocols' | 'https'>;

export interface FoldContext {
  poolType: CheckType;
  intervalS: number;
  nowMs: number;
  random: Random;
}

export interface FoldedCheck {
  row: PoolProxyRow;
  outcome: CheckOutcome;
  event: ProxyEventName | null;
}

/** A check that did not happen (the checker's overload, or a round cut short): only the due time moves, soon (schedule.ts RETRY_NOT_TRIED_S). */
export function notTried(prev: PoolProxyRow, ctx: Pick<FoldContext, 'intervalS' | 'nowMs' | 'random'>): FoldedCheck {
  return { row: { ...prev, nextCheckAt: new Date(nextCheckAt(ctx.nowMs, ctx.intervalS, 0, ctx.random, false)) }, outcome: 'not_tried', event: null };
}

export function foldCheck(prev: PoolProxyRow, probe: PoolProbeResult, geo: GeoInfo | null, ctx: FoldContext): FoldedCheck {
  const outcome = outcomeOf(probe);
  if (outcome === 'not_tried') return notTried(prev, ctx);
  const step = applyVerdict({ status: prev.status, failures: prev.failures, lastChangeAt: prev.lastChangeAt?.getTime() ?? null }, outcome, ctx.nowMs);
  const working = outcome === 'working';
  const history = foldHistory(prev.history, working ? { passed: true, latencyMs: probe.responseTimeMs } : { passed: false }, ctx.nowMs);
  const row: PoolProxyRow = {
    ...prev,
    status: step.next.status,
    failures: step.next.failures,
    lastChangeAt: step.next.lastChangeAt === null ? null : new Date(step.next.lastChangeAt),
    checks: prev.checks + 1,
    lastCheckedAt: new Date(ctx.nowMs),
    statusCode: probe.statusCode,
    responseTimeMs: probe.responseTimeMs,
    errorCode: working ? null : (probe.error?.code ?? 'bad_response'),
    errorMessage: working ? null : (probe.error?.message ?? 'probe failed without an error'),
    history,
    latencyP50Ms: latencyP50(history, ctx.nowMs),
    uptimeH24Ppm: ppm(uptimeH24(history, ctx.nowMs)),
    nextCheckAt: new Date(nextCheckAt(ctx.nowMs, ctx.intervalS, step.next.failures, ctx.random, true, prev.checks === 0)),
  };
  if (working) {
    const passed = probe.protocols ?? [];
    row.type = ctx.poolType === 'auto' ? autoType(passed) : ctx.poolType;
    row.protocols = ctx.poolType === 'auto' ? protocolsMask(passed) : protocolBit(ctx.poolType);
    row.anonymity = probe.anonymity;
    row.https = typeof probe.https === 'boolean' ? probe.https : null;
    row.origin = probe.origin;
    row.country = geo?.country ?? null;
    row.countryName = geo?.country_name ?? null;
    row.location = geo?.location ?? null;
    row.isp = geo?.isp ?? null;
    row.asn = geo?.asn ?? null;
  }
  return { row, outcome, event: step.event };
}
