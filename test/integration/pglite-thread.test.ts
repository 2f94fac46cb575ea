/**
 * db/pglite-thread.ts: PGlite in its own thread behind drizzle, as
 * openDatabase runs it by default: every type the schema uses crosses both
 * ways, transactions commit and roll back (savepoints too), errors arrive
 * with PostgreSQL's fields, statements queue behind an open transaction as
 * on the main thread, a long statement no longer holds the main thread,
 * close is safe twice, and a thread that dies fails its statements with a
 * ServiceError instead of leaving them waiting.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { PGlite } from '@electric-sql/pglite';
import { eq, sql } from 'drizzle-orm';
import { bigint, boolean, customType, doublePrecision, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { drizzle, type PgliteDatabase } from 'drizzle-orm/pglite';
import { openDatabase } from '../../db/client';
import { compiledPgliteModules } from '../../db/pglite-instance';
import { PgliteThread } from '../../db/pglite-thread';
import { isServiceError } from '../../src/errors';
import { DB_ERROR_CODES } from '../../src/error-codes';

const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({ dataType: () => 'bytea' });

const things = pgTable('things', {
  id: integer('id').primaryKey(),
  big: bigint('big', { mode: 'bigint' }),
  bigNum: bigint('big_num', { mode: 'number' }),
  at: timestamp('at', { withTimezone: true, mode: 'date' }),
  atText: timestamp('at_text', { withTimezone: true, mode: 'string' }),
  doc: jsonb('doc').$type<{ a: number; b: string[]; c: null }>(),
  tags: text('tags').array(),
  nums: integer('nums').array(),
  blob: bytea('blob'),
  flag: boolean('flag'),
  ratio: doublePrecision('ratio'),
  label: text('label').unique('things_label_uq'),
});

const CREATE = `create table things (
  id int primary key, big bigint, big_num bigint, at timestamptz, at_text timestamptz, doc jsonb,
  tags text[], nums int[], blob bytea, flag boolean, ratio double precision,
  label text constraint things_label_uq unique)`;

async function newThread(): Promise<PgliteThread> {
  const t = new PgliteThread({ dataDir: null, template: null, modules: await compiledPgliteModules(), collectGarbage: false });
  await t.waitReady;
  return t;
}

/** The driver's error under drizzle's wrapper (DrizzleQueryError keeps it as `cause`). */
async function dbError(p: Promise<unknown>): Promise<Record<string, unknown>> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(Error);
  return ((err as Error).cause ?? err) as Record<string, unknown>;
}

let thread: PgliteThread;
let db: PgliteDatabase;

beforeAll(async () => {
  thread = await newThread();
  db = drizzle({ client: thread as unknown as PGlite });
  await thread.exec(CREATE);
}, 120_000);
afterAll(async () => {
  await thread.close();
});

describe('values cross both ways', () => {
  test('bigint, timestamps, jsonb, arrays, bytea, booleans, doubles', async () => {
    const at = new Date('2026-03-04T05:06:07.891Z');
    const row = {
      id: 1,
      big: 9_007_199_254_740_993n,
      bigNum: 1_700_000_000_123,
      at,
      atText: '2026-03-04 05:06:07.891+00',
      doc: { a: 1, b: ['x', 'y'], c: null },
      tags: ['a', 'b,c', 'd"e'],
      nums: [1, -2, 3],
      blob: new Uint8Array([0, 1, 254, 255]),
      flag: true,
      ratio: 0.125,
      label: 'one',
    };
    await db.insert(things).values(row);
    const [back] = await db.select().from(things).where(eq(things.id, 1));
    expect(back).toEqual({ ...row, blob: expect.any(Uint8Array) as unknown as Uint8Array });
    expect([...(back?.blob ?? [])]).toEqual([0, 1, 254, 255]);
    expect(back?.at?.getTime()).toBe(at.getTime());
    // raw rows (db.execute: object mode with drizzle's identity parsers): timestamps stay text, bigint a bigint
    const raw = (await db.execute(sql`select big, at, doc, nums from things where id = ${1}`)) as unknown as { rows: Record<string, unknown>[] };
    expect(raw.rows[0]).toEqual({ big: 9_007_199_254_740_993n, at: '2026-03-04 05:06:07.891+00', doc: row.doc, nums: [1, -2, 3] });
    // parameters of every kind, bound by PGlite in the thread
    const p = (await thread.query<{ b: bigint; u: Uint8Array; j: unknown; n: null }>('select $1::bigint + 1 as b, $2::bytea as u, $3::jsonb as j, $4::text as n', [9_007_199_254_740_992n, new Uint8Array([7]), JSON.stringify({ k: [1] }), null])).rows[0];
    expect(p).toEqual({ b: 9_007_199_254_740_993n, u: new Uint8Array([7]), j: { k: [1] }, n: null });
  });

  test('array row mode and exec of several statements', async () => {
    const r = await thread.query<unknown[]>('select 1 as a, $1::text as b', ['x'], { rowMode: 'array' });
    expect(r.rows).toEqual([[1, 'x']]);
    expect(r.fields.map((f) => f.name)).toEqual(['a', 'b']);
    const many = await thread.exec('select 1 as one; select 2 as two');
    expect(many.map((x) => x.rows)).toEqual([[{ one: 1 }], [{ two: 2 }]]);
  });

  test('dumpDataDir gives a tarball another database starts from', async () => {
    const blob = await thread.dumpDataDir('gzip');
    expect(blob.size).toBeGreaterThan(100_000);
    const other = await openDatabase({ inMemory: true, migrate: false, pgliteTemplate: blob });
    try {
      const r = (await other.db.execute(sql`select label from things where id = 1`)) as unknown as { rows: { label: string }[] };
      expect(r.rows).toEqual([{ label: 'one' }]);
    } finally {
      await other.close();
    }
  }, 60_000);
});

describe('transactions', () => {
  test('commit, rollback with the error rethrown, and a savepoint rolled back inside a committed one', async () => {
    await db.transaction(async (tx) => {
      await tx.insert(things).values({ id: 10, label: 'ten' });
      await tx.insert(things).values({ id: 11, label: 'eleven' });
    });
    const boom = new Error('boom');
    // awaited before expect: bun test's expect(pending).rejects waits in a loop that does not deliver the thread's replies
    const thrown = await db
      .transaction(async (tx) => {
        await tx.insert(things).values({ id: 12, label: 'twelve' });
        throw boom;
      })
      .catch((e: unknown) => e);
    expect(thrown).toBe(boom);
    await db.transaction(async (tx) => {
      await tx.insert(things).values({ id: 13 });
      await tx.transaction(async (inner) => {
        await inner.insert(things).values({ id: 14 });
        inner.rollback();
      }).catch(() => undefined);
    });
    const ids = (await db.select({ id: things.id }).from(things)).map((r) => r.id).sort((a, b) => a - b);
    expect(ids.filter((i) => i >= 10)).toEqual([10, 11, 13]);
  });

  test("a statement outside the transaction waits for it (PGlite's one queue) and then sees its rows", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const order: string[] = [];
    const txDone = thread.transaction(async (tx) => {
      await tx.query('insert into things (id) values (20)');
      await held;
      order.push('commit');
    });
    await Bun.sleep(20);
    const outside = thread.query<{ n: number }>('select count(*)::int as n from things where id = 20').then((r) => {
      order.push('outside');
      return r.rows[0]?.n;
    });
    await Bun.sleep(50);
    expect(order).toEqual([]);
    release();
    await txDone;
    expect(await outside).toBe(1);
    expect(order).toEqual(['commit', 'outside']);
  });
});

describe('errors', () => {
  test('a unique violation arrives with its code, constraint and detail', async () => {
    const e = await dbError(db.insert(things).values({ id: 30, label: 'one' }));
    expect(e.code).toBe('23505');
    expect(e.constraint).toBe('things_label_uq');
    expect(String(e.detail)).toContain('(label)=(one)');
    expect(String(e.message)).toContain('duplicate key');
  });

  test('a failed statement in a transaction rolls it back; the database goes on', async () => {
    const e = await dbError(
      db.transaction(async (tx) => {
        await tx.insert(things).values({ id: 31 });
        await tx.execute(sql`select 1/0`);
      }),
    );
    expect(e.code).toBe('22012');
    expect(await db.select().from(things).where(eq(things.id, 31))).toEqual([]);
    expect((await thread.query('select 1 as ok')).rows).toEqual([{ ok: 1 }]);
  });

  test('a parser that is not the identity is refused before it is sent', async () => {
    const err = await thread.query('select now()', [], { parsers: { 1184: (v: string) => new Date(v) } }).catch((e: unknown) => e);
    expect(String(err)).toMatch(/not the identity/);
  });
});

describe('the main thread is free while the database works', () => {
  test('timers keep their pace during a long statement', async () => {
    let last = performance.now();
    let worstGap = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      worstGap = Math.max(worstGap, now - last);
      last = now;
    }, 5);
    const t0 = performance.now();
    await thread.query('select count(*) from generate_series(1, 3000000) g where g % 7 = 0');
    const took = performance.now() - t0;
    clearInterval(timer);
    // on the main thread the gap would be the whole statement
    expect(took).toBeGreaterThan(200);
    expect(worstGap).toBeLessThan(took / 2);
  }, 60_000);
});

describe('close and death', () => {
  test('close is safe twice; afterwards statements reject with db_thread_exited', async () => {
    const t = await newThread();
    await Promise.all([t.close(), t.close()]);
    await t.close();
    expect(t.closed).toBe(true);
    const err = await t.query('select 1').catch((e: unknown) => e);
    expect(isServiceError(err, DB_ERROR_CODES.DB_THREAD_EXITED)).toBe(true);
  }, 60_000);

  test('a thread that dies fails the waiting statements and every later one; close still resolves', async () => {
    const t = await newThread();
    const waiting = t.query('select pg_sleep(5)').catch((e: unknown) => e);
    await Bun.sleep(50);
    await t.terminate();
    const err = await waiting;
    expect(isServiceError(err, DB_ERROR_CODES.DB_THREAD_EXITED)).toBe(true);
    expect(String((err as Error).message)).toContain('exited');
    const later = await t.transaction(async () => 1).catch((e: unknown) => e);
    expect(isServiceError(later, DB_ERROR_CODES.DB_THREAD_EXITED)).toBe(true);
    await t.close();
    await t.close();
  }, 60_000);

  test('openDatabase runs PGlite in its thread by default and on the main thread when asked; both close twice', async () => {
    for (const pgliteThread of [undefined, 'main'] as const) {
      const d = await openDatabase({ inMemory: true, migrate: false, pgliteThread });
      expect(await d.ping()).toBe(true);
      await d.close();
      await d.close();
      expect(await d.ping(300)).toBe(false);
    }
  }, 120_000);
});
