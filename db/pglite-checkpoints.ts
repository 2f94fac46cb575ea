/**
 * Checkpoints of the embedded database. PGlite runs PostgreSQL as a
 * single-user backend: there is no checkpointer process, and a standalone
 * backend asks for a checkpoint by WAL volume only under a postmaster
 * (XLogWrite's `IsUnderPostmaster`), so `max_wal_size` and
 * `checkpoint_timeout` (db/pglite-instance.ts PGLITE_WAL_SETTINGS) never trigger
 * one: pg_wal grows without bound until the database is closed (measured:
 * 19 segments, 304 MiB, after 650 000 pool checks; issue 29's "bounded
 * database"). This loop does what the checkpointer would: every `everyMs`
 * it reads the WAL written since the last checkpoint's redo point and runs
 * CHECKPOINT when that reaches `walBytes` (half of max_wal_size: the
 * checkpoint then recycles what is older, keeping pg_wal near max_wal_size).
 *
 * One look at a time; a failed look is logged and the next one tries again;
 * `stop()` waits for a look under way and is safe twice. A CHECKPOINT costs
 * 60-190 ms on PGlite (it writes the dirty part of 16 MB of shared buffers),
 * and it runs where PGlite runs.
 */
import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from './client';

/** How often the WAL since the last checkpoint is read. */
export const CHECKPOINT_LOOK_MS = 10_000;
/** WAL since the last checkpoint that asks for the next one: half of PGLITE_WAL_SETTINGS.max_wal_size (64MB). */
export const CHECKPOINT_WAL_BYTES = 32 * 1024 * 1024;

/** Bytes of WAL written since the last checkpoint's redo point (one row, `bytes`). */
export const walSinceCheckpointStatement = () => sql`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), redo_lsn)::float8 AS bytes FROM pg_control_checkpoint()`;

export const checkpointStatement = () => sql`CHECKPOINT`;

export interface WalCheckpoints {
  /** One look now (or the one under way): true when it ran a checkpoint. Never rejects. */
  lookOnce(): Promise<boolean>;
  /** Stops the timer and waits for a look under way. Safe twice. */
  stop(): Promise<void>;
}

export function startWalCheckpoints(o: {
  db: Db;
  onError: (err: unknown) => void;
  everyMs?: number;
  walBytes?: number;
}): WalCheckpoints {
  const walBytes = o.walBytes ?? CHECKPOINT_WAL_BYTES;
  let running: Promise<boolean> | null = null;
  let stopped = false;
  const look = async (): Promise<boolean> => {
    try {
      const [r] = rowsOf<{ bytes: number | string }>(await o.db.execute(walSinceCheckpointStatement()));
      if (stopped || !(Number(r?.bytes ?? 0) >= walBytes)) return false;
      await o.db.execute(checkpointStatement());
      return true;
    } catch (err) {
      o.onError(err);
      return false;
    }
  };
  const lookOnce = () =>
    (running ??= look().finally(() => {
      running = null;
    }));
  const timer = setInterval(() => {
    if (!stopped) void lookOnce();
  }, o.everyMs ?? CHECKPOINT_LOOK_MS);
  timer.unref?.();
  return {
    lookOnce,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
