/**
 * db/pglite-checkpoints.ts on a real PGlite (in memory: its pg_wal is counted
 * with pg_ls_waldir()): PGlite never
 * checkpoints by itself (pg_wal only grows), a look runs CHECKPOINT once
 * the WAL since the last one reaches its threshold and not before, pg_wal
 * then stays bounded over many rewrites, and stop() is safe twice.
 */
import { describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { rowsOf, type Database } from '../../db/client';
import { startWalCheckpoints, walSinceCheckpointStatement } from '../../db/pglite-checkpoints';
import { freshPglite } from '../helpers/db';

async function open(): Promise<{ database: Database; segments: () => Promise<number> }> {
  const database = await freshPglite();
  // pg_wal's segment files (a PGlite data dir or its in-memory file system alike)
  const segments = async () => Number(rowsOf<{ n: number }>(await database.db.execute(sql`SELECT count(*)::int AS n FROM pg_ls_waldir() WHERE name ~ '^[0-9A-F]{24}$'`))[0]!.n);
  await database.db.execute(sql`CREATE TABLE t (id int PRIMARY KEY, v text)`);
  await database.db.execute(sql`INSERT INTO t SELECT g, repeat('x', 100) FROM generate_series(1, 20000) g`);
  return { database, segments };
}

/** One rewrite of every row: ~6.5 MB of WAL. */
const rewrite = (database: Database, i: number) => database.db.execute(sql`UPDATE t SET v = repeat(${String(i % 10)}, 100)`);
const walSince = async (database: Database) => Number(rowsOf<{ bytes: number }>(await database.db.execute(walSinceCheckpointStatement()))[0]!.bytes);

describe('WAL checkpoints of the embedded database', () => {
  test('without looks pg_wal only grows; with them it stays near the threshold, and a look below it runs nothing', async () => {
    const bare = await open();
    const withLooks = await open();
    const walBytes = 16 * 1024 * 1024;
    const c = startWalCheckpoints({ db: withLooks.database.db, everyMs: 3_600_000, walBytes, onError: (err) => { throw err; } });
    try {
      expect(await c.lookOnce()).toBe(false); // a new database: far below the threshold
      let ran = 0;
      for (let i = 0; i < 12; i++) {
        await rewrite(bare.database, i);
        await rewrite(withLooks.database, i);
        if (await c.lookOnce()) {
          ran++;
          expect(await walSince(withLooks.database)).toBeLessThan(walBytes);
        }
      }
      expect(ran).toBeGreaterThanOrEqual(3);
      // ~80 MB of WAL each: the bare one kept every 16 MB segment; the other recycles what is older than
      // its last checkpoint and keeps min_wal_size (32MB) and the segment in use
      expect(await bare.segments()).toBeGreaterThanOrEqual(5);
      expect(await withLooks.segments()).toBeLessThanOrEqual(4);
      expect(await walSince(bare.database)).toBeGreaterThan(walBytes * 4);
    } finally {
      await c.stop();
      await c.stop();
      await bare.database.close();
      await withLooks.database.close();
    }
  }, 120_000);

  test('a failing look is told and never rejects', async () => {
    const database = await freshPglite();
    const errors: unknown[] = [];
    const c = startWalCheckpoints({ db: database.db, everyMs: 3_600_000, walBytes: 1, onError: (err) => errors.push(err) });
    await database.close();
    expect(await c.lookOnce()).toBe(false);
    expect(errors.length).toBe(1);
    await c.stop();
  });
});
