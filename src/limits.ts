/**
 * How many probes this process may have in flight at once, from its open-file
 * limit, and how many descriptors the built-in judge is left. Pure functions
 * plus one read of /proc/self/limits.
 *
 * Every probe holds one socket. When the judge is this process's own /judge,
 * the judge holds one accepted socket per request, but only a working
 * proxy's probe makes one, and only for its last milliseconds (accept, read
 * the head, answer, close: the answer says Connection: close). So:
 *
 *   judge elsewhere (JUDGE_URL)       probes = limit - RESERVED_FDS
 *   built-in judge (a service, or an  probes = (limit - RESERVED_FDS) x (1 - JUDGE_FD_SHARE)
 *   agent hosting its judge)          and src/fd-guard.ts lowers the cap while the
 *                                     descriptors actually open leave fewer than spareFds free
 *
 * Why the judge must never be the one to run out: Bun's listener, on EMFILE
 * at accept(), leaves the connection in the kernel's accept queue and retries
 * on every turn of the event loop (the main thread spins until a descriptor
 * frees, then answers); a full accept queue drops the proxy's SYN (retried
 * after 1 s), which turns a working proxy into a timeout (bench/RESULTS.md
 * "The built-in judge's descriptor budget").
 */
import { readFileSync } from 'node:fs';

/** Descriptors kept for everything else (database, HTTP clients, files, workers). */
export const RESERVED_FDS = 1000;

/**
 * With the built-in judge, the share of (limit - RESERVED_FDS) the probes leave
 * to the judge's connections: 1 900 at a limit of 20 000. The judge needs far
 * fewer (working proxies per second x milliseconds each; what was measured:
 * bench/RESULTS.md "The built-in judge's descriptor budget"); the rest is
 * margin, and src/fd-guard.ts covers what a margin cannot (proxies that hold
 * the judge's connection open).
 */
export const JUDGE_FD_SHARE = 0.1;

/** Where the judge's accepted sockets live, for the budget. */
export type JudgeFds = 'elsewhere' | 'guarded';

/** The soft "Max open files" of /proc/<pid>/limits text, or null. */
export function parseOpenFilesLimit(limitsText: string): number | null {
  const m = /^Max open files\s+(\d+|unlimited)\s+/m.exec(limitsText);
  if (!m) return null;
  return m[1] === 'unlimited' ? Number.POSITIVE_INFINITY : Number(m[1]);
}

/** Probes in flight the process can hold, whatever the regions' capacities add up to (table in the header). */
export function maxInFlightFor(openFiles: number | null, judge: JudgeFds): number {
  if (openFiles === null || !Number.isFinite(openFiles)) return 65_536;
  const left = openFiles - RESERVED_FDS;
  const probes = judge === 'elsewhere' ? left : left * (1 - JUDGE_FD_SHARE);
  return Math.max(64, Math.floor(probes));
}

/** Descriptors the guard keeps free at all times (the judge's next accepts, probes between grant and socket): 2 % of the limit, at least 32. */
export function spareFds(openFiles: number): number {
  return Math.max(32, Math.floor(openFiles * 0.02));
}

/**
 * The probes' cap the guard sets: the static cap, lowered so that the
 * descriptors held by everything but probes (`others`, the judge's
 * connections among them) plus the spare still fit under the limit. At least 1.
 */
export function guardedCapacity(p: { openFiles: number; cap: number; others: number }): number {
  const room = Math.floor(p.openFiles - spareFds(p.openFiles) - Math.max(0, p.others));
  return Math.max(1, Math.min(p.cap, room));
}

/**
 * The judge's share the guard keeps whatever it has seen (src/fd-guard.ts):
 * JUDGE_FD_SHARE of what is left above the spare and the `baseline` (the
 * descriptors that are not probes). The window of what the judge held only
 * knows the past: at a job's start it holds no judge connection yet, and
 * a cap with no room for them is reached by the probes before the first
 * working proxies' connections (two each with the https check: the judge's,
 * then the TLS judge's) arrive; the cap cannot take back probes already in
 * flight. At the defaults it binds nothing (20 000: 1 950 of 19 600 - 12 288).
 */
export function judgeReserve(openFiles: number, baseline: number): number {
  return Math.max(0, Math.floor((openFiles - spareFds(openFiles) - Math.max(0, baseline)) * JUDGE_FD_SHARE));
}

/**
 * Probes that may start before the guard's next sample: half the descriptors
 * free above the spare (a probe's socket and the judge connection it may
 * bring). Free of what is `open` and of what is `committed` (src/fd-guard.ts:
 * the descriptors of everything but probes, plus one per probe in flight),
 * whichever is more: a probe granted holds no socket until its thread opens
 * it, so right after a burst of grants `open` alone would offer the same
 * descriptors again at the next sample.
 */
export function startBudget(openFiles: number, open: number, committed = open): number {
  return Math.max(0, Math.floor((openFiles - spareFds(openFiles) - Math.max(open, committed)) / 2));
}

export function openFilesLimit(): number | null {
  try {
    return parseOpenFilesLimit(readFileSync('/proc/self/limits', 'utf8'));
  } catch {
    return null;
  }
}
