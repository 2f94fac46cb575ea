/**
 * Failures that explain themselves (issue 22 section 2), end to end through
 * HTTP with ALLOW_PRIVATE_TARGETS off, as a real server has it: literal
 * private / loopback addresses are refused before the reservation (not
 * charged, `metadata.total_blocked`, failed `blocked_target` records naming
 * the setting), a host name that resolves there is checked and charged as
 * before, `summary.errors` counts the failures per code, and the invalid
 * lines come back with their number, text and reason (20 in the response,
 * all in the result file). No connection leaves this machine: every address
 * here is refused before a socket is opened ("localhost" after its lookup).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { refusedPort } from '../fixtures/fake-servers';
import { call as rawCall, startTestService, type TestService } from '../helpers/service'; // the admin listener serves no OpenAPI document
// Every response is checked against the OpenAPI document the service serves (test/helpers/openapi-check.ts).
import { checkedCall as call, checkedFetch } from '../helpers/openapi-check';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ ALLOW_PRIVATE_TARGETS: 'false' });
}, 60_000);
afterAll(async () => {
  await t?.stop();
}, 30_000);

const key = () => ({ 'X-API-Key': t.key });
const checks = async () => (await call(`${t.url}/me`, { headers: key() })).body.user.checks as number;
const UNRECOGNISED = 'not a proxy address: expected host:port, user:pass@host:port or host:port:user:pass';
const setting = (ip: string) => `${ip} is in a private, loopback or reserved range; refused unless the server sets ALLOW_PRIVATE_TARGETS=true`;

describe('blocked before the reservation, summary.errors, invalid lines', () => {
  test('/check-raw: literal addresses refused and not charged; a name that resolves there checked and charged; every invalid line explained', async () => {
    const before = await checks();
    const body = ['127.0.0.1:8080', '# a comment', '', 'localhost:8080', '10.0.0.1:3128', 'user:pass@[::1]:1080', 'not a proxy', '1.2.3.4', '127.0.0.1:8080'].join('\n');
    const r = await call(`${t.url}/check-raw?timeout=1000`, { method: 'POST', headers: key(), body });
    expect(r.status).toBe(200);
    const { summary, metadata } = r.body;
    expect(metadata).toMatchObject({ total_checked: 1, total_blocked: 3, total_invalid: 2, total_duplicates: 1 });
    expect(metadata.invalid_lines).toEqual([
      { line: 7, text: 'not a proxy', reason: UNRECOGNISED },
      { line: 8, text: '1.2.3.4', reason: 'no port: expected host:port' },
    ]);
    expect(summary.errors).toEqual({ blocked_target: 4 });
    expect(summary.total_working).toBe(0);
    expect(before - (await checks())).toBe(1); // localhost only

    const file: any = await (await checkedFetch(r.body.result_url)).json();
    expect(file.summary).toEqual(summary);
    expect(file.metadata).toEqual(metadata);
    expect(file.invalid_lines).toEqual(metadata.invalid_lines);
    const byHost = (h: string) => file.proxies.find((p: { proxy: { host: string } }) => p.proxy.host === h);
    for (const ip of ['127.0.0.1', '10.0.0.1', '::1']) {
      expect(byHost(ip)).toMatchObject({ status: 'failed', statusCode: null, error: { code: 'blocked_target', message: setting(ip) } });
    }
    expect(byHost('localhost')).toMatchObject({
      status: 'failed',
      error: { code: 'blocked_target', message: expect.stringMatching(/^localhost resolves to (127\.0\.0\.1|::1), a private, loopback or reserved address; refused unless the server sets ALLOW_PRIVATE_TARGETS=true$/) },
    });
    expect(file.proxies).toHaveLength(4);
  }, 20_000);

  test('/check: elements count from 1; only 20 invalid lines in the response, all in the file; the 402 counts the proxies to probe only', async () => {
    const proxies = ['127.0.0.2:80', ...Array.from({ length: 30 }, (_, i) => `bad ${i}`), 42, 'localhost:1'];
    const r = await call(`${t.url}/check`, { method: 'POST', headers: key(), json: { proxies, timeout: 1000 } });
    expect(r.status).toBe(200);
    expect(r.body.metadata).toMatchObject({ total_invalid: 31, total_blocked: 1, total_checked: 1 });
    expect(r.body.metadata.invalid_lines).toHaveLength(20);
    expect(r.body.metadata.invalid_lines[0]).toEqual({ line: 2, text: 'bad 0', reason: UNRECOGNISED });
    const file: any = await (await checkedFetch(r.body.result_url)).json();
    expect(file.invalid_lines).toHaveLength(31);
    expect(file.invalid_lines.at(-1)).toEqual({ line: 32, text: '42', reason: 'not a string' });

    // an account with 1 check left: 20 refused literals and one name need 1, not 21
    const remaining = await checks();
    const admin = await rawCall(`${t.adminUrl}/admin/create-account`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${t.service.config.http.adminToken}` },
      json: { email: 'poor@localhost', checks: 1 },
    });
    expect(admin.status).toBe(200);
    const poor = admin.body.apiKey as string;
    const many = [...Array.from({ length: 20 }, (_, i) => `10.0.0.${i + 1}:80`), 'localhost:2'];
    const ok = await call(`${t.url}/check`, { method: 'POST', headers: { 'X-API-Key': poor }, json: { proxies: many, timeout: 1000 } });
    expect(ok.status).toBe(200);
    expect(ok.body.metadata).toMatchObject({ total_checked: 1, total_blocked: 20 });
    const short = await call(`${t.url}/check`, { method: 'POST', headers: { 'X-API-Key': poor }, json: { proxies: ['10.0.0.1:80', 'localhost:3', 'localhost:4'] } });
    expect(short.status).toBe(402);
    expect(short.body).toMatchObject({ required: 2, available: 0 });
    expect(await checks()).toBe(remaining);
  }, 20_000);
});

describe('messages that name their setting', () => {
  test('a TLS judge that does not answer at start: the warning names the https settings; /ws without a key under WS_REQUIRE_AUTH names it', async () => {
    const port = await refusedPort();
    const s = await startTestService({ JUDGE_TLS_URL: `https://127.0.0.1:${port}/judge`, JUDGE_TLS_FINGERPRINT: 'ab'.repeat(32), WS_REQUIRE_AUTH: 'true' });
    try {
      const warning = s.logs.find((l) => typeof l.msg === 'string' && l.msg.startsWith('the TLS judge did not answer directly'));
      expect(warning?.msg).toBe('the TLS judge did not answer directly; https checks may all be false (JUDGE_TLS_URL, JUDGE_TLS_FINGERPRINT; JUDGE_TLS=false turns them off)');
      const upgrade = { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==' };
      const ws = await call(`${s.url}/ws?jobId=needs-a-key`, { headers: upgrade });
      expect(ws.status).toBe(401);
      expect(ws.body).toEqual({
        error: 'API key is required',
        message: 'This server requires an API key on /ws (server setting WS_REQUIRE_AUTH): provide it in the X-API-Key header, the Authorization header (Bearer <key>) or the apiKey query parameter',
      });
    } finally {
      await s.stop();
    }
  }, 30_000);
});
