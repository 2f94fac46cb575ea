/**
 * Fairness across API nodes, real processes: two API nodes A and B (ROLE=api,
 * one PostgreSQL database) and one agent of us1 with AGENT_SLOTS=200 on a
 * private nats-server. Big jobs of black holes (distinct 127.x.y.z addresses,
 * all reaching one black hole bound to 0.0.0.0, timeout 2 s) saturate the
 * region; a 10-proxy job of working proxies (timeout 1 s) submitted to the
 * other node must still finish within 2 x its timeout (the "Fairness
 * across nodes", scenario E across nodes):
 *
 * - a big job on A, the small job on B;
 * - a big job on A, then one on B (each node alone would publish the
 *   region's whole window: twice its slots, the rest queued in front of the
 *   small job), the small job on B.
 *
 * While the big jobs run, the big job's node's /metrics shows the region's
 * queue depth (shards delivered to the agent, unacked).
 *
 * Each scenario aborts its big requests at the end (client disconnect: the
 * jobs fail and refund) and waits until the black hole is empty again.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startHttpProxy } from '../fixtures/fake-proxies';
import { startBlackHoleAnyAddress, type FakeServer } from '../fixtures/fake-servers';
import { testDatabaseUrl } from '../helpers/db';
import { HAVE_NATS_SERVER, startNatsServer, type NatsServer } from '../helpers/nats-server';
import { ProcessBed, type ServiceProcess, type ServiceStore, until } from '../helpers/process';
import { call } from '../helpers/service';

const PG = testDatabaseUrl();
const SECRETS = { RESULT_SECRET: 'cluster-result-secret-0123456789', ADMIN_TOKEN: 'cluster-admin-token-0123456789' };
const SLOTS = 200;
const SMALL_TIMEOUT_MS = 1000;
const BIG_TIMEOUT_MS = 4000;
const BIG = 8000;

describe.skipIf(PG === undefined || !HAVE_NATS_SERVER)('cluster: fairness across API nodes', () => {
  const bed = new ProcessBed();
  let nats: NatsServer;
  let storeA: ServiceStore, storeB: ServiceStore;
  let a: ServiceProcess, b: ServiceProcess;
  let elite: FakeServer, hole: FakeServer;

  const timing = () => ({ NATS_URL: nats.url, AGENT_HEARTBEAT_MS: '400', SHUTDOWN_GRACE_MS: '0' });
  const apiEnv = () => ({ ...timing(), ...SECRETS, ROLE: 'api', BOOTSTRAP_CHECKS: '1000000' });


  /** n distinct black-hole proxies 127.<b>.x.y:port. */
  function holes(n: number, tag: number): string[] {
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push(`127.${tag}.${1 + Math.floor(i / 250)}.${1 + (i % 250)}:${hole.port}`);
    return out;
  }

  /** A big job on `node`, abortable (a client disconnect fails and refunds it). */
  function bigJob(node: ServiceProcess, tag: number): { abort(): void; done: Promise<unknown> } {
    const ac = new AbortController();
    const done = fetch(`${node.url}/check`, {
      method: 'POST',
      headers: { 'x-api-key': node.key, 'content-type': 'application/json' },
      body: JSON.stringify({ proxies: holes(BIG, tag), region: 'us1', timeout: BIG_TIMEOUT_MS }),
      signal: ac.signal,
    })
      .then((r) => r.text())
      .catch(() => null);
    return { abort: () => ac.abort(), done };
  }

  async function smallJob(node: ServiceProcess, tag: string): Promise<{ ms: number; status: number; body: any }> {
    const proxies = Array.from({ length: 10 }, (_, i) => `${tag}${i}:p@127.0.0.1:${elite.port}`);
    const t0 = performance.now();
    const r = await call(`${node.url}/check`, { method: 'POST', headers: { 'x-api-key': node.key }, json: { proxies, region: 'us1', timeout: SMALL_TIMEOUT_MS } });
    return { ms: performance.now() - t0, status: r.status, body: r.body };
  }

  beforeAll(async () => {
    nats = await startNatsServer();
    elite = await startHttpProxy();
    hole = await startBlackHoleAnyAddress();
    storeA = await bed.store();
    storeB = bed.sibling(storeA);
    a = await bed.spawn(storeA, { env: apiEnv() });
    [b] = await Promise.all([
      bed.spawn(storeB, { env: apiEnv() }),
      bed.spawn(storeA, { env: { ...timing(), ROLE: 'agent', REGION: 'us1', AGENT_SLOTS: String(SLOTS) } }),
    ]);
    for (const n of [a, b]) {
      await until('the agent to be live', async () => (await call(`${n.url}/regions`)).body.regions.find((r: { code: string }) => r.code === 'us1').agents === 1, 10_000);
    }
  }, 60_000);

  afterAll(async () => {
    await bed.cleanup();
    await elite?.close();
    await hole?.close();
    await nats?.stop();
  }, 30_000);

  async function scenario(name: string, bigs: [ServiceProcess, number][]): Promise<void> {
    const idle = await smallJob(b, `idle${bigs.length}x`);
    expect(idle.status).toBe(200);
    const jobs: ReturnType<typeof bigJob>[] = [];
    try {
      // one big job after the other, each once the region is saturated (two started within one
      // demand heartbeat both take every slot until their first round drains: see cluster/demand.ts)
      for (const [node, tag] of bigs) {
        jobs.push(bigJob(node, tag));
        await until('the big job to fill the region', () => hole.open() >= SLOTS * 0.8, 10_000);
      }
      // then at least one round of the big jobs' timeouts
      await Bun.sleep(BIG_TIMEOUT_MS + 500);
      const open = hole.open();
      // /metrics of the big job's node: the region's queue depth (consumer info): shards at the agent, unacked
      const adminUrl = String(bigs[0]![0].logs.find((l) => l.msg === 'ready')?.adminUrl);
      const metrics = await (await fetch(`${adminUrl}/metrics`)).text();
      const delivered = Number(/^proxycheck_region_queue_shards\{region="us1",state="delivered"\} (\d+)/m.exec(metrics)?.[1]);
      const waiting = Number(/^proxycheck_region_queue_shards\{region="us1",state="waiting"\} (\d+)/m.exec(metrics)?.[1]);
      expect(delivered).toBeGreaterThan(0);
      expect(waiting).toBeGreaterThanOrEqual(0);
      expect(metrics).toMatch(/^proxycheck_results_duplicate_total \d+/m);
      const small = await smallJob(b, `s${bigs.length}x`);
      console.log(`fairness across nodes (${name}): idle small job ${idle.ms.toFixed(0)} ms; behind: ${small.ms.toFixed(0)} ms (timeout ${SMALL_TIMEOUT_MS} ms; black hole held ${open} of ${SLOTS} slots; queue: ${waiting} shards waiting, ${delivered} at the agent)`);
      expect(small.status).toBe(200);
      expect(small.body.metadata.total_checked).toBe(10);
      expect(small.body.summary.total_working).toBe(10);
      expect(small.ms).toBeLessThan(2 * SMALL_TIMEOUT_MS);
    } finally {
      for (const j of jobs) j.abort();
      await Promise.all(jobs.map((j) => j.done));
      await until('the black hole to empty', () => hole.open() === 0, 3 * BIG_TIMEOUT_MS + 5000);
    }
  }

  test('a big job on A, a 10-proxy job on B: within 2 x its timeout', () => scenario('big on A, small on B', [[a, 1]]), 60_000);

  test('big jobs on A and on B, a 10-proxy job on B: within 2 x its timeout', () => scenario('big on A and B, small on B', [[a, 2], [b, 3]]), 60_000);
});
