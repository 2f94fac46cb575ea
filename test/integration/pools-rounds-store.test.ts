/**
 * The rounds' statements of the pool store (src/pools/rounds-sql.ts through
 * store.ts) on PGlite and, with DATABASE_URL, on PostgreSQL: which pools are
 * runnable (owner-paused never, paused for checks yes, `exclude` honoured,
 * most overdue first, the due count capped), the next due time, the claim
 * (most overdue first, pushed to the horizon, concurrent claims disjoint),
 * pause / resume for checks (each tells once; resume spreads the overdue),
 * the restart's spread over each pool's interval, and recheck.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../../db/client';
import { createAccount } from '../../src/accounts/accounts';
import { parseProxyLine, type ParsedProxy } from '../../src/proxy/parse';
import { DEFAULT_POOL_LIMITS } from '../../src/pools/limits';
import {
  claimDue,
  createPool,
  nextDue,
  pauseForChecks,
  poolCounts,
  recheck,
  resumeForChecks,
  runnablePools,
  spreadAllOverdue,
  updatePool,
} from '../../src/pools/store';
import type { PoolSettings } from '../../src/pools/types';
import { freshPglite, freshPostgres, testDatabaseUrl, type TestDatabase } from '../helpers/db';

const NOW = Date.UTC(2026, 5, 1, 12);
const SETTINGS: PoolSettings = { name: 'r', type: 'http', region: 'us1', intervalS: 100, timeoutMs: 5000, https: true, customUrls: [], sources: [] };
const LIMITS = { ...DEFAULT_POOL_LIMITS };
const addresses = (n: number, net: number): ParsedProxy[] => Array.from({ length: n }, (_, i) => parseProxyLine(`10.${net}.0.${i + 1}:8080`) as ParsedProxy);

const url = testDatabaseUrl();
const DRIVERS: [string, () => Promise<TestDatabase>][] = [['PGlite', freshPglite], ...(url !== undefined ? [['PostgreSQL', () => freshPostgres(url)] as [string, () => Promise<TestDatabase>]] : [])];

let ids = 0;
const newId = () => `rounds${String(++ids).padStart(8, '0')}`;

for (const [name, open] of DRIVERS) {
  describe(`the rounds' store on ${name}`, () => {
    let tdb: TestDatabase | undefined;
    let db: Db;
    let seq = 0;
    /** A new account with one pool of `n` proxies, all due at `at`. */
    const pool = async (n: number, at = NOW, settings: Partial<PoolSettings> = {}) => {
      tdb ??= await open();
      db = tdb.db;
      const acc = (await createAccount(db, { email: `r${++seq}@rounds.test` })).id;
      const id = newId();
      await createPool(db, acc, id, { settings: { ...SETTINGS, ...settings }, proxies: addresses(n, seq), totalInvalid: 0, totalDuplicates: 0 }, LIMITS, at);
      return { acc, id };
    };
    const dueTimes = async (id: string) =>
      rowsOf<{ d: string | Date }>(await db.execute(sql`SELECT next_check_at AS d FROM pool_proxies WHERE pool_id = ${id} ORDER BY id`)).map((r) => new Date(r.d).getTime());
    const clear = async () => db.execute(sql`DELETE FROM pools`);
    afterAll(async () => {
      await tdb?.cleanup();
    });

    test('runnable pools: due ones, most overdue first, capped due count; owner-paused never, paused for checks yes; exclude honoured', async () => {
      const a = await pool(5, NOW - 2000);
      const b = await pool(3, NOW - 1000);
      const c = await pool(2, NOW - 3000);
      const later = await pool(2, NOW + 60_000);
      await updatePool(db, c.acc, c.id, { state: 'paused' }, LIMITS, NOW);
      const found = await runnablePools(db, NOW, 10, 4, []);
      expect(found.map((f) => [f.pool.id, f.due])).toEqual([
        [a.id, 4],
        [b.id, 3],
      ]);
      expect(found[0]!.pool).toMatchObject({ accountId: a.acc, intervalS: 100, state: 'active' });
      expect((await runnablePools(db, NOW, 10, 10, [a.id])).map((f) => f.pool.id)).toEqual([b.id]);
      expect((await runnablePools(db, NOW, 1, 10, [])).map((f) => f.pool.id)).toEqual([a.id]);
      expect(await pauseForChecks(db, b.id, NOW)).toBe(true);
      expect(await pauseForChecks(db, b.id, NOW)).toBe(false); // tells once
      expect(await pauseForChecks(db, c.id, NOW)).toBe(false); // the owner's pause stays the owner's
      expect((await runnablePools(db, NOW, 10, 10, [])).map((f) => [f.pool.id, f.pool.pausedReason])).toEqual([
        [a.id, null],
        [b.id, 'insufficient_checks'],
      ]);
      // the earliest due of the runnable pools (the owner-paused pool's earlier one does not count)
      expect(await nextDue(db)).toBe(NOW - 2000);
      expect(later.id).toBeTruthy();
      await clear();
      expect(await nextDue(db)).toBeNull();
    });

    test('resume for checks: once, and the overdue are spread over the interval', async () => {
      const p = await pool(4, NOW - 10_000);
      expect(await resumeForChecks(db, p.id, NOW)).toBe(false); // active: nothing to resume
      await pauseForChecks(db, p.id, NOW);
      expect(await resumeForChecks(db, p.id, NOW)).toBe(true);
      expect(await resumeForChecks(db, p.id, NOW)).toBe(false);
      expect(await dueTimes(p.id)).toEqual([NOW, NOW + 25_000, NOW + 50_000, NOW + 75_000]);
      await clear();
    });

    test('claim: the most overdue first, pushed to the horizon; concurrent claims never share a proxy', async () => {
      const p = await pool(30, NOW - 5000);
      await db.execute(sql`UPDATE pool_proxies SET next_check_at = next_check_at - (id % 7) * interval '1 second' WHERE pool_id = ${p.id}`);
      const before = rowsOf<{ id: number; d: string | Date }>(await db.execute(sql`SELECT id, next_check_at AS d FROM pool_proxies WHERE pool_id = ${p.id}`))
        .map((r) => ({ id: Number(r.id), due: new Date(r.d).getTime() }))
        .sort((x, y) => x.due - y.due || x.id - y.id);
      const first = await claimDue(db, p.id, NOW, 5, NOW + 99_000);
      expect(first.map((r) => r.id).sort((x, y) => x - y)).toEqual(before.slice(0, 5).map((r) => r.id).sort((x, y) => x - y));
      expect(first.every((r) => r.nextCheckAt.getTime() === NOW + 99_000)).toBe(true);
      const claims = await Promise.all(Array.from({ length: 6 }, () => claimDue(db, p.id, NOW, 6, NOW + 99_000)));
      const all = [...first, ...claims.flat()].map((r) => r.id);
      expect(new Set(all).size).toBe(all.length);
      expect(all.length).toBe(30);
      expect(await claimDue(db, p.id, NOW, 5, NOW + 99_000)).toEqual([]);
      await clear();
    });

    test('recheck: the given addresses due now (others and unknown ignored); the restart spread per pool interval', async () => {
      const p = await pool(3, NOW + 50_000);
      const q = await pool(4, NOW - 50_000, { intervalS: 40 });
      const addr = addresses(3, seq - 1);
      expect(await recheck(db, p.id, [addr[1]!, { host: '10.99.0.1', port: 1 }], NOW)).toBe(1);
      expect(await dueTimes(p.id)).toEqual([NOW + 50_000, NOW, NOW + 50_000]);
      expect(await recheck(db, p.id, [addr[1]!], NOW)).toBe(0); // already due
      await spreadAllOverdue(db, NOW + 1);
      // p's one due proxy (NOW) overdue at NOW + 1: alone, due at NOW + 1; q's four over 40 s
      expect(await dueTimes(p.id)).toEqual([NOW + 50_000, NOW + 1, NOW + 50_000]);
      expect(await dueTimes(q.id)).toEqual([NOW + 1, NOW + 10_001, NOW + 20_001, NOW + 30_001]);
      expect(await poolCounts(db, q.id)).toEqual({ total: 4, working: 0, failed: 0, unchecked: 4 });
      expect(await poolCounts(db, 'nosuchpool0')).toEqual({ total: 0, working: 0, failed: 0, unchecked: 0 });
      await clear();
    });
  });
}
