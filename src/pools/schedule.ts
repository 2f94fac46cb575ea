/**
 * When each pooled proxy is checked next (DECISIONS "Pools", schedule). Pure
 * functions of the proxy's state, the clock (`nowMs`, epoch milliseconds)
 * and a random source (`random() -> [0, 1)`, Math.random in the service, a
 * fixed sequence in tests); the due times they give are what the database
 * keeps (`pool_proxies.next_check_at`), so a restart resumes where it was.
 *
 * Rules:
 * - A new proxy is due at once (newProxyDueAt).
 * - After a check (nextCheckAt): a working proxy again after `interval_s`;
 *   a failing one backs off, doubling from `interval_s` with each
 *   consecutive failure (interval, 2x, 4x, ...), never more than a day
 *   (backoffS).
 * - A proxy's first check is followed by a delay drawn from [delay / 2, delay]
 *   (spreadFirst): the proxies checked together spread over the interval.
 * - Jitter: every other delay is shortened by a random 0..10 % (JITTER). It is
 *   only ever shortened, so a working proxy is checked again within
 *   `interval_s` (a dead proxy is seen down within one interval + the probe
 *   timeout), and proxies added together drift apart instead of falling due
 *   in the same second round after round.
 * - A check that was not performed (the checker, not the proxy, ran out of
 *   something: `checker_overloaded`) is no verdict: the proxy is tried again
 *   after RETRY_NOT_TRIED_S (or its interval, when shorter), jittered alike.
 * - After a restart or a take-over (spreadOverdue), the proxies whose due
 *   time has passed are spread evenly over the next interval, most overdue
 *   first, instead of all firing in the first round.
 *
 * checksPerDay is the expected number of checks a proxy costs per day in its
 * current state, the pool object's `checks_per_day` summed over its proxies
 * (src/pools/proxies-sql.ts computes the same sum in SQL from these constants).
 */
import { DAY_S } from './limits';

/** Largest share of a delay that jitter takes off. */
export const JITTER = 0.1;
/**
 * A check that did not happen is tried again this soon (seconds; or after the
 * interval, when shorter). 10 s: the checker's own overload passes within a
 * flush or two, and the adaptive limit (src/jobs/adaptive-limit.ts) keeps the
 * retries from feeding it; at 60 s a new 100 000-proxy pool's first pass
 * waited a minute on the few hundred proxies its first seconds could not try
 * (bench/RESULTS.md "Pools are actors: the quiet runs").
 */
export const RETRY_NOT_TRIED_S = 10;
/** Failures above this no longer change the back-off (2^20 intervals is far past a day). */
export const MAX_DOUBLINGS = 20;

export type Random = () => number;

/** The delay (s) before the next check, before jitter: interval for a working or new proxy, doubling per failure, at most a day. */
export function backoffS(intervalS: number, failures: number): number {
  const doublings = Math.min(Math.max(0, failures - 1), MAX_DOUBLINGS);
  return Math.min(intervalS * 2 ** doublings, Math.max(intervalS, DAY_S));
}

/** `delayS` shortened by jitter, in whole milliseconds (never below 1 s). */
function jittered(delayS: number, random: Random): number {
  const x = random();
  const r = x > 0 ? Math.min(x, 1) : 0; // NaN and below 0: no jitter
  return Math.max(1000, Math.round(delayS * 1000 * (1 - JITTER * r)));
}

/** A new proxy: due at once. */
export function newProxyDueAt(nowMs: number): number {
  return nowMs;
}

/**
 * Due time after a check at `nowMs`: `failures` is the count of consecutive
 * failures after it (0 for a working proxy); `tried` false for a check that
 * was not performed (then `failures` is ignored).
 */
export function nextCheckAt(nowMs: number, intervalS: number, failures: number, random: Random, tried = true, first = false): number {
  const delayS = tried ? backoffS(intervalS, failures) : Math.min(intervalS, RETRY_NOT_TRIED_S);
  return nowMs + (tried && first ? spreadFirst(delayS, random) : jittered(delayS, random));
}

/**
 * The delay after a proxy's first check: anywhere in [delay / 2, delay]
 * (at least 1 s). A pool's proxies are first checked together (a new pool, a
 * list added); with the 10 % jitter alone their re-checks would come due in
 * the same few seconds of every interval, a burst the size of the pool that
 * feeds the checker's own overload. Spread once over half an interval (a
 * second check never sooner than that), each keeps its place from then on.
 */
function spreadFirst(delayS: number, random: Random): number {
  const x = random();
  const r = x > 0 ? Math.min(x, 1) : 1; // NaN and below 0: the whole delay
  return Math.max(1000, Math.round(delayS * 1000 * (0.5 + r / 2)));
}

/**
 * New due times for the overdue proxies of one pool (due times in `dueMs`,
 * any order), spread evenly over [now, now + interval): the i-th most overdue
 * gets now + i * interval / n. Same order as the input; a due time that has
 * not passed is returned unchanged.
 */
export function spreadOverdue(dueMs: readonly number[], nowMs: number, intervalS: number): number[] {
  const overdue: number[] = [];
  for (let i = 0; i < dueMs.length; i++) if ((dueMs[i] as number) < nowMs) overdue.push(i);
  overdue.sort((a, b) => (dueMs[a] as number) - (dueMs[b] as number) || a - b);
  const out = dueMs.slice();
  const n = overdue.length;
  const spanMs = intervalS * 1000;
  for (let rank = 0; rank < n; rank++) out[overdue[rank] as number] = nowMs + Math.floor((rank * spanMs) / n);
  return out;
}

/** Expected checks per day of one proxy with `failures` consecutive failures (0: working or unchecked), jitter included. */
export function checksPerDay(intervalS: number, failures: number): number {
  return DAY_S / (backoffS(intervalS, failures) * (1 - JITTER / 2));
}

/**
 * A shorter interval (PATCH interval_s): the due times later than
 * now + interval spread over [now, now + interval), the i-th of n (by due
 * time, then input order) at now + floor(i * interval / n), as
 * pools-sql.ts clampDueStatement does on the durable copy. Same order as
 * the input; the others unchanged.
 */
export function clampDue(dueMs: readonly number[], nowMs: number, intervalS: number): number[] {
  const spanMs = intervalS * 1000;
  const late: number[] = [];
  for (let i = 0; i < dueMs.length; i++) if ((dueMs[i] as number) > nowMs + spanMs) late.push(i);
  late.sort((a, b) => (dueMs[a] as number) - (dueMs[b] as number) || a - b);
  const out = dueMs.slice();
  for (let rank = 0; rank < late.length; rank++) out[late[rank] as number] = nowMs + Math.floor((rank * spanMs) / late.length);
  return out;
}
