/**
 * PoolSources (src/jobs/pool-sources.ts) on a real database (PGlite, or
 * PostgreSQL with DATABASE_URL) and a real list server on loopback, port 0
 * (ALLOW_PRIVATE_TARGETS as the service tests run: the fetcher's guard has
 * its own tests, jobs-source-fetch.test.ts), time on a fake clock:
 * - a pool created with a source: woken by the change, its addresses added
 *   and the outcome shown in the pool object, the new ones told as a
 *   `sourced` change (what wakes the rounds); every `every_s` the list is
 *   fetched again: new addresses join, those gone from the list stay;
 * - the limits: as many as fit, the rest counted with the limit that kept them;
 * - a failed fetch: its code recorded, tried again after SOURCE_MIN_EVERY_S;
 * - two services on one database (two API nodes): each due time fetched once;
 * - a paused pool's sources wait; stop() mid-fetch is quick, safe twice, and
 *   leaves the source due.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAccount } from '../../src/accounts/accounts';
import { JOB_ERROR_CODES } from '../../src/error-codes';
import { PoolService, type PoolChange } from '../../src/jobs/pool-service';
import { PoolSources } from '../../src/jobs/pool-sources';
import { fetchSource } from '../../src/jobs/source-fetch';
import { memoryLogger } from '../../src/log';
import { DEFAULT_POOL_LIMITS, SOURCE_MIN_EVERY_S, type PoolLimits } from '../../src/pools/limits';
import { DEFAULT_PROXIES_QUERY } from '../../src/pools/query';
import type { PoolCreate } from '../../src/pools/types';
import { freshDatabase, type TestDatabase } from '../helpers/db';
import { FakeClock } from '../helpers/fake-clock';

let tdb: TestDatabase;
let server: Server;
let base = '';
const lists = new Map<string, string>();
const hits = new Map<string, number>();
const hanging: (() => void)[] = [];
const NOW = Date.UTC(2026, 5, 1, 12);
const EVERY_S = 600;

beforeAll(async () => {
  tdb = await freshDatabase();
  server = createServer((req, res) => {
    const path = req.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (path === '/hang') {
      hanging.push(() => res.destroy());
      return;
    }
    const body = lists.get(path);
    if (body === undefined) res.writeHead(404).end();
    else res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 60_000);
afterAll(async () => {
  for (const h of hanging) h();
  server.closeAllConnections();
  server.close();
  await tdb.cleanup();
});

let accountSeq = 0;
let clock: FakeClock;
beforeEach(() => {
  clock = new FakeClock(NOW);
});

async function newAccount(): Promise<string> {
  return (await createAccount(tdb.db, { email: `sources${++accountSeq}@pools.test` })).id;
}

const fetcher = (url: string, signal: AbortSignal) => fetchSource(url, { maxBytes: 1 << 20, timeoutMs: 5000, allowPrivateTargets: true, signal });

function service(limits: PoolLimits = DEFAULT_POOL_LIMITS) {
  const log = memoryLogger('debug');
  const pools = new PoolService({ db: tdb.db, limits, log, now: () => clock.now() });
  const sources = new PoolSources({ db: tdb.db, limits, fetch: fetcher, changes: pools, log, clock, pollMs: 60_000 });
  return { pools, sources, log };
}

const withSource = (path: string, proxies: string[] = []): PoolCreate => ({
  settings: { name: 'followed', type: 'http', region: 'us1', intervalS: 600, timeoutMs: 5000, https: true, customUrls: [], sources: [{ url: `${base}${path}`, everyS: EVERY_S }] },
  proxies: proxies.map((l) => {
    const [host, port] = l.split(':');
    return { host: host as string, port: Number(port), format: 'standard' as const, raw: l };
  }),
  totalInvalid: 0,
  totalDuplicates: 0,
});

/**
 * `ms` pass, a second at a time, each pass a timer starts awaited before the
 * clock moves on (a pass does real I/O: the fake clock cannot wait for it).
 */
async function pass(ms: number, ...running: PoolSources[]): Promise<void> {
  for (let t = 0; t < ms; t += 1000) {
    await clock.advance(Math.min(1000, ms - t));
    await Promise.all(running.map((r) => r.settled()));
  }
}

async function addresses(pools: PoolService, account: string, id: string): Promise<string[]> {
  const l = await pools.proxies(account, id, { ...DEFAULT_PROXIES_QUERY, status: 'all', limit: 1000 });
  return (l?.page.rows ?? []).map((r) => `${r.host}:${r.port}`).sort();
}

describe('PoolSources', () => {
  test('a new pool is woken at once; every every_s new addresses join and the old ones stay', async () => {
    const { pools, sources } = service();
    const changes: PoolChange[] = [];
    pools.onChange((c) => changes.push(c));
    const account = await newAccount();
    lists.set('/a.txt', '1.1.1.1:80\n# a comment\n\nnot an address\n2.2.2.2:8080\n1.1.1.1:80\n');
    sources.start();
    await sources.settled();
    const made = await pools.create(account, withSource('/a.txt', ['9.9.9.9:1']));
    await sources.settled(); // the change woke it
    const id = made.pool.id;
    expect(await addresses(pools, account, id)).toEqual(['1.1.1.1:80', '2.2.2.2:8080', '9.9.9.9:1']);
    let pool = await pools.get(account, id);
    expect(pool?.sources).toEqual([
      {
        url: `${base}/a.txt`,
        every_s: EVERY_S,
        next_fetch_at: new Date(NOW + EVERY_S * 1000).toISOString(),
        last_fetch: { at: new Date(NOW).toISOString(), error: null, found: 2, invalid: 1, added: 2, not_added: 0, limit: null },
      },
    ]);
    expect(pool?.counts.unchecked).toBe(3);
    expect(changes).toEqual([
      { kind: 'created', accountId: account, poolId: id, added: 1 },
      { kind: 'sourced', accountId: account, poolId: id, added: 2 },
    ]);

    // the list changes: one gone, one new
    lists.set('/a.txt', '2.2.2.2:8080\n3.3.3.3:3128\n');
    await pass(EVERY_S * 1000 - 1000, sources);
    expect(hits.get('/a.txt')).toBe(1); // not due yet
    await pass(1000, sources);
    expect(hits.get('/a.txt')).toBe(2);
    expect(await addresses(pools, account, id)).toEqual(['1.1.1.1:80', '2.2.2.2:8080', '3.3.3.3:3128', '9.9.9.9:1']);
    pool = await pools.get(account, id);
    expect(pool?.sources[0]?.last_fetch).toMatchObject({ found: 2, invalid: 0, added: 1, not_added: 0, error: null });
    expect(pool?.sources[0]?.next_fetch_at).toBe(new Date(NOW + 2 * EVERY_S * 1000).toISOString());
    expect(changes.at(-1)).toEqual({ kind: 'sourced', accountId: account, poolId: id, added: 1 });
    expect(changes).toHaveLength(3); // one per fetch that added some
    await sources.stop();
    await sources.stop(); // safe twice
    expect(sources.state).toBe('stopped');
  });

  test('the limits: as many as fit, the rest counted with the limit that kept them', async () => {
    const { pools, sources } = service({ ...DEFAULT_POOL_LIMITS, maxProxiesPerPool: 3, maxProxiesPerAccount: 100 });
    const account = await newAccount();
    lists.set('/five.txt', ['4.4.4.1:1', '4.4.4.2:1', '4.4.4.3:1', '4.4.4.4:1', '4.4.4.5:1'].join('\n'));
    sources.start();
    const made = await pools.create(account, withSource('/five.txt', ['4.4.4.2:1']));
    await sources.settled();
    // 4.4.4.2 was there; of the 4 new ones, 2 fit, in the list's order
    expect(await addresses(pools, account, made.pool.id)).toEqual(['4.4.4.1:1', '4.4.4.2:1', '4.4.4.3:1']);
    expect((await pools.get(account, made.pool.id))?.sources[0]?.last_fetch).toMatchObject({ found: 5, added: 2, not_added: 2, limit: 'proxies_per_pool' });
    await sources.stop();

    // the account's limit, tighter than the pool's
    const b = service({ ...DEFAULT_POOL_LIMITS, maxProxiesPerPool: 100, maxProxiesPerAccount: 4 });
    const other = await newAccount();
    b.sources.start();
    await b.pools.create(other, withSource('/nothing-here.txt', ['5.5.5.1:1', '5.5.5.2:1']));
    const second = await b.pools.create(other, withSource('/five.txt'));
    await b.sources.settled();
    expect(await addresses(b.pools, other, second.pool.id)).toEqual(['4.4.4.1:1', '4.4.4.2:1']);
    expect((await b.pools.get(other, second.pool.id))?.sources[0]?.last_fetch).toMatchObject({ added: 2, not_added: 3, limit: 'proxies_per_account' });
    await b.sources.stop();
  });

  test('a failed fetch: its code recorded, tried again after SOURCE_MIN_EVERY_S', async () => {
    const { pools, sources } = service();
    const account = await newAccount();
    sources.start();
    const made = await pools.create(account, withSource('/later.txt', ['6.6.6.6:1']));
    await sources.settled();
    const s = (await pools.get(account, made.pool.id))?.sources[0];
    expect(s?.last_fetch).toMatchObject({ error: JOB_ERROR_CODES.SOURCE_HTTP_STATUS, added: 0, found: 0 });
    expect(s?.next_fetch_at).toBe(new Date(NOW + SOURCE_MIN_EVERY_S * 1000).toISOString());
    lists.set('/later.txt', '7.7.7.7:1\n');
    await pass(SOURCE_MIN_EVERY_S * 1000, sources);
    expect(await addresses(pools, account, made.pool.id)).toEqual(['6.6.6.6:1', '7.7.7.7:1']);
    expect((await pools.get(account, made.pool.id))?.sources[0]?.last_fetch?.error).toBeNull();
    await sources.stop();
  });

  test('two services on one database (two API nodes): each due time is fetched once', async () => {
    const a = service();
    const b = new PoolSources({ db: tdb.db, limits: DEFAULT_POOL_LIMITS, fetch: fetcher, log: memoryLogger('debug'), clock, pollMs: 60_000 });
    const account = await newAccount();
    lists.set('/shared.txt', '8.8.8.1:1\n8.8.8.2:1\n');
    const made = await a.pools.create(account, withSource('/shared.txt'));
    a.sources.start();
    b.start();
    await Promise.all([a.sources.settled(), b.settled()]);
    expect(hits.get('/shared.txt')).toBe(1);
    for (let round = 2; round <= 3; round++) {
      a.sources.wake();
      b.wake();
      await Promise.all([a.sources.settled(), b.settled()]);
      expect(hits.get('/shared.txt')).toBe(round - 1); // woken, but not due
      await pass(EVERY_S * 1000, a.sources, b);
      expect(hits.get('/shared.txt')).toBe(round);
    }
    expect(await addresses(a.pools, account, made.pool.id)).toEqual(['8.8.8.1:1', '8.8.8.2:1']);
    await Promise.all([a.sources.stop(), b.stop()]);
  });

  test("a paused pool's sources wait; stop() mid-fetch is quick and leaves the source due", async () => {
    const { pools, sources } = service();
    const account = await newAccount();
    lists.set('/paused.txt', '9.9.9.1:1\n');
    const paused = await pools.create(account, withSource('/paused.txt', ['9.9.9.9:9']));
    await pools.update(account, paused.pool.id, { state: 'paused' });
    sources.start();
    await sources.settled();
    expect(hits.get('/paused.txt') ?? 0).toBe(0);

    const made = await pools.create(account, withSource('/hang', ['9.9.9.9:9']));
    await Bun.sleep(50); // the fetch is under way (the server holds it)
    const t0 = performance.now();
    await sources.stop();
    expect(performance.now() - t0).toBeLessThan(1000);
    const s = (await pools.get(account, made.pool.id))?.sources[0];
    expect(s?.last_fetch).toBeNull();
    expect(s?.next_fetch_at).toBe(new Date(NOW).toISOString());
    await pools.delete(account, made.pool.id);
    await pools.delete(account, paused.pool.id);
  });
});
