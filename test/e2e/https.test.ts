/**
 * https detection end to end (an extension, on by default): the service as
 * it starts with `npm start`'s defaults (no setting changed but what the
 * tests need: loopback targets allowed, port 0; the built-in judge's TLS
 * listener with its certificate made in DATA_DIR), fakes on loopback. A
 * lying proxy is never working: the one that intercepts TLS is `failed` /
 * `tls_intercepted` with the certificate it presented, the one that changes
 * the judge's answer `failed` / `tampered`. Working records carry `https`,
 * the summary `https`, the CSV an `https` column; one check charged per
 * proxy. `"https": false` / `https=false` opt a request out (no field, the
 * interceptor passes the plain check); JUDGE_TLS=false makes that the
 * default and `"https": true` asks for it. The certificate is kept in
 * DATA_DIR and reused after a restart. Every response is checked against
 * the served OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { startHttpProxy, startSocksProxy } from '../fixtures/fake-proxies';
import { refusedPort, type FakeServer } from '../fixtures/fake-servers';
import { startInterceptingHttpProxy, type InterceptingProxy } from '../fixtures/intercepting-proxy';
import { injectScript, startTamperingProxy } from '../fixtures/tampering-proxy';
import { startTestService, type TestService } from '../helpers/service';
import { checkedCall as call, checkedFetch } from '../helpers/openapi-check';
import { sampleValue } from '../helpers/prometheus';
import { METRIC_NAMES } from '../../src/metrics/service-metrics';

let t: TestService;
let dataDir: string;
let http: FakeServer, noConnect: FakeServer, socks: FakeServer;
let interceptor: InterceptingProxy;
let tamperer: FakeServer;
let refused: number;

const readyLine = (svc: TestService): Record<string, unknown> => svc.logs.find((l) => l.msg === 'ready') as Record<string, unknown>;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'pc-e2e-https-'));
  t = await startTestService({}, { dataDir }); // no JUDGE_TLS: the default
  [http, noConnect, socks, interceptor, tamperer] = await Promise.all([
    startHttpProxy(),
    startHttpProxy({ allowConnect: false }),
    startSocksProxy(),
    startInterceptingHttpProxy(),
    startTamperingProxy({ rewrite: injectScript }),
  ]);
  refused = await refusedPort();
}, 60_000);

afterAll(async () => {
  await Promise.all([http, noConnect, socks, interceptor, tamperer].map((s) => s?.close()));
  await t?.stop();
  rmSync(dataDir, { recursive: true, force: true });
}, 30_000);

const bearer = () => ({ Authorization: `Bearer ${t.key}` });
const addr = (s: FakeServer) => `127.0.0.1:${s.port}`;

describe('https detection', () => {
  test('the ready line names the TLS judge and the pinned fingerprint, the certificate kept in DATA_DIR (0600)', () => {
    const ready = readyLine(t);
    expect(String(ready.judgeTls)).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/judge$/);
    const pem = join(dataDir, 'judge-tls.pem');
    expect(statSync(pem).mode & 0o777).toBe(0o600);
    expect(ready.judgeTlsFingerprint).toBe(new X509Certificate(readFileSync(pem, 'utf8')).fingerprint256);
  });

  test('POST /check (http) at the defaults: https true / false on working records, tls_intercepted for the interceptor, tampered for the tamperer, summary.https, CSV column, one check each', async () => {
    const before = (await call(`${t.url}/me`, { headers: bearer() })).body.user.checks;
    const proxies = [addr(http), addr(noConnect), addr(interceptor), `127.0.0.1:${refused}`, addr(tamperer)];
    const r = await call(`${t.url}/check`, { method: 'POST', headers: bearer(), json: { proxies, type: 'http', timeout: 2000 } });
    expect(r.status).toBe(200);
    expect(r.body.summary).toMatchObject({ total_working: 2, https: 1 });
    expect(Object.keys(r.body.summary).at(-1)).toBe('https');
    const after = (await call(`${t.url}/me`, { headers: bearer() })).body.user.checks;
    expect(before - after).toBe(5);

    const res = await checkedFetch(r.body.result_url);
    const doc: any = await res.json();
    const by = (port: number) => doc.proxies.find((p: any) => p.proxy.port === port);
    expect(by(http.port)).toMatchObject({ status: 'working', https: true });
    expect(by(noConnect.port)).toMatchObject({ status: 'working', https: false });
    expect(by(interceptor.port)).toMatchObject({
      status: 'failed',
      anonymity: null,
      origin: null,
      error: { code: 'tls_intercepted', certificate: { subject: 'CN=interceptor.example', fingerprint: interceptor.fingerprint } },
    });
    expect('https' in by(interceptor.port)).toBe(false);
    expect(by(refused)).toMatchObject({ status: 'failed', error: { code: 'connect_refused' } });
    expect('https' in by(refused)).toBe(false);
    expect(by(tamperer.port)).toMatchObject({ status: 'failed', error: { code: 'tampered' } });

    const csv = await (await checkedFetch(r.body.result_url.replace('.json?', '.csv?'))).text();
    const rows = csv.split('\r\n').filter(Boolean);
    expect(rows[0]!.endsWith(',error_code,error_message,https')).toBe(true);
    expect(rows.find((row) => row.startsWith(`127.0.0.1,${http.port},`))!.endsWith(',true')).toBe(true);
    expect(rows.find((row) => row.startsWith(`127.0.0.1,${noConnect.port},`))!.endsWith(',false')).toBe(true);
  }, 30_000);

  test('TLS resumption in the service: the https checks of a job resume, both sides count it in /metrics', async () => {
    const proxies = await Promise.all(Array.from({ length: 6 }, () => startHttpProxy()));
    try {
      const handshakes = async () => {
        const text = await (await fetch(`${t.adminUrl}/metrics`)).text();
        const v = (side: string, kind: string) => sampleValue(text, METRIC_NAMES.tlsHandshakes, { side, kind }) ?? 0;
        return { client: { full: v('client', 'full'), resumed: v('client', 'resumed') }, judge: { full: v('judge', 'full'), resumed: v('judge', 'resumed') } };
      };
      const before = await handshakes();
      const r = await call(`${t.url}/check`, { method: 'POST', headers: bearer(), json: { proxies: proxies.map(addr), type: 'http', timeout: 2000 } });
      expect(r.body.summary).toMatchObject({ total_working: 6, https: 6 });
      // the lanes report with their results: the counts are in by the time the check answered
      const after = await handshakes();
      const client = { full: after.client.full - before.client.full, resumed: after.client.resumed - before.client.resumed };
      const judge = { full: after.judge.full - before.judge.full, resumed: after.judge.resumed - before.judge.resumed };
      expect(client.full + client.resumed).toBe(6);
      // a thread resumes the start check's session or its own: at most one full handshake per probe thread
      expect(client.full).toBeLessThanOrEqual(1);
      expect(judge.resumed).toBeGreaterThanOrEqual(client.resumed);
      expect(judge.full + judge.resumed).toBeGreaterThanOrEqual(6);
    } finally {
      await Promise.all(proxies.map((p) => p.close()));
    }
  });

  test('POST /check (socks5): the SOCKS tunnel to the TLS judge gives https true', async () => {
    const r = await call(`${t.url}/check`, { method: 'POST', headers: bearer(), json: { proxies: [addr(socks)], type: 'socks5', timeout: 2000 } });
    expect(r.status).toBe(200);
    expect(r.body.summary).toMatchObject({ total_working: 1, https: 1 });
  }, 30_000);

  test('opting out per request: "https": false on /check, https=false on /check-raw: no TLS check, no https fields, the interceptor passes the plain check', async () => {
    const proxies = [addr(http), addr(interceptor)];
    const r = await call(`${t.url}/check`, { method: 'POST', headers: bearer(), json: { proxies, type: 'http', timeout: 2000, https: false } });
    expect(r.status).toBe(200);
    expect(r.body.summary.total_working).toBe(2);
    expect('https' in r.body.summary).toBe(false);
    const doc: any = await (await checkedFetch(r.body.result_url)).json();
    for (const p of doc.proxies) expect(p).not.toHaveProperty('https');
    const csv = await (await checkedFetch(r.body.result_url.replace('.json?', '.csv?'))).text();
    expect(csv.split('\r\n')[0]!.endsWith(',error_code,error_message')).toBe(true);

    const intercepted = interceptor.intercepted;
    const raw = await call(`${t.url}/check-raw?https=false&timeout=2000`, { method: 'POST', headers: { 'X-API-Key': t.key }, body: proxies.join('\n') });
    expect(raw.status).toBe(200);
    expect(raw.body.summary.total_working).toBe(2);
    expect('https' in raw.body.summary).toBe(false);
    expect(interceptor.intercepted).toBe(intercepted); // no tunnel was opened

    const bad = await call(`${t.url}/check-raw?https=no`, { method: 'POST', headers: { 'X-API-Key': t.key }, body: proxies.join('\n') });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: 'Invalid request', message: 'https: expected true or false' });
  }, 30_000);

  test('a check with no working proxy still says summary.https (0)', async () => {
    const r = await call(`${t.url}/check`, { method: 'POST', headers: bearer(), json: { proxies: [`127.0.0.1:${refused}`], timeout: 1000 } });
    expect(r.status).toBe(200);
    expect(r.body.summary).toMatchObject({ total_working: 0, https: 0 });
  }, 30_000);

  test('a restart on the same DATA_DIR keeps the certificate (the same pin)', async () => {
    const fingerprint = readyLine(t).judgeTlsFingerprint;
    await t.stop();
    t = await startTestService({}, { dataDir });
    expect(readyLine(t).judgeTlsFingerprint).toBe(fingerprint);
    expect(t.logs.some((l) => l.msg === 'made the judge TLS certificate')).toBe(false);
    const r = await call(`${t.url}/check`, { method: 'POST', headers: bearer(), json: { proxies: [addr(http)], type: 'http', timeout: 2000 } });
    expect(r.body.summary).toMatchObject({ total_working: 1, https: 1 });
  }, 60_000);
});

describe('JUDGE_TLS=false: the requests\' default off', () => {
  let off: TestService;
  beforeAll(async () => {
    off = await startTestService({ JUDGE_TLS: 'false' });
  }, 60_000);
  afterAll(async () => {
    await off?.stop();
  }, 30_000);

  test('a request without https gets no check (the interceptor passes); "https": true asks for it', async () => {
    const auth = { Authorization: `Bearer ${off.key}` };
    const plain = await call(`${off.url}/check`, { method: 'POST', headers: auth, json: { proxies: [addr(interceptor)], timeout: 2000 } });
    expect(plain.status).toBe(200);
    expect(plain.body.summary.total_working).toBe(1);
    expect('https' in plain.body.summary).toBe(false);
    const asked = await call(`${off.url}/check`, { method: 'POST', headers: auth, json: { proxies: [addr(interceptor), addr(http)], timeout: 2000, https: true } });
    expect(asked.body.summary).toMatchObject({ total_working: 1, https: 1 });
  }, 30_000);
});
