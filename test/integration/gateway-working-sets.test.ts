/**
 * The gateway's working sets over the real pool store (src/gateway/working-sets.ts),
 * on PGlite and, with DATABASE_URL, PostgreSQL: a pool's working proxies
 * (seeded through applyResults with rows folded by fold.ts) as upstreams;
 * another account's pool and an unknown pool null; the same WorkingSet object
 * while nothing changes (no read within the TTL); an event of the pool (the
 * hub's watch) makes the next use read again, and a read that finds the
 * same upstreams keeps the object; the TTL as the fallback; a deleted pool's
 * entry goes; concurrent uses share one read; failures reported become one
 * coalesced re-check per pool, each upstream at most once per quiet period;
 * a failed read serves the last set; the cache is bounded (LRU).
 */
import { afterAll, describe, expect, test } from 'bun:test';
import type { Db } from '../../db/client';
import { createAccount } from '../../src/accounts/accounts';
import { PoolWorkingSets } from '../../src/gateway/working-sets';
import { memoryLogger } from '../../src/log';
import { proxyEvent } from '../../src/pools/events';
import { PoolEventsHub } from '../../src/pools/events-hub';
import { DEFAULT_POOL_LIMITS } from '../../src/pools/limits';
import { createPool, deletePool } from '../../src/pools/store';
import type { PoolRecheckPort } from '../../src/pools/ports';
import { parseProxyLine, type ParsedProxy } from '../../src/proxy/parse';
import type { ProxyAddress } from '../../src/proxy/types';
import { freshPglite, freshPostgres, testDatabaseUrl, type TestDatabase } from '../helpers/db';
import { FakeClock } from '../helpers/fake-clock';
import { failed, seedVerdicts, working } from '../helpers/pool-seed';

const NOW = Date.UTC(2026, 10, 26, 12);
const url = testDatabaseUrl();
const DRIVERS: [string, () => Promise<TestDatabase>][] = [['PGlite', freshPglite], ...(url !== undefined ? [['PostgreSQL', () => freshPostgres(url)] as [string, () => Promise<TestDatabase>]] : [])];

class RecordingRecheck implements PoolRecheckPort {
  readonly calls: { poolId: string; proxies: ProxyAddress[] }[] = [];
  recheck(poolId: string, proxies: readonly ProxyAddress[]): void {
    this.calls.push({ poolId, proxies: [...proxies] });
  }
}

let ids = 0;
const newId = () => `wset${String(++ids).padStart(8, '0')}`;

for (const [name, open] of DRIVERS) {
  describe(`gateway working sets over the pool store on ${name}`, () => {
    let tdb: TestDatabase | undefined;
    let db: Db;
    let seq = 0;
    afterAll(async () => {
      await tdb?.cleanup();
    });

    /** An account with a pool of `lines`, proxy i working when `up(i)`, failed otherwise (null: unchecked). */
    async function seeded(lines: string[], up: (i: number) => boolean | null, type: 'http' | 'auto' = 'http'): Promise<{ account: string; pool: string }> {
      tdb ??= await open();
      db = tdb.db;
      const account = (await createAccount(db, { email: `w${++seq}@gw.test` })).id;
      const pool = newId();
      const proxies = lines.map((l) => parseProxyLine(l) as ParsedProxy);
      await createPool(db, account, pool, { settings: { name: 'gw', type, region: 'us1', intervalS: 600, timeoutMs: 5000, https: false, customUrls: [], sources: [] }, proxies, totalInvalid: 0, totalDuplicates: 0 }, DEFAULT_POOL_LIMITS, NOW);
      await seedVerdicts(db, pool, {
        poolType: type,
        intervalS: 600,
        nowMs: NOW,
        plan: (_row, i) => {
          const u = up(i);
          return u === null ? null : [{ probe: u ? working(100 + i, type === 'auto' ? { protocols: i % 2 === 0 ? ['http'] : ['socks5', 'http'] } : {}) : failed(), geo: { country: i % 2 === 0 ? 'DE' : 'FR' } as never }];
        },
      });
      return { account, pool };
    }

    function sets(o: { clock?: FakeClock; hub?: PoolEventsHub; recheck?: PoolRecheckPort; ttlMs?: number; database?: Db; maxPools?: number } = {}) {
      return new PoolWorkingSets({
        db: o.database ?? db,
        events: o.hub ?? new PoolEventsHub(),
        recheck: o.recheck ?? new RecordingRecheck(),
        authenticate: async () => null,
        log: memoryLogger('warn'),
        clock: o.clock ?? new FakeClock(NOW),
        ...(o.ttlMs !== undefined ? { ttlMs: o.ttlMs } : {}),
        ...(o.maxPools !== undefined ? { maxPools: o.maxPools } : {}),
      });
    }

    test('the working proxies as upstreams (credentials, type, country); failed and unchecked ones left out; another account or an unknown pool: null', async () => {
      const { account, pool } = await seeded(['10.2.0.1:3128', 'u:p@10.2.0.2:3128', '10.2.0.3:3128', '10.2.0.4:3128'], (i) => (i === 3 ? null : i !== 2));
      const ws = sets();
      const set = await ws.workingSet(account, pool);
      expect(set?.poolId).toBe(pool);
      expect(set?.upstreams.map((u) => ({ host: u.host, user: u.username ?? null, type: u.type, country: u.country }))).toEqual([
        { host: '10.2.0.1', user: null, type: 'http', country: 'DE' },
        { host: '10.2.0.2', user: 'u', type: 'http', country: 'FR' },
      ]);
      const other = (await createAccount(db, { email: `w${++seq}@gw.test` })).id;
      expect(await ws.workingSet(other, pool)).toBeNull();
      expect(await ws.workingSet(account, 'zzzzzzzzzzzz')).toBeNull();
      expect(ws.size).toBe(1);
    });

    test('an auto pool: each upstream speaks the protocol it passed with; protocols from the mask', async () => {
      const { account, pool } = await seeded(['10.3.0.1:1080', '10.3.0.2:1080'], () => true, 'auto');
      const set = await sets().workingSet(account, pool);
      expect(set?.upstreams.map((u) => [u.type, u.protocols])).toEqual([
        ['http', ['http']],
        ['socks5', ['socks5', 'http']],
      ]);
    });

    test('cached: the same object and no read within the TTL; an event marks it stale, a read with nothing changed keeps the object; the TTL reads again', async () => {
      const { account, pool } = await seeded(['10.4.0.1:3128', '10.4.0.2:3128'], () => true);
      const clock = new FakeClock(NOW);
      const hub = new PoolEventsHub();
      const ws = sets({ clock, hub, ttlMs: 30_000 });
      const first = await ws.workingSet(account, pool);
      const concurrent = await Promise.all([ws.workingSet(account, pool), ws.workingSet(account, pool)]);
      expect(concurrent[0]).toBe(first);
      expect(ws.reads).toBe(1);
      hub.publish(account, proxyEvent(pool, 'proxy.up', NOW, { host: '10.4.0.1', port: 3128 }, { total: 2, working: 2, failed: 0, unchecked: 0 }, {}));
      expect(await ws.workingSet(account, pool)).toBe(first); // read again, nothing changed: same object
      expect(ws.reads).toBe(2);
      await clock.advance(29_000);
      await ws.workingSet(account, pool);
      expect(ws.reads).toBe(2);
      // a proxy fails (as the rounds write it); the TTL is the fallback without an event
      await seedVerdicts(db, pool, { poolType: 'http', intervalS: 600, nowMs: NOW + 1000, plan: (_r, i) => (i === 0 ? [{ probe: failed() }] : null) });
      await clock.advance(1_000);
      const after = await ws.workingSet(account, pool);
      expect(ws.reads).toBe(3);
      expect(after).not.toBe(first);
      expect(after?.upstreams.map((u) => u.host)).toEqual(['10.4.0.2']);
      // another account's event for the same id does nothing
      hub.publish('0b6f9f5e-3c1a-4f7e-9a57-2f4f1c2d8e11', proxyEvent(pool, 'proxy.down', NOW, { host: '10.4.0.2', port: 3128 }, { total: 2, working: 0, failed: 2, unchecked: 0 }, {}));
      await ws.workingSet(account, pool);
      expect(ws.reads).toBe(3);
    });

    test('a deleted pool: its entry goes on the close signal, and the next use answers null', async () => {
      const { account, pool } = await seeded(['10.5.0.1:3128'], () => true);
      const hub = new PoolEventsHub();
      const ws = sets({ hub });
      expect(await ws.workingSet(account, pool)).not.toBeNull();
      expect(hub.watchedAccounts).toBe(1);
      expect(await deletePool(db, account, pool)).toBe(true);
      hub.closePool(account, pool);
      expect(ws.size).toBe(0);
      expect(hub.watchedAccounts).toBe(0);
      expect(await ws.workingSet(account, pool)).toBeNull();
    });

    test('bounded: past maxPools the least recently used pool goes, with its account\'s watch', async () => {
      const one = await seeded(['10.8.0.1:3128'], () => true);
      const two = await seeded(['10.8.0.2:3128'], () => true);
      const hub = new PoolEventsHub();
      const ws = sets({ hub, maxPools: 1 });
      await ws.workingSet(one.account, one.pool);
      await ws.workingSet(two.account, two.pool);
      expect(ws.size).toBe(1);
      expect(hub.watchedAccounts).toBe(1);
      expect(hub.listens(one.account)).toBe(false);
      const reads = ws.reads;
      await ws.workingSet(two.account, two.pool);
      expect(ws.reads).toBe(reads); // the one kept is still cached
    });

    test('a failed read serves the last set read; with none the error goes to the gateway', async () => {
      const { account, pool } = await seeded(['10.6.0.1:3128'], () => true);
      const clock = new FakeClock(NOW);
      let broken = false;
      const flaky = new Proxy(db, {
        get(target, prop, receiver) {
          if (prop === 'execute' && broken) return async () => Promise.reject(new Error('database down'));
          const v = Reflect.get(target, prop, receiver);
          return typeof v === 'function' ? v.bind(target) : v;
        },
      });
      const ws = sets({ clock, database: flaky as Db });
      const first = await ws.workingSet(account, pool);
      broken = true;
      await clock.advance(60_000);
      expect(await ws.workingSet(account, pool)).toBe(first);
      await expect(sets({ database: flaky as Db }).workingSet(account, pool)).rejects.toThrow('database down');
    });

    test('reported failures: one re-check per pool after the coalescing delay, each upstream once per quiet period', async () => {
      const { account, pool } = await seeded(['10.7.0.1:3128', 'u:p@10.7.0.2:3128'], () => true);
      const clock = new FakeClock(NOW);
      const recheck = new RecordingRecheck();
      const ws = sets({ clock, recheck });
      const set = (await ws.workingSet(account, pool))!;
      const [a, b] = set.upstreams as [never, never];
      ws.reportFailure(pool, a);
      ws.reportFailure(pool, a);
      ws.reportFailure(pool, b);
      expect(recheck.calls).toEqual([]);
      await clock.advance(100);
      expect(recheck.calls).toEqual([{ poolId: pool, proxies: [{ host: '10.7.0.1', port: 3128 }, { host: '10.7.0.2', port: 3128, username: 'u', password: 'p' }] }]);
      ws.reportFailure(pool, a); // within the quiet period: nothing
      await clock.advance(1_000);
      expect(recheck.calls.length).toBe(1);
      await clock.advance(30_000);
      ws.reportFailure(pool, a);
      ws.stop(); // hands the pending report over at once
      expect(recheck.calls.length).toBe(2);
      ws.stop();
    });
  });
}
