/**
 * https detection end to end (an extension): the service as it starts for
 * real (JUDGE_TLS on: the built-in judge's TLS listener with its certificate
 * made in DATA_DIR), fakes on loopback. Working records carry `https`, the
 * summary `https`, the CSV an `https` column; a proxy that intercepts TLS is
 * `failed` / `tls_intercepted` with the certificate it presented; one check
 * charged per proxy; the certificate is kept in DATA_DIR and reused after a
 * restart. Every response is checked against the served OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { startHttpProxy, startSocksProxy } from '../fixtures/fake-proxies';
import { refusedPort, type FakeServer } from '../fixtures/fake-servers';
import { startInterceptingHttpProxy, type InterceptingProxy } from '../fixtures/intercepting-proxy';
import { startTestService, type TestService } from '../helpers/service';
import { checkedCall as call, checkedFetch } from '../helpers/openapi-check';

let t: TestService;
let dataDir: string;
let http: FakeServer, noConnect: FakeServer, socks: FakeServer;
let interceptor: InterceptingProxy;
let refused: number;

const readyLine = (svc: TestService): Record<string, unknown> => svc.logs.find((l) => l.msg === 'ready') as Record<string, unknown>;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'pc-e2e-https-'));
  t = await startTestService({ JUDGE_TLS: 'true' }, { dataDir });
  [http, noConnect, socks, interceptor] = await Promise.all([
    startHttpProxy(),
    startHttpProxy({ allowConnect: false }),
    startSocksProxy(),
    startInterceptingHttpProxy(),
  ]);
  refused = await refusedPort();
}, 60_000);

afterAll(async () => {
  await Promise.all([http, noConnect, socks, interceptor].map((s) => s?.close()));
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

  test('POST /check (http): https true / false on working records, tls_intercepted for the interceptor, summary.https, CSV column, one check each', async () => {
    const before = (await call(`${t.url}/me`, { headers: bearer() })).body.user.checks;
    const proxies = [addr(http), addr(noConnect), addr(interceptor), `127.0.0.1:${refused}`];
    const r = await call(`${t.url}/check`, { method: 'POST', headers: bearer(), json: { proxies, type: 'http', timeout: 2000 } });
    expect(r.status).toBe(200);
    expect(r.body.summary).toMatchObject({ total_working: 2, https: 1 });
    expect(Object.keys(r.body.summary).at(-1)).toBe('https');
    const after = (await call(`${t.url}/me`, { headers: bearer() })).body.user.checks;
    expect(before - after).toBe(4);

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

    const csv = await (await checkedFetch(r.body.result_url.replace('.json?', '.csv?'))).text();
    const rows = csv.split('\r\n').filter(Boolean);
    expect(rows[0]!.endsWith(',error_code,error_message,https')).toBe(true);
    expect(rows.find((row) => row.startsWith(`127.0.0.1,${http.port},`))!.endsWith(',true')).toBe(true);
    expect(rows.find((row) => row.startsWith(`127.0.0.1,${noConnect.port},`))!.endsWith(',false')).toBe(true);
  }, 30_000);

  test('POST /check (socks5): the SOCKS tunnel to the TLS judge gives https true', async () => {
    const r = await call(`${t.url}/check`, { method: 'POST', headers: bearer(), json: { proxies: [addr(socks)], type: 'socks5', timeout: 2000 } });
    expect(r.status).toBe(200);
    expect(r.body.summary).toMatchObject({ total_working: 1, https: 1 });
  }, 30_000);

  test('a restart on the same DATA_DIR keeps the certificate (the same pin)', async () => {
    const fingerprint = readyLine(t).judgeTlsFingerprint;
    await t.stop();
    t = await startTestService({ JUDGE_TLS: 'true' }, { dataDir });
    expect(readyLine(t).judgeTlsFingerprint).toBe(fingerprint);
    expect(t.logs.some((l) => l.msg === 'made the judge TLS certificate')).toBe(false);
    const r = await call(`${t.url}/check`, { method: 'POST', headers: bearer(), json: { proxies: [addr(http)], type: 'http', timeout: 2000 } });
    expect(r.body.summary).toMatchObject({ total_working: 1, https: 1 });
  }, 60_000);
});
