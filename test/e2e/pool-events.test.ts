/**
 * `GET /ws?pool={id}` in the running service (embedded): an event published
 * through the service's PoolEventsPort (as the rounds publish) reaches the
 * owner's socket and nobody else's; the owner's PATCH of the state makes
 * `pool.paused` (reason owner) / `pool.resumed`; DELETE closes the socket
 * (1000). Refusals before the upgrade: no key 401 (whatever WS_REQUIRE_AUTH),
 * a wrong key 401, an unknown pool, a malformed id and another account's pool
 * alike 404. /health names the gateway's address; /metrics counts the open
 * sockets (proxycheck_pool_ws_subscribers).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { METRIC_NAMES } from '../../src/metrics/service-metrics';
import { proxyEvent, type PoolEvent } from '../../src/pools/events';
import { sampleValue } from '../helpers/prometheus';
import { call, startTestService, type TestService } from '../helpers/service';

let t: TestService;
let otherKey = '';

beforeAll(async () => {
  t = await startTestService({ GATEWAY_PORT: '0', RATE_LIMIT_PER_S: '100000' });
  const admin = { Authorization: `Bearer ${t.service.config.http.adminToken}` };
  otherKey = (await call(`${t.adminUrl}/admin/create-account`, { method: 'POST', headers: admin, json: { email: 'other@example.com', checks: 10 } })).body.apiKey;
}, 60_000);
afterAll(async () => {
  await t?.stop();
}, 30_000);

const UPGRADE = { Upgrade: 'websocket', Connection: 'Upgrade', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Version': '13' };

async function newPool(key: string, name = 'watched'): Promise<string> {
  const r = await call(`${t.url}/pools`, { method: 'POST', headers: { 'x-api-key': key }, json: { name, proxies: ['10.1.0.1:8080', '10.1.0.2:8080'] } });
  expect(r.status).toBe(201);
  return r.body.id as string;
}

async function accountOf(key: string): Promise<string> {
  return (await call(`${t.url}/me`, { headers: { 'x-api-key': key } })).body.user.id as string;
}

interface Socket {
  ws: WebSocket;
  events: PoolEvent[];
  closed: Promise<{ code: number; reason: string }>;
}

function open(poolId: string, key: string): Promise<Socket> {
  const ws = new WebSocket(`${t.url.replace('http', 'ws')}/ws?pool=${poolId}`, { headers: { 'X-API-Key': key } });
  const events: PoolEvent[] = [];
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.onclose = (e) => resolve({ code: e.code, reason: e.reason });
  });
  ws.onmessage = (e) => events.push(JSON.parse(String(e.data)) as PoolEvent);
  return new Promise((resolve, reject) => {
    ws.onopen = () => resolve({ ws, events, closed });
    ws.onerror = () => reject(new Error('ws error'));
  });
}

async function until(what: string, f: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

const COUNTS = { total: 2, working: 1, failed: 1, unchecked: 0 };

describe('GET /ws?pool=', () => {
  test('an event published through the port reaches the owner\'s socket, not another account\'s or another pool\'s', async () => {
    const pool = await newPool(t.key);
    const second = await newPool(t.key, 'second');
    const otherPool = await newPool(otherKey, 'theirs');
    const owner = await open(pool, t.key);
    const ownerSecond = await open(second, t.key);
    const theirs = await open(otherPool, otherKey);
    const e = proxyEvent(pool, 'proxy.down', Date.now(), { host: '10.1.0.1', port: 8080 }, COUNTS, { error: { code: 'timeout', message: 'no answer' } });
    t.service.poolEvents.publish(await accountOf(t.key), e);
    // the same pool id under another account reaches nobody
    t.service.poolEvents.publish(await accountOf(otherKey), { ...e, pool });
    await until('the owner\'s event', () => owner.events.length === 1);
    await Bun.sleep(100);
    expect(owner.events).toEqual([e]);
    expect(ownerSecond.events).toEqual([]);
    expect(theirs.events).toEqual([]);
    // counted in the admin listener's /metrics while open
    const gauge = async () => sampleValue(await (await fetch(`${t.adminUrl}/metrics`)).text(), METRIC_NAMES.poolWsSubscribers);
    expect(await gauge()).toBe(3);
    for (const s of [owner, ownerSecond, theirs]) s.ws.close();
    await Promise.all([owner, ownerSecond, theirs].map((s) => s.closed));
    for (let i = 0; i < 100 && (await gauge()) !== 0; i++) await Bun.sleep(20);
    expect(await gauge()).toBe(0);
  });

  test('the owner pauses and resumes: pool.paused (reason owner) then pool.resumed, with the counts', async () => {
    const pool = await newPool(t.key);
    const s = await open(pool, t.key);
    for (const state of ['paused', 'active', 'active']) {
      expect((await call(`${t.url}/pools/${pool}`, { method: 'PATCH', headers: { 'x-api-key': t.key }, json: { state } })).status).toBe(200);
    }
    await until('two events', () => s.events.length === 2);
    await Bun.sleep(100);
    expect(s.events.map((e) => [e.event, e.reason ?? null])).toEqual([
      ['pool.paused', 'owner'],
      ['pool.resumed', null],
    ]);
    // the counts from the owner's memory: its first checks may be in already
    const c = s.events[0]!.counts;
    expect([c.total, c.working + c.failed + c.unchecked]).toEqual([2, 2]);
    s.ws.close();
  });

  test('DELETE /pools/{id}: its sockets are closed with 1000', async () => {
    const pool = await newPool(t.key);
    const s = await open(pool, t.key);
    expect((await call(`${t.url}/pools/${pool}`, { method: 'DELETE', headers: { 'x-api-key': t.key } })).status).toBe(204);
    expect(await s.closed).toEqual({ code: 1000, reason: 'pool deleted' });
  });

  test('refused before the upgrade: no key 401, a wrong key 401, unknown / malformed / another account\'s pool 404 alike', async () => {
    const pool = await newPool(t.key);
    const noKey = await call(`${t.url}/ws?pool=${pool}`, { headers: UPGRADE });
    expect(noKey.status).toBe(401);
    expect(noKey.body.error).toBe('API key is required');
    const wrong = await call(`${t.url}/ws?pool=${pool}`, { headers: { ...UPGRADE, 'X-API-Key': 'pc_nope' } });
    expect(wrong.status).toBe(401);
    const answers = [];
    for (const [id, key] of [
      ['zzzzzzzzzzzz', t.key],
      ['Not-An-Id', t.key],
      [pool, otherKey],
    ] as const) {
      const r = await call(`${t.url}/ws?pool=${id}`, { headers: { ...UPGRADE, 'X-API-Key': key } });
      answers.push([r.status, r.body]);
    }
    expect(answers.map((a) => a[0])).toEqual([404, 404, 404]);
    expect(answers[2]?.[1]).toEqual(answers[0]?.[1]);
  });

  test('/health names the gateway\'s address', async () => {
    const h = await call(`${t.url}/health`);
    expect(h.body.gateway).toEqual({ host: '127.0.0.1', port: t.service.gatewayPort });
  });
});
