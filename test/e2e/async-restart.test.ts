/**
 * End to end, the real process (`bun src/main.ts`): asynchronous checks
 * across the service's end, on the database the environment selects.
 *   - kill -9 while an async job runs: after the restart GET
 *     /checks/{jobId} says failed / interrupted and the whole reservation is
 *     back (the orphan sweep's refund).
 *   - SIGTERM while an async job runs: the shutdown fails it and refunds it
 *     as it does a synchronous one (failed / shutting_down).
 *   - A completed async job's response survives the restart (it is kept with
 *     its scan, not in the process).
 * Black holes (one server on 0.0.0.0, distinct 127.x.y.z addresses) keep
 * probes in flight as long as the test needs.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { startHttpProxy } from '../fixtures/fake-proxies';
import { startBlackHoleAnyAddress, type FakeServer } from '../fixtures/fake-servers';
import { ProcessBed, type ServiceProcess, type ServiceStore, until } from '../helpers/process';
import { call } from '../helpers/service';

const BALANCE = 5000;
const bed = new ProcessBed();
let hole: FakeServer;
let elite: FakeServer;
let store: ServiceStore;

beforeAll(async () => {
  hole = await startBlackHoleAnyAddress();
  elite = await startHttpProxy();
  store = await bed.store();
});
afterAll(async () => {
  await bed.cleanup();
  await hole?.close();
  await elite?.close();
}, 30_000);

// a fixed NODE_ID: a restart takes its previous run's running jobs at once on PostgreSQL too
const spawn = () => bed.spawn(store, { env: { BOOTSTRAP_CHECKS: String(BALANCE), NODE_ID: 'async-restart-node', SHUTDOWN_GRACE_MS: '300' } });
const holes = (n: number, b: number) => Array.from({ length: n }, (_, i) => `127.${b}.4.${1 + i}:${hole.port}`);
const key = (p: ServiceProcess) => ({ 'x-api-key': p.key });
const submit = async (p: ServiceProcess, json: Record<string, unknown>) => {
  const r = await call(`${p.url}/check`, { method: 'POST', headers: { ...key(p), Prefer: 'respond-async' }, json });
  expect(r.status, r.text).toBe(202);
};
const job = async (p: ServiceProcess, jobId: string) => (await call(`${p.url}/checks/${jobId}`, { headers: key(p) })).body;
const balance = async (p: ServiceProcess) => (await call(`${p.url}/me`, { headers: key(p) })).body.user.checks as number;

test('kill -9 while an async job runs: after the restart it reads failed / interrupted and its checks are back', async () => {
  const p = await spawn();
  const before = await balance(p);
  const accepted = hole.accepted();
  await submit(p, { proxies: holes(50, 60), timeout: 15_000, jobId: 'crash-async' });
  await until('the probes in flight', () => hole.accepted() - accepted >= 50, 8000);
  expect(await balance(p)).toBe(before - 50);
  expect((await job(p, 'crash-async')).status).toBe('running');
  p.kill('SIGKILL');
  await p.exited;

  const q = await spawn();
  const after = await job(q, 'crash-async');
  expect(after).toMatchObject({ jobId: 'crash-async', status: 'failed', error: 'interrupted', progress: { checked: 0, total: 50, working_so_far: 0 } });
  expect(after.result).toBeUndefined();
  expect(await balance(q)).toBe(before);
  q.kill('SIGTERM');
  expect((await q.exited).code).toBe(0);
}, 40_000);

test('SIGTERM while an async job runs: failed / shutting_down and refunded, as a synchronous job; a completed job survives the restart', async () => {
  const p = await spawn();
  const before = await balance(p);
  await submit(p, { proxies: [`a:b@127.0.0.1:${elite.port}`, `c:d@127.0.0.1:${elite.port}`], jobId: 'done-before-restart' });
  await until('the quick job to complete', async () => (await job(p, 'done-before-restart')).status === 'completed', 10_000);
  const kept = (await job(p, 'done-before-restart')).result;
  const accepted = hole.accepted();
  await submit(p, { proxies: holes(40, 61), timeout: 15_000, jobId: 'sigterm-async' });
  await until('the probes in flight', () => hole.accepted() - accepted >= 40, 8000);
  p.kill('SIGTERM');
  const e = await p.exited;
  expect(e.code).toBe(0);
  expect(p.logs.some((l) => l.msg?.startsWith('shutdown grace over'))).toBe(true);

  const q = await spawn();
  expect(await job(q, 'sigterm-async')).toMatchObject({ status: 'failed', error: 'shutting_down', progress: { total: 40 } });
  expect(await balance(q)).toBe(before - 2); // the completed job's 2 checks; the 40 came back
  const again = (await job(q, 'done-before-restart')).result;
  expect(again.summary).toEqual(kept.summary);
  expect(again.metadata).toEqual(kept.metadata);
  expect((await fetch(again.result_url)).status).toBe(200);
  q.kill('SIGTERM');
  expect((await q.exited).code).toBe(0);
}, 40_000);
