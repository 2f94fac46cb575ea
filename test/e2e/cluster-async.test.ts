/**
 * Asynchronous checks in a cluster, real processes: two API nodes A and B
 * (ROLE=api, one PostgreSQL database, each its own DATA_DIR) and one region
 * agent on a private nats-server.
 *
 * - Submitted on A, polled on B: B reads the job from the database and its
 *   live progress from A (pc.control.<A>, src/cluster/job-control.ts); a
 *   completed job's response from B is A's, with B's fresh links.
 * - Cancelled on B: A cancels it through its own cancel path; B answers 204
 *   once the refund is made, exactly the checks not performed come back.
 * - A killed (-9) mid-job: B still reads the job (the scan's numbers), a
 *   DELETE on B is 503 (nobody answers for it), and once A's lease expires
 *   B's orphan sweep fails it (`interrupted`) and refunds it.
 *
 * Skips unless PostgreSQL and nats-server are there.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startHttpProxy } from '../fixtures/fake-proxies';
import { startBlackHoleAnyAddress, type FakeServer } from '../fixtures/fake-servers';
import { testDatabaseUrl } from '../helpers/db';
import { HAVE_NATS_SERVER, startNatsServer, type NatsServer } from '../helpers/nats-server';
import { checkedCall } from '../helpers/openapi-check';
import { ProcessBed, type ServiceProcess, type ServiceStore, until } from '../helpers/process';
import { call } from '../helpers/service';

const PG = testDatabaseUrl();
const SECRETS = { RESULT_SECRET: 'cluster-result-secret-0123456789', ADMIN_TOKEN: 'cluster-admin-token-0123456789' };
const LEASE_MS = 3000;

describe.skipIf(PG === undefined || !HAVE_NATS_SERVER)('cluster: an async job submitted on A, polled and cancelled on B', () => {
  const bed = new ProcessBed();
  let nats: NatsServer;
  let storeA: ServiceStore, storeB: ServiceStore;
  let a: ServiceProcess, b: ServiceProcess;
  let elite: FakeServer, hole: FakeServer;

  const timing = () => ({ NATS_URL: nats.url, CLUSTER_ACK_WAIT_MS: '2000', AGENT_HEARTBEAT_MS: '200', AGENT_TTL_MS: '1500', SHUTDOWN_GRACE_MS: '500' });
  const apiEnv = () => ({ ...timing(), ...SECRETS, ROLE: 'api', BOOTSTRAP_CHECKS: '10000', NODE_LEASE_MS: String(LEASE_MS), ORPHAN_SWEEP_MS: '500' });
  const working = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${i}:p@127.0.0.1:${elite.port}`);
  const holes = (n: number, b: number) => Array.from({ length: n }, (_, i) => `127.${b}.5.${1 + i}:${hole.port}`);
  const key = (p: ServiceProcess) => ({ 'x-api-key': p.key });
  const job = (p: ServiceProcess, jobId: string) => checkedCall(`${p.url}/checks/${jobId}`, { headers: key(p) });
  const balance = async (p: ServiceProcess) => (await call(`${p.url}/me`, { headers: key(p) })).body.user.checks as number;
  const submit = async (p: ServiceProcess, json: Record<string, unknown>) => {
    const r = await checkedCall(`${p.url}/check`, { method: 'POST', headers: { ...key(p), Prefer: 'respond-async' }, json });
    expect(r.status, r.text).toBe(202);
    expect(r.body.status_url).toBe(`${p.url}/checks/${String(json.jobId)}`);
  };

  beforeAll(async () => {
    nats = await startNatsServer();
    elite = await startHttpProxy();
    hole = await startBlackHoleAnyAddress();
    storeA = await bed.store();
    storeB = bed.sibling(storeA);
    a = await bed.spawn(storeA, { env: apiEnv() });
    [b] = await Promise.all([bed.spawn(storeB, { env: apiEnv() }), bed.spawn(storeA, { env: { ...timing(), ROLE: 'agent', REGION: 'us1', AGENT_SLOTS: '200' } })]);
    await until('the agent to be live on A and B', async () => {
      for (const p of [a, b]) if ((await call(`${p.url}/regions`)).body.regions.find((r: { code: string }) => r.code === 'us1').agents !== 1) return false;
      return true;
    }, 10_000);
  }, 60_000);

  afterAll(async () => {
    await bed.cleanup();
    await elite?.close();
    await hole?.close();
    await nats?.stop();
  }, 30_000);

  test('polled on B: live progress from A, then the completed response', async () => {
    await submit(a, { proxies: [...working(3, 'cp'), ...holes(5, 70)], timeout: 3000, jobId: 'cl-poll' });
    // live numbers while it runs: the 3 working proxies are checked, the black holes hang
    await until('B to see the working proxies checked', async () => {
      const j = (await job(b, 'cl-poll')).body;
      return j.status === 'running' && j.progress.checked === 3 && j.progress.working_so_far === 3 && j.progress.total === 8;
    }, 10_000);
    await until('the job to complete', async () => (await job(b, 'cl-poll')).body.status === 'completed', 15_000);
    const onB = (await job(b, 'cl-poll')).body;
    const onA = (await job(a, 'cl-poll')).body;
    expect(onB.result.summary).toEqual(onA.result.summary);
    expect(onB.result.metadata).toMatchObject({ total_checked: 8, job_id: 'cl-poll' });
    expect(new URL(onB.result.result_url).pathname).toBe(new URL(onA.result.result_url).pathname);
    expect((await fetch(onB.result.result_url)).status).toBe(200);
  }, 40_000);

  test('cancelled on B: A cancels it; exactly the checks not performed come back', async () => {
    const before = await balance(b);
    await submit(a, { proxies: [...working(4, 'cc'), ...holes(30, 71)], timeout: 15_000, jobId: 'cl-cancel' });
    await until('the working proxies to be checked', async () => (await job(b, 'cl-cancel')).body.progress.checked === 4, 10_000);
    expect(before - (await balance(b))).toBe(34);
    const del = await checkedCall(`${b.url}/checks/cl-cancel`, { method: 'DELETE', headers: key(b) });
    expect(del.status, del.text).toBe(204);
    expect(before - (await balance(b))).toBe(4);
    expect((await job(b, 'cl-cancel')).body).toMatchObject({ status: 'cancelled', error: 'client_cancelled', progress: { checked: 4, total: 34, working_so_far: 4 } });
    expect(a.logs.some((l) => l.msg === 'check job failed')).toBe(false);
    const again = await checkedCall(`${b.url}/checks/cl-cancel`, { method: 'DELETE', headers: key(b) });
    expect(again.status).toBe(409);
  }, 40_000);

  test('A killed mid-job: B reads it, its DELETE is 503, and after A\'s lease B fails it as interrupted and refunds it', async () => {
    const before = await balance(b);
    await submit(a, { proxies: holes(20, 72), timeout: 15_000, jobId: 'cl-crash' });
    await until('B to see it running', async () => (await job(b, 'cl-crash')).body.status === 'running', 5000);
    a.kill('SIGKILL');
    await a.exited;
    const running = (await job(b, 'cl-crash')).body;
    expect(running).toMatchObject({ status: 'running', progress: { checked: 0, total: 20 } });
    const del = await checkedCall(`${b.url}/checks/cl-crash`, { method: 'DELETE', headers: key(b) });
    expect(del.status).toBe(503);
    expect(del.headers.get('retry-after')).toBe('5');
    await until('the sweep to fail it', async () => (await job(b, 'cl-crash')).body.status === 'failed', LEASE_MS * 4);
    expect((await job(b, 'cl-crash')).body.error).toBe('interrupted');
    expect(await balance(b)).toBe(before);
  }, 40_000);
});
