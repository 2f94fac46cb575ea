/**
 * Webhooks end to end through the real service on 127.0.0.1 (every response
 * checked against the served OpenAPI document): an async check's
 * check.completed and a pool's pause and resume reach a receiver that
 * verifies them with Webhook.verify (counted in /metrics), each body matching the document's
 * OpenAPI `webhooks` schema of its event; the deliveries listing shows them; the
 * ten-line receiver of docs/API.md, run as it is written, verifies a real
 * delivery and refuses a forged one.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkedCall as call, checkerFor } from '../helpers/openapi-check';
import { until } from '../helpers/process';
import { startTestService, type TestService } from '../helpers/service';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver';

let t: TestService;
let r: Receiver;
beforeAll(async () => {
  t = await startTestService({ POOL_ROUNDS: 'false', RATE_LIMIT_PER_S: '100000' }, {});
  r = startReceiver();
}, 60_000);
afterAll(async () => {
  await t?.stop();
  r?.close();
}, 30_000);

const key = () => ({ 'x-api-key': t.key });

test('an async check and a pool paused and resumed: check.completed, pool.paused, pool.resumed, verified; the deliveries listed', async () => {
  const made = await call(`${t.url}/webhooks`, { method: 'POST', headers: key(), json: { url: r.url, events: ['check.completed', 'pool.paused', 'pool.resumed'] } });
  expect(made.status, made.text).toBe(201);
  r.setSecret(made.body.secret);

  const accepted = await call(`${t.url}/check?async=true`, { method: 'POST', headers: key(), json: { proxies: ['127.0.0.1:1'], jobId: 'hooked-job', timeout: 1000 } });
  expect(accepted.status, accepted.text).toBe(202);
  await until('check.completed', () => r.got.some((g) => g.type === 'check.completed'), 15_000);
  const done = r.got.find((g) => g.type === 'check.completed')!;
  expect(done).toMatchObject({ verified: true, data: { jobId: 'hooked-job', status: 'completed', total_checked: 1, total_working: 0 } });
  expect((await fetch(done.data.result_url as string)).status).toBe(200);
  // a synchronous check tells nothing
  expect((await call(`${t.url}/check`, { method: 'POST', headers: key(), json: { proxies: ['127.0.0.1:1'], timeout: 1000 } })).status).toBe(200);

  const pool = await call(`${t.url}/pools`, { method: 'POST', headers: key(), json: { name: 'hooked', proxies: ['127.0.0.1:1'] } });
  expect(pool.status, pool.text).toBe(201);
  expect((await call(`${t.url}/pools/${pool.body.id}`, { method: 'PATCH', headers: key(), json: { state: 'paused' } })).status).toBe(200);
  expect((await call(`${t.url}/pools/${pool.body.id}`, { method: 'PATCH', headers: key(), json: { state: 'active' } })).status).toBe(200);
  await until('pool.resumed', () => r.got.some((g) => g.type === 'pool.resumed'), 10_000);
  // several attempts of one webhook may be in flight at once: the receipt order is not the events' order
  expect(r.got.map((g) => g.type).sort()).toEqual(['check.completed', 'pool.paused', 'pool.resumed']);
  const pausedMsg = r.got.find((g) => g.type === 'pool.paused')!;
  expect(r.got.every((g) => g.verified)).toBe(true);
  expect(pausedMsg.data).toMatchObject({ pool: pool.body.id, reason: 'owner', counts: { total: 1 } });
  // every body as the document's OpenAPI `webhooks` describes it (closed schemas: a field added or lost fails)
  const checker = await checkerFor(t.url);
  for (const g of r.got) expect(checker.webhookProblems({ type: g.type, timestamp: new Date().toISOString(), data: g.data })).toEqual([]);
  expect(checker.webhookProblems({ type: 'pool.paused', timestamp: new Date().toISOString(), data: { ...pausedMsg.data, extra: 1 } })).not.toEqual([]);

  await until('all three recorded', async () => (await call(`${t.url}/webhooks/${made.body.id}/deliveries`, { headers: key() })).body.deliveries.every((d: { state: string }) => d.state === 'delivered'), 5000);
  const listed = await call(`${t.url}/webhooks/${made.body.id}/deliveries`, { headers: key() });
  expect(listed.body.deliveries.map((d: { event: string }) => d.event)).toEqual(['pool.resumed', 'pool.paused', 'check.completed']);
  expect(listed.body.deliveries.map((d: { id: string }) => d.id).sort()).toEqual(r.got.map((g) => g.id).sort());
  expect((await call(`${t.url}/webhooks/${made.body.id}`, { headers: key() })).body.last_success_at).not.toBeNull();
  const metrics = await (await fetch(`${t.adminUrl}/metrics`)).text();
  expect(Number(/^proxycheck_webhook_attempts_total\{outcome="delivered"\} (\d+)/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(3);
  expect(metrics).toMatch(/^proxycheck_webhook_attempts_in_flight 0$/m);
  expect((await call(`${t.url}/webhooks/${made.body.id}`, { method: 'DELETE', headers: key() })).status).toBe(204);
}, 60_000);

test("the ten-line receiver of docs/API.md verifies a real delivery and refuses a forged one", async () => {
  const api = readFileSync(join(import.meta.dir, '../../docs/API.md'), 'utf8');
  const from = api.indexOf('A receiver that verifies every delivery');
  const code = /```js\n([\s\S]*?)```/.exec(api.slice(from))![1]!;
  expect(code.trim().split('\n')).toHaveLength(10);
  const free = startReceiver();
  const port = free.port;
  free.close();
  const file = join(t.dataDir, 'receiver.mjs');
  writeFileSync(file, code.replace('.listen(8080)', `.listen(${port}, '127.0.0.1')`));
  const made = await call(`${t.url}/webhooks`, { method: 'POST', headers: key(), json: { url: `http://127.0.0.1:${port}/`, events: ['pool.paused'] } });
  const child = Bun.spawn([process.execPath, file], { cwd: join(import.meta.dir, '../..'), env: { ...process.env, WEBHOOK_SECRET: made.body.secret }, stdout: 'pipe', stderr: 'pipe' });
  try {
    await until('the receiver listening', async () => (await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{}' }).then((x) => x.status).catch(() => 0)) === 400, 10_000);
    expect((await call(`${t.url}/webhooks/${made.body.id}/test`, { method: 'POST', headers: key() })).status).toBe(202);
    await until('delivered', async () => (await call(`${t.url}/webhooks/${made.body.id}/deliveries`, { headers: key() })).body.deliveries[0]?.state === 'delivered', 10_000);
    const [d] = (await call(`${t.url}/webhooks/${made.body.id}/deliveries`, { headers: key() })).body.deliveries;
    expect(d.attempts).toMatchObject([{ status: 204, error: null }]);
    const forged = await fetch(`http://127.0.0.1:${port}/`, {
      method: 'POST',
      headers: { 'webhook-id': d.id, 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': 'v1,AAAA' },
      body: '{"type":"webhook.test"}',
    });
    expect(forged.status).toBe(400);
  } finally {
    child.kill();
    await child.exited;
  }
  const out = await new Response(child.stdout).text();
  expect(out).toContain('webhook.test');
}, 60_000);
