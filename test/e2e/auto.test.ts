/**
 * `type: "auto"` end to end (an extension): POST /check and /check-raw with
 * type auto against fakes on loopback, through the whole service (lanes,
 * pool, actor, result file, CSV). Records carry `type` and `protocols`, the
 * summary `protocols`, one check is charged per proxy, custom URLs go through
 * each proxy's detected protocol; a job of another type has none of the new
 * fields. Every response is checked against the served OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startDualProxy, startHttpProxy, startSocksProxy } from '../fixtures/fake-proxies';
import { refusedPort, startBlackHole, startTarget, type FakeServer } from '../fixtures/fake-servers';
import { startTestService, type TestService } from '../helpers/service';
import { checkedCall as call, checkedFetch } from '../helpers/openapi-check';

let t: TestService;
let dual: FakeServer, http: FakeServer, socks: FakeServer, socks5: FakeServer, socksAuth: FakeServer, blackHole: FakeServer, target: FakeServer;
let refused: number;

beforeAll(async () => {
  t = await startTestService();
  [dual, http, socks, socks5, socksAuth, blackHole, target] = await Promise.all([
    startDualProxy(),
    startHttpProxy(),
    startSocksProxy(),
    startSocksProxy({ only: 5 }),
    startSocksProxy({ only: 5, auth: { username: 'alice', password: 'secret' } }),
    startBlackHole(),
    startTarget({ '/ok': { status: 200, body: 'Hello Proxy World' } }),
  ]);
  refused = await refusedPort();
}, 60_000);

afterAll(async () => {
  await Promise.all([dual, http, socks, socks5, socksAuth, blackHole, target].map((s) => s?.close()));
  await t?.stop();
}, 30_000);

const bearer = () => ({ Authorization: `Bearer ${t.key}` });
const addr = (s: FakeServer) => `127.0.0.1:${s.port}`;

async function file(url: string, ext = 'json'): Promise<Response> {
  const r = await checkedFetch(url.replace('.json?', `.${ext}?`));
  expect(r.status).toBe(200);
  return r;
}

describe('type auto', () => {
  test('POST /check: protocols and type per record, summary.protocols, one check per proxy, custom URLs through the detected protocol, CSV columns', async () => {
    const before = (await call(`${t.url}/me`, { headers: bearer() })).body.user.checks;
    const proxies = [addr(dual), addr(http), addr(socks), addr(socks5), addr(socksAuth), `alice:secret@${addr(socksAuth)}`, addr(blackHole), `127.0.0.1:${refused}`];
    const customUrls = [{ url: `http://127.0.0.1:${target.port}/ok`, requiredText: 'proxy world' }];
    const r = await call(`${t.url}/check`, { method: 'POST', headers: bearer(), json: { proxies, type: 'auto', timeout: 1000, customUrls } });
    expect(r.status).toBe(200);
    const { summary, metadata } = r.body;
    expect(summary).toEqual({
      total_working: 5,
      countries: { Unknown: 5 },
      anonymity_levels: { elite: 5, anonymous: 0, transparent: 0 },
      top_isps: { Unknown: 5 },
      errors: expect.any(Object),
      protocols: { http: 2, socks4: 1, socks5: 4 },
    });
    // the three that failed, by their codes
    expect(Object.values(summary.errors as Record<string, number>).reduce((a, b) => a + b, 0)).toBe(3);
    expect(metadata).toMatchObject({ proxy_type: 'auto', timeout_used: '1000ms', total_checked: 8 });
    const after = (await call(`${t.url}/me`, { headers: bearer() })).body;
    expect(before - after.user.checks).toBe(8); // one check per proxy, whatever was tried
    expect(after.history[0]).toMatchObject({ proxy_type: 'auto', total_checked: 8, total_working: 5 });

    const doc: any = await (await file(r.body.result_url)).json();
    expect(doc.summary).toEqual(summary);
    const by = (s: FakeServer | number, auth = false) =>
      doc.proxies.find((p: any) => p.proxy.port === (typeof s === 'number' ? s : s.port) && p.proxy.hasAuth === auth);
    expect(by(dual)).toMatchObject({ status: 'working', type: 'socks5', protocols: ['socks5', 'http'] });
    expect(by(http)).toMatchObject({ status: 'working', type: 'http', protocols: ['http'] });
    expect(by(socks)).toMatchObject({ status: 'working', type: 'socks5', protocols: ['socks5', 'socks4'] });
    expect(by(socks5)).toMatchObject({ status: 'working', type: 'socks5', protocols: ['socks5'] });
    expect(by(socksAuth, true)).toMatchObject({ status: 'working', type: 'socks5', protocols: ['socks5'] });
    expect(by(socksAuth)).toMatchObject({ status: 'failed', type: null, protocols: [], error: { code: 'auth_required' } });
    expect(by(socksAuth).error.message).toStartWith('socks5: ');
    expect(by(blackHole)).toMatchObject({ status: 'failed', type: null, protocols: [] });
    expect(by(refused)).toMatchObject({ status: 'failed', type: null, protocols: [], error: { code: 'connect_refused' } });
    for (const p of doc.proxies) expect(Object.keys(p).slice(12, 14)).toEqual(['type', 'protocols']);

    // the custom URL went through each working proxy's own protocol (http proxies and SOCKS ones alike)
    expect(doc.custom_url_validation.per_url_summary[0]).toMatchObject({ success_count: 5, failed_count: 0 });

    const csv = await (await file(r.body.result_url, 'csv')).text();
    const rows = csv.split('\r\n').filter(Boolean);
    expect(rows[0]!.endsWith(',error_code,error_message,type,protocols')).toBe(true);
    expect(rows.some((row) => row.startsWith(`127.0.0.1,${socks.port},`) && row.endsWith(',socks5,socks5 socks4'))).toBe(true);
  }, 30_000);

  test('POST /check-raw?type=auto: default timeout 5000 ms, proxy_type auto', async () => {
    const r = await call(`${t.url}/check-raw?type=auto`, { method: 'POST', headers: { 'X-API-Key': t.key }, body: `${addr(socks)}\n127.0.0.1:${refused}\n` });
    expect(r.status).toBe(200);
    expect(r.body.metadata).toMatchObject({ proxy_type: 'auto', timeout_used: '5000ms', total_checked: 2 });
    expect(r.body.summary.protocols).toEqual({ http: 0, socks4: 1, socks5: 1 });
  }, 20_000);

  test('a job of another type has none of the new fields (response, records, CSV)', async () => {
    const r = await call(`${t.url}/check`, { method: 'POST', headers: bearer(), json: { proxies: [addr(socks), `127.0.0.1:${refused}`], type: 'socks5', timeout: 1000 } });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body.summary)).toEqual(['total_working', 'countries', 'anonymity_levels', 'top_isps', 'errors']);
    expect(r.body.metadata.proxy_type).toBe('socks5');
    const doc: any = await (await file(r.body.result_url)).json();
    for (const p of doc.proxies) {
      expect('type' in p).toBe(false);
      expect('protocols' in p).toBe(false);
    }
    const header = (await (await file(r.body.result_url, 'csv')).text()).split('\r\n')[0]!;
    expect(header.endsWith(',error_code,error_message')).toBe(true);
  }, 20_000);

  test('an unknown type is still the contract 400 (auto is not listed)', async () => {
    const r = await call(`${t.url}/check`, { method: 'POST', headers: bearer(), json: { proxies: [addr(socks)], type: 'automatic' } });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: 'Invalid proxy type', message: 'Proxy type must be one of: http, socks4, socks5', available_types: ['http', 'socks4', 'socks5'] });
  });
});
