/**
 * A check end to end, the way the ClearProxy SDK makes it: POST /check with a
 * Bearer key and a jobId, progress on /ws?jobId= (before and during the
 * request), the result file fetched from result_url with no key, proxies
 * filtered by status, custom URLs over http and https, /me history. Against
 * our own fake proxies on 127.0.0.1 and the service's own judge.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startHttpProxy, startSocksProxy } from '../fixtures/fake-proxies';
import { refusedPort, startBlackHole, startCaptive, startTarget, type FakeServer } from '../fixtures/fake-servers';
import { TEST_CERT } from '../fixtures/tls-cert';
import { appendBytes, faithful, gzipBody, injectScript, startTamperingProxy } from '../fixtures/tampering-proxy';
import { signResultLink } from '../../src/results/links';
import { call as rawCall, startTestService, type TestService } from '../helpers/service'; // the admin listener serves no OpenAPI document
// Every response is checked against the OpenAPI document the service serves (test/helpers/openapi-check.ts).
import { checkedCall as call, checkedFetch } from '../helpers/openapi-check';

let t: TestService;
const servers: FakeServer[] = [];
let elite: FakeServer, anonymous: FakeServer, transparent: FakeServer, authProxy: FakeServer;
let socks: FakeServer, socksAuth: FakeServer, blackHole: FakeServer, captive: FakeServer;
let plainTarget: FakeServer, tlsTarget: FakeServer;
let refused: number;

beforeAll(async () => {
  const caDir = (await import('node:os')).tmpdir();
  const caFile = join(caDir, `pc-test-ca-${process.pid}.pem`);
  writeFileSync(caFile, TEST_CERT);
  t = await startTestService({ TLS_CA_FILE: caFile });
  elite = await startHttpProxy();
  anonymous = await startHttpProxy({ addHeaders: () => [['Via', '1.1 fake-proxy']] });
  transparent = await startHttpProxy({ addHeaders: (ip) => [['X-Forwarded-For', ip]] });
  authProxy = await startHttpProxy({ auth: { username: 'u ser', password: 'p:ss@' } });
  socks = await startSocksProxy();
  socksAuth = await startSocksProxy({ auth: { username: 'alice', password: 'secret' } });
  blackHole = await startBlackHole();
  captive = await startCaptive();
  plainTarget = await startTarget({ '/ok': { status: 200, body: 'Hello Proxy World' }, '/teapot': { status: 418, body: 'short and stout' } });
  tlsTarget = await startTarget({ '/ok': { status: 200, body: 'secure hello' } }, true);
  servers.push(elite, anonymous, transparent, authProxy, socks, socksAuth, blackHole, captive, plainTarget, tlsTarget);
  refused = await refusedPort();
}, 60_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await t?.stop();
}, 30_000);

const bearer = () => ({ Authorization: `Bearer ${t.key}` });
const addr = (s: FakeServer) => `127.0.0.1:${s.port}`;

interface WsLog {
  messages: any[];
  closed: Promise<{ code: number; reason: string }>;
}

function watch(jobId: string, key?: string): Promise<WsLog> {
  const url = `${t.url.replace('http', 'ws')}/ws?jobId=${jobId}${key ? `&apiKey=${key}` : ''}`;
  const ws = new WebSocket(url);
  const messages: any[] = [];
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.onclose = (e) => resolve({ code: e.code, reason: e.reason });
  });
  ws.onmessage = (e) => messages.push(JSON.parse(String(e.data)));
  return new Promise((resolve, reject) => {
    ws.onopen = () => resolve({ messages, closed });
    ws.onerror = () => reject(new Error('ws error'));
  });
}

async function resultFile(url: string): Promise<any> {
  const r = await checkedFetch(url); // no key: the link is the credential
  expect(r.status).toBe(200);
  return r.json();
}

describe('POST /check', () => {
  test('verdicts, summary, metadata, result file, history and progress', async () => {
    const owner = await watch('sdk-job-1', t.key);
    const anon = await watch('sdk-job-1');
    const proxies = [
      addr(elite),
      `http://${addr(elite)}`, // duplicate after the scheme is stripped
      addr(anonymous),
      addr(transparent),
      `u%20ser:p%3Ass%40@${addr(authProxy)}`,
      `${addr(authProxy)}`, // no credentials: 407
      addr(blackHole),
      addr(captive),
      `127.0.0.1:${refused}`,
      'not a proxy',
    ];
    const r = await call(`${t.url}/check`, { method: 'POST', headers: bearer(), json: { proxies, timeout: 1000, jobId: 'sdk-job-1' } });
    expect(r.status).toBe(200);
    const { summary, metadata, result_url } = r.body;
    expect(summary).toEqual({
      total_working: 4,
      countries: { Unknown: 4 },
      anonymity_levels: { elite: 2, anonymous: 1, transparent: 1 },
      top_isps: { Unknown: 4 },
      errors: { auth_required: 1, connect_refused: 1, judge_mismatch: 1, timeout: 1 },
    });
    expect(metadata).toMatchObject({
      region_used: 'us1',
      region_name: 'Washington DC, USA',
      proxy_type: 'http',
      timeout_used: '1000ms',
      total_checked: 8,
      total_invalid: 1,
      total_duplicates: 1,
      total_blocked: 0,
      invalid_lines: [{ line: 10, text: 'not a proxy', reason: 'not a proxy address: expected host:port, user:pass@host:port or host:port:user:pass' }],
      job_id: 'sdk-job-1',
      user: { email: 'demo@localhost', checks_used: 8, remaining_checks: 992, subscription_detail: { UnlimitedPro: false } },
    });
    expect(metadata.processing_time).toMatch(/^\d+\.\d{2}s$/);
    expect(result_url).toMatch(new RegExp(`^${t.url}/result/[A-Za-z0-9_-]+\\.json\\?token=[0-9a-f]{64}&expires=\\d+$`));

    const file = await resultFile(result_url);
    expect(Object.keys(file).sort()).toEqual(['invalid_lines', 'metadata', 'proxies', 'summary']);
    expect(file.invalid_lines).toEqual(metadata.invalid_lines);
    expect(file.summary).toEqual(summary);
    expect(file.metadata).toEqual(metadata); // the ClearProxy CLI reads metadata.user from the file
    expect(file.proxies).toHaveLength(8);
    const working = file.proxies.filter((p: any) => p.status === 'working');
    const failed = file.proxies.filter((p: any) => p.status === 'failed');
    expect(working).toHaveLength(4);
    expect(failed).toHaveLength(4);
    // working first, by response time
    expect(file.proxies.slice(0, 4).every((p: any) => p.status === 'working')).toBe(true);
    const times = working.map((p: any) => Number.parseFloat(p.responseTime));
    expect(times).toEqual([...times].sort((a: number, b: number) => a - b));
    const by = (port: number, auth: boolean) => file.proxies.find((p: any) => p.proxy.port === port && p.proxy.hasAuth === auth);
    expect(by(elite.port, false)).toMatchObject({ status: 'working', statusCode: 200, anonymity: 'elite', origin: '127.0.0.1', country: null, coordinates: null });
    expect(by(elite.port, false).responseTime).toMatch(/^\d+\.\d{2} ms$/);
    expect(by(anonymous.port, false).anonymity).toBe('anonymous');
    expect(by(transparent.port, false).anonymity).toBe('transparent');
    expect(by(authProxy.port, true)).toMatchObject({ status: 'working', proxy: { username: 'u ser', password: 'p:ss@', hasAuth: true } });
    expect(by(authProxy.port, false)).toMatchObject({ status: 'failed', statusCode: 407, error: { code: 'auth_required' } });
    expect(by(blackHole.port, false).error.code).toBe('timeout');
    expect(by(captive.port, false)).toMatchObject({ status: 'failed', statusCode: 200, error: { code: 'judge_mismatch' } });
    expect(by(refused, false).error.code).toBe('connect_refused');
    for (const p of working) expect(p.error).toBeUndefined();

    // progress: the owner gets the link, the anonymous subscriber does not; both are closed with 1000
    expect((await owner.closed).code).toBe(1000);
    expect((await anon.closed).code).toBe(1000);
    const last = owner.messages.at(-1);
    expect(last).toMatchObject({ jobId: 'sdk-job-1', status: 'completed', progress: 100, result_url });
    expect(anon.messages.at(-1).status).toBe('completed');
    expect(anon.messages.at(-1).result_url).toBeUndefined();
    for (const m of owner.messages) {
      expect(Object.keys(m).filter((k) => k !== 'result_url').sort()).toEqual(
        ['currentStep', 'details', 'eta', 'jobId', 'progress', 'status', 'stepsCompleted', 'timestamp'],
      );
      expect(Object.keys(m.details).sort()).toEqual(['batches_done', 'checked', 'message', 'total', 'working_so_far']);
    }
    expect(owner.messages.some((m) => m.status === 'in_progress')).toBe(true);

    // history and usage
    const me = await call(`${t.url}/me`, { headers: bearer() });
    expect(me.body.user.checks).toBe(992);
    expect(me.body.history_count).toBe(1);
    expect(me.body.history[0]).toMatchObject({ total_checked: 8, total_working: 4, proxy_type: 'http' });
    expect(me.body.history[0].result_url).toMatch(/\/result\/.+\.json\?token=/);
    expect(me.body.usage_last_30_days.at(-1).total_checked).toBe(8);
    await resultFile(me.body.history[0].result_url);
  }, 30_000);

  test('socks5 with and without credentials via /check-raw, default timeout 3000 ms', async () => {
    const body = [addr(socks), `alice:secret@${addr(socksAuth)}`, `${addr(socksAuth)}:alice:wrong`].join('\r\n');
    const r = await call(`${t.url}/check-raw?type=socks5`, { method: 'POST', headers: { 'X-API-Key': t.key, 'content-type': 'text/plain' }, body });
    expect(r.status).toBe(200);
    expect(r.body.metadata).toMatchObject({ proxy_type: 'socks5', timeout_used: '3000ms', total_checked: 3 });
    expect(r.body.summary.total_working).toBe(2);
    const file = await resultFile(r.body.result_url);
    const wrong = file.proxies.find((p: any) => p.proxy.password === 'wrong');
    expect(wrong).toMatchObject({ status: 'failed', error: { code: 'auth_required' } });
  }, 20_000);

  test('integrity: proxies that change the judge answer are tampered, a faithful one works (the built-in judge signs)', async () => {
    const proxies = await Promise.all([faithful, injectScript, appendBytes, gzipBody].map((rewrite) => startTamperingProxy({ rewrite })));
    servers.push(...proxies);
    const [honest, injector, appender, gzipper] = proxies as [FakeServer, FakeServer, FakeServer, FakeServer];
    const body = proxies.map(addr).join('\n');
    const r = await call(`${t.url}/check-raw?timeout=3000`, { method: 'POST', headers: { 'X-API-Key': t.key }, body });
    expect(r.status).toBe(200);
    expect(r.body.summary.total_working).toBe(1);
    const file = await resultFile(r.body.result_url);
    const by = (s: FakeServer) => file.proxies.find((p: any) => p.proxy.port === s.port);
    expect(by(honest)).toMatchObject({ status: 'working', statusCode: 200, anonymity: 'elite' }); // Via on the answer only
    expect(by(injector)).toMatchObject({ status: 'failed', statusCode: 200, error: { code: 'tampered', message: expect.stringMatching(/^bytes injected: /) } });
    expect(by(appender)).toMatchObject({ status: 'failed', error: { code: 'tampered', message: expect.stringMatching(/^length differs: /) } });
    expect(by(gzipper)).toMatchObject({ status: 'failed', error: { code: 'tampered', message: expect.stringMatching(/^re-encoded: /) } });
  }, 20_000);

  test('/check-raw http default timeout is 5000 ms', async () => {
    const r = await call(`${t.url}/check-raw`, { method: 'POST', headers: { 'X-API-Key': t.key }, body: `127.0.0.1:${refused}\n` });
    expect(r.status).toBe(200);
    expect(r.body.metadata.timeout_used).toBe('5000ms');
  });

  test('custom URLs over http and https through working proxies', async () => {
    const customUrls = [
      { url: `http://127.0.0.1:${plainTarget.port}/ok`, requiredText: 'proxy world' },
      { url: `http://127.0.0.1:${plainTarget.port}/ok`, requiredText: 'proxy world', caseSensitive: true },
      { url: `http://127.0.0.1:${plainTarget.port}/teapot`, requiredStatusCodes: [418] },
      { url: `https://localhost:${tlsTarget.port}/ok`, requiredText: 'secure' },
    ];
    const proxies = [addr(elite), addr(anonymous), `127.0.0.1:${refused}`];
    const r = await call(`${t.url}/check`, { method: 'POST', headers: bearer(), json: { proxies, timeout: 2000, customUrls } });
    expect(r.status).toBe(200);
    const file = await resultFile(r.body.result_url);
    const v = file.custom_url_validation;
    expect(v.summary).toMatchObject({ total_urls_tested: 4, total_proxies_tested: 2 });
    expect(v.summary.processing_time).toMatch(/^\d+\.\d{2}s$/);
    expect(v.per_url_summary.map((u: any) => [u.success_count, u.failed_count, u.success_rate])).toEqual([
      [2, 0, '100.00%'],
      [0, 2, '0.00%'],
      [2, 0, '100.00%'],
      [2, 0, '100.00%'],
    ]);
    expect(v.per_url_summary[0].successful_proxies).toEqual([
      { proxy: { host: '127.0.0.1', port: elite.port } },
      { proxy: { host: '127.0.0.1', port: anonymous.port } },
    ]);
    expect(v.per_url_summary[1].failed_proxies).toHaveLength(2);
  }, 20_000);

  test('a running jobId answers 409; it is reusable after the job ends', async () => {
    const first = call(`${t.url}/check`, { method: 'POST', headers: bearer(), json: { proxies: [addr(blackHole)], timeout: 1000, jobId: 'busy-job' } });
    await Bun.sleep(150);
    const second = await call(`${t.url}/check`, { method: 'POST', headers: bearer(), json: { proxies: [addr(elite)], jobId: 'busy-job' } });
    expect(second.status).toBe(409);
    expect(second.body).toEqual({
      error: 'Job already running',
      message: 'A job with id busy-job is still running; wait for it to finish or use another jobId',
      jobId: 'busy-job',
    });
    expect((await first).status).toBe(200);
    const third = await call(`${t.url}/check`, { method: 'POST', headers: bearer(), json: { proxies: [addr(elite)], jobId: 'busy-job' } });
    expect(third.status).toBe(200);
  }, 10_000);

  test('a key limits the progress subscription to its own account', async () => {
    const admin = { Authorization: `Bearer ${t.service.config.http.adminToken}` };
    const other = await rawCall(`${t.adminUrl}/admin/create-account`, { method: 'POST', headers: admin, json: { email: 'other@example.com', checks: 10 } });
    expect(other.status).toBe(200);
    const intruder = await watch('private-job', other.body.apiKey);
    const r = await call(`${t.url}/check`, { method: 'POST', headers: bearer(), json: { proxies: [addr(elite)], jobId: 'private-job' } });
    expect(r.status).toBe(200);
    const closed = await intruder.closed;
    expect(closed.code).toBe(1008);
    expect(intruder.messages).toEqual([]);
  }, 10_000);

  test('WS: bad jobId 400 and bad key 401 before the upgrade', async () => {
    const up = { Upgrade: 'websocket', Connection: 'Upgrade', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Version': '13' };
    const bad = await call(`${t.url}/ws?jobId=a`, { headers: up });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('Invalid jobId');
    const badKey = await call(`${t.url}/ws?jobId=abc`, { headers: { ...up, 'X-API-Key': 'pc_nope' } });
    expect(badKey.status).toBe(401);
    expect(badKey.body.error).toBe('Invalid API key');
  });
});

describe('the ClearProxy SDK call sequence', () => {
  test('POST /check (Bearer, jobId), then /ws with no key, then the result link with no key', async () => {
    const sdkHeaders = { Authorization: `Bearer ${t.key}`, 'Content-Type': 'application/json' };
    const jobId = `sdk_${Math.random().toString(36).substring(2, 11)}_${Date.now()}`;
    const customUrls = [{ url: `http://127.0.0.1:${plainTarget.port}/ok`, requiredStatusCodes: [200, 301, 302] }];
    const res = await checkedFetch(`${t.url}/check`, {
      method: 'POST',
      headers: sdkHeaders,
      body: JSON.stringify({ proxies: [addr(elite), `127.0.0.1:${refused}`], region: undefined, timeout: 4000, type: 'http', customUrls, jobId }),
    });
    expect(res.ok).toBe(true);
    const data = (await res.json()) as any;
    // the SDK opens its socket only after the response: it still gets the final message, then a close
    const late = await watch(jobId);
    expect((await late.closed).code).toBe(1000);
    expect(late.messages.map((m) => m.status)).toEqual(['completed']);
    const result = await resultFile(data.result_url);
    expect(result.proxies.filter((p: any) => p.status === 'working')).toHaveLength(1);
    expect(result.proxies.filter((p: any) => p.status === 'failed')).toHaveLength(1);
    expect(result.custom_url_validation.per_url_summary[0].successful_proxies).toEqual([{ proxy: { host: '127.0.0.1', port: elite.port } }]);
    for (const path of ['/me', '/regions', '/health']) {
      const r = await checkedFetch(t.url + path, { headers: sdkHeaders });
      expect(r.ok).toBe(true);
    }
  }, 20_000);
});

describe('result links', () => {
  test('bad token 403, expired 410, unknown 404', async () => {
    const r = await call(`${t.url}/check`, { method: 'POST', headers: bearer(), json: { proxies: [`127.0.0.1:${refused}`] } });
    const url = new URL(r.body.result_url);
    const tampered = `${url.origin}${url.pathname}?token=${'0'.repeat(64)}&expires=${url.searchParams.get('expires')}`;
    const forbidden = await call(tampered);
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error).toBe('Forbidden');
    expect((await call(`${url.origin}${url.pathname}`)).status).toBe(403);

    const secret = t.service.config.storage.resultSecret!;
    const id = url.pathname.split('/').pop()!.replace('.json', '');
    const expired = signResultLink({ contentUrl: t.url, resultId: id, secret, expiresAt: Math.floor(Date.now() / 1000) - 1, ext: 'json' });
    const gone = await call(expired);
    expect(gone.status).toBe(410);
    expect(gone.body.error).toBe('Link expired');

    const unknown = signResultLink({ contentUrl: t.url, resultId: 'AAAAAAAAAAAAAAAAAAAAAA', secret, expiresAt: Math.floor(Date.now() / 1000) + 60, ext: 'json' });
    const missing = await call(unknown);
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe('Not found');
  });
});
