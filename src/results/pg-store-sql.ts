/**
 * SQL builders of the PostgreSQL result store (src/results/pg-store.ts, the
 * tables `result_files` and `result_chunks` of db/schema.ts): pure functions
 * from input to one statement, no I/O. Every input travels as a parameter.
 *
 * Times: `last_written` is the database's clock (clock_timestamp() when the
 * upload writes the row), so every node of a cluster stamps results on one
 * clock; the sweep's cutoffs are ms since the epoch from the caller
 * (the retention clock, src/results/retention.ts).
 *
 * The sweep runs its statements in one transaction that first takes the
 * cluster-wide advisory lock RESULT_SWEEP_LOCK with pg_try_advisory_xact_lock:
 * one node sweeps the database at a time; a node that finds the lock taken
 * deletes nothing there (the holder is applying the same rule right now).
 */
import { sql, type SQL } from 'drizzle-orm';

/** The advisory lock key of the result sweep (any constant no other code of this database uses): "rsweep". */
export const RESULT_SWEEP_LOCK = 0x72_73_77_65_65_70;

/** Removes result `id` (its chunks go with it: ON DELETE CASCADE). */
export function deleteResultStatement(i: { id: string }): SQL {
  return sql`DELETE FROM result_files WHERE id = ${i.id}`;
}

/** The row of a finished result, stamped with the database's clock now. */
export function insertResultStatement(i: { id: string; bytes: number; chunks: number }): SQL {
  return sql`INSERT INTO result_files (id, bytes, chunks, last_written) VALUES (${i.id}, ${i.bytes}::bigint, ${i.chunks}::int, clock_timestamp())`;
}

/** Chunk `seq` (0-based) of result `id`. */
export function insertChunkStatement(i: { id: string; seq: number; data: Uint8Array }): SQL {
  return sql`INSERT INTO result_chunks (result_id, seq, data) VALUES (${i.id}, ${i.seq}::int, ${i.data}::bytea)`;
}

/** One row `{bytes, chunks}` when result `id` is there, none otherwise. */
export function findResultStatement(i: { id: string }): SQL {
  return sql`SELECT bytes::float8 AS bytes, chunks FROM result_files WHERE id = ${i.id}`;
}

/** One row `{data}`: chunk `seq` of result `id`; none when it is gone (swept meanwhile). */
export function readChunkStatement(i: { id: string; seq: number }): SQL {
  return sql`SELECT data FROM result_chunks WHERE result_id = ${i.id} AND seq = ${i.seq}::int`;
}

/** One row `{locked}`: true when this transaction now holds the sweep lock, false when another one does. */
export function trySweepLockStatement(): SQL {
  return sql`SELECT pg_try_advisory_xact_lock(${RESULT_SWEEP_LOCK}::bigint) AS locked`;
}

/** Deletes what was last written before `cutoffMs`; one row `{n, bytes}` of what it deleted. */
export function deleteExpiredStatement(i: { cutoffMs: number }): SQL {
  return sql`
    WITH d AS (
      DELETE FROM result_files WHERE last_written < to_timestamp(${i.cutoffMs}::float8 / 1000) RETURNING bytes
    )
    SELECT count(*)::int AS n, coalesce(sum(bytes), 0)::float8 AS bytes FROM d`;
}

/**
 * The byte cap: keeps the newest results whose sizes, summed from the newest
 * (last_written, then id, descending), stay within `maxBytes`, and deletes
 * every older one: the oldest go first until the rest fit (ties of
 * last_written: the smaller id is the older, as the directory store orders
 * equal mtimes by name). One row `{n, bytes}` of what it deleted.
 */
export function deleteOverCapStatement(i: { maxBytes: number }): SQL {
  return sql`
    WITH ranked AS (
      SELECT id, sum(bytes) OVER (ORDER BY last_written DESC, id COLLATE "C" DESC ROWS UNBOUNDED PRECEDING) AS newer
      FROM result_files
    ), d AS (
      DELETE FROM result_files f USING ranked r
      WHERE f.id = r.id AND r.newer > ${i.maxBytes}::float8
      RETURNING f.bytes
    )
    SELECT count(*)::int AS n, coalesce(sum(bytes), 0)::float8 AS bytes FROM d`;
}

/** One row `{n, bytes}`: finished results and their total size. */
export function sizeStatement(): SQL {
  return sql`SELECT count(*)::int AS n, coalesce(sum(bytes), 0)::float8 AS bytes FROM result_files`;
}
