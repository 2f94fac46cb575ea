/**
 * A timeout that was the checker's, not the proxy's (issue 30). Pure.
 *
 * A probe's budget runs on the wall clock, but its answers are read by a
 * thread that may be late: busy with other sockets, or off its core. An
 * answer that reached the socket while the thread was busy waits there
 * until the thread gets to it. So each exchange adds up how late its thread
 * was whenever it had something to read (src/probe/net/exchange.ts: the
 * connect, the first bytes of each answer, the TLS handshake) and when its
 * deadline fired (src/probe/workers/lag-meter.ts `lateness`: how overdue the
 * thread's 10 ms timer is, i.e. how long it has been busy; at the deadline
 * the main thread's too, where the built-in judge answers: a judge that is
 * late makes the answer late, shared by src/jobs/lag-limiter.ts). When that sum
 * reaches `lagThresholdMs(timeout)`, a timeout says nothing about the proxy:
 * its answer may have sat unread. Such a failure becomes
 * `checker_overloaded` with `checkerLagMs`, the code the jobs already try
 * again (src/jobs/retries.ts: parked, tried again a little later, at most a
 * few times, never charged twice; a probe that never got its try is
 * reported, not charged), pools count as not tried, and the https check
 * reports as not known (`https: null`).
 *
 * Why a sum over the reads and not the worst lag over the probe's life: a
 * black hole has nothing to read between its connect and its deadline, so
 * a thread that was late in between delayed nothing of it (measured, the
 * worst-over-life rule at load 10 on 2 cores: 43 000-72 000 retries for the
 * 100 000 mix, its 30 000 black holes tried again and again).
 *
 * Only `timeout` and `connect_timeout` are rewritten: every other failure is
 * something the proxy did (a refusal, a wrong answer), whenever it was read.
 * The threshold is LAG_SHARE of the timeout (100 ms at the default 2 s, the
 * margin issue 30's target leaves below the timeout), at least LAG_MIN_MS.
 */
import type { ProbeError } from '../types';

/** The share of the timeout the thread may have been late before a timeout is ours. */
export const LAG_SHARE = 0.05;
/** The least lateness that makes a timeout ours, ms. */
export const LAG_MIN_MS = 50;

/** The lateness from which a timeout of `timeoutMs` is the checker's. */
export function lagThresholdMs(timeoutMs: number): number {
  return Math.max(LAG_MIN_MS, timeoutMs * LAG_SHARE);
}

/** Whether `error` is a timeout the checker caused: a timeout code and a lateness at or above the threshold. */
export function isCheckerTimeout(error: Pick<ProbeError, 'code'> | null, lateMs: number, timeoutMs: number): boolean {
  const code = error?.code;
  return (code === 'timeout' || code === 'connect_timeout') && lateMs >= lagThresholdMs(timeoutMs);
}

/** The checker's failure (checker_overloaded, with its lateness) in place of the timeout `error`. */
export function checkerLagError(error: Pick<ProbeError, 'code'>, lateMs: number): ProbeError {
  const ms = Math.round(lateMs);
  return {
    code: 'checker_overloaded',
    message: `the checker was ${ms} ms late reading this proxy's answers (the ${error.code} was ours, not the proxy's); the proxy was not judged`,
    checkerLagMs: ms,
  };
}
