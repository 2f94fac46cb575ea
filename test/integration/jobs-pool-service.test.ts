/**
 * PoolService (src/jobs/pool-service.ts) on a real database: new ids of the
 * pool id rule, the configured limits applied, every committed change told
 * to the listeners (and nothing for what was refused or not found), a
 * listener that throws logged without undoing anything, the clock it reads
 * the listing at; the owner's pause and resume published (publishTo).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createAccount } from '../../src/accounts/accounts';
import { PoolService, type PoolChange } from '../../src/jobs/pool-service';
import { memoryLogger } from '../../src/log';
import type { PoolEvent } from '../../src/pools/events';
import { PoolLimitError } from '../../src/pools/errors';
import { DEFAULT_POOL_LIMITS } from '../../src/pools/limits';
import { isPoolId } from '../../src/pools/pool-id';
import { DEFAULT_PROXIES_QUERY } from '../../src/pools/query';
import { parseProxyLine, type ParsedProxy } from '../../src/proxy/parse';
import type { PoolCreate } from '../../src/pools/types';
import { freshDatabase, type TestDatabase } from '../helpers/db';

let tdb: TestDatabase;
let account = '';
const NOW = Date.UTC(2026, 5, 1, 12);
const req = (lines: string[]): PoolCreate => ({
  settings: { name: 'p', type: 'http', region: 'us1', intervalS: 600, timeoutMs: 5000, https: true, customUrls: [], sources: [] },
  proxies: lines.map((l) => parseProxyLine(l) as ParsedProxy),
  totalInvalid: 0,
  totalDuplicates: 0,
});
const list = (lines: string[]) => ({ proxies: lines.map((l) => parseProxyLine(l) as ParsedProxy), totalInvalid: 0, totalDuplicates: 0 });

beforeAll(async () => {
  tdb = await freshDatabase();
  account = (await createAccount(tdb.db, { email: 'svc@pools.test' })).id;
}, 60_000);
afterAll(async () => {
  await tdb.cleanup();
});

describe('PoolService', () => {
  test("publishes the owner's pause and resume (pool.paused reason owner, pool.resumed) with the counts after the PATCH; no event for other changes", async () => {
    const svc = new PoolService({ db: tdb.db, limits: DEFAULT_POOL_LIMITS, log: memoryLogger('warn'), now: () => NOW });
    const published: { accountId: string; event: PoolEvent }[] = [];
    svc.publishTo({ publish: (accountId, event) => published.push({ accountId, event }) });
    const id = (await svc.create(account, req(['2.2.2.2:1', '2.2.2.2:2']))).pool.id;
    await svc.update(account, id, { name: 'renamed' });
    await svc.update(account, id, { state: 'paused' });
    await svc.update(account, id, { state: 'paused' });
    await svc.update(account, id, { state: 'active', add: list(['2.2.2.2:3']) });
    const counts = (total: number) => ({ total, working: 0, failed: 0, unchecked: total });
    expect(published).toEqual([
      { accountId: account, event: { pool: id, event: 'pool.paused', at: new Date(NOW).toISOString(), counts: counts(2), reason: 'owner' } },
      { accountId: account, event: { pool: id, event: 'pool.resumed', at: new Date(NOW).toISOString(), counts: counts(3) } },
    ]);
    await svc.delete(account, id);
    expect(published).toHaveLength(2);
  });

  test('creates, changes and deletes, telling each committed change; refused ones are not told', async () => {
    const log = memoryLogger('debug');
    const svc = new PoolService({ db: tdb.db, limits: { ...DEFAULT_POOL_LIMITS, maxProxiesPerPool: 3 }, log, now: () => NOW });
    const heard: PoolChange[] = [];
    const stop = svc.onChange((c) => heard.push(c));
    svc.onChange(() => {
      throw new Error('a broken listener');
    });
    const made = await svc.create(account, req(['1.1.1.1:1', '1.1.1.1:2']));
    expect(isPoolId(made.pool.id)).toBe(true);
    expect(made.pool.id).toHaveLength(20);
    const id = made.pool.id;
    await svc.update(account, id, { state: 'paused' });
    await svc.update(account, id, { state: 'active', add: list(['1.1.1.1:3']), remove: list(['1.1.1.1:1']) });
    // refused (over the per-pool limit) and not found: nothing told
    expect(await svc.update(account, id, { add: list(['1.1.1.1:4', '1.1.1.1:5']) }).catch((e) => e)).toBeInstanceOf(PoolLimitError);
    expect(await svc.update(account, 'zzzzzzzzzzzzzzzzzzzz', { name: 'x' })).toBeNull();
    expect(await svc.delete(account, 'zzzzzzzzzzzzzzzzzzzz')).toBe(false);
    expect(await svc.delete(account, id)).toBe(true);
    expect(heard).toEqual([
      { kind: 'created', accountId: account, poolId: id, added: 2 },
      { kind: 'updated', accountId: account, poolId: id, previousState: 'active', state: 'paused', added: 0, removed: 0 },
      { kind: 'updated', accountId: account, poolId: id, previousState: 'paused', state: 'active', added: 1, removed: 1 },
      { kind: 'deleted', accountId: account, poolId: id },
    ]);
    expect(log.lines.filter((l) => l.msg === 'a pool change listener failed')).toHaveLength(4);
    stop();
    await svc.create(account, req(['1.1.1.1:9']));
    expect(heard).toHaveLength(4);
    expect(svc.limits.maxProxiesPerPool).toBe(3);
  });

  test('ids from the random bytes given; the listing is read at the clock', async () => {
    const svc = new PoolService({ db: tdb.db, limits: DEFAULT_POOL_LIMITS, log: memoryLogger('debug'), now: () => NOW + 5, randomBytes: (n) => new Uint8Array(n).fill(7) });
    const made = await svc.create(account, req(['2.2.2.2:1']));
    expect(made.pool.id).toBe('h'.repeat(20));
    expect(await svc.get(account, made.pool.id)).toMatchObject({ id: made.pool.id, created_at: new Date(NOW + 5).toISOString() });
    const page = await svc.proxies(account, made.pool.id, { ...DEFAULT_PROXIES_QUERY, status: 'all' });
    expect(page?.nowMs).toBe(NOW + 5);
    expect(page?.page.rows.map((r) => r.host)).toEqual(['2.2.2.2']);
    expect((await svc.list(account)).map((p) => p.id)).toContain(made.pool.id);
  });
});
