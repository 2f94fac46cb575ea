/**
 * End to end, over real sockets: a client that closes its connection
 * mid-job cancels the job (refund of what was not probed, history
 * `cancelled` / `client_disconnected`), and a job that runs longer than the
 * HTTP idle timeout (1 s here; 30 s, a constant, in a real start) still gets its answer.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { connect } from 'node:net';
import { startBlackHoleAnyAddress, type FakeServer } from '../fixtures/fake-servers';
import { call, startTestService, type TestService } from '../helpers/service';

let t: TestService;
let hole: FakeServer;

beforeAll(async () => {
  hole = await startBlackHoleAnyAddress();
  t = await startTestService({ BOOTSTRAP_CHECKS: '1000' }, { configure: (c) => void (c.http.idleTimeoutS = 1) });
});
afterAll(async () => {
  await t?.stop();
  await hole?.close();
});

const holes = (n: number, b: number) => Array.from({ length: n }, (_, i) => `127.${b}.1.${1 + i}:${hole.port}`);
const me = async () => (await call(`${t.url}/me`, { headers: { 'x-api-key': t.key } })).body;

async function waitFor(cond: () => Promise<boolean> | boolean, ms: number, what: string) {
  const end = performance.now() + ms;
  while (!(await cond())) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

test('a job longer than the HTTP idle timeout still answers', async () => {
  const t0 = performance.now();
  const r = await call(`${t.url}/check`, { method: 'POST', headers: { 'x-api-key': t.key }, json: { proxies: holes(5, 7), timeout: 5000, jobId: 'long-job' } });
  const ms = performance.now() - t0;
  expect(r.status).toBe(200);
  expect(r.body.metadata.total_checked).toBe(5);
  expect(ms).toBeGreaterThan(4500); // far longer than the 1 s idle timeout (Bun checks idle connections every few seconds)
}, 15_000);

test('a client that closes the connection mid-job: cancelled, nothing charged for unprobed proxies, history says so', async () => {
  const before = (await me()).user.checks as number;
  const body = JSON.stringify({ proxies: holes(20, 8), timeout: 5000, jobId: 'gone-job' });
  const { port } = new URL(t.url);
  const sock = connect(Number(port), '127.0.0.1');
  await new Promise<void>((resolve) => sock.once('connect', () => resolve()));
  sock.write(`POST /check HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${t.key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  // the job is probing (its probes reach the black hole), then the client goes away
  await waitFor(() => hole.open() >= 20, 5000, 'the job to probe');
  sock.destroy();
  await waitFor(async () => (await me()).history?.[0]?.status === 'cancelled', 5000, 'the job to be cancelled');
  const m = await me();
  expect(m.history[0]).toMatchObject({ status: 'cancelled', error: 'client_disconnected', total_checked: 0, result_url: null });
  expect(m.user.checks).toBe(before); // no probe finished: all 20 units came back
  expect(t.logs.some((l) => l.msg === 'check job failed')).toBe(false); // not an internal error
}, 15_000);
