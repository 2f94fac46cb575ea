/**
 * A timeout that was the checker's, not the proxy's (issue 30). Pure.
 *
 * A probe's budget runs on the wall clock, but its answers are read by a
 * thread that may be late: busy with other sockets, or off its core. When
 * the thread's lag during the probe's life (lag-meter.ts `lagSince`) was
 * at least `lagThresholdMs(timeout)`, a timeout says nothing about the
 * proxy: its answer may have sat unread in a socket buffer. Such a result
 * becomes `checker_overloaded` with `checkerLagMs`, the code the jobs
 * already try again (src/jobs/retries.ts: parked, tried again a little
 * later, at most a few times, never charged twice; a probe that never got
 * its try is reported, not charged) and pools count as not tried.
 *
 * Only `timeout` and `connect_timeout` are rewritten: every other failure
 * is something the proxy did (a refusal, a wrong answer), whenever it was
 * read. The threshold is LAG_SHARE of the timeout (100 ms at the default
 * 2 s, the margin issue 30's target leaves below the timeout), at least
 * LAG_MIN_MS; a probe reads up to three answers (connect, tunnel, reply),
 * each as late as the thread.
 */
import type { ProbeResult } from '../types';

/** The share of the timeout the thread may have been late before a timeout is ours. */
export const LAG_SHARE = 0.05;
/** The least lag that makes a timeout ours, ms. */
export const LAG_MIN_MS = 50;

/** The lag from which a timeout of `timeoutMs` is the checker's. */
export function lagThresholdMs(timeoutMs: number): number {
  return Math.max(LAG_MIN_MS, timeoutMs * LAG_SHARE);
}

/** Whether `r` is a timeout the checker caused: a timeout code and a lag at or above the threshold. */
export function isCheckerTimeout(r: Pick<ProbeResult, 'status' | 'error'>, lagMs: number, timeoutMs: number): boolean {
  const code = r.error?.code;
  return r.status === 'failed' && (code === 'timeout' || code === 'connect_timeout') && lagMs >= lagThresholdMs(timeoutMs);
}

/** `r` as the checker's failure (checker_overloaded, with the lag), keeping its index and timing. */
export function asCheckerLag<R extends ProbeResult>(r: R, lagMs: number): R {
  const ms = Math.round(lagMs);
  return {
    ...r,
    error: {
      code: 'checker_overloaded',
      message: `the checker was ${ms} ms late reading its sockets while this proxy's answer was due (the ${r.error?.code ?? 'timeout'} was ours, not the proxy's); the proxy was not judged`,
      checkerLagMs: ms,
    },
  };
}
