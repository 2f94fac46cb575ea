/**
 * PoolRounds (src/jobs/pool-rounds.ts) over a real database (PGlite, or
 * PostgreSQL with DATABASE_URL) and the real ledger (jobs/ledger.ts), with a
 * probe execution that answers from a table (host -> verdict) or never, so
 * what the rounds decide is seen without the probe engine's timing:
 *
 * - a pool created is checked at once (onChange wakes the timer): one scan
 *   row and ONE reservation per round, the proxies folded and written, the
 *   events published with the counts, round.completed last;
 * - two PoolRounds on one database (two API nodes) never check a proxy twice
 *   in a round: the claim (both woken at once on the same due proxies);
 * - stop() cuts a round short: the reservation refunded in one refund row,
 *   the proxies due again soon (not tried), round.completed says not_tried;
 *   stop is safe twice and bounded;
 * - a pool its owner pauses (or deletes) mid-round has the round cut short;
 * - a proxy the SSRF guard refuses whatever happens (ALLOW_PRIVATE_TARGETS
 *   off, a literal loopback address) is never probed nor charged: failed
 *   `blocked_target`, its unit refunded;
 * - recheck() makes the named proxies due now, coalesced, at the next tick;
 *   a proxy of another pool is ignored;
 * - proxies a pool's source added are checked at once: PoolService.sourced
 *   (what PoolSources calls) wakes the timer;
 * - a round whose node dies: its scan carries the node, so a live node's
 *   orphan sweep refunds the whole reservation (and the dead round, should
 *   it settle after all, refunds nothing twice); its proxies stay claimed
 *   until the claim's horizon, then fall due again.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../../db/client';
import { createAccount } from '../../src/accounts/accounts';
import { registerNode } from '../../src/accounts/nodes';
import { OrphanScope, sweepOrphans } from '../../src/accounts/orphans';
import { databaseLedger } from '../../src/jobs/ledger';
import { claimUntil } from '../../src/jobs/pool-round';
import { MAX_SLEEP_MS, PoolRounds } from '../../src/jobs/pool-rounds';
import { PoolService } from '../../src/jobs/pool-service';
import type { ExecutionHandle, ExecutionJob, ProbeExecution, ResultBatch, Shard } from '../../src/jobs/ports';
import type { ProbeSettings } from '../../src/probe/types';
import { memoryLogger } from '../../src/log';
import type { PoolEvent } from '../../src/pools/events';
import { DEFAULT_POOL_LIMITS } from '../../src/pools/limits';
import { addSourceProxies } from '../../src/pools/store';
import type { ProbeResult } from '../../src/probe/types';
import { parseProxyLine, type ParsedProxy } from '../../src/proxy/parse';
import { freshDatabase, type TestDatabase } from '../helpers/db';

/** Answers each task from `verdict(host)`; 'hang' never answers (until aborted). */
class TableExecution implements ProbeExecution {
  readonly opened: ExecutionJob[] = [];
  probes = 0;
  constructor(readonly verdict: (host: string) => 'working' | 'failed' | 'hang') {}
  open(job: ExecutionJob): ExecutionHandle {
    this.opened.push(job);
    const handle: ExecutionHandle = {
      run: (shard: Shard, onBatch: (b: ResultBatch) => void, signal: AbortSignal) => this.#run(shard, onBatch, signal),
      addDemand() {},
      cancel() {},
    };
    queueMicrotask(() => job.onGrant(job.demand, handle));
    return handle;
  }
  async #run(shard: Shard, onBatch: (b: ResultBatch) => void, signal: AbortSignal): Promise<void> {
    const out: ProbeResult[] = [];
    for (const t of shard.tasks) {
      this.probes++;
      const v = this.verdict(t.proxy.host);
      if (v === 'hang') continue;
      out.push(
        v === 'working'
          ? { index: t.index, status: 'working', statusCode: 200, responseTimeMs: 120, anonymity: 'elite', origin: '203.0.113.9', error: null }
          : { index: t.index, status: 'failed', statusCode: null, responseTimeMs: 900, anonymity: null, origin: null, error: { code: 'connect_refused', message: 'refused' } },
      );
    }
    await Bun.sleep(20);
    if (out.length > 0) onBatch(out);
    if (out.length < shard.tasks.length) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  }
}

class Recorder {
  readonly events: PoolEvent[] = [];
  publish(_account: string, e: PoolEvent): void {
    this.events.push(e);
  }
  of(pool: string, name: PoolEvent['event']): PoolEvent[] {
    return this.events.filter((e) => e.pool === pool && e.event === name);
  }
}

async function until(what: string, f: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const t0 = Date.now();
  while (!(await f())) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(25);
  }
}

const parsed = (lines: string[]): ParsedProxy[] => lines.map((l) => parseProxyLine(l) as ParsedProxy);
const settingsOf = (type: string, timeoutMs: number) => ({ type, timeoutMs, allowPrivateTargets: true }) as unknown as ProbeSettings;
const guarded = (type: string, timeoutMs: number) => ({ type, timeoutMs, allowPrivateTargets: false }) as unknown as ProbeSettings;

describe('PoolRounds', () => {
  let tdb: TestDatabase;
  let accountId = '';
  const log = memoryLogger('warn');
  const made: PoolRounds[] = [];

  beforeAll(async () => {
    tdb = await freshDatabase();
    accountId = (await createAccount(tdb.db, { email: 'rounds@example.com', checks: 1000 })).id;
  }, 30_000);
  afterAll(async () => {
    await Promise.all(made.map((r) => r.stop()));
    await tdb?.cleanup();
  });

  const service = () => new PoolService({ db: tdb.db, limits: { ...DEFAULT_POOL_LIMITS, minIntervalS: 1 }, log });
  const rounds = (execution: ProbeExecution, events: Recorder, pools?: PoolService, maxRound?: number, nodeId?: string, settings = settingsOf) => {
    const r = new PoolRounds({
      db: tdb.db,
      execution,
      ledger: databaseLedger(tdb.db, nodeId !== undefined ? { node: { id: nodeId, ensureLive: async () => {} } } : {}),
      settings,
      geo: { lookup: () => ({ country: 'FR', country_name: 'France', location: null, isp: null, asn: null, coordinates: null }) as never },
      events,
      log,
      ...(pools !== undefined ? { pools } : {}),
      ...(maxRound !== undefined ? { maxRound } : {}),
      stopGraceMs: 3000,
    });
    made.push(r);
    return r;
  };
  const create = (pools: PoolService, lines: string[], intervalS = 600) =>
    pools.create(accountId, {
      settings: { name: 'p', type: 'http', region: 'us1', intervalS, timeoutMs: 1000, https: false, customUrls: [], sources: [] },
      proxies: parsed(lines),
      totalInvalid: 0,
      totalDuplicates: 0,
    });
  const ledger = async (poolId: string) =>
    rowsOf<{ reason: string; units: number }>(
      await tdb.db.execute(sql`SELECT reason, units::float8 AS units FROM quota_ledger WHERE job_id LIKE ${`pool:${poolId}:%`} ORDER BY id`),
    );
  const proxies = async (poolId: string) =>
    rowsOf<{ host: string; status: string; checks: number; due: string | Date }>(
      await tdb.db.execute(sql`SELECT host, status, checks, next_check_at AS due FROM pool_proxies WHERE pool_id = ${poolId} ORDER BY id`),
    ).map((r) => ({ host: r.host, status: r.status, checks: Number(r.checks), due: new Date(r.due).getTime() }));

  test('a created pool is checked at once: one reservation, rows written, events with counts, round.completed last', async () => {
    const events = new Recorder();
    const exec = new TableExecution((h) => (h.endsWith('.1') ? 'working' : 'failed'));
    const pools = service();
    const r = rounds(exec, events, pools);
    await r.start();
    const { pool } = await create(pools, ['10.0.0.1:80', '10.0.0.2:80', '10.0.0.3:80']);
    await until('round.completed', () => events.of(pool.id, 'round.completed').length === 1);
    expect(exec.opened[0]).toMatchObject({ region: 'us1', demand: 3, priority: 'background', runId: `pool:${pool.id}:1` });
    expect(await ledger(pool.id)).toEqual([{ reason: 'reserve', units: 3 }]);
    expect((await proxies(pool.id)).map((p) => [p.status, p.checks])).toEqual([
      ['working', 1],
      ['failed', 1],
      ['failed', 1],
    ]);
    const done = events.of(pool.id, 'round.completed')[0]!;
    expect(done.round).toEqual({ checked: 3, working: 1, failed: 2, not_tried: 0, charged: 3 });
    expect(done.counts).toEqual({ total: 3, working: 1, failed: 2, unchecked: 0 });
    expect(events.events.filter((e) => e.pool === pool.id).at(-1)!.event).toBe('round.completed');
    const scan = rowsOf<{ status: string; total_checked: number }>(await tdb.db.execute(sql`SELECT status, total_checked FROM scans WHERE job_id = ${`pool:${pool.id}:1`}`));
    expect(scan).toEqual([{ status: 'completed', total_checked: 3 }]);
    await r.stop();
    await r.stop(); // safe twice
    expect(r.state).toBe('stopped');
  }, 20_000);

  test('the counts on the events of a round of many batches follow its writes (read once, then moved)', async () => {
    const events = new Recorder();
    let verdict: 'working' | 'failed' = 'working';
    const exec = new TableExecution(() => verdict);
    const pools = service();
    const r = rounds(exec, events, pools);
    await r.start();
    const lines = Array.from({ length: 600 }, (_, i) => `10.9.${Math.floor(i / 250)}.${i % 250}:80`);
    // an account of its own: two rounds of 600 (the shared one has 1 000 checks for the other tests)
    const rich = (await createAccount(tdb.db, { email: 'rounds-counts@example.com', checks: 5000 })).id;
    const { pool } = await pools.create(rich, {
      settings: { name: 'p', type: 'http', region: 'us1', intervalS: 600, timeoutMs: 1000, https: false, customUrls: [], sources: [] },
      proxies: parsed(lines),
      totalInvalid: 0,
      totalDuplicates: 0,
    });
    await until('the first round', () => events.of(pool.id, 'round.completed').length === 1);
    verdict = 'failed';
    r.recheck(pool.id, parsed(lines));
    await until('the second round', () => events.of(pool.id, 'round.completed').length === 2, 15_000);
    const downs = events.of(pool.id, 'proxy.down');
    expect(downs).toHaveLength(600);
    // batches of 250 rows (WRITE_BATCH): each event carries the counts after its batch's write
    const seen = [...new Set(downs.map((e) => `${e.counts.working}/${e.counts.failed}`))];
    expect(seen).toEqual(['350/250', '100/500', '0/600']);
    expect(events.of(pool.id, 'round.completed')[1]!.counts).toEqual({ total: 600, working: 0, failed: 600, unchecked: 0 });
    await r.stop();
  }, 30_000);

  test('two nodes on one database never check a proxy twice in a round', async () => {
    const events = new Recorder();
    const pools = service();
    const a = new TableExecution(() => 'working');
    const b = new TableExecution(() => 'working');
    const lines = Array.from({ length: 60 }, (_, i) => `10.1.0.${i + 1}:80`);
    // rounds of 20: both nodes run rounds of the same pool at once
    const [ra, rb] = [rounds(a, events, pools, 20), rounds(b, events, undefined, 20)];
    await Promise.all([ra.start(), rb.start()]);
    const { pool } = await create(pools, lines);
    rb.wake();
    await until('all checked', async () => (await proxies(pool.id)).every((p) => p.checks > 0));
    await Bun.sleep(300);
    expect((await proxies(pool.id)).every((p) => p.checks === 1)).toBe(true);
    expect(a.probes + b.probes).toBe(60);
    await Promise.all(made.map((r) => r.stop()));
  }, 20_000);

  test('stop() cuts a round short: refunded in one row, proxies due again soon, round.completed says not tried', async () => {
    const events = new Recorder();
    const pools = service();
    const exec = new TableExecution((h) => (h === '10.2.0.1' ? 'working' : 'hang'));
    const r = rounds(exec, events, pools);
    await r.start();
    const { pool } = await create(pools, ['10.2.0.1:80', '10.2.0.2:80', '10.2.0.3:80']);
    await until('probing', () => exec.probes === 3);
    await Bun.sleep(100); // the working result folded (written with the rest: rows go in batches)
    const t0 = Date.now();
    await r.stop();
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(await ledger(pool.id)).toEqual([
      { reason: 'reserve', units: 3 },
      { reason: 'refund', units: 2 },
    ]);
    const rows = await proxies(pool.id);
    expect(rows.map((p) => [p.status, p.checks])).toEqual([
      ['working', 1],
      ['unchecked', 0],
      ['unchecked', 0],
    ]);
    for (const p of rows.slice(1)) expect(p.due - Date.now()).toBeLessThan(61_000); // not the claim's horizon
    expect(events.of(pool.id, 'round.completed')[0]!.round).toEqual({ checked: 1, working: 1, failed: 0, not_tried: 2, charged: 1 });
  }, 20_000);

  test('recheck: the named proxies due now at the next tick, coalesced; another pool\'s ignored', async () => {
    const events = new Recorder();
    const pools = service();
    const exec = new TableExecution(() => 'working');
    const r = rounds(exec, events, pools);
    await r.start();
    const { pool } = await create(pools, ['10.3.0.1:80', '10.3.0.2:80']);
    await until('first round', () => events.of(pool.id, 'round.completed').length === 1);
    const a = { host: '10.3.0.1', port: 80 };
    r.recheck(pool.id, [a]);
    r.recheck(pool.id, [a]);
    r.recheck('someotherpool', [a]);
    await until('second round', () => events.of(pool.id, 'round.completed').length === 2);
    expect(events.of(pool.id, 'round.completed')[1]!.round).toMatchObject({ checked: 1 });
    expect((await proxies(pool.id)).map((p) => p.checks)).toEqual([2, 1]);
    await r.stop();
    r.recheck(pool.id, [a]); // stopped: ignored
  }, 20_000);

  test('a round whose node dies is refunded by a live node\'s orphan sweep, once; its claims fall due at the horizon', async () => {
    await registerNode(tdb.db, { id: 'node-dies', version: 'test', host: 'h', pid: 1 }, 60_000);
    const events = new Recorder();
    const pools = service();
    const exec = new TableExecution(() => 'hang');
    const r = rounds(exec, events, pools, undefined, 'node-dies');
    await r.start();
    const { pool } = await create(pools, ['10.4.0.1:80', '10.4.0.2:80', '10.4.0.3:80']);
    await until('probing', () => exec.probes === 3);
    const claimed = await proxies(pool.id);
    const horizon = claimUntil(Date.now(), 1000);
    for (const p of claimed) expect(Math.abs(p.due - horizon)).toBeLessThan(5000);
    // the node dies: its lease lapses, a live node sweeps
    await tdb.db.execute(sql`UPDATE nodes SET lease_until = now() - interval '1 second' WHERE id = 'node-dies'`);
    const swept = await sweepOrphans(tdb.db, log, { self: 'node-lives', scope: OrphanScope.expired });
    expect(swept).toEqual({ scans: 1, units: 3 });
    expect(await ledger(pool.id)).toEqual([
      { reason: 'reserve', units: 3 },
      { reason: 'refund', units: 3 },
    ]);
    await r.stop(); // the "dead" round settles after all: nothing refunded twice
    expect(await ledger(pool.id)).toEqual([
      { reason: 'reserve', units: 3 },
      { reason: 'refund', units: 3 },
    ]);
    const scan = rowsOf<{ status: string; error: string }>(await tdb.db.execute(sql`SELECT status, error FROM scans WHERE job_id = ${`pool:${pool.id}:1`}`));
    expect(scan).toEqual([{ status: 'failed', error: 'interrupted' }]);
  }, 20_000);

  test('a proxy refused before any connection: not probed, failed blocked_target, not charged', async () => {
    const events = new Recorder();
    const pools = service();
    const exec = new TableExecution(() => 'working');
    const r = rounds(exec, events, pools, undefined, undefined, guarded);
    await r.start();
    const { pool } = await create(pools, ['127.0.0.1:80', 'proxy.example:80']);
    await until('round.completed', () => events.of(pool.id, 'round.completed').length === 1);
    expect(exec.probes).toBe(1);
    expect(await ledger(pool.id)).toEqual([
      { reason: 'reserve', units: 2 },
      { reason: 'refund', units: 1 },
    ]);
    const rows = rowsOf<{ host: string; status: string; error_code: string | null }>(
      await tdb.db.execute(sql`SELECT host, status, error_code FROM pool_proxies WHERE pool_id = ${pool.id} ORDER BY id`),
    );
    expect(rows).toEqual([
      { host: '127.0.0.1', status: 'failed', error_code: 'blocked_target' },
      { host: 'proxy.example', status: 'working', error_code: null },
    ]);
    expect(events.of(pool.id, 'round.completed')[0]!.round).toEqual({ checked: 2, working: 1, failed: 1, not_tried: 0, charged: 1 });
    const scan = rowsOf<{ total_checked: number }>(await tdb.db.execute(sql`SELECT total_checked FROM scans WHERE job_id = ${`pool:${pool.id}:1`}`));
    expect(scan).toEqual([{ total_checked: 1 }]);
    await r.stop();
  }, 20_000);

  test('a pool its owner pauses mid-round: the round is cut short, what it did not try refunded', async () => {
    const events = new Recorder();
    const pools = service();
    const exec = new TableExecution(() => 'hang');
    const r = rounds(exec, events, pools);
    await r.start();
    const { pool } = await create(pools, ['10.6.0.1:80', '10.6.0.2:80']);
    await until('probing', () => exec.probes === 2);
    await pools.update(accountId, pool.id, { state: 'paused' });
    await until('round.completed', () => events.of(pool.id, 'round.completed').length === 1);
    expect(events.of(pool.id, 'round.completed')[0]!.round).toEqual({ checked: 0, working: 0, failed: 0, not_tried: 2, charged: 0 });
    expect(await ledger(pool.id)).toEqual([
      { reason: 'reserve', units: 2 },
      { reason: 'refund', units: 2 },
    ]);
    expect(r.runningRounds).toBe(0);
    await r.stop();
  }, 20_000);
  test("proxies a pool's source added are checked at once: the `sourced` change wakes the rounds (nothing else is due for 30 s)", async () => {
    const own = await freshDatabase(); // this pool alone: no other pool's due time wakes the timer
    try {
      const account = (await createAccount(own.db, { email: 'sourced@example.com', checks: 100 })).id;
      const limits = { ...DEFAULT_POOL_LIMITS, minIntervalS: 1 };
      const pools = new PoolService({ db: own.db, limits, log });
      const events = new Recorder();
      const r = new PoolRounds({ db: own.db, execution: new TableExecution(() => 'working'), ledger: databaseLedger(own.db), settings: settingsOf, geo: { lookup: () => null as never }, events, log, pools, stopGraceMs: 3000 });
      made.push(r);
      await r.start();
      const { pool } = await pools.create(account, {
        settings: { name: 'from a list', type: 'http', region: 'us1', intervalS: 600, timeoutMs: 1000, https: false, customUrls: [], sources: [] },
        proxies: [],
        totalInvalid: 0,
        totalDuplicates: 0,
      });
      // the ticks of the start and the creation find nothing due: the timer sleeps MAX_SLEEP_MS
      await until('the rounds asleep', () => r.nextTickAt !== null && r.nextTickAt - Date.now() > MAX_SLEEP_MS - 5000);
      // what PoolSources does after a fetch: the addresses added, due at once ...
      const added = await addSourceProxies(own.db, account, pool.id, 'http', parsed(['10.9.0.1:80', '10.9.0.2:80']), limits, Date.now());
      expect(added.added).toBe(2);
      await Bun.sleep(1000);
      expect(events.of(pool.id, 'round.completed')).toEqual([]); // not yet: nobody told the rounds
      // ... then told
      const told = Date.now();
      pools.sourced(account, pool.id, added.added);
      await until('round.completed', () => events.of(pool.id, 'round.completed').length === 1, 5000);
      expect(Date.now() - told).toBeLessThan(5000);
      expect(events.of(pool.id, 'round.completed')[0]!.round).toMatchObject({ checked: 2, working: 2 });
      await r.stop();
    } finally {
      await own.cleanup();
    }
  }, 20_000);
});
