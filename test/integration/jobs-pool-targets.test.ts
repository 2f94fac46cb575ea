/**
 * A pool's targets in its owner (src/jobs/pool-actor.ts; DECISIONS "Targets
 * in pools") over a real database (PGlite, or PostgreSQL with DATABASE_URL)
 * and a probe execution that answers from tables, so the owner's decisions
 * are seen without the probe engine's timing:
 *
 * - only proxies that passed the judge check fetch the targets (one pair per
 *   target; none for a failed proxy), never charged: charged == the judge
 *   checks made durable;
 * - the per-target states are durable at the flush (pool_proxy_targets) and
 *   a new owner loads them; the durable copy's pages, `?target=` and
 *   counts.targets agree with memory's;
 * - a PATCH of customUrls drops the rows of the names it removes.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../../db/client';
import { createAccount } from '../../src/accounts/accounts';
import { PoolOwner } from '../../src/jobs/pool-owner';
import { PoolService } from '../../src/jobs/pool-service';
import type { ExecutionHandle, ExecutionJob, ProbeExecution, ResultBatch, Shard } from '../../src/jobs/ports';
import { memoryLogger } from '../../src/log';
import { DEFAULT_POOL_LIMITS } from '../../src/pools/limits';
import { DEFAULT_PROXIES_QUERY } from '../../src/pools/query';
import { getPool, proxiesPage } from '../../src/pools/store';
import { nameTargets } from '../../src/pools/targets';
import type { CustomUrlResult, ProbeResult, ProbeSettings } from '../../src/probe/types';
import { parseProxyLine, type ParsedProxy } from '../../src/proxy/parse';
import { freshDatabase, type TestDatabase } from '../helpers/db';

/** Grants every demand at once; a probe answers from `verdict(host)`, a custom URL from `passes(host, url)`. */
class TableExecution implements ProbeExecution {
  probes = 0;
  readonly pairs: { host: string; url: string; type: string }[] = [];
  constructor(
    public verdict: (host: string) => 'working' | 'failed',
    public passes: (host: string, url: string) => boolean,
  ) {}
  open(job: ExecutionJob): ExecutionHandle {
    let cancelled = false;
    const handle: ExecutionHandle = {
      run: (shard: Shard, onBatch: (b: ResultBatch) => void) => this.#run(shard, onBatch),
      addDemand: (n) => queueMicrotask(() => !cancelled && job.onGrant(n, handle)),
      release: () => {},
      cancel: () => {
        cancelled = true;
      },
    };
    queueMicrotask(() => job.onGrant(job.demand, handle));
    return handle;
  }
  async #run(shard: Shard, onBatch: (b: ResultBatch) => void): Promise<void> {
    await Bun.sleep(5);
    if (shard.kind === 'custom_url') {
      const rule = shard.rules[0]!;
      const out: CustomUrlResult[] = shard.tasks.map((t) => {
        this.pairs.push({ host: t.proxy.host, url: rule.url, type: shard.settings.type });
        const ok = this.passes(t.proxy.host, rule.url);
        return { index: t.index, urlIndex: 0, success: ok, statusCode: ok ? 200 : 403, responseTimeMs: 40, error: ok ? null : { code: 'http_status', message: 'status 403 is not one of 200' } };
      });
      onBatch(out);
      return;
    }
    const out: ProbeResult[] = shard.tasks.map((t) => {
      this.probes++;
      return this.verdict(t.proxy.host) === 'working'
        ? { index: t.index, status: 'working', statusCode: 200, responseTimeMs: 120, anonymity: 'elite', origin: '203.0.113.9', error: null }
        : { index: t.index, status: 'failed', statusCode: null, responseTimeMs: 900, anonymity: null, origin: null, error: { code: 'connect_refused', message: 'refused' } };
    });
    onBatch(out);
  }
}

async function until(what: string, f: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const t0 = Date.now();
  while (!(await f())) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

const parsed = (lines: string[]): ParsedProxy[] => lines.map((l) => parseProxyLine(l) as ParsedProxy);
const settingsOf = (type: string, timeoutMs: number) => ({ type, timeoutMs, allowPrivateTargets: true }) as unknown as ProbeSettings;
const targets = (...specs: [string, string][]) => nameTargets(specs.map(([name, url]) => ({ name, url, requiredStatusCodes: [200], caseSensitive: false })));

describe('pool targets in the owner', () => {
  let tdb: TestDatabase;
  const log = memoryLogger('warn');
  const made: PoolOwner[] = [];
  let accounts = 0;

  beforeAll(async () => {
    tdb = await freshDatabase();
  }, 30_000);
  afterAll(async () => {
    await Promise.all(made.map((r) => r.stop()));
    await tdb?.cleanup();
  });

  const account = async () => (await createAccount(tdb.db, { email: `targets${++accounts}@example.com`, checks: 1000 })).id;
  const service = () => new PoolService({ db: tdb.db, limits: { ...DEFAULT_POOL_LIMITS, minIntervalS: 1 }, log });
  const owner = async (execution: ProbeExecution, pools: PoolService) => {
    const r = new PoolOwner({
      db: tdb.db,
      execution,
      settings: settingsOf,
      geo: { lookup: () => null } as never,
      events: { publish: () => {} },
      log,
      pools,
      nodeId: 'node-1',
      embedded: true,
      flushMs: 60_000,
      stopGraceMs: 2000,
    });
    pools.useOwner(r);
    made.push(r);
    await r.start();
    return r;
  };
  const charged = async (poolId: string) =>
    rowsOf<{ reason: string; units: number }>(await tdb.db.execute(sql`SELECT reason, units::float8 AS units FROM quota_ledger WHERE job_id LIKE ${`pool:${poolId}:%`}`)).reduce(
      (a, r) => a + (r.reason === 'reserve' ? r.units : -r.units),
      0,
    );
  const targetRows = async (poolId: string) =>
    rowsOf<{ host: string; name: string; ok: boolean }>(
      await tdb.db.execute(sql`SELECT p.host, t.name, t.ok FROM pool_proxy_targets t JOIN pool_proxies p ON p.id = t.proxy_id WHERE p.pool_id = ${poolId} ORDER BY p.host, t.name`),
    ).map((r) => ({ ...r, ok: r.ok === true || (r.ok as unknown) === 't' }));

  test('pairs only through working proxies, never charged; durable at the flush, loaded by the next owner; the durable copy agrees', async () => {
    // .1 and .2 work; .3 fails the judge. shop passes only through .1; api through both working ones
    const exec = new TableExecution(
      (h) => (h.endsWith('.3') ? 'failed' : 'working'),
      (h, url) => url.includes('api') || h.endsWith('.1'),
    );
    const pools = service();
    const acc = await account();
    let r = await owner(exec, pools);
    const { pool } = await pools.create(acc, {
      settings: { name: 't', type: 'http', region: 'us1', intervalS: 600, timeoutMs: 1000, https: false, customUrls: targets(['shop', 'http://shop.example/'], ['api', 'http://api.example/']), sources: [] },
      proxies: parsed(['10.7.0.1:80', '10.7.0.2:80', '10.7.0.3:80']),
      totalInvalid: 0,
      totalDuplicates: 0,
    });
    await until('every pair in', () => exec.pairs.length === 4 && r.localStats(pool.id)?.counts.unchecked === 0);
    await Bun.sleep(50);
    // two working proxies x two targets; the failed one made none; each through the pool's protocol
    expect(exec.pairs.map((p) => `${p.host} ${p.url}`).sort()).toEqual(['10.7.0.1 http://api.example/', '10.7.0.1 http://shop.example/', '10.7.0.2 http://api.example/', '10.7.0.2 http://shop.example/']);
    expect(new Set(exec.pairs.map((p) => p.type))).toEqual(new Set(['http']));
    expect(exec.probes).toBe(3);
    expect(r.localStats(pool.id)!.targetCounts).toEqual({ shop: 1, api: 2 });
    const memory = (await pools.proxies(acc, pool.id, { ...DEFAULT_PROXIES_QUERY, status: 'all' }))!.page.rows;
    expect(memory.map((p) => [p.host, p.targets?.shop?.ok ?? null, p.targets?.api?.ok ?? null])).toEqual([
      ['10.7.0.1', true, true],
      ['10.7.0.2', false, true],
      ['10.7.0.3', null, null],
    ]);
    expect((await pools.proxies(acc, pool.id, { ...DEFAULT_PROXIES_QUERY, target: 'shop' }))!.page.rows.map((p) => p.host)).toEqual(['10.7.0.1']);

    await r.flushAll();
    expect(await targetRows(pool.id)).toEqual([
      { host: '10.7.0.1', name: 'api', ok: true },
      { host: '10.7.0.1', name: 'shop', ok: true },
      { host: '10.7.0.2', name: 'api', ok: true },
      { host: '10.7.0.2', name: 'shop', ok: false },
    ]);
    await r.stop();
    // no extra charge: the three judge checks only
    expect(await charged(pool.id)).toBe(3);

    // the durable copy (no owner): the same targets, ?target= and counts
    const durable = (await proxiesPage(tdb.db, acc, pool.id, { ...DEFAULT_PROXIES_QUERY, status: 'all' }))!.page.rows;
    expect(durable.map((p) => p.targets)).toEqual(memory.map((p) => p.targets));
    expect((await proxiesPage(tdb.db, acc, pool.id, { ...DEFAULT_PROXIES_QUERY, target: 'shop' }))!.page.rows.map((p) => p.host)).toEqual(['10.7.0.1']);
    expect((await proxiesPage(tdb.db, acc, pool.id, { ...DEFAULT_PROXIES_QUERY, target: 'api', format: 'txt' }))!.page.rows.map((p) => p.host)).toEqual(['10.7.0.1', '10.7.0.2']);
    expect((await proxiesPage(tdb.db, acc, pool.id, { ...DEFAULT_PROXIES_QUERY, target: 'nope' }))!.unknownTarget).toBe(true);
    expect((await getPool(tdb.db, acc, pool.id, Date.now()))!.counts.targets).toEqual({ shop: 1, api: 2 });

    // a new owner loads them
    const pools2 = service();
    r = await owner(new TableExecution(() => 'working', () => true), pools2);
    await until('loaded', () => r.localStats(pool.id) !== null);
    expect(r.localStats(pool.id)!.targetCounts).toEqual({ shop: 1, api: 2 });
    const again = (await pools2.proxies(acc, pool.id, { ...DEFAULT_PROXIES_QUERY, status: 'all' }))!.page.rows;
    expect(again.map((p) => p.targets)).toEqual(memory.map((p) => p.targets));

    // PATCH: api removed, a new target added; api's rows dropped, shop's kept
    const updated = await pools2.update(acc, pool.id, { customUrls: targets(['shop', 'http://shop.example/'], ['news', 'http://news.example/']) });
    expect(updated!.pool.customUrls.map((t) => t.name)).toEqual(['shop', 'news']);
    expect((await targetRows(pool.id)).map((x) => x.name)).toEqual(['shop', 'shop']);
    await until('configured', async () => (await pools2.proxies(acc, pool.id, { ...DEFAULT_PROXIES_QUERY, status: 'all' }))!.page.rows[0]?.targets?.news !== undefined);
    const after = (await pools2.proxies(acc, pool.id, { ...DEFAULT_PROXIES_QUERY, status: 'all' }))!.page.rows[0]!;
    expect(Object.keys(after.targets!)).toEqual(['shop', 'news']);
    expect(after.targets!.news).toBeNull();
    expect(after.targets!.shop?.ok).toBe(true);
    await r.stop();
  }, 30_000);
});
