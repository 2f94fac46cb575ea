/**
 * Result retention: deletes results older than RESULT_RETENTION_DAYS, at
 * start and then hourly, through the result store's sweep
 * (src/results/store.ts; what "older" means for files is the adapter's, see
 * src/results/dir-store.ts). History rows keep their counts; /me shows
 * `result_url: null` once a scan is past retention. `stop()` is safe to call
 * twice; a failing pass is logged and counts 0.
 */
import type { Logger } from '../log';
import type { ResultStore } from './store';

export interface RetentionSweep {
  /** The pass started with the sweep; resolves with the number of results it deleted. */
  readonly startup: Promise<number>;
  /** One pass now; resolves with the number of results deleted. */
  runOnce(): Promise<number>;
  stop(): void;
}

export function startRetentionSweep(opts: {
  store: Pick<ResultStore, 'sweep'>;
  maxAgeMs: number;
  log: Logger;
  intervalMs?: number;
  now?: () => number;
}): RetentionSweep {
  const now = opts.now ?? Date.now;
  let timer: ReturnType<typeof setInterval> | null = null;
  const runOnce = async (): Promise<number> => {
    let deleted: number;
    try {
      deleted = await opts.store.sweep(now() - opts.maxAgeMs);
    } catch (err) {
      opts.log.warn('result retention pass failed', { err });
      return 0;
    }
    if (deleted > 0) opts.log.info('result files past retention deleted', { deleted });
    return deleted;
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
