/**
 * `samples` end to end (an extension): POST /check and /check-raw with
 * samples > 1 through the whole service (lanes, pool, actor, result file,
 * CSV, ledger). A rotating fake proxy binds each upstream connection to
 * another 127.x source address, so the judge sees a new origin per sample;
 * a plain proxy keeps one. Charged unique proxies x samples (402 says so);
 * out-of-range values are 400; a request without samples (or samples 1) has
 * none of the new fields. Every response is checked against the served
 * OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startHttpProxy, startRotatingProxy, startSocksProxy } from '../fixtures/fake-proxies';
import { refusedPort, type FakeServer } from '../fixtures/fake-servers';
import { call as rawCall, startTestService, type TestService } from '../helpers/service'; // the admin listener serves no OpenAPI document
import { checkedCall as call, checkedFetch } from '../helpers/openapi-check';

let t: TestService;
let rotating: FakeServer, plain: FakeServer, socks: FakeServer;
let refused: number;

beforeAll(async () => {
  t = await startTestService();
  [rotating, plain, socks] = await Promise.all([startRotatingProxy(), startHttpProxy(), startSocksProxy()]);
  refused = await refusedPort();
}, 60_000);

afterAll(async () => {
  await Promise.all([rotating, plain, socks].map((s) => s?.close()));
  await t?.stop();
}, 30_000);

const bearer = (key = t.key) => ({ Authorization: `Bearer ${key}` });
const addr = (s: FakeServer) => `127.0.0.1:${s.port}`;
const balance = async (key = t.key) => (await call(`${t.url}/me`, { headers: bearer(key) })).body.user.checks as number;

async function file(url: string, ext = 'json'): Promise<Response> {
  const r = await checkedFetch(url.replace('.json?', `.${ext}?`));
  expect(r.status).toBe(200);
  return r;
}

describe('samples', () => {
  test('POST /check samples=3: a rotating proxy shows 3 exits, a plain one 1; summary.rotating; charged proxies x samples; CSV columns', async () => {
    const before = await balance();
    const proxies = [addr(rotating), addr(plain), `127.0.0.1:${refused}`];
    const r = await call(`${t.url}/check`, { method: 'POST', headers: bearer(), json: { proxies, samples: 3, timeout: 2000 } });
    expect(r.status).toBe(200);
    expect(r.body.summary).toMatchObject({ total_working: 2, rotating: 1 });
    expect(Object.keys(r.body.summary).at(-1)).toBe('rotating');
    expect(r.body.metadata).toMatchObject({ proxy_type: 'http', total_checked: 3 }); // proxies, not samples
    const after = await call(`${t.url}/me`, { headers: bearer() });
    expect(before - after.body.user.checks).toBe(9); // 3 proxies x 3 samples
    expect(after.body.history[0]).toMatchObject({ total_checked: 3, total_working: 2, status: 'completed' });

    const doc: any = await (await file(r.body.result_url)).json();
    expect(doc.summary).toEqual(r.body.summary);
    const by = (port: number) => doc.proxies.find((p: any) => p.proxy.port === port);
    const rot = by(rotating.port);
    expect(rot.status).toBe('working');
    expect(rot.samples).toMatchObject({ count: 3, succeeded: 3, success_rate: '100.00%', unique_exit_ips: 3 });
    expect(new Set(rot.samples.exit_ips).size).toBe(3);
    for (const ip of rot.samples.exit_ips) expect(ip).toMatch(/^127\.0\.0\.([2-9]|1[01])$/);
    expect(rot.samples.exit_ips).toContain(rot.origin); // the record is one of its samples
    const { min, p50, max } = rot.samples.response_time_ms;
    expect(min).toBeLessThanOrEqual(p50);
    expect(p50).toBeLessThanOrEqual(max);
    expect(by(plain.port).samples).toMatchObject({ count: 3, succeeded: 3, exit_ips: ['127.0.0.1'], unique_exit_ips: 1 });
    expect(by(refused)).toMatchObject({ status: 'failed', error: { code: 'connect_refused' } });
    expect(by(refused).samples).toEqual({ count: 3, succeeded: 0, success_rate: '0.00%', exit_ips: [], unique_exit_ips: 0, response_time_ms: null });
    for (const p of doc.proxies) expect(Object.keys(p).indexOf('samples')).toBe(12); // right after coordinates

    const rows = (await (await file(r.body.result_url, 'csv')).text()).split('\r\n').filter(Boolean);
    expect(rows[0]!.endsWith(',error_code,error_message,samples,samples_succeeded,samples_success_rate,exit_ips,unique_exit_ips,response_time_min_ms,response_time_p50_ms,response_time_max_ms')).toBe(true);
    const rotRow = rows.find((row) => row.startsWith(`127.0.0.1,${rotating.port},`))!;
    expect(rotRow).toContain(`,3,3,100.00%,${rot.samples.exit_ips.join(' ')},3,`);
  }, 30_000);

  test('POST /check-raw?samples=2: the query takes it; type auto samples too (each sample an auto probe)', async () => {
    const before = await balance();
    const r = await call(`${t.url}/check-raw?samples=2&type=auto&timeout=1000`, { method: 'POST', headers: { 'X-API-Key': t.key }, body: `${addr(socks)}\n${addr(rotating)}\n` });
    expect(r.status).toBe(200);
    expect(r.body.metadata).toMatchObject({ proxy_type: 'auto', total_checked: 2 });
    expect(r.body.summary).toMatchObject({ total_working: 2, protocols: { http: 1, socks4: 1, socks5: 1 }, rotating: 1 });
    expect(before - (await balance())).toBe(4);
    const doc: any = await (await file(r.body.result_url)).json();
    const s = doc.proxies.find((p: any) => p.proxy.port === socks.port);
    expect(s).toMatchObject({ type: 'socks5', protocols: ['socks5', 'socks4'], samples: { count: 2, succeeded: 2, unique_exit_ips: 1 } });
    expect(Object.keys(s).slice(12, 15)).toEqual(['type', 'protocols', 'samples']);
    const header = (await (await file(r.body.result_url, 'csv')).text()).split('\r\n')[0]!;
    expect(header.endsWith(',type,protocols,samples,samples_succeeded,samples_success_rate,exit_ips,unique_exit_ips,response_time_min_ms,response_time_p50_ms,response_time_max_ms')).toBe(true);
  }, 30_000);

  test('402: required counts samples; nothing reserved', async () => {
    const created = await rawCall(`${t.adminUrl}/admin/create-account`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.service.config.http.adminToken}` },
      json: { email: `samples-${Date.now()}@example.test`, checks: 5 },
    });
    expect(created.status).toBe(200);
    const key = created.body.apiKey as string;
    const r = await call(`${t.url}/check`, { method: 'POST', headers: bearer(key), json: { proxies: [addr(plain), addr(rotating)], samples: 3 } });
    expect(r.status).toBe(402);
    expect(r.body).toEqual({ error: 'Insufficient Checks', message: 'You need 6 checks but only have 5 remaining.', required: 6, available: 5, shortfall: 1 });
    expect(await balance(key)).toBe(5);
    // the same two proxies without samples fit
    expect((await call(`${t.url}/check`, { method: 'POST', headers: bearer(key), json: { proxies: [addr(plain), addr(rotating)], timeout: 1000 } })).status).toBe(200);
    expect(await balance(key)).toBe(3);
  }, 30_000);

  test('out of range or not an integer: 400 Invalid request naming samples; repeated on /check-raw: 400', async () => {
    const SAMPLES_400 = { error: 'Invalid request', message: 'samples: expected an integer from 1 to 10' };
    for (const samples of [0, 11, 2.5, '3', true]) {
      const r = await call(`${t.url}/check`, { method: 'POST', headers: bearer(), json: { proxies: [addr(plain)], samples } });
      expect(r.status).toBe(400);
      expect(r.body).toEqual(SAMPLES_400);
    }
    for (const q of ['samples=0', 'samples=11', 'samples=', 'samples=two']) {
      const r = await call(`${t.url}/check-raw?${q}`, { method: 'POST', headers: bearer(), body: addr(plain) });
      expect(r.status).toBe(400);
      expect(r.body).toEqual(SAMPLES_400);
    }
    const rep = await call(`${t.url}/check-raw?samples=2&samples=2`, { method: 'POST', headers: bearer(), body: addr(plain) });
    expect(rep.status).toBe(400);
    expect(rep.body).toEqual({ error: 'Invalid request', message: 'samples: expected a single value, given 2 times' });
  }, 30_000);

  test('without samples, or samples 1: none of the new fields (response, records, CSV), one check per proxy', async () => {
    for (const extra of [{}, { samples: 1 }]) {
      const before = await balance();
      const r = await call(`${t.url}/check`, { method: 'POST', headers: bearer(), json: { proxies: [addr(rotating), `127.0.0.1:${refused}`], timeout: 1000, ...extra } });
      expect(r.status).toBe(200);
      expect(Object.keys(r.body.summary)).toEqual(['total_working', 'countries', 'anonymity_levels', 'top_isps', 'errors']);
      expect(before - (await balance())).toBe(2);
      const doc: any = await (await file(r.body.result_url)).json();
      expect(Object.keys(doc.summary)).toEqual(['total_working', 'countries', 'anonymity_levels', 'top_isps', 'errors']);
      for (const p of doc.proxies) expect('samples' in p).toBe(false);
      const header = (await (await file(r.body.result_url, 'csv')).text()).split('\r\n')[0]!;
      expect(header.endsWith(',error_code,error_message')).toBe(true);
    }
  }, 30_000);
});
