/**
 * The pool store (src/pools/store.ts) on PGlite and, with DATABASE_URL, on
 * PostgreSQL in the same run: create / list / get / update / delete as the
 * owner sees them (another account's pool is absent), the limits (nothing of
 * a refused request stays), PATCH's order and its schedule effects (resume
 * spreads the overdue, a shorter interval pulls due times in), the proxies
 * listing, the scheduling side's writes, and the limits under concurrent
 * requests (real connections on PostgreSQL: the account's pool lock makes
 * them pass one at a time).
 */
import { recordBatchStatement } from '../../src/pools/flush-sql';
import { afterAll, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../../db/client';
import { createAccount } from '../../src/accounts/accounts';
import { parseProxyLine, type ParsedProxy } from '../../src/proxy/parse';
import { PoolLimitError } from '../../src/pools/errors';
import { foldCheck } from '../../src/pools/fold';
import { DEFAULT_POOL_LIMITS, type PoolLimits } from '../../src/pools/limits';
import { DEFAULT_PROXIES_QUERY } from '../../src/pools/query';
import {
  ANALYZE_AFTER_ADDED,
  applyResults,
  createPool,
  deletePool,
  dueProxies,
  getPool,
  listPools,
  proxiesPage,
  updatePool,
} from '../../src/pools/store';
import type { PoolCreate, PoolSettings } from '../../src/pools/types';
import { freshPglite, freshPostgres, testDatabaseUrl, type TestDatabase } from '../helpers/db';

const NOW = Date.UTC(2026, 5, 1, 12);
const LIMITS: PoolLimits = { ...DEFAULT_POOL_LIMITS, maxPoolsPerAccount: 3, maxProxiesPerPool: 50, maxProxiesPerAccount: 100 };
const SETTINGS: PoolSettings = { name: 'mine', type: 'http', region: 'us1', intervalS: 600, timeoutMs: 5000, https: true, customUrls: [], sources: [] };

const parsed = (lines: string[]): ParsedProxy[] => lines.map((l) => parseProxyLine(l) as ParsedProxy);
const addresses = (n: number, from = 0, net = 1): ParsedProxy[] => parsed(Array.from({ length: n }, (_, i) => `10.${net}.${(from + i) >> 8}.${(from + i) & 255}:8080`));
const create = (proxies: ParsedProxy[], settings: Partial<PoolSettings> = {}): PoolCreate => ({
  settings: { ...SETTINGS, ...settings },
  proxies,
  totalInvalid: 0,
  totalDuplicates: 0,
});
const list = (proxies: ParsedProxy[]) => ({ proxies, totalInvalid: 0, totalDuplicates: 0 });

let ids = 0;
const newId = () => `pool${String(++ids).padStart(10, '0')}`;

async function limitOf(p: Promise<unknown>): Promise<string | null> {
  try {
    await p;
    return null;
  } catch (e) {
    if (!(e instanceof PoolLimitError)) throw e;
    return `${e.limit}:${e.max}`;
  }
}

const url = testDatabaseUrl();
const DRIVERS: [string, () => Promise<TestDatabase>][] = [['PGlite', freshPglite], ...(url !== undefined ? [['PostgreSQL', () => freshPostgres(url)] as [string, () => Promise<TestDatabase>]] : [])];

for (const [name, open] of DRIVERS) {
  describe(`the pool store on ${name}`, () => {
    let tdb: TestDatabase | undefined;
    let db: Db;
    let seq = 0;
    const account = async () => {
      tdb ??= await open();
      db = tdb.db;
      return (await createAccount(db, { email: `a${++seq}@pools.test` })).id;
    };
    const count = async (q: ReturnType<typeof sql>) => Number(rowsOf<{ n: number }>(await db.execute(q))[0]?.n);
    afterAll(async () => {
      await tdb?.cleanup();
    });

    test('create: the pool object (defaults, counts, due at once, checks per day), get and list; another account sees nothing', async () => {
      const a = await account();
      const b = await account();
      const id = newId();
      const made = await createPool(db, a, id, create(parsed(['1.1.1.1:80', 'u:p@2.2.2.2:81', 'h.example:83:us:pw'])), LIMITS, NOW);
      expect(made.added).toBe(3);
      expect(made.pool).toEqual({
        id,
        name: 'mine',
        type: 'http',
        region: 'us1',
        interval_s: 600,
        timeout: 5000,
        https: true,
        state: 'active',
        paused_reason: null,
        created_at: new Date(NOW).toISOString(),
        counts: { total: 3, working: 0, failed: 0, unchecked: 3 },
        last_round_at: null,
        next_due_at: new Date(NOW).toISOString(),
        checks_last_24h: 0,
        // 86 400 / (600 x 0.95) each
        checks_per_day: Math.round((3 * 86_400) / (600 * 0.95)),
        customUrls: [],
        sources: [],
      });
      expect(await getPool(db, a, id, NOW)).toEqual(made.pool);
      expect(await getPool(db, b, id, NOW)).toBeNull();
      expect(await listPools(db, b, NOW)).toEqual([]);
      const second = await createPool(
        db,
        a,
        newId(),
        create([], {
          name: 'auto with sources',
          type: 'auto',
          customUrls: [{ name: 'example-com', url: 'https://example.com/', requiredStatusCodes: [200, 204], requiredText: 'Example', caseSensitive: false }],
          sources: [{ url: 'https://lists.example/p.txt', everyS: 900 }],
        }),
        LIMITS,
        NOW + 1,
      );
      expect(second.pool).toMatchObject({
        type: 'auto',
        counts: { total: 0, working: 0, failed: 0, unchecked: 0 },
        next_due_at: null,
        checks_per_day: 0,
        customUrls: [{ url: 'https://example.com/', requiredStatusCodes: [200, 204], requiredText: 'Example', caseSensitive: false }],
        sources: [{ url: 'https://lists.example/p.txt', every_s: 900 }],
      });
      expect((await listPools(db, a, NOW)).map((p) => p.name)).toEqual(['mine', 'auto with sources']);
    });

    test('a change that adds ANALYZE_AFTER_ADDED proxies or more takes the tables\' statistics again; a smaller one does not', async () => {
      const a = await account();
      const tuples = async () => count(sql`SELECT reltuples::float8 AS n FROM pg_class WHERE relname = 'pool_proxies'`);
      const rows = async () => count(sql`SELECT count(*)::float8 AS n FROM pool_proxies`);
      const id = newId();
      await createPool(db, a, id, create(addresses(ANALYZE_AFTER_ADDED, 0, 201)), DEFAULT_POOL_LIMITS, NOW);
      expect(await tuples()).toBe(await rows()); // ANALYZE reads every row of a table this small
      const before = await tuples();
      await updatePool(db, a, id, { add: list(addresses(ANALYZE_AFTER_ADDED - 1, 0, 202)) }, DEFAULT_POOL_LIMITS, NOW);
      expect(await tuples()).toBe(before);
      await updatePool(db, a, id, { add: list(addresses(ANALYZE_AFTER_ADDED, 0, 203)) }, DEFAULT_POOL_LIMITS, NOW);
      expect(await tuples()).toBe(await rows());
    });

    test('a failed ANALYZE does not fail the change that committed: the pool is created once', async () => {
      const a = await account();
      const failing = new Proxy(db, {
        get(target, key, receiver) {
          if (key !== 'execute') return Reflect.get(target, key, receiver);
          return (q: Parameters<Db['execute']>[0]) => {
            if (JSON.stringify(q).includes('ANALYZE')) return Promise.reject(new Error('canceling statement due to statement timeout'));
            return target.execute(q);
          };
        },
      });
      const id = newId();
      const made = await createPool(failing, a, id, create(addresses(ANALYZE_AFTER_ADDED, 0, 204)), DEFAULT_POOL_LIMITS, NOW);
      expect(made.added).toBe(ANALYZE_AFTER_ADDED);
      expect(await count(sql`SELECT count(*)::float8 AS n FROM pools WHERE id = ${id}`)).toBe(1);
    });

    test('limits on create: pools per account, proxies per pool and per account; a refused create writes nothing', async () => {
      const a = await account();
      expect(await limitOf(createPool(db, a, newId(), create(addresses(51)), LIMITS, NOW))).toBe('proxies_per_pool:50');
      await createPool(db, a, newId(), create(addresses(50, 0)), LIMITS, NOW);
      await createPool(db, a, newId(), create(addresses(40, 100)), LIMITS, NOW);
      expect(await limitOf(createPool(db, a, newId(), create(addresses(11, 200)), LIMITS, NOW))).toBe('proxies_per_account:100');
      await createPool(db, a, newId(), create(addresses(10, 200)), LIMITS, NOW);
      expect(await limitOf(createPool(db, a, newId(), create([]), LIMITS, NOW))).toBe('pools_per_account:3');
      const pools = await listPools(db, a, NOW);
      expect(pools.map((p) => p.counts.total)).toEqual([50, 40, 10]);
      expect(await count(sql`SELECT count(*)::float8 AS n FROM pools WHERE account_id = ${a}::uuid`)).toBe(3);
    });

    test('update: settings, remove before add, counts; over a limit nothing of the request stays; another account: null', async () => {
      const a = await account();
      const id = newId();
      await createPool(db, a, id, create(addresses(30)), LIMITS, NOW);
      expect(await updatePool(db, await account(), id, { name: 'x' }, LIMITS, NOW)).toBeNull();
      const u = await updatePool(db, a, id, { name: 'renamed', timeoutMs: 3000, https: false, remove: list(addresses(10)), add: list(addresses(25, 20)) }, LIMITS, NOW);
      expect(u).not.toBeNull();
      // 10 removed (0..9); of 20..44, 20..29 were there already: 15 added
      expect([u!.removed, u!.added, u!.pool.counts.total]).toEqual([10, 15, 35]);
      expect(u!.pool).toMatchObject({ name: 'renamed', timeout: 3000, https: false });
      // 35 + 16 > 50: refused, and the rename of the same request is rolled back with it
      expect(await limitOf(updatePool(db, a, id, { name: 'not kept', add: list(addresses(16, 100)) }, LIMITS, NOW))).toBe('proxies_per_pool:50');
      const after = await getPool(db, a, id, NOW);
      expect([after!.name, after!.counts.total]).toEqual(['renamed', 35]);
      // adding only addresses already in the pool changes nothing and passes whatever the limits
      expect((await updatePool(db, a, id, { add: list(addresses(10, 20)) }, { ...LIMITS, maxProxiesPerPool: 1 }, NOW))!.added).toBe(0);
    });

    test('state: paused by the owner (no next due), resumed with the overdue spread over one interval', async () => {
      const a = await account();
      const id = newId();
      await createPool(db, a, id, create(addresses(8)), LIMITS, NOW);
      const paused = await updatePool(db, a, id, { state: 'paused' }, LIMITS, NOW);
      expect([paused!.previousState, paused!.pool.state, paused!.pool.paused_reason, paused!.pool.next_due_at]).toEqual(['active', 'paused', 'owner', null]);
      const later = NOW + 3_600_000;
      const resumed = await updatePool(db, a, id, { state: 'active' }, LIMITS, later);
      expect([resumed!.previousState, resumed!.pool.state, resumed!.pool.paused_reason]).toEqual(['paused', 'active', null]);
      const due = rowsOf<{ ms: number }>(await db.execute(sql`SELECT floor(extract(epoch FROM next_check_at) * 1000)::float8 AS ms FROM pool_proxy_rows WHERE pool_id = ${id} ORDER BY next_check_at, id`)).map((r) => Number(r.ms) - later);
      expect(due).toEqual([0, 75_000, 150_000, 225_000, 300_000, 375_000, 450_000, 525_000]);
    });

    test('a shorter interval brings due times later than one new interval within it; a longer one leaves them', async () => {
      const a = await account();
      const id = newId();
      await createPool(db, a, id, create(addresses(4)), LIMITS, NOW);
      await db.execute(sql`UPDATE pool_proxy_state SET next_check_at = ${new Date(NOW + 3_000_000).toISOString()}::timestamptz WHERE proxy_id IN (SELECT id FROM pool_proxies WHERE pool_id = ${id})`);
      await updatePool(db, a, id, { intervalS: 7200 }, LIMITS, NOW);
      expect(await count(sql`SELECT count(*)::float8 AS n FROM pool_proxy_rows WHERE pool_id = ${id} AND next_check_at = ${new Date(NOW + 3_000_000).toISOString()}::timestamptz`)).toBe(4);
      const u = await updatePool(db, a, id, { intervalS: 600 }, LIMITS, NOW);
      expect(u!.pool.interval_s).toBe(600);
      const due = rowsOf<{ ms: number }>(await db.execute(sql`SELECT floor(extract(epoch FROM next_check_at) * 1000)::float8 AS ms FROM pool_proxy_rows WHERE pool_id = ${id} ORDER BY 1`)).map((r) => Number(r.ms) - NOW);
      expect(due).toEqual([0, 150_000, 300_000, 450_000]);
    });

    test('delete: the pool, its proxies and rounds go; another account cannot', async () => {
      const a = await account();
      const id = newId();
      await createPool(db, a, id, create(addresses(5)), LIMITS, NOW);
      await db.execute(recordBatchStatement(id, null, { checked: 5, working: 0, charged: 5 }, NOW, NOW));
      expect(await deletePool(db, await account(), id)).toBe(false);
      expect(await deletePool(db, a, id)).toBe(true);
      expect(await deletePool(db, a, id)).toBe(false);
      expect(await getPool(db, a, id, NOW)).toBeNull();
      expect(await count(sql`SELECT count(*)::float8 AS n FROM pool_proxies WHERE pool_id = ${id}`)).toBe(0);
      expect(await count(sql`SELECT count(*)::float8 AS n FROM pool_rounds WHERE pool_id = ${id}`)).toBe(0);
    });

    test('the proxies listing; a batch written by an owner shows in it and in the pool object', async () => {
      const a = await account();
      const id = newId();
      await createPool(db, a, id, create(parsed(['1.1.1.1:80', '2.2.2.2:80', '3.3.3.3:80'])), LIMITS, NOW);
      expect(await proxiesPage(db, await account(), id, DEFAULT_PROXIES_QUERY)).toBeNull();
      expect((await proxiesPage(db, a, id, DEFAULT_PROXIES_QUERY))!.page.rows).toEqual([]);
      const unchecked = await proxiesPage(db, a, id, { ...DEFAULT_PROXIES_QUERY, status: 'unchecked', limit: 2 });
      expect(unchecked!.type).toBe('http');
      expect(unchecked!.page.rows.map((r) => r.host)).toEqual(['1.1.1.1', '2.2.2.2']);
      expect(unchecked!.page.nextCursor).not.toBeNull();

      const due = await dueProxies(db, id, NOW, 10);
      expect(due).toHaveLength(3);
      const ctx = { poolType: 'http' as const, intervalS: 600, nowMs: NOW, random: () => 0 };
      const ok = { status: 'working' as const, statusCode: 200, responseTimeMs: 80, anonymity: 'elite' as const, origin: '1.1.1.1', error: null };
      const bad = { status: 'failed' as const, statusCode: null, responseTimeMs: 5000, anonymity: null, origin: null, error: { code: 'timeout' as const, message: 'no answer' } };
      await applyResults(db, id, [foldCheck(due[0]!, ok, null, ctx).row, foldCheck(due[1]!, bad, null, ctx).row, foldCheck(due[2]!, ok, null, ctx).row]);
      const [batch] = rowsOf<{ seq: number }>(await db.execute(recordBatchStatement(id, null, { checked: 3, working: 2, charged: 3 }, NOW, NOW + 5000)));
      expect(batch?.seq).toBe(1);
      const working = await proxiesPage(db, a, id, DEFAULT_PROXIES_QUERY);
      expect(working!.page.rows.map((r) => [r.host, r.status, r.latencyP50Ms])).toEqual([
        ['1.1.1.1', 'working', 80],
        ['3.3.3.3', 'working', 80],
      ]);
      const pool = await getPool(db, a, id, NOW + 5000);
      expect(pool).toMatchObject({ counts: { total: 3, working: 2, failed: 1, unchecked: 0 }, checks_last_24h: 3, last_round_at: new Date(NOW + 5000).toISOString() });
      expect(pool!.next_due_at).toBe(new Date(NOW + 600_000).toISOString());
    });

    test('concurrent requests of one account never pass a limit together', async () => {
      const a = await account();
      // 8 creates at once, 3 pools allowed
      const creates = await Promise.all(Array.from({ length: 8 }, () => limitOf(createPool(db, a, newId(), create(addresses(5, 0, 7)), LIMITS, NOW))));
      expect(creates.filter((r) => r === null)).toHaveLength(3);
      expect(creates.filter((r) => r === 'pools_per_account:3')).toHaveLength(5);
      const pools = await listPools(db, a, NOW);
      expect(pools).toHaveLength(3);
      // 3 x 5 = 15 in; 10 adds of 20 new addresses each at once into three pools, 100 allowed in all: 4 fit
      const adds = await Promise.all(
        Array.from({ length: 10 }, (_, i) => limitOf(updatePool(db, a, pools[i % 3]!.id, { add: list(addresses(20, 1000 + i * 20, 8)) }, { ...LIMITS, maxProxiesPerPool: 1000 }, NOW))),
      );
      expect(adds.filter((r) => r === null)).toHaveLength(4);
      expect(adds.filter((r) => r === 'proxies_per_account:100')).toHaveLength(6);
      const total = (await listPools(db, a, NOW)).reduce((n, p) => n + p.counts.total, 0);
      expect(total).toBe(95);
    });
  });
}
