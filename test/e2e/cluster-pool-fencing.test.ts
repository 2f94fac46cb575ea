/**
 * Fencing a pool's owner, in a cluster (real processes): two API nodes A and
 * B (ROLE=api, one PostgreSQL database, NODE_LEASE_MS 1 500, POOL_FLUSH_S 1:
 * a pool's lease lasts 3 s) and one region agent on a private nats-server.
 *
 *   A pool made on A that the placement gives A is owned by A. A is
 *   stopped (SIGSTOP) past its lease: B takes the pool over (a new token) and
 *   keeps it checked; what A had reserved beyond what it made durable is
 *   refunded at the take-over. A is let go (SIGCONT): its next flush finds
 *   another token, so A writes nothing and charges nothing for the pool (the
 *   net charge of A's run does not move), says so in its log, and lets the
 *   pool go. After both stop cleanly: the units charged for the pool equal
 *   the checks its durable copy counts, and no lease is live.
 *
 *   Node loss: the owner killed (SIGKILL), its pool moves to the other node
 *   within the lease and half of it (B looks every half lease), reads on B
 *   answering all along (the owner's memory while it lives, the durable copy
 *   while nobody owns the pool), and B keeps it checked.
 *
 * Skips unless PostgreSQL and nats-server are there.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { startHttpProxy } from '../fixtures/fake-proxies';
import { refusedPort, type FakeServer } from '../fixtures/fake-servers';
import { testDatabaseUrl } from '../helpers/db';
import { HAVE_NATS_SERVER, startNatsServer, type NatsServer } from '../helpers/nats-server';
import { ProcessBed, queryStore, type ServiceProcess, type ServiceStore, until } from '../helpers/process';
import { call } from '../helpers/service';
import { placeOwner } from '../../src/pools/placement';

const PG = testDatabaseUrl();
const SECRETS = { RESULT_SECRET: 'cluster-result-secret-0123456789', ADMIN_TOKEN: 'cluster-admin-token-0123456789' };

describe.skipIf(PG === undefined || !HAVE_NATS_SERVER)('cluster: a pool owner stopped past its lease', () => {
  const bed = new ProcessBed();
  let nats: NatsServer;
  let storeA: ServiceStore, storeB: ServiceStore;
  let a: ServiceProcess, b: ServiceProcess;
  let elite: FakeServer;
  let refused = 0;

  const timing = () => ({ NATS_URL: nats.url, AGENT_HEARTBEAT_MS: '300', SHUTDOWN_GRACE_MS: '500' });
  const apiEnv = () => ({ ...timing(), ...SECRETS, ROLE: 'api', BOOTSTRAP_CHECKS: '100000', NODE_LEASE_MS: '1500', POOL_FLUSH_S: '1', POOL_MIN_INTERVAL_S: '1' });
  const nodeOf = (p: ServiceProcess) => String(p.logs.find((l) => l.msg === 'ready')?.node);
  const q = (text: ReturnType<typeof sql>) => queryStore(storeA, text);
  const num = async (text: ReturnType<typeof sql>) => Number(Object.values((await q(text))[0] ?? { n: 0 })[0] ?? 0);
  /** A pool made on A that the placement gives A (pools/placement.ts over both nodes): others are made and deleted. */
  const poolOfA = async (name: string, proxies: string[]): Promise<string> => {
    for (let i = 0; i < 50; i++) {
      const made = await call(`${a.url}/pools`, { method: 'POST', headers: { 'x-api-key': a.key }, json: { name, proxies, region: 'us1', interval_s: 1, timeout: 1000, https: false } });
      expect(made.status, made.text).toBe(201);
      const id = String(made.body.id);
      if (placeOwner(id, [nodeOf(a), nodeOf(b)]) === nodeOf(a)) return id;
      await call(`${a.url}/pools/${id}`, { method: 'DELETE', headers: { 'x-api-key': a.key } });
    }
    throw new Error('no pool placed on A in 50 tries');
  };

  beforeAll(async () => {
    nats = await startNatsServer();
    elite = await startHttpProxy();
    refused = await refusedPort();
    storeA = await bed.store();
    storeB = bed.sibling(storeA);
    a = await bed.spawn(storeA, { env: apiEnv() });
    [b] = await Promise.all([bed.spawn(storeB, { env: apiEnv() }), bed.spawn(storeA, { env: { ...timing(), ROLE: 'agent', REGION: 'us1', AGENT_SLOTS: '50' } })]);
    await until('the agent to be live', async () => (await call(`${b.url}/regions`)).body.regions.find((r: { code: string }) => r.code === 'us1').agents === 1, 10_000);
  }, 60_000);

  afterAll(async () => {
    a?.kill('SIGCONT');
    await bed.cleanup();
    await elite?.close();
    await nats?.stop();
  }, 30_000);

  test('B takes the pool over; A, let go, writes and charges nothing for it', async () => {
    const proxies = [...Array.from({ length: 10 }, (_, i) => `u${i}:p@127.0.0.1:${elite.port}`), ...Array.from({ length: 10 }, (_, i) => `127.0.${1 + i}.1:${refused}`)];
    const id = await poolOfA('fenced', proxies);
    const lease = async () => (await q(sql`SELECT node_id, token::float8 AS token, run_id FROM pool_leases WHERE pool_id = ${id}`))[0] as { node_id: string; token: number; run_id: string } | undefined;
    const net = async (runId: string) => num(sql`SELECT COALESCE(sum(CASE WHEN reason = 'reserve' THEN units ELSE -units END), 0)::float8 AS n FROM quota_ledger WHERE job_id = ${runId}`);
    const durable = async () => num(sql`SELECT COALESCE(sum(checks), 0)::float8 AS n FROM pool_proxy_rows WHERE pool_id = ${id}`);
    await until('A owns it and made checks durable', async () => (await lease())?.node_id === nodeOf(a) && (await durable()) > 0, 15_000);
    const runA = (await lease())!.run_id;

    a.kill('SIGSTOP');
    await until('B takes it over', async () => (await lease())?.node_id === nodeOf(b), 15_000);
    const taken = (await lease())!;
    expect(taken.token).toBeGreaterThan(1);
    const chargedA = await net(runA);
    await until('B makes checks durable', async () => (await durable()) > chargedA, 10_000);

    a.kill('SIGCONT');
    await a.waitForLog((l) => l.msg === "a pool's lease was taken over: this node stops owning it" && l.pool === id, 10_000);
    await Bun.sleep(2000);
    // A's run charged nothing more for the pool (anything it reserved after waking went back); the pool may
    // move back to A by its placement, under a new token (a run id is never reused)
    expect(await net(runA)).toBe(chargedA);
    expect((await lease())!.token).toBeGreaterThanOrEqual(taken.token);
    expect((await lease())!.run_id).not.toBe(runA);

    a.kill('SIGTERM');
    b.kill('SIGTERM');
    expect((await a.exited).code).toBe(0);
    expect((await b.exited).code).toBe(0);
    const charged = await num(sql`SELECT COALESCE(sum(CASE WHEN reason = 'reserve' THEN units ELSE -units END), 0)::float8 AS n FROM quota_ledger WHERE job_id LIKE ${`pool:${id}:%`}`);
    expect(charged).toBe(await durable());
    expect(await num(sql`SELECT count(*)::float8 AS n FROM pool_leases WHERE pool_id = ${id} AND expires_at > now()`)).toBe(0);
  }, 90_000);

  test('node loss: the owner killed, its pool moves to the other node within about a lease and a half; reads on it answer all along', async () => {
    // two fresh API nodes (the first test stopped both)
    a = await bed.spawn(storeA, { env: apiEnv() });
    b = await bed.spawn(storeB, { env: apiEnv() });
    const id = await poolOfA('moves', [`v1:p@127.0.0.1:${elite.port}`, `127.0.9.1:${refused}`]);
    const holder = async () => (await q(sql`SELECT node_id FROM pool_leases WHERE pool_id = ${id}`))[0]?.node_id;
    await until('A owns it', async () => (await holder()) === nodeOf(a), 10_000);
    // B's reads come from A's memory while A lives
    expect((await call(`${b.url}/pools/${id}`, { headers: { 'x-api-key': b.key } })).status).toBe(200);
    a.kill('SIGKILL');
    const killed = Date.now();
    let reads = 0;
    const failed: unknown[] = [];
    await until('B owns it', async () => {
      // from the durable copy while nobody owns it
      const r = await call(`${b.url}/pools/${id}/proxies?status=all`, { headers: { 'x-api-key': b.key } });
      if (r.status !== 200 || r.body.proxies?.length !== 2) failed.push([r.status, r.text]);
      reads++;
      return (await holder()) === nodeOf(b);
    }, 15_000);
    expect(failed).toEqual([]);
    // the lease (3 s) ran out, then B's next look (every 1.5 s)
    expect(Date.now() - killed).toBeLessThan(3000 + 1500 + 2500);
    expect(reads).toBeGreaterThan(1);
    const checks = async () => num(sql`SELECT COALESCE(sum(checks), 0)::float8 AS n FROM pool_proxy_rows WHERE pool_id = ${id}`);
    const before = await checks();
    await until('B checks it', async () => (await checks()) > before, 10_000);
    b.kill('SIGTERM');
    expect((await b.exited).code).toBe(0);
  }, 60_000);
});
