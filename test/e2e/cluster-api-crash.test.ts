/**
 * kill -9 an API node mid-job, in a cluster (real processes): two API nodes
 * A and B (ROLE=api, one PostgreSQL database, each its own DATA_DIR, small
 * NODE_LEASE_MS, swept every half of it) and one region agent (AGENT_SLOTS 20) on
 * a private nats-server.
 *
 *   B runs job1 (15 black holes, timeout 7 s) and A jobA1 (5 black holes,
 *   timeout 7 s): the agent's 20 slots are full; A's jobA2 (20 black holes,
 *   timeout 20 s) waits in the region's queue. A is killed (-9). After A's
 *   lease expires B's sweep refunds both of A's jobs in full, exactly once
 *   each, and history says failed / interrupted; job1 on B is never touched:
 *   it completes normally, charged 15, no refund.
 *   The agent does not work for the dead node: jobA1's running shard ends
 *   (dropped or termed) and jobA2's queued shards are dropped unprobed (B's
 *   sweep tells the agents, pc.cancel), never nakked round again; so a new
 *   job on B, once job1 freed the slots, runs at once (without the cancel it
 *   would wait behind jobA2's 20 s of black holes probed for nobody).

 * Skips unless PostgreSQL and nats-server are there.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { eq } from 'drizzle-orm';
import { accounts, quotaLedger, scans } from '../../db/schema';
import { WORK_STREAM, workConsumer } from '../../src/cluster/protocol';
import { startHttpProxy } from '../fixtures/fake-proxies';
import { startBlackHoleAnyAddress, type FakeServer } from '../fixtures/fake-servers';
import { testDatabaseUrl } from '../helpers/db';
import { HAVE_NATS_SERVER, startNatsServer, type NatsServer } from '../helpers/nats-server';
import { openStore, ProcessBed, type ServiceProcess, type ServiceStore, until } from '../helpers/process';
import { call } from '../helpers/service';

const PG = testDatabaseUrl();
const SECRETS = { RESULT_SECRET: 'cluster-result-secret-0123456789', ADMIN_TOKEN: 'cluster-admin-token-0123456789' };
const BALANCE = 1000;
const LEASE_MS = 1500;
/** Half the lease (derived, src/config.ts). */
const SWEEP_MS = LEASE_MS / 2;
const SLOTS = 20;

describe.skipIf(PG === undefined || !HAVE_NATS_SERVER)('cluster: kill -9 an API node mid-job', () => {
  const bed = new ProcessBed();
  let nats: NatsServer;
  let storeA: ServiceStore, storeB: ServiceStore;
  let a: ServiceProcess, b: ServiceProcess, agent: ServiceProcess;
  let hole: FakeServer, elite: FakeServer;
  let watcher: NatsConnection;

  // heartbeat 300 ms: an agent gone after 1.5 s, its unacked shards move on after 2.25 s
  const timing = () => ({ NATS_URL: nats.url, AGENT_HEARTBEAT_MS: '300', SHUTDOWN_GRACE_MS: '500' });
  const apiEnv = () => ({ ...timing(), ...SECRETS, ROLE: 'api', BOOTSTRAP_CHECKS: String(BALANCE), NODE_LEASE_MS: String(LEASE_MS) });
  const nodeOf = (p: ServiceProcess) => String(p.logs.find((l) => l.msg === 'ready')?.node);
  const holes = (n: number, net: number) => Array.from({ length: n }, (_, i) => `127.${net}.3.${1 + i}:${hole.port}`);
  const check = (p: ServiceProcess, json: unknown) => call(`${p.url}/check`, { method: 'POST', headers: { 'x-api-key': p.key }, json });
  const agentMetric = async (name: string): Promise<number> => {
    const port = Number(agent.logs.find((l) => l.msg === 'ready')?.port);
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const m = new RegExp(`^${name.replace(/[{}"]/g, '\\$&')} (\\d+)`, 'm').exec(text);
    if (m === null) throw new Error(`no ${name} in the agent's /metrics`);
    return Number(m[1]);
  };

  /** Shards waiting in us1's queue, not yet delivered to an agent. */
  const queued = async (): Promise<number> => (await (await jetstreamManager(watcher)).consumers.info(WORK_STREAM, workConsumer('us1'))).num_pending;


  async function inspect() {
    const d = await openStore(storeA);
    try {
      const [acc] = await d.db.select().from(accounts).where(eq(accounts.email, 'demo@localhost'));
      return {
        acc: acc!,
        scans: await d.db.select().from(scans).where(eq(scans.accountId, acc!.id)),
        ledger: await d.db.select().from(quotaLedger).where(eq(quotaLedger.accountId, acc!.id)),
      };
    } finally {
      await d.close();
    }
  }

  beforeAll(async () => {
    nats = await startNatsServer();
    hole = await startBlackHoleAnyAddress();
    elite = await startHttpProxy();
    storeA = await bed.store();
    storeB = bed.sibling(storeA);
    a = await bed.spawn(storeA, { env: apiEnv() });
    [b, agent] = await Promise.all([
      bed.spawn(storeB, { env: apiEnv() }),
      // the agent takes no headroom above its slots (MAX_JOB_SHARE_PERCENT=100): a newcomer's shard A lends waits in the queue
      bed.spawn(storeA, { env: { ...timing(), ROLE: 'agent', REGION: 'us1', AGENT_SLOTS: String(SLOTS), MAX_JOB_SHARE_PERCENT: '100' } }),
    ]);
    const live = async () => (await call(`${b.url}/regions`)).body.regions.find((r: { code: string }) => r.code === 'us1').agents === 1;
    await until('the agent to be live', live, 10_000);
    watcher = await connect({ servers: nats.url });
  }, 60_000);

  afterAll(async () => {
    await watcher?.close();
    await bed.cleanup();
    await hole?.close();
    await elite?.close();
    await nats?.stop();
  }, 30_000);

  test('B refunds A\'s jobs once after A\'s lease, never touches its own; the agent lets go of A\'s shards', async () => {
    expect(nodeOf(a)).not.toBe(nodeOf(b));
    const accepted0 = hole.accepted();
    // B's job1 takes 15 of the agent's 20 slots, A's jobA1 the other 5; A's jobA2 waits in the queue
    const job1 = check(b, { proxies: holes(15, 51), region: 'us1', timeout: 7000 }); // outlasts A's lease + B's sweep
    await until('B\'s job1 to probe', () => hole.accepted() - accepted0 >= 15, 8000);
    const answered = { a1: false, a2: false };
    const jobA1 = check(a, { proxies: holes(5, 52), region: 'us1', timeout: 7000 }).then(
      (r) => ((answered.a1 = true), r),
      (err: unknown) => ((answered.a1 = true), err),
    );
    await until('A\'s jobA1 to probe', () => hole.accepted() - accepted0 >= 20, 8000);
    const jobA2 = check(a, { proxies: holes(20, 53), region: 'us1', timeout: 20_000 }).then(
      (r) => ((answered.a2 = true), r),
      (err: unknown) => ((answered.a2 = true), err),
    );
    await until('A\'s jobA2 to wait in the region\'s queue', async () => (await queued()) > 0, 8000);
    let seen = await inspect();
    const onA = seen.scans.filter((s) => s.nodeId === nodeOf(a)).sort((x, y) => x.id - y.id);
    const scan1 = seen.scans.find((s) => s.nodeId === nodeOf(b))!;
    expect(onA.map((s) => [s.status, s.charged])).toEqual([
      ['running', 5],
      ['running', 20],
    ]);
    expect(scan1.status).toBe('running');
    expect(seen.acc.rootBalance).toBe(BALANCE - 40);
    const acceptedAtKill = hole.accepted() - accepted0;
    expect(acceptedAtKill).toBe(20); // jobA2 not probed yet

    const t0 = performance.now();
    a.kill('SIGKILL');
    expect((await a.exited).signal).toBe('SIGKILL');
    for (const s of onA) {
      await b.waitForLog((l) => l.msg === 'refunded an interrupted job' && l.runId === s.runId, LEASE_MS + SWEEP_MS + 3000);
    }
    const refundMs = performance.now() - t0;
    expect(await jobA1).toBeInstanceOf(Error); // A's clients saw their connections die
    expect(await jobA2).toBeInstanceOf(Error);

    // job1 on B: never touched, completes normally
    const r1 = await job1;
    expect(r1.status).toBe(200);
    expect(r1.body.metadata.total_checked).toBe(15);
    expect(r1.body.summary.total_working).toBe(0);

    // A's queued shards are dropped unprobed, not run for 20 s for nobody: a new job on B runs at once
    const t1 = performance.now();
    const proxies = Array.from({ length: 5 }, (_, i) => `n${i}:p@127.0.0.1:${elite.port}`);
    const job2 = await check(b, { proxies, region: 'us1', timeout: 3000 });
    const job2Ms = performance.now() - t1;
    console.log(`API node killed: B refunded A's 2 jobs after ${refundMs.toFixed(0)} ms (lease ${LEASE_MS} ms, sweep ${SWEEP_MS} ms); a new job on B took ${job2Ms.toFixed(0)} ms`);
    expect(job2.status).toBe(200);
    expect(job2.body.summary.total_working).toBe(5);
    expect(job2Ms).toBeLessThan(3000);
    await until('the agent to let go of A\'s shards', async () => (await agentMetric('proxycheck_agent_probes_in_flight')) === 0, 5000);
    expect(await queued()).toBe(0);
    expect(hole.accepted() - accepted0).toBe(acceptedAtKill); // jobA2's black holes were never probed
    const termed = await agentMetric('proxycheck_agent_shards_ended_total{outcome="termed"}');
    const dropped = await agentMetric('proxycheck_agent_shards_ended_total{outcome="dropped"}');
    const nakked = await agentMetric('proxycheck_agent_shards_ended_total{outcome="nakked"}');
    console.log(`agent shard outcomes: termed ${termed}, dropped ${dropped}, nakked ${nakked}`);
    expect(termed + dropped).toBeGreaterThanOrEqual(2); // jobA1's running shard and jobA2's queued one(s)
    expect(nakked).toBe(0); // nothing of A's went round again

    // history and the ledger: A's jobs failed / interrupted, each refunded exactly once; B's job untouched
    await Bun.sleep(3 * SWEEP_MS); // more sweeps add nothing
    const me = (await call(`${b.url}/me`, { headers: { 'x-api-key': b.key } })).body;
    expect(me.user.checks).toBe(BALANCE - 15 - 5);
    for (const s of onA) {
      expect(me.history.find((h: { id: number }) => h.id === s.id)).toMatchObject({ status: 'failed', error: 'interrupted', total_checked: 0 });
    }
    seen = await inspect();
    const refunds = seen.ledger.filter((l) => l.reason === 'refund').sort((x, y) => x.units - y.units);
    expect(refunds.map((r) => [r.runId, r.units])).toEqual([
      [onA[0]!.runId, 5],
      [onA[1]!.runId, 20],
    ]);
    for (const s of onA) expect(seen.scans.find((x) => x.id === s.id)).toMatchObject({ status: 'failed', error: 'interrupted' });
    expect(seen.scans.find((s) => s.id === scan1.id)).toMatchObject({ status: 'completed', charged: 15 });
    expect(b.logs.filter((l) => l.msg === 'refunded an interrupted job')).toHaveLength(2);
  }, 60_000);
});
