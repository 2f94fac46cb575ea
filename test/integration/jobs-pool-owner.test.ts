/**
 * PoolOwner and its PoolActors (src/jobs/pool-owner.ts, pool-actor.ts) over a
 * real database (PGlite, or PostgreSQL with DATABASE_URL) and the real quota,
 * with a probe execution that answers from a table (host -> verdict) or
 * never, so what the owner decides is seen without the probe engine's timing:
 *
 * - a pool created is checked at once: the probes opened at `background`
 *   under the lease's run id, ONE reservation for many checks (no scan row),
 *   the verdicts in memory at once (pages, counts), durable at the flush,
 *   which settles exactly them: charged == durable checks; round.completed
 *   per flush and a completed scan row per batch (usage), never a running one; events with the counts from memory;
 * - an unlimited txt listing of a pool held here: one pass of its memory,
 *   ended by a delete;
 * - recheck makes a proxy due now (another pool's ignored);
 * - re-checks taken early are asked in batches (ASK_BATCH, or when the
 *   earliest is due), not at every results batch;
 * - stop() cuts probing short: a last flush, the unsettled rest refunded;
 * - a proxy refused before any connection: failed blocked_target, not charged;
 * - the owner's pause (nothing probed) and resume; a source's addresses
 *   (`sourced`) checked at once; a deleted pool's reservation given back;
 * - with an outbox: a proxy event's webhook messages written in the
 *   transaction of the chunk that makes it durable (a failed write: neither);
 * - a pool emptied while its slots are granted: the slots given back at once;
 * - a balance that cannot pay: pool.paused insufficient_checks, nothing
 *   charged; a top-up: pool.resumed;
 * - fencing: another node takes the lease; the old owner's next flush writes
 *   and charges nothing, and it stops owning the pool;
 * - a cluster: a change made on a node that does not own the pool is applied
 *   by its owner at once (told, not seen at its next look);
 * - a cluster's placement: two owners share the pools by rendezvous hashing,
 *   never both holding one; one stops and the other takes its pools back;
 *   charged == durable checks.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../../db/client';
import { createAccount, topUp } from '../../src/accounts/accounts';
import { takeLease, type PoolTx } from '../../src/jobs/pool-durable';
import type { PoolBatchOutbox } from '../../src/pools/ports';
import { PoolOwner } from '../../src/jobs/pool-owner';
import { PoolService } from '../../src/jobs/pool-service';
import type { ExecutionHandle, ExecutionJob, ProbeExecution, ResultBatch, Shard } from '../../src/jobs/ports';
import { memoryLogger } from '../../src/log';
import type { PoolEvent } from '../../src/pools/events';
import { DEFAULT_POOL_LIMITS } from '../../src/pools/limits';
import { placeOwner } from '../../src/pools/placement';
import { DEFAULT_PROXIES_QUERY } from '../../src/pools/query';
import type { ProxyListing } from '../../src/pools/proxy-listing';
import { textRows, type TextPageOptions } from '../../src/pools/render';
import { addSourceProxies } from '../../src/pools/store';
import type { ProbeResult, ProbeSettings } from '../../src/probe/types';
import { parseProxyLine, type ParsedProxy } from '../../src/proxy/parse';
import { freshDatabase, type TestDatabase } from '../helpers/db';
import { FakeClock } from '../helpers/fake-clock';
import { ASK_BATCH } from '../../src/jobs/pool-actor';

/** Grants every demand at once; answers each task from `verdict(host)`; 'hang' never answers (until aborted). */
class TableExecution implements ProbeExecution {
  readonly opened: ExecutionJob[] = [];
  /** every demand asked (open's and addDemand's), in order */
  readonly asks: number[] = [];
  probes = 0;
  released = 0;
  constructor(public verdict: (host: string) => 'working' | 'failed' | 'hang') {}
  open(job: ExecutionJob): ExecutionHandle {
    this.opened.push(job);
    let cancelled = false;
    const handle: ExecutionHandle = {
      run: (shard: Shard, onBatch: (b: ResultBatch) => void, signal: AbortSignal) => this.#run(shard, onBatch, signal),
      addDemand: (n) => {
        this.asks.push(n);
        queueMicrotask(() => !cancelled && job.onGrant(n, handle));
      },
      release: (n) => {
        this.released += n;
      },
      cancel: () => {
        cancelled = true;
      },
    };
    this.asks.push(job.demand);
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
    await Bun.sleep(10);
    if (out.length > 0 && !signal.aborted) onBatch(out);
    if (out.length < shard.tasks.length && !signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  }
}

/** Grants only when told (`grant()`: every demand so far); counts the slots given back. */
class GatedExecution implements ProbeExecution {
  demand = 0;
  released = 0;
  probes = 0;
  #pending: { job: ExecutionJob; handle: ExecutionHandle }[] = [];
  open(job: ExecutionJob): ExecutionHandle {
    const handle: ExecutionHandle = {
      run: async (shard) => {
        this.probes += shard.tasks.length;
      },
      addDemand: (n) => {
        this.demand += n;
        this.#pending.push({ job, handle });
      },
      release: (n) => {
        this.released += n;
      },
      cancel: () => {},
    };
    this.demand += job.demand;
    this.#pending.push({ job, handle });
    return handle;
  }
  grant(): number {
    const n = this.demand;
    const last = this.#pending.at(-1);
    this.demand = 0;
    this.#pending = [];
    if (last !== undefined && n > 0) last.job.onGrant(n, last.handle);
    return n;
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
    await Bun.sleep(20);
  }
}

const parsed = (lines: string[]): ParsedProxy[] => lines.map((l) => parseProxyLine(l) as ParsedProxy);
const settingsOf = (type: string, timeoutMs: number) => ({ type, timeoutMs, allowPrivateTargets: true }) as unknown as ProbeSettings;
const guarded = (type: string, timeoutMs: number) => ({ type, timeoutMs, allowPrivateTargets: false }) as unknown as ProbeSettings;

describe('PoolOwner', () => {
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

  const account = async (checks = 1000) => (await createAccount(tdb.db, { email: `owner${++accounts}@example.com`, checks })).id;
  const service = () => new PoolService({ db: tdb.db, limits: { ...DEFAULT_POOL_LIMITS, minIntervalS: 1 }, log });
  const owner = async (
    execution: ProbeExecution,
    events: Recorder,
    pools: PoolService,
    o: { settings?: typeof settingsOf; nodeId?: string; embedded?: boolean; flushMs?: number; outbox?: PoolBatchOutbox<PoolTx>; clock?: FakeClock; random?: () => number } = {},
  ) => {
    const r = new PoolOwner({
      db: tdb.db,
      execution,
      settings: o.settings ?? settingsOf,
      geo: { lookup: () => ({ country: 'FR', country_name: 'France', location: null, isp: null, asn: null, coordinates: null }) as never },
      events,
      log,
      pools,
      nodeId: o.nodeId ?? 'node-1',
      embedded: o.embedded ?? true,
      flushMs: o.flushMs ?? 300,
      stopGraceMs: 2000,
      ...(o.outbox !== undefined ? { outbox: o.outbox } : {}),
      ...(o.clock !== undefined ? { clock: o.clock } : {}),
      ...(o.random !== undefined ? { random: o.random } : {}),
    });
    pools.useOwner(r);
    made.push(r);
    await r.start();
    return r;
  };
  const create = (pools: PoolService, accountId: string, lines: string[], intervalS = 600) =>
    pools.create(accountId, {
      settings: { name: 'p', type: 'http', region: 'us1', intervalS, timeoutMs: 1000, https: false, customUrls: [], sources: [] },
      proxies: parsed(lines),
      totalInvalid: 0,
      totalDuplicates: 0,
    });
  const ledger = async (poolId: string) =>
    rowsOf<{ reason: string; units: number }>(await tdb.db.execute(sql`SELECT reason, units::float8 AS units FROM quota_ledger WHERE job_id LIKE ${`pool:${poolId}:%`} ORDER BY id`));
  const charged = async (poolId: string) => (await ledger(poolId)).reduce((a, r) => a + (r.reason === 'reserve' ? r.units : -r.units), 0);
  const durable = async (poolId: string) =>
    rowsOf<{ host: string; status: string; checks: number; error_code: string | null }>(
      await tdb.db.execute(sql`SELECT host, status, checks, error_code FROM pool_proxy_rows WHERE pool_id = ${poolId} ORDER BY id`),
    ).map((r) => ({ ...r, checks: Number(r.checks) }));
  const durableChecks = async (poolId: string) => (await durable(poolId)).reduce((a, r) => a + r.checks, 0);

  test('a created pool is checked at once: one reservation, verdicts in memory at once and durable at the flush, charged == durable', async () => {
    const events = new Recorder();
    const exec = new TableExecution((h) => (h.endsWith('.1') ? 'working' : 'failed'));
    const pools = service();
    const acc = await account();
    const r = await owner(exec, events, pools, { flushMs: 60_000 });
    const { pool } = await create(pools, acc, ['10.0.0.1:80', '10.0.0.2:80', '10.0.0.3:80']);
    await until('checked in memory', () => r.localStats(pool.id)?.counts.unchecked === 0);
    expect(exec.opened[0]).toMatchObject({ region: 'us1', priority: 'background', runId: `pool:${pool.id}:1` });
    expect(r.localStats(pool.id)!.counts).toEqual({ total: 3, working: 1, failed: 2, unchecked: 0 });
    expect((await pools.proxies(acc, pool.id, DEFAULT_PROXIES_QUERY))!.page.rows.map((x) => x.host)).toEqual(['10.0.0.1']);
    expect(await durableChecks(pool.id)).toBe(0); // not flushed yet: not charged either beyond the reservation
    expect((await ledger(pool.id)).filter((l) => l.reason === 'reserve')).toHaveLength(1);
    await r.flushAll();
    expect((await durable(pool.id)).map((p) => [p.status, p.checks])).toEqual([
      ['working', 1],
      ['failed', 1],
      ['failed', 1],
    ]);
    const done = events.of(pool.id, 'round.completed');
    expect(done).toHaveLength(1);
    expect(done[0]!.round).toEqual({ checked: 3, working: 1, failed: 2, not_tried: 0, charged: 3 });
    expect(done[0]!.counts).toEqual({ total: 3, working: 1, failed: 2, unchecked: 0 });
    // no running scan for the orphan sweep: the batch's scan row is a completed record (usage), not a reservation
    expect(rowsOf(await tdb.db.execute(sql`SELECT job_id, status, total_checked::float8 AS n FROM scans WHERE job_id LIKE ${`pool:${pool.id}:%`}`))).toEqual([{ job_id: `pool:${pool.id}:b1`, status: 'completed', n: 3 }]);
    await r.stop();
    await r.stop(); // safe twice
    expect(r.state).toBe('stopped');
    expect(await charged(pool.id)).toBe(await durableChecks(pool.id));
    expect(await charged(pool.id)).toBe(3);
  }, 20_000);

  test('re-checks taken early are asked in batches: ASK_BATCH of them or, fewer, when the earliest is due (not one ask per results batch)', async () => {
    const clock = new FakeClock(Date.now());
    let i = 0;
    const exec = new TableExecution(() => 'working');
    const pools = service();
    const acc = await account(10_000);
    // the first checks' re-checks spread over [10, 20] s after them: 40 a second, 1 s taken early
    const r = await owner(exec, new Recorder(), pools, { flushMs: 600_000, clock, random: () => (i++ % 400) / 400 });
    const lines = Array.from({ length: 400 }, (_, k) => `10.1.${k >> 8}.${k & 255}:80`);
    const { pool } = await create(pools, acc, lines, 20);
    await until('first pass', () => r.localStats(pool.id)?.counts.unchecked === 0);
    const first = exec.asks.length;
    const probed = exec.probes;
    // 50 ms at a time, each results batch in before the next step (a pump per batch, as in the service)
    for (let t = 0; t < 21_000; t += 50) {
      await clock.advance(50);
      await Bun.sleep(exec.probes > probed ? 12 : 0);
    }
    await until('second checks', () => exec.probes === probed + 400);
    const asks = exec.asks.slice(first);
    // ~40 due a second with 1 s taken early: one ask a second (when the earliest is due), ~11 in all; one per step without
    // with the batch: 10 asks of ~41 (a second's worth, when the earliest is due); without it, 39
    expect(asks.length).toBeLessThanOrEqual(15);
    expect(Math.max(...asks)).toBeLessThan(ASK_BATCH);
    await r.stop();
  }, 60_000);

  test('an unlimited txt listing of a pool held here is one pass of its memory (`all`); a delete ends it; the durable copy pages as ever', async () => {
    const pools = service();
    const acc = await account();
    const r = await owner(new TableExecution((h) => (h.endsWith('.9') ? 'failed' : 'working')), new Recorder(), pools, { flushMs: 60_000 });
    const { pool } = await create(pools, acc, ['10.5.0.1:80', 'u:p@10.5.0.2:81', '10.5.0.9:80', '10.5.0.3:82']);
    await until('checked in memory', () => r.localStats(pool.id)?.counts.unchecked === 0);
    const q = { ...DEFAULT_PROXIES_QUERY, format: 'txt' as const, all: true };
    const o: TextPageOptions = { format: 'txt', scheme: false, poolType: 'http', nowMs: Date.now() };
    const text = (l: ProxyListing): string => {
      let out = '';
      for (let b = l.next(o); b !== null; b = l.next(o)) out += new TextDecoder().decode(b);
      return out;
    };
    const listing = (await pools.proxies(acc, pool.id, q))!;
    expect(listing.page.rows).toEqual([]);
    const paged = (await pools.proxies(acc, pool.id, { ...q, all: false }))!.page.rows;
    expect(paged).toHaveLength(3);
    expect(text(listing.all!)).toBe(textRows(paged, o));
    // a PoolService with no owner here (the durable copy, as for a pool held nowhere): a page, no `all`
    const durableOnly = (await service().proxies(acc, pool.id, q))!;
    expect(durableOnly.all).toBeUndefined();
    // deleted while it is read: it ends
    const open = r.listing(pool.id, q)!;
    expect(await pools.delete(acc, pool.id)).toBe(true);
    await r.applied(pool.id);
    expect(open.next(o)).toBeNull();
    expect(r.listing(pool.id, q)).toBeNull();
    await r.stop();
  }, 20_000);

  test('recheck: the named proxy due now; another pool\'s ignored; proxy.down with the counts from memory', async () => {
    const events = new Recorder();
    const exec = new TableExecution(() => 'working');
    const pools = service();
    const acc = await account();
    const r = await owner(exec, events, pools);
    const { pool } = await create(pools, acc, ['10.3.0.1:80', '10.3.0.2:80']);
    await until('first checks durable', async () => (await durableChecks(pool.id)) === 2);
    exec.verdict = () => 'failed';
    const a = { host: '10.3.0.1', port: 80 };
    r.recheck(pool.id, [a]);
    r.recheck('someotherpool', [a]);
    await until('proxy.down', () => events.of(pool.id, 'proxy.down').length === 1);
    expect(events.of(pool.id, 'proxy.down')[0]!.counts).toEqual({ total: 2, working: 1, failed: 1, unchecked: 0 });
    await until('durable', async () => (await durable(pool.id)).map((p) => p.checks).join() === '2,1');
    await r.stop();
    expect(await charged(pool.id)).toBe(3);
  }, 20_000);

  test('stop() cuts probing short: a last flush, the unsettled rest refunded; charged == durable', async () => {
    const events = new Recorder();
    const pools = service();
    const exec = new TableExecution((h) => (h === '10.2.0.1' ? 'working' : 'hang'));
    const acc = await account();
    const r = await owner(exec, events, pools, { flushMs: 60_000 });
    const { pool } = await create(pools, acc, ['10.2.0.1:80', '10.2.0.2:80', '10.2.0.3:80']);
    await until('probing', () => exec.probes === 3);
    await until('the working one folded', () => r.localStats(pool.id)?.counts.working === 1);
    const t0 = Date.now();
    await r.stop();
    expect(Date.now() - t0).toBeLessThan(3000);
    expect((await durable(pool.id)).map((p) => [p.status, p.checks])).toEqual([
      ['working', 1],
      ['unchecked', 0],
      ['unchecked', 0],
    ]);
    expect(await charged(pool.id)).toBe(1);
    expect(events.of(pool.id, 'round.completed')[0]!.round).toEqual({ checked: 1, working: 1, failed: 0, not_tried: 2, charged: 1 });
    expect(rowsOf(await tdb.db.execute(sql`SELECT 1 FROM pool_leases WHERE pool_id = ${pool.id} AND expires_at > now()`))).toEqual([]);
  }, 20_000);

  test('a proxy refused before any connection: not probed, failed blocked_target, not charged', async () => {
    const events = new Recorder();
    const pools = service();
    const exec = new TableExecution(() => 'working');
    const acc = await account();
    const r = await owner(exec, events, pools, { settings: guarded });
    const { pool } = await create(pools, acc, ['127.0.0.1:80', 'proxy.example:80']);
    await until('round.completed', () => events.of(pool.id, 'round.completed').length >= 1);
    expect(exec.probes).toBe(1);
    expect((await durable(pool.id)).map((p) => [p.host, p.status, p.error_code])).toEqual([
      ['127.0.0.1', 'failed', 'blocked_target'],
      ['proxy.example', 'working', null],
    ]);
    expect(events.of(pool.id, 'round.completed')[0]!.round).toEqual({ checked: 2, working: 1, failed: 1, not_tried: 0, charged: 1 });
    await r.stop();
    expect(await charged(pool.id)).toBe(1);
  }, 20_000);

  test("the owner's pause stops probing, resume starts again; a source's addresses are checked at once; a deleted pool's reservation goes back", async () => {
    const events = new Recorder();
    const pools = service();
    const exec = new TableExecution(() => 'working');
    const acc = await account();
    const r = await owner(exec, events, pools);
    const { pool } = await create(pools, acc, ['10.6.0.1:80'], 1);
    await until('checked', () => r.localStats(pool.id)?.counts.working === 1);
    const paused = await pools.update(acc, pool.id, { state: 'paused' });
    expect(paused!.pool).toMatchObject({ state: 'paused', next_due_at: null, counts: { working: 1 } });
    const before = exec.probes;
    await Bun.sleep(1500); // interval 1 s: it would be due again
    expect(exec.probes).toBe(before);
    await pools.update(acc, pool.id, { state: 'active' });
    await until('probed again', () => exec.probes > before, 5000);
    const added = await addSourceProxies(tdb.db, acc, pool.id, 'http', parsed(['10.6.0.2:80']), DEFAULT_POOL_LIMITS, Date.now());
    expect(added.added).toBe(1);
    pools.sourced(acc, pool.id, 1);
    await until('the new one checked', () => r.localStats(pool.id)?.counts.total === 2 && r.localStats(pool.id)?.counts.working === 2, 5000);
    expect(await pools.delete(acc, pool.id)).toBe(true);
    await r.applied(pool.id);
    // what was settled durable stays charged; the reservation's rest is back
    expect(rowsOf(await tdb.db.execute(sql`SELECT 1 FROM pool_leases WHERE pool_id = ${pool.id} AND expires_at > now()`))).toEqual([]);
    const rows = await ledger(pool.id);
    expect(rows.at(-1)!.reason).toBe('refund');
    await r.stop();
  }, 20_000);

  test('a pool emptied while its slots are granted gives them back (no slot leak), probing nothing', async () => {
    const pools = service();
    const exec = new GatedExecution();
    const acc = await account();
    const r = await owner(exec, new Recorder(), pools);
    const lines = ['10.11.0.1:80', '10.11.0.2:80'];
    const { pool } = await create(pools, acc, lines);
    await until('slots asked for', () => exec.demand === 2);
    await pools.update(acc, pool.id, { remove: { proxies: parsed(lines), totalInvalid: 0, totalDuplicates: 0 } });
    await r.applied(pool.id);
    expect(r.localStats(pool.id)!.counts.total).toBe(0);
    expect(exec.grant()).toBe(2); // the scheduler grants what was asked before the pool was emptied
    await Bun.sleep(20);
    expect(exec.probes).toBe(0);
    expect(exec.released).toBe(2);
    await r.stop();
  }, 20_000);

  test('with an outbox: a proxy.down is written in the transaction of the chunk that makes it durable; a failed write rolls the chunk back, the next flush writes both', async () => {
    const pools = service();
    const exec = new TableExecution(() => 'working');
    const acc = await account();
    const written: string[][] = [];
    let fail = true;
    let pokes = 0;
    const outbox: PoolBatchOutbox<PoolTx> = {
      write: async (tx, _account, _pool, events) => {
        await tx.execute(sql`SELECT 1`); // in the chunk's transaction
        if (fail) {
          fail = false;
          throw new Error('the outbox failed');
        }
        written.push(events.map((e) => `${e.event} ${e.proxy!.host}`));
        return events.length;
      },
      written: () => void pokes++,
    };
    const events = new Recorder();
    const r = await owner(exec, events, pools, { flushMs: 60_000, outbox });
    const { pool } = await create(pools, acc, ['10.13.0.1:80', '10.13.0.2:80']);
    await until('working', () => r.localStats(pool.id)?.counts.working === 2);
    await r.flushAll();
    expect(written).toEqual([]); // first verdicts: no event, nothing written
    exec.verdict = (h) => (h === '10.13.0.1' ? 'failed' : 'working');
    r.recheck(pool.id, [{ host: '10.13.0.1', port: 80 }]);
    await until('proxy.down', () => events.of(pool.id, 'proxy.down').length === 1);
    await r.flushAll(); // the outbox throws: nothing of the chunk is durable
    expect((await durable(pool.id)).map((p) => p.status)).toEqual(['working', 'working']);
    expect([written, pokes]).toEqual([[], 0]);
    await r.flushAll();
    expect((await durable(pool.id)).map((p) => p.status)).toEqual(['failed', 'working']);
    expect([written, pokes]).toEqual([[['proxy.down 10.13.0.1']], 1]);
    await r.flushAll();
    expect(written).toHaveLength(1); // once
    await r.stop();
    expect(await charged(pool.id)).toBe(await durableChecks(pool.id));
  }, 20_000);

  test('a balance that cannot pay pauses the pool (insufficient_checks, nothing charged); a top-up resumes it', async () => {
    const events = new Recorder();
    const pools = service();
    const exec = new TableExecution(() => 'working');
    const acc = await account(3);
    const r = await owner(exec, events, pools);
    const { pool } = await create(pools, acc, ['10.7.0.1:80', '10.7.0.2:80'], 1);
    await until('pool.paused', () => events.of(pool.id, 'pool.paused').length > 0, 10_000);
    const paused = events.of(pool.id, 'pool.paused')[0]!;
    expect(paused.reason).toBe('insufficient_checks');
    expect(paused.available!).toBeLessThan(paused.required!);
    const balance = async () => Number(rowsOf<{ n: number }>(await tdb.db.execute(sql`SELECT (root_balance + temp_balance)::float8 AS n FROM accounts WHERE id = ${acc}::uuid`))[0]!.n);
    const left = await balance();
    expect(left).toBe(paused.available!);
    await Bun.sleep(1500); // still paused: nothing charged
    expect(await balance()).toBe(left);
    expect((await pools.get(acc, pool.id))!).toMatchObject({ state: 'paused', paused_reason: 'insufficient_checks' });
    await topUp(tdb.db, { accountId: acc, units: 100 });
    await until('pool.resumed', () => events.of(pool.id, 'pool.resumed').length > 0, 10_000);
    expect((await pools.get(acc, pool.id))!).toMatchObject({ state: 'active', paused_reason: null });
    await r.stop();
    expect(await charged(pool.id)).toBe(await durableChecks(pool.id));
  }, 30_000);

  test('fencing: another node takes the lease; the old owner\'s flush writes and charges nothing, and it lets the pool go', async () => {
    const events = new Recorder();
    const pools = service();
    const exec = new TableExecution(() => 'working');
    const acc = await account();
    const r = await owner(exec, events, pools, { flushMs: 200 });
    const { pool } = await create(pools, acc, ['10.8.0.1:80', '10.8.0.2:80'], 1);
    await until('durable', async () => (await durableChecks(pool.id)) >= 2);
    // another node takes the pool over (forced: as if the lease had expired)
    await takeLease(tdb.db, { poolId: pool.id, accountId: acc, nodeId: 'node-2', nowMs: Date.now(), leaseMs: 30_000, force: true });
    const atTakeOver = await durableChecks(pool.id);
    await until('the old owner let it go', () => r.actor(pool.id) === undefined, 5000);
    await Bun.sleep(1500);
    // nothing written after the take-over beyond what was in flight when it happened (none: the fence), and charged == durable
    expect(await durableChecks(pool.id)).toBe(atTakeOver);
    expect(await charged(pool.id)).toBe(atTakeOver);
    expect(r.localStats(pool.id)).toBeNull();
    await r.stop();
  }, 20_000);

  test('a cluster: a PATCH, pause, resume or delete made on a node that does not own the pool reaches its owner at once', async () => {
    const own = await freshDatabase(); // these owners take every pool of their database
    try {
      const acc = (await createAccount(own.db, { email: 'told@example.com', checks: 10_000 })).id;
      const node = (id: string, pools: PoolService) => {
        const o = new PoolOwner({ db: own.db, execution: new TableExecution(() => 'working'), settings: settingsOf, geo: { lookup: () => null as never }, events: new Recorder(), log, pools, nodeId: id, embedded: false, leaseMs: 60_000, flushMs: 300, stopGraceMs: 1000 });
        pools.useOwner(o);
        return o;
      };
      const poolsA = new PoolService({ db: own.db, limits: { ...DEFAULT_POOL_LIMITS, minIntervalS: 1 }, log });
      const poolsB = new PoolService({ db: own.db, limits: { ...DEFAULT_POOL_LIMITS, minIntervalS: 1 }, log });
      const a = node('node-a', poolsA);
      await a.start();
      const { pool } = await poolsA.create(acc, { settings: { name: 'told', type: 'http', region: 'us1', intervalS: 600, timeoutMs: 1000, https: false, customUrls: [], sources: [] }, proxies: parsed(['10.12.0.1:80', '10.12.0.2:80']), totalInvalid: 0, totalDuplicates: 0 });
      await a.applied(pool.id);
      expect(a.actor(pool.id)?.state).toBe('running');
      const b = node('node-b', poolsB);
      // B asks A directly (what src/cluster/pool-reads.ts carries over NATS)
      b.useRemote({
        stats: async (n, p) => (n === 'node-a' ? a.localStats(p) : null),
        page: async (n, p, q) => (n === 'node-a' ? a.localPage(p, q) : null),
        recheck: (n, p, proxies) => void (n === 'node-a' && a.localRecheck(p, proxies)),
        upstreams: async () => null,
        changed: (n, p, note) => (n === 'node-a' ? a.localChanged(p, note) : Promise.resolve(false)),
        listing: async () => null,
      });
      await b.start();
      // the next looks are a half lease (30 s) away: what follows is A told by B, nothing else
      expect(b.actor(pool.id)).toBeUndefined();
      await poolsB.update(acc, pool.id, { state: 'paused' });
      expect(a.actor(pool.id)?.state).toBe('idle');
      await poolsB.update(acc, pool.id, { state: 'active', intervalS: 300, add: { proxies: parsed(['10.12.0.3:80']), totalInvalid: 0, totalDuplicates: 0 } });
      expect(a.actor(pool.id)?.state).toBe('running');
      expect(a.localStats(pool.id)!.counts.total).toBe(3);
      expect((await poolsB.get(acc, pool.id))!.counts.total).toBe(3); // B reads A's memory
      expect(await poolsB.delete(acc, pool.id)).toBe(true);
      expect(a.actor(pool.id)).toBeUndefined();
      expect(rowsOf(await own.db.execute(sql`SELECT 1 FROM pool_leases WHERE pool_id = ${pool.id} AND expires_at > now()`))).toEqual([]);
      await Promise.all([a.stop(), b.stop()]);
    } finally {
      await own.cleanup();
    }
  }, 30_000);

  test('a cluster: pools placed by rendezvous over the live owners; a node that joins takes its share, one that stops gives its pools back', async () => {
    const own = await freshDatabase(); // these owners take every pool of their database
    try {
      const acc = (await createAccount(own.db, { email: 'placed@example.com', checks: 10_000 })).id;
      const pools = new PoolService({ db: own.db, limits: { ...DEFAULT_POOL_LIMITS, minIntervalS: 1 }, log });
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) ids.push((await pools.create(acc, { settings: { name: `p${i}`, type: 'http', region: 'us1', intervalS: 600, timeoutMs: 1000, https: false, customUrls: [], sources: [] }, proxies: parsed([`10.9.${i}.1:80`]), totalInvalid: 0, totalDuplicates: 0 })).pool.id);
      const node = (id: string) =>
        new PoolOwner({ db: own.db, execution: new TableExecution(() => 'working'), settings: settingsOf, geo: { lookup: () => null as never }, events: new Recorder(), log, nodeId: id, embedded: false, leaseMs: 1000, flushMs: 300, stopGraceMs: 1000 });
      const holders = (...owners: PoolOwner[]) => ids.map((id) => owners.filter((o) => o.actor(id) !== undefined).length);
      const a = node('node-a');
      await a.start();
      expect(ids.every((id) => a.actor(id) !== undefined)).toBe(true); // alone: every pool
      const b = node('node-b');
      await b.start();
      const placed = () => ids.every((id) => (placeOwner(id, ['node-a', 'node-b']) === 'node-a' ? a : b).actor(id) !== undefined);
      await until('each pool on its placement', placed, 10_000);
      expect(holders(a, b)).toEqual(ids.map(() => 1)); // never two owners
      const onB = ids.filter((id) => b.actor(id) !== undefined).length;
      expect(onB).toBeGreaterThan(0);
      expect(onB).toBeLessThan(12);
      await b.stop(); // its pools flushed and released, its presence gone
      await until('a holds every pool again', () => ids.every((id) => a.actor(id) !== undefined), 10_000);
      await a.stop();
      const net = Number(rowsOf<{ n: number }>(await own.db.execute(sql`SELECT COALESCE(sum(CASE WHEN reason = 'reserve' THEN units ELSE -units END), 0)::float8 AS n FROM quota_ledger WHERE account_id = ${acc}::uuid`))[0]!.n);
      const checks = Number(rowsOf<{ n: number }>(await own.db.execute(sql`SELECT COALESCE(sum(checks), 0)::float8 AS n FROM pool_proxy_rows`))[0]!.n);
      expect(net).toBe(checks);
      expect(checks).toBeGreaterThanOrEqual(12);
    } finally {
      await own.cleanup();
    }
  }, 30_000);
});
