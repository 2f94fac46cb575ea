/**
 * Result retention: one pass at start, then one every `intervalMs` (hourly),
 * each a single sweep of the result store (src/results/store.ts; what "last
 * written" means for files is the adapter's, src/results/dir-store.ts):
 *
 * - age: results last written more than RESULT_RETENTION_DAYS ago go;
 * - disk cap: when the finished results still hold more than
 *   RESULT_MAX_BYTES (default 10 GiB; 0 = no cap), the oldest go first
 *   until they fit;
 * - crash leftovers: spill and temp files of a writer that is gone (a job
 *   killed mid-write) go once last written more than `orphanAgeMs` (15 min)
 *   ago; the store never touches the files of a job still writing.
 *
 * ## The clock, and a clock that jumps
 *
 * Ages are measured on the retention clock, not on the wall clock as such:
 * the retention clock is the wall clock minus the forward jumps seen while
 * the process runs. Between two passes the wall clock may run ahead of the
 * monotonic clock (performance.now) by at most `jumpToleranceMs` (5 min:
 * NTP slews by far less); whatever it ran ahead beyond that is a jump, not
 * time passing: it is added to the skew (the retention clock keeps following
 * monotonic time) and a warning `wall clock jumped forward` is logged. A
 * later backward move of the wall clock pays the skew back first (so a clock
 * set a year ahead and then corrected changes nothing). So a clock that
 * jumps forward by a year while the service runs deletes nothing by age that
 * was not due anyway. A machine that sleeps looks the same (its monotonic
 * clock stops): results are then kept longer, never shorter. The limit: a
 * clock that is already wrong when the process starts is believed (there is
 * nothing else to compare it with). The disk cap and the leftovers rule do
 * not depend on the clock's absolute value (the cap goes by order of age).
 *
 * History rows keep their counts; /me shows `result_url: null` once a scan
 * is past retention. `stop()` is safe to call twice; a failing pass is
 * logged and reports nothing deleted.
 */
import type { Logger } from '../log';
import { RetentionClock } from './retention-clock';
import type { ResultStore, SweepReport } from './store';

export const DEFAULT_ORPHAN_AGE_MS = 15 * 60_000;
export const DEFAULT_JUMP_TOLERANCE_MS = 5 * 60_000;

export interface RetentionSweep {
  /** The pass started with the sweep; resolves with what it deleted. */
  readonly startup: Promise<SweepReport>;
  /** One pass now; resolves with what it deleted. */
  runOnce(): Promise<SweepReport>;
  stop(): void;
}

export interface RetentionOptions {
  store: Pick<ResultStore, 'sweep'>;
  maxAgeMs: number;
  /** Disk cap on finished results in bytes; 0 or absent: none. */
  maxBytes?: number;
  /** Leftovers of dead writers go once this old. Default 15 min. */
  orphanAgeMs?: number;
  log: Logger;
  intervalMs?: number;
  /** The wall clock (ms since the epoch). Default Date.now. */
  now?: () => number;
  /** A monotonic clock in ms. Default performance.now. */
  monotonic?: () => number;
  /** How far the wall clock may run ahead of the monotonic one between passes. Default 5 min. */
  jumpToleranceMs?: number;
}

const NOTHING: SweepReport = Object.freeze({ expired: 0, overCap: 0, orphans: 0, bytes: 0 });

export function startRetentionSweep(opts: RetentionOptions): RetentionSweep {
  const clock = new RetentionClock(opts.now ?? Date.now, opts.monotonic ?? (() => performance.now()), opts.jumpToleranceMs ?? DEFAULT_JUMP_TOLERANCE_MS);
  const orphanAgeMs = opts.orphanAgeMs ?? DEFAULT_ORPHAN_AGE_MS;
  let timer: ReturnType<typeof setInterval> | null = null;
  const runOnce = async (): Promise<SweepReport> => {
    const { now, jumpMs } = clock.read();
    if (jumpMs > 0) {
      opts.log.warn('wall clock jumped forward: result ages keep to the monotonic clock', { jumpMs, skewMs: clock.skewMs });
    }
    let report: SweepReport;
    try {
      report = await opts.store.sweep({
        cutoffMs: now - opts.maxAgeMs,
        maxBytes: opts.maxBytes ?? 0,
        orphanCutoffMs: now - orphanAgeMs,
      });
    } catch (err) {
      opts.log.warn('result retention pass failed', { err });
      return NOTHING;
    }
    if (report.expired > 0) opts.log.info('result files past retention (RESULT_RETENTION_DAYS) deleted', { deleted: report.expired });
    if (report.overCap > 0) opts.log.info('oldest result files deleted for the disk cap (RESULT_MAX_BYTES)', { deleted: report.overCap, maxBytes: opts.maxBytes });
    if (report.orphans > 0) opts.log.info('leftover spill and temp files deleted', { deleted: report.orphans });
    return report;
  };
  const startup = runOnce();
  timer = setInterval(() => void runOnce(), opts.intervalMs ?? 3_600_000);
  timer.unref?.();
  return {
    startup,
    runOnce,
    stop() {
      if (timer !== null) clearInterval(timer);
      timer = null;
    },
  };
}
