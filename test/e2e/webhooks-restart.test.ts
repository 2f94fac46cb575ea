/**
 * End to end, the real process (`bun src/main.ts`), on the database the
 * environment selects: a webhook delivery survives kill -9. The receiver
 * answers the first attempt 500; once that attempt is recorded the service
 * is killed (-9) before its retry (due 5 s later); the restarted service
 * delivers it, and the receiver sees the message delivered once (one 2xx
 * for its webhook-id), every attempt verified with Webhook.verify. And an
 * async check running when the service is killed (-9): after the restart
 * the orphan sweep fails it and its check.completed (failed) is delivered.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { startBlackHoleAnyAddress, type FakeServer } from '../fixtures/fake-servers';
import { ProcessBed, type ServiceStore, until } from '../helpers/process';
import { call } from '../helpers/service';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver';

const bed = new ProcessBed();
let store: ServiceStore;
let receiver: Receiver;
let hole: FakeServer;

beforeAll(async () => {
  store = await bed.store();
  receiver = startReceiver();
  hole = await startBlackHoleAnyAddress();
});
afterAll(async () => {
  await bed.cleanup();
  receiver?.close();
  await hole?.close();
}, 30_000);

test('kill -9 between a failed attempt and its retry: delivered after the restart, once by webhook-id', async () => {
  const p = await bed.spawn(store);
  const key = { 'x-api-key': p.key };
  const made = await call(`${p.url}/webhooks`, { method: 'POST', headers: key, json: { url: receiver.url, events: ['pool.paused'] } });
  expect(made.status, made.text).toBe(201);
  receiver.setSecret(made.body.secret);
  const statuses: number[] = [];
  receiver.answer = (n) => {
    const s = n === 0 ? 500 : 204;
    statuses.push(s);
    return s;
  };
  expect((await call(`${p.url}/webhooks/${made.body.id}/test`, { method: 'POST', headers: key })).status).toBe(202);
  const deliveries = async (url: string) => (await call(`${url}/webhooks/${made.body.id}/deliveries`, { headers: key })).body.deliveries as { id: string; state: string; attempts: { status: number | null }[] }[];
  await until('the first attempt recorded', async () => (await deliveries(p.url))[0]?.attempts.length === 1, 10_000);
  p.kill('SIGKILL');
  await p.exited;
  expect(receiver.got).toHaveLength(1);

  const q = await bed.spawn(store);
  await until('the retry delivered', async () => (await deliveries(q.url))[0]?.state === 'delivered', 20_000);
  await Bun.sleep(1500); // nothing else comes
  expect(receiver.got.map((g) => g.verified)).toEqual([true, true]);
  expect(new Set(receiver.got.map((g) => g.id)).size).toBe(1);
  expect(statuses).toEqual([500, 204]);
  const [d] = await deliveries(q.url);
  expect(d!.id).toBe(receiver.got[0]!.id);
  expect(d!.attempts.map((a) => a.status)).toEqual([500, 204]);
  q.kill('SIGTERM');
  expect((await q.exited).code).toBe(0);
}, 60_000);

test('kill -9 while an async check runs: after the restart check.completed says failed', async () => {
  const p = await bed.spawn(store, { env: { NODE_ID: 'webhooks-restart-node' } });
  const key = { 'x-api-key': p.key };
  const r = startReceiver();
  try {
    const made = await call(`${p.url}/webhooks`, { method: 'POST', headers: key, json: { url: r.url, events: ['check.completed'] } });
    expect(made.status, made.text).toBe(201);
    r.setSecret(made.body.secret);
    const accepted = hole.accepted();
    const proxies = Array.from({ length: 20 }, (_, i) => `127.0.71.${1 + i}:${hole.port}`);
    const sent = await call(`${p.url}/check`, { method: 'POST', headers: { ...key, Prefer: 'respond-async' }, json: { proxies, timeout: 15_000, jobId: 'killed-async' } });
    expect(sent.status, sent.text).toBe(202);
    await until('the probes in flight', () => hole.accepted() - accepted >= 20, 8000);
    p.kill('SIGKILL');
    await p.exited;
    expect(r.got).toHaveLength(0);
    await bed.spawn(store, { env: { NODE_ID: 'webhooks-restart-node' } });
    await until('check.completed', () => r.got.length === 1, 20_000);
    expect(r.got[0]).toMatchObject({ type: 'check.completed', verified: true, data: { jobId: 'killed-async', status: 'failed', total_checked: 0, total_working: 0, result_url: null } });
  } finally {
    r.close();
  }
}, 60_000);
