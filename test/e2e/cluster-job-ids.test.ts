/**
 * End to end, real processes: a client jobId runs once at a time across API
 * nodes. Two service processes on one PostgreSQL database (each its own
 * DATA_DIR): node A runs a long job (black holes, timeout 5 s) with jobId X;
 * node B is asked for X -> 409 `Job already running` with the contract body,
 * nothing charged; once A's job has ended, B runs X.
 * PostgreSQL only (embedded mode is one process per data dir; its 409 is the
 * in-process check, test/e2e/check.test.ts).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBlackHoleAnyAddress, type FakeServer } from '../fixtures/fake-servers';
import { testDatabaseUrl } from '../helpers/db';
import { ProcessBed, serviceStore, spawnService, type ServiceProcess, type ServiceStore } from '../helpers/process';
import { call } from '../helpers/service';

const PG = testDatabaseUrl() !== undefined;
const BALANCE = 1000;
const TIMEOUT_MS = 5000;

let hole: FakeServer;
const bed = new ProcessBed();

beforeAll(async () => {
  hole = await startBlackHoleAnyAddress();
});
afterAll(async () => {
  await bed.cleanup();
  await hole?.close();
});

async function spawn(store: ServiceStore): Promise<ServiceProcess> {
  const p = await spawnService(store, { env: { BOOTSTRAP_CHECKS: String(BALANCE), SHUTDOWN_GRACE_MS: '0' } });
  bed.spawned.push(p);
  return p;
}

const holes = (n: number, b: number) => Array.from({ length: n }, (_, i) => `127.${b}.9.${1 + i}:${hole.port}`);
const check = (p: ServiceProcess, json: unknown) => call(`${p.url}/check`, { method: 'POST', headers: { 'x-api-key': p.key }, json });
const checks = async (p: ServiceProcess) => ((await call(`${p.url}/me`, { headers: { 'x-api-key': p.key } })).body as { user: { checks: number } }).user.checks;

async function waitFor(cond: () => boolean, ms: number, what: string) {
  const end = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

test.if(PG)(
  'two nodes, one database: B answers 409 for a jobId running on A, charging nothing; once A\'s job ended, B runs it',
  async () => {
    const storeA = await serviceStore();
    bed.stores.push(storeA);
    const dataDirB = mkdtempSync(join(tmpdir(), 'pc-node-'));
    const storeB: ServiceStore = { dataDir: dataDirB, databaseUrl: storeA.databaseUrl, cleanup: async () => rmSync(dataDirB, { recursive: true, force: true }) };
    bed.stores.push(storeB);
    const a = await spawn(storeA);
    const b = await spawn(storeB);
    const X = 'cluster-job-x';

    const before = hole.accepted();
    const t0 = performance.now();
    const long = check(a, { proxies: holes(5, 40), timeout: TIMEOUT_MS, jobId: X });
    await waitFor(() => hole.accepted() - before >= 5, 8000, 'A\'s job to probe');
    expect(await checks(b)).toBe(BALANCE - 5);

    const refused = await check(b, { proxies: holes(3, 41), timeout: 1000, jobId: X });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({
      error: 'Job already running',
      message: `A job with id ${X} is still running; wait for it to finish or use another jobId`,
      jobId: X,
    });
    expect(performance.now() - t0).toBeLessThan(TIMEOUT_MS); // A's job really was still running
    expect(await checks(b)).toBe(BALANCE - 5); // nothing charged for the refused check
    // the refusal is no failure of B's: no job_failed, nothing logged as an error
    expect(b.logs.some((l) => l.level === 'error')).toBe(false);

    const first = await long;
    expect(first.status).toBe(200);
    expect(await checks(a)).toBe(BALANCE - 5);

    const again = await check(b, { proxies: holes(2, 42), timeout: 1000, jobId: X });
    expect(again.status).toBe(200);
    expect((again.body as { metadata: { job_id: string } }).metadata.job_id).toBe(X);
    expect(await checks(a)).toBe(BALANCE - 7);
    for (const p of [a, b]) {
      p.kill('SIGTERM');
      expect((await p.exited).code).toBe(0);
    }
  },
  60_000,
);
