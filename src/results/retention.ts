/**
 * Result-file retention: deletes files under the results directory older
 * than RESULT_RETENTION_DAYS, at start and then hourly. History rows keep
 * their counts; /me shows `result_url: null` once a scan is past retention.
 * `stop()` is safe to call twice.
 */
import { readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../log';

export interface RetentionSweep {
  /** The pass started with the sweep; resolves with the number of files it deleted. */
  readonly startup: Promise<number>;
  /** One pass now; resolves with the number of files deleted. */
  runOnce(): Promise<number>;
  stop(): void;
}

export function startRetentionSweep(opts: {
  dir: string;
  maxAgeMs: number;
  log: Logger;
  intervalMs?: number;
  now?: () => number;
}): RetentionSweep {
  const now = opts.now ?? Date.now;
  let timer: ReturnType<typeof setInterval> | null = null;
  const runOnce = async (): Promise<number> => {
    let deleted = 0;
    let names: string[];
    try {
      names = await readdir(opts.dir);
    } catch {
      return 0;
    }
    const cutoff = now() - opts.maxAgeMs;
    for (const name of names) {
      const path = join(opts.dir, name);
      try {
        const st = await stat(path);
        if (st.isFile() && st.mtimeMs < cutoff) {
          await unlink(path);
          deleted++;
        }
      } catch {
        // vanished meanwhile: nothing to do
      }
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
