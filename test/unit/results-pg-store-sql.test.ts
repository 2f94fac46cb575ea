/**
 * The PostgreSQL result store's statement builders (src/results/pg-store-sql.ts)
 * are pure: SQL text and parameters. Their behaviour against a real database:
 * test/integration/result-store-pg.test.ts on both drivers.
 */
import { describe, expect, test } from 'bun:test';
import { PgDialect } from 'drizzle-orm/pg-core';
import {
  deleteExpiredStatement,
  deleteOverCapStatement,
  deleteResultStatement,
  findResultStatement,
  insertChunkStatement,
  insertResultStatement,
  readChunkStatement,
  RESULT_SWEEP_LOCK,
  sizeStatement,
  trySweepLockStatement,
} from '../../src/results/pg-store-sql';

const dialect = new PgDialect();
const q = (s: Parameters<PgDialect['sqlToQuery']>[0]) => dialect.sqlToQuery(s);
const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();
const id = 'AbCdEfGhIjKlMnOpQrStUv';

describe('result store statements', () => {
  test('upload: the row stamped on the database clock, chunks as bytea parameters', () => {
    const r = q(insertResultStatement({ id, bytes: 123_456, chunks: 2 }));
    expect(r.sql).toBe('INSERT INTO result_files (id, bytes, chunks, last_written) VALUES ($1, $2::bigint, $3::int, clock_timestamp())');
    expect(r.params).toEqual([id, 123_456, 2]);
    const data = new Uint8Array([0, 1, 255]);
    const c = q(insertChunkStatement({ id, seq: 1, data }));
    expect(c.sql).toBe('INSERT INTO result_chunks (result_id, seq, data) VALUES ($1, $2::int, $3::bytea)');
    expect(c.params).toEqual([id, 1, data]);
    expect(q(deleteResultStatement({ id }))).toEqual({ sql: 'DELETE FROM result_files WHERE id = $1', params: [id], typings: expect.anything() });
  });

  test('reading: the row, then one chunk per statement', () => {
    expect(q(findResultStatement({ id })).sql).toBe('SELECT bytes::float8 AS bytes, chunks FROM result_files WHERE id = $1');
    const r = q(readChunkStatement({ id, seq: 7 }));
    expect(r.sql).toBe('SELECT data FROM result_chunks WHERE result_id = $1 AND seq = $2::int');
    expect(r.params).toEqual([id, 7]);
    expect(oneLine(q(sizeStatement()).sql)).toBe('SELECT count(*)::int AS n, coalesce(sum(bytes), 0)::float8 AS bytes FROM result_files');
  });

  test('the sweep: a try-lock on one cluster-wide key, age on last_written, the cap summed from the newest', () => {
    const l = q(trySweepLockStatement());
    expect(l.sql).toBe('SELECT pg_try_advisory_xact_lock($1::bigint) AS locked');
    expect(l.params).toEqual([RESULT_SWEEP_LOCK]);
    expect(Number.isSafeInteger(RESULT_SWEEP_LOCK)).toBe(true);
    const e = q(deleteExpiredStatement({ cutoffMs: 1_700_000_000_123 }));
    expect(oneLine(e.sql)).toContain('DELETE FROM result_files WHERE last_written < to_timestamp($1::float8 / 1000) RETURNING bytes');
    expect(e.params).toEqual([1_700_000_000_123]);
    const c = q(deleteOverCapStatement({ maxBytes: 10 * 2 ** 30 }));
    const s = oneLine(c.sql);
    expect(s).toContain('sum(bytes) OVER (ORDER BY last_written DESC, id COLLATE "C" DESC ROWS UNBOUNDED PRECEDING) AS newer');
    expect(s).toContain('WHERE f.id = r.id AND r.newer > $1::float8');
    expect(c.params).toEqual([10 * 2 ** 30]);
    for (const st of [e, c]) expect(oneLine(st.sql)).toEndWith('SELECT count(*)::int AS n, coalesce(sum(bytes), 0)::float8 AS bytes FROM d');
  });

  test('inputs travel as parameters, never as SQL text', () => {
    const evil = "x'); DROP TABLE scans; --";
    for (const s of [
      deleteResultStatement({ id: evil }),
      insertResultStatement({ id: evil, bytes: 1, chunks: 1 }),
      insertChunkStatement({ id: evil, seq: 0, data: new Uint8Array(1) }),
      findResultStatement({ id: evil }),
      readChunkStatement({ id: evil, seq: 0 }),
    ]) {
      const r = q(s);
      expect(r.sql).not.toContain('DROP');
      expect(r.params).toContain(evil);
    }
  });
});
