/**
 * The pools' rounds over the real service (startService in-process, one
 * probe thread, the built-in judge) and real daemons on loopback (microsocks
 * and tinyproxy of the interop zoo), at a few seconds' interval, against the
 * database the environment selects (PGlite, or PostgreSQL with DATABASE_URL):
 *
 * - every proxy of a pool is checked and listed working; a daemon stopped
 *   goes failed with a proxy.down (a recording PoolEventsPort) within one
 *   interval + timeout and leaves `status=working&format=txt`; started again
 *   on its port it comes back with a proxy.up;
 * - the owner reserves ahead (a ledger reservation for many checks) and each
 *   flush (POOL_FLUSH_S=1 here) is a durable batch with a completed scan row:
 *   /me counts it in checks_used and usage_last_30_days, never in history;
 *   /metrics counts batches and checks;
 * - a balance that cannot pay a round pauses the pool (insufficient_checks,
 *   pool.paused, never a negative balance); a top-up resumes it;
 * - a restart keeps the pool, its proxies' history and due times; the ones
 *   overdue then are spread over the interval, not checked at once (read
 *   through the API: the owner's memory);
 * - a /check submitted while a big round runs in the region starts at once.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { spawn, type Subprocess } from 'bun';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../../db/client';
import { createAccount, issueKey, topUp } from '../../src/accounts/accounts';
import { parseConfig } from '../../src/config';
import { memoryLogger } from '../../src/log';
import { METRIC_NAMES } from '../../src/metrics/service-metrics';
import type { PoolEvent } from '../../src/pools/events';
import type { PoolEventsPort } from '../../src/pools/ports';
import { startService, type RunningService } from '../../src/server';
import { freshDatabase, type TestDatabase } from '../helpers/db';
import { sampleValue } from '../helpers/prometheus';
import { call } from '../helpers/service';
import { microsocksArgs } from '../interop/configs';
import { findBinary, freePort, missingPackages, missingReason, reportUnavailable, stopAllDaemons, type RunningDaemon } from '../interop/daemons';
import { startTinyproxy } from '../interop/zoo';

const KEY = 'pc_TestKeyForPoolRounds000000001';
const INTERVAL_S = 3;
const TIMEOUT_MS = 1500;
/**
 * 16 endpoints x 32 = 512 slots in a region: background work holds at most
 * 512 less the check reserve (52: jobs-background-priority.test.ts), and a
 * job that is no check would leave a newcomer only the headroom (25).
 */
const SMALL_REGION = { SLOTS_PER_ENDPOINT: '32' };

class RecordingEvents implements PoolEventsPort {
  readonly events: { accountId: string; event: PoolEvent }[] = [];
  publish(accountId: string, event: PoolEvent): void {
    this.events.push({ accountId, event });
  }
  of(pool: string, name: PoolEvent['event']): PoolEvent[] {
    return this.events.filter((e) => e.event.pool === pool && e.event.event === name).map((e) => e.event);
  }
}

async function until(what: string, f: () => boolean | Promise<boolean>, ms: number): Promise<number> {
  const t0 = Date.now();
  while (Date.now() - t0 < ms) {
    if (await f()) return Date.now() - t0;
    await Bun.sleep(100);
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}`);
}

/** microsocks on a port of our choosing (so it can come back on the same one). */
class Microsocks {
  #proc: Subprocess | null = null;
  constructor(readonly port: number) {}
  async start(): Promise<void> {
    this.#proc = spawn([findBinary('microsocks')!, ...microsocksArgs(this.port)], { stdout: 'ignore', stderr: 'ignore' });
    await until(`microsocks on ${this.port}`, () => accepts(this.port), 5000);
  }
  async stop(): Promise<void> {
    const p = this.#proc;
    this.#proc = null;
    if (p === null) return;
    p.kill();
    await p.exited;
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

interface Service {
  running: RunningService;
  url: string;
}

async function start(db: TestDatabase, dataDir: string, events: PoolEventsPort, env: Record<string, string> = {}): Promise<Service> {
  const config = parseConfig(
    {
      PORT: '0',
      HOST: '127.0.0.1',
      ADMIN_PORT: '0',
      ADMIN_HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      ALLOW_PRIVATE_TARGETS: 'true',
      BOOTSTRAP_API_KEY: KEY,
      POOL_MIN_INTERVAL_S: '1',
      SHUTDOWN_GRACE_MS: '2000',
      POOL_FLUSH_S: '1',
      ...(db.url !== undefined ? { DATABASE_URL: db.url } : {}),
      ...env,
    },
    process.cwd(),
  );
  const running = await startService(config, { log: memoryLogger('warn'), threads: 1, database: db, poolEvents: events });
  return { running, url: `http://127.0.0.1:${running.port}` };
}

const missing = missingPackages([
  { pkg: 'microsocks', bin: 'microsocks' },
  { pkg: 'tinyproxy', bin: 'tinyproxy' },
]);

if (missing.length > 0) {
  reportUnavailable('pools-rounds', missingReason(missing));
} else {
  describe('pool rounds (real service, real daemons)', () => {
    const events = new RecordingEvents();
    let db: TestDatabase;
    let dataDir: string;
    let svc: Service;
    let socks: Microsocks;
    let tiny: RunningDaemon;
    const key = (k = KEY) => ({ 'x-api-key': k });
    const get = (path: string, k = KEY) => call(`${svc.url}${path}`, { headers: key(k) });
    const post = (json: unknown, k = KEY) => call(`${svc.url}/pools`, { method: 'POST', headers: key(k), json });
    const txt = async (id: string) => (await get(`/pools/${id}/proxies?status=working&format=txt`)).text.split('\n').filter((l) => l !== '').sort();

    beforeAll(async () => {
      dataDir = mkdtempSync(join(tmpdir(), 'pc-rounds-'));
      db = await freshDatabase();
      socks = new Microsocks(await freePort());
      [tiny] = await Promise.all([startTinyproxy('pool'), socks.start()]);
      svc = await start(db, dataDir, events, SMALL_REGION);
    }, 60_000);

    afterAll(async () => {
      await svc?.running.stop();
      await socks?.stop();
      await stopAllDaemons();
      await db?.cleanup();
      rmSync(dataDir, { recursive: true, force: true });
    }, 30_000);

    let poolId = '';
    const socksAddr = () => `127.0.0.1:${socks.port}`;

    test('every proxy checked and working; a durable batch is counted: checks_used and usage count it, history does not', async () => {
      const before = (await get('/me')).body;
      const used = async () => Number(rowsOf<{ n: number }>(await db.db.execute(sql`SELECT checks_used::float8 AS n FROM accounts WHERE id = ${before.user.id}::uuid`))[0]!.n);
      const usedBefore = await used();
      const r = await post({ name: 'zoo', type: 'auto', proxies: [socksAddr(), `127.0.0.1:${tiny.port}`], interval_s: INTERVAL_S, timeout: TIMEOUT_MS, https: false });
      expect(r.status).toBe(201);
      poolId = r.body.id;
      await until('both working', async () => (await txt(poolId)).length === 2, 15_000);
      expect(await txt(poolId)).toEqual([socksAddr(), `127.0.0.1:${tiny.port}`].sort());
      // durable batches (one per flush): the first ones add up to both checks
      const sum = (k: 'checked' | 'working' | 'failed' | 'not_tried' | 'charged') => events.of(poolId, 'round.completed').reduce((a, e) => a + e.round![k], 0);
      await until('both checks durable', () => sum('checked') >= 2, 5000);
      // (at INTERVAL_S 3 a second check of a proxy may already be in: its first re-check comes in 1.5-3 s)
      const batches = events.of(poolId, 'round.completed'); // one snapshot: a batch may land between two sums
      const of = (k: 'checked' | 'working' | 'failed' | 'not_tried' | 'charged') => batches.reduce((a, e) => a + e.round![k], 0);
      expect(of('checked')).toBeGreaterThanOrEqual(2);
      expect([of('working'), of('failed'), of('not_tried'), of('charged')]).toEqual([of('checked'), 0, 0, of('checked')]);
      const me = (await get('/me')).body;
      expect(me.user.checks).toBeLessThan(before.user.checks);
      const today = me.usage_last_30_days.at(-1);
      expect(today.total_checked).toBeGreaterThanOrEqual(2);
      expect(me.history_count).toBe(before.history_count);
      expect(await used()).toBeGreaterThanOrEqual(usedBefore + 2); // checks_used (a check response's metadata.user)
      // reservations for many checks, never one per proxy
      const rows = rowsOf<{ n: number; units: number }>(
        await db.db.execute(sql`SELECT count(*)::float8 AS n, min(units)::float8 AS units FROM quota_ledger WHERE job_id LIKE ${`pool:${poolId}:%`} AND reason = 'reserve'`),
      );
      expect(rows[0]!.n).toBeGreaterThanOrEqual(1);
      expect(rows[0]!.units).toBeGreaterThanOrEqual(2);
      const pool = (await get(`/pools/${poolId}`)).body;
      expect(pool.counts).toEqual({ total: 2, working: 2, failed: 0, unchecked: 0 });
      expect(pool.checks_last_24h).toBeGreaterThanOrEqual(2);
      // counted for operators on the admin listener
      const metrics = await (await fetch(`${svc.running.adminUrl}/metrics`)).text();
      expect(sampleValue(metrics, METRIC_NAMES.poolRounds, { outcome: 'checked' })).toBeGreaterThanOrEqual(1);
      expect(sampleValue(metrics, METRIC_NAMES.poolChecks, { result: 'working' })).toBeGreaterThanOrEqual(2);
      expect(sampleValue(metrics, METRIC_NAMES.poolChecks, { result: 'failed' })).toBe(0);
    }, 30_000);

    test('a daemon stopped: proxy.down within one interval + timeout, gone from the working txt; started again: proxy.up, back', async () => {
      await socks.stop();
      const stoppedAt = Date.now();
      await until('proxy.down', () => events.of(poolId, 'proxy.down').length > 0, 20_000);
      const took = Date.now() - stoppedAt;
      expect(took).toBeLessThan(INTERVAL_S * 1000 + TIMEOUT_MS + 3000); // + a tick (1 s) and a round's own time
      const down = events.of(poolId, 'proxy.down')[0]!;
      expect(down.proxy).toMatchObject({ host: '127.0.0.1', port: socks.port });
      expect(down.counts).toMatchObject({ total: 2, working: 1, failed: 1 });
      expect(await txt(poolId)).toEqual([`127.0.0.1:${tiny.port}`]);
      await socks.start();
      await until('proxy.up', () => events.of(poolId, 'proxy.up').length > 0, 30_000);
      expect(events.of(poolId, 'proxy.up')[0]!.proxy).toMatchObject({ port: socks.port });
      await until('back in the txt', async () => (await txt(poolId)).length === 2, 5000);
    }, 60_000);

    test('a balance that cannot pay pauses the pool (never negative); a top-up resumes it', async () => {
      const acc = await createAccount(db.db, { email: 'poor@example.com', checks: 3 });
      const { apiKey } = await issueKey(db.db, { accountId: acc.id });
      // ONE proxy: what a reservation asks for is what is due when it asks, and two proxies fall due
      // together or apart as their first results were batched (the probes' timing under load: this
      // test asked for 2 of 1 left when they came in one batch, else 1 of 1 and then 1 of 0).
      // One proxy at interval 1 s: 2 reserved ahead (1 left), both checked; then 1 (0 left); then 1 of 0.
      const r = await post({ name: 'poor', proxies: ['127.0.0.1:1'], interval_s: 1, timeout: 1000, https: false }, apiKey);
      expect(r.status).toBe(201);
      const id = r.body.id as string;
      await until('pool.paused', () => events.of(id, 'pool.paused').length > 0, 15_000);
      const paused = events.of(id, 'pool.paused')[0]!;
      expect(paused).toMatchObject({ reason: 'insufficient_checks', required: 1, available: 0 });
      const pool = (await get(`/pools/${id}`, apiKey)).body;
      expect(pool).toMatchObject({ state: 'paused', paused_reason: 'insufficient_checks' });
      expect((await get('/me', apiKey)).body.user.checks).toBe(0);
      await Bun.sleep(1500); // still paused, nothing charged
      expect((await get('/me', apiKey)).body.user.checks).toBe(0);
      await topUp(db.db, { accountId: acc.id, units: 100 });
      await until('pool.resumed', () => events.of(id, 'pool.resumed').length > 0, 15_000);
      await until('checked again', async () => (await get('/me', apiKey)).body.user.checks < 100, 10_000);
      expect((await get(`/pools/${id}`, apiKey)).body).toMatchObject({ state: 'active', paused_reason: null });
    }, 60_000);

    test('a /check submitted while a big round runs in the region starts at once', async () => {
      const hole = await blackHole();
      await topUp(db.db, { accountId: (await get('/me')).body.user.id, units: 10_000 });
      try {
        const many = Array.from({ length: 1500 }, (_, i) => `127.0.${1 + Math.floor(i / 250)}.${1 + (i % 250)}:${hole.port}`);
        const r = await post({ name: 'big', proxies: many, interval_s: 600, timeout: 8000, https: false });
        expect(r.status).toBe(201);
        await until('the big round holding what background may', () => hole.connections >= 400, 15_000);
        // 50 proxies, more than a newcomer's headroom: tinyproxy and 49 that time out (3 s) in the black hole
        const proxies = [`127.0.0.1:${tiny.port}`, ...Array.from({ length: 49 }, (_, i) => `127.0.9.${i + 1}:${hole.port}`)];
        const t0 = Date.now();
        const c = await call(`${svc.url}/check`, { method: 'POST', headers: key(), json: { proxies, type: 'http', timeout: 3000, https: false } });
        const took = Date.now() - t0;
        expect(c.status).toBe(200);
        expect(c.body.summary.total_working).toBe(1);
        expect(c.body.metadata.total_checked).toBe(50);
        // all at once, in the check reserve: one 3 s timeout; were the round a check, the check would
        // get the newcomers' headroom (25) and run in two waves (6 s)
        expect(took).toBeLessThan(4500);
        expect(events.of(r.body.id, 'round.completed')).toHaveLength(0); // the round still running (its 8 s timeouts)
      } finally {
        hole.close();
      }
    }, 60_000);

    test('a restart keeps pool, history and due times; proxies overdue then are spread, not checked at once', async () => {
      const many = Array.from({ length: 40 }, (_, i) => `127.0.0.1:${2000 + i}`);
      const r = await post({ name: 'spread', proxies: many, interval_s: 60, timeout: 1000, https: false });
      const id = r.body.id as string;
      await until('first round', () => events.of(id, 'round.completed').length > 0, 20_000);
      await svc.running.stop();
      const checks = await readChecks(db, id);
      expect(checks.every((c) => c.checks === 1)).toBe(true);
      // a long downtime: every proxy overdue
      await db.db.execute(sql`UPDATE pool_proxy_state SET next_check_at = now() - interval '1 hour' WHERE proxy_id IN (SELECT id FROM pool_proxies WHERE pool_id = ${id})`);
      const restartedAt = Date.now();
      svc = await start(db, dataDir, events, SMALL_REGION);
      // read from the owner's memory (its flush may not have run yet)
      const page = (await get(`/pools/${id}/proxies?status=all&limit=100`)).body.proxies as { checks: number; next_check_at: string }[];
      const after = page.map((p) => ({ checks: p.checks, due: Date.parse(p.next_check_at) }));
      expect(after).toHaveLength(40);
      // history kept: nothing lost, and at most the first few checked again since
      expect(after.every((c) => c.checks >= 1)).toBe(true);
      const rechecked = after.filter((c) => c.checks > 1);
      expect(rechecked.length).toBeLessThanOrEqual(3);
      const due = after.filter((c) => c.checks === 1).map((c) => c.due - restartedAt).sort((a, b) => a - b);
      expect(due[0]!).toBeGreaterThan(-5000);
      expect(due.at(-1)!).toBeGreaterThan(50_000); // spread over the 60 s interval
      expect(due.at(-1)!).toBeLessThan(61_000);
      expect(new Set(due).size).toBe(due.length);
      expect((await get(`/pools/${id}`)).body).toMatchObject({ name: 'spread', interval_s: 60, counts: { total: 40, failed: 40 } });
    }, 60_000);
  });
}

async function readChecks(db: TestDatabase, poolId: string): Promise<{ checks: number; due: number }[]> {
  const rows = rowsOf<{ checks: number; due: string | Date }>(
    await db.db.execute(sql`SELECT checks, next_check_at AS due FROM pool_proxy_rows WHERE pool_id = ${poolId} ORDER BY id`),
  );
  return rows.map((r) => ({ checks: Number(r.checks), due: new Date(r.due).getTime() }));
}

/** A listener that accepts and never answers (every probe through it times out), on 0.0.0.0 so every 127.x.y.z reaches it. */
async function blackHole(): Promise<{ port: number; connections: number; close(): void }> {
  const sockets = new Set<import('node:net').Socket>();
  const state = { connections: 0 };
  const server: Server = createServer((s) => {
    state.connections++;
    sockets.add(s);
    s.on('error', () => {});
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    get connections() {
      return state.connections;
    },
    close() {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}
