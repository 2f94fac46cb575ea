/**
 * The HTTP contract of every route that does not run a check: exact bodies of
 * every error (seed + DECISIONS), 404/405 handling, the public routes, /me,
 * the docs, the judge. Through the real service on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readLiveLock } from '../../src/admin/lock';
import { ACCEPTED_REGIONS } from '../../src/regions';
import { verifyJudgeBody } from '../../src/probe/codec/integrity';
import { requestFrom } from '../helpers/from-address';
import { call as rawCall, startTestService, type TestService } from '../helpers/service';
// Every response is checked against the OpenAPI document the service serves (test/helpers/openapi-check.ts).
import { checkedCall as call } from '../helpers/openapi-check';

let t: TestService;
let small: TestService;

beforeAll(async () => {
  t = await startTestService();
  small = await startTestService({ MAX_PROXIES: '3', MAX_BODY_BYTES: '2048', MAX_CUSTOM_URLS: '1', ADMIN_HOST: '127.0.0.2' });
}, 60_000);

afterAll(async () => {
  await small?.stop();
  await t?.stop();
}, 30_000);

const auth = () => ({ 'X-API-Key': t.key });
const post = (path: string, json: unknown, headers: Record<string, string> = auth(), svc = t) =>
  call(svc.url + path, { method: 'POST', headers, json });

describe('public routes', () => {
  test('GET /regions is the catalogue, test1 last, default us1', async () => {
    const r = await call(`${t.url}/regions`);
    expect(r.status).toBe(200);
    expect(r.body.default).toBe('us1');
    expect(r.body.regions).toHaveLength(20);
    expect(r.body.regions.map((x: { code: string }) => x.code)).toEqual([...ACCEPTED_REGIONS, 'test1']);
    // embedded: the process is every region's one agent, its slots endpoints x SLOTS_PER_ENDPOINT (768)
    expect(r.body.regions[0]).toEqual({ code: 'sg1', name: 'Singapore', endpoints: 16, agents: 1, capacity: 16 * 768 });
    expect(r.body.regions[19]).toEqual({ code: 'test1', name: 'TEST - DO NOT USE', endpoints: 6, agents: 1, capacity: 6 * 768 });
  });

  test('GET /health reports ok with the DECISIONS shape', async () => {
    const r = await call(`${t.url}/health`);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['database', 'regions', 'status', 'timestamp', 'uptime', 'version']);
    expect(r.body).toMatchObject({ status: 'ok', database: 'ok', regions: 19, version: '0.1.0' });
    expect(Number.isInteger(r.body.uptime)).toBe(true);
    expect(new Date(r.body.timestamp).toISOString()).toBe(r.body.timestamp);
  });

  test('GET /judge echoes the nonce, the request line and the headers', async () => {
    const r = await call(`${t.url}/judge?n=abc123`, { headers: { 'X-Probe': 'yes' } });
    expect(r.status).toBe(200);
    expect(r.body.nonce).toBe('abc123');
    expect(r.body.requestLine).toBe('GET /judge?n=abc123 HTTP/1.1');
    expect(r.body.remoteAddress).toBe('127.0.0.1');
    expect(r.body.headers.map((h: [string, string]) => h[0].toLowerCase())).toContain('x-probe');
  });
  test('GET /judge signs its exact body with the service\'s judge key (JUDGE_KEY when set; a random one is covered by every check of this suite)', async () => {
    const keyed = await startTestService({ JUDGE_KEY: 'e2e-judge-key-0123456789' });
    try {
      const res = await fetch(`${keyed.url}/judge?n=signed1`);
      const bytes = Buffer.from(await res.arrayBuffer());
      expect(bytes.toString('latin1')).toMatch(/,"sig":"v1:\d+:[0-9a-f]{64}"}$/);
      expect(verifyJudgeBody(bytes, 'e2e-judge-key-0123456789')).toBe(true);
      expect(verifyJudgeBody(bytes, 'some-other-key-16ch')).toBe(false);
    } finally {
      await keyed.stop();
    }
  });
});

describe('errors of the router', () => {
  test('unknown route: 404 JSON', async () => {
    const r = await call(`${t.url}/nope`);
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ error: 'Not found', message: 'No route GET /nope' });
  });

  test.each([
    ['GET', '/check', 'POST'],
    ['PUT', '/check-raw', 'POST'],
    ['POST', '/me', 'GET'],
    ['DELETE', '/regions', 'GET'],
    ['POST', '/health', 'GET'],
  ])('%s %s: 405 with Allow: %s', async (method, path, allow) => {
    const r = await call(t.url + path, { method });
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe(allow);
    expect(r.body).toEqual({ message: `The ${path} route accepts ${allow} only` });
  });
});

describe('authentication', () => {
  test.each(['/me', '/check', '/check-raw'])('%s without a key: 401 API key is required', async (path) => {
    const r = await call(t.url + path, path === '/me' ? {} : { method: 'POST', body: '1.2.3.4:80' });
    expect(r.status).toBe(401);
    expect(r.body).toEqual({
      error: 'API key is required',
      message: 'Please provide your API key in the X-API-Key header or the Authorization header (Bearer <key>)',
    });
  });

  test('an invalid key: 401 Invalid API key', async () => {
    const r = await call(`${t.url}/me`, { headers: { Authorization: 'Bearer pc_nope' } });
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ error: 'Invalid API key', message: 'The provided API key is not valid' });
  });

  test('a revoked key is invalid', async () => {
    const admin = { Authorization: `Bearer ${t.service.config.http.adminToken}` };
    // the admin listener serves no OpenAPI document: rawCall
    const issued = await rawCall(`${t.adminUrl}/admin/issue-key`, { method: 'POST', headers: admin, json: { email: 'demo@localhost', label: 'tmp' } });
    expect(issued.status).toBe(200);
    const key = issued.body.apiKey as string;
    expect((await call(`${t.url}/me`, { headers: { 'X-API-Key': key } })).status).toBe(200);
    const revoked = await rawCall(`${t.adminUrl}/admin/revoke-key`, { method: 'POST', headers: admin, json: { key } });
    expect(revoked.status).toBe(200);
    expect((await call(`${t.url}/me`, { headers: { 'X-API-Key': key } })).status).toBe(401);
  });

  test('the admin API refuses a wrong token', async () => {
    const r = await rawCall(`${t.adminUrl}/admin/show`, { method: 'POST', headers: { Authorization: 'Bearer x'.repeat(3) }, json: { email: 'demo@localhost' } });
    expect(r.status).toBe(401);
  });
});

describe('the admin API: its own listener, throttled', () => {
  const adminAuth = (svc: TestService) => ({ Authorization: `Bearer ${svc.service.config.http.adminToken}` });

  test('the public listener answers the JSON 404 for /admin/*, whatever the method and token', async () => {
    for (const method of ['POST', 'GET', 'PUT', 'DELETE', 'PATCH']) {
      for (const path of ['/admin/show', '/admin/create-account', '/admin', '/admin/']) {
        const r = await call(`${t.url}${path}`, { method, headers: adminAuth(t), ...(method === 'GET' ? {} : { json: { email: 'demo@localhost' } }) });
        expect([method, path, r.status]).toEqual([method, path, 404]);
        expect(r.body).toEqual({ error: 'Not found', message: `No route ${method} ${path}` });
      }
    }
  });

  test('the admin listener serves the admin API on ADMIN_HOST only, and nothing else', async () => {
    const port = Number(new URL(t.adminUrl).port);
    expect(t.adminUrl).toBe(`http://127.0.0.1:${port}`);
    expect(port).not.toBe(t.service.port);
    const shown = await rawCall(`${t.adminUrl}/admin/show`, { method: 'POST', headers: adminAuth(t), json: { email: 'demo@localhost' } });
    expect(shown.status).toBe(200);
    expect(shown.body.email).toBe('demo@localhost');
    expect((await rawCall(`${t.adminUrl}/health`)).status).toBe(404);
    const get = await rawCall(`${t.adminUrl}/admin/show`, { headers: adminAuth(t) });
    expect([get.status, get.headers.get('allow')]).toEqual([405, 'POST']);
    // bound to 127.0.0.1, not to every loopback address
    expect(await fetch(`http://127.0.0.2:${port}/admin/show`, { method: 'POST' }).then(() => 'answered', (e: { code?: string }) => e.code ?? 'failed')).not.toBe('answered');
    // ADMIN_HOST elsewhere: the admin API is there, and not on 127.0.0.1
    const other = Number(new URL(small.adminUrl).port);
    expect(small.adminUrl).toBe(`http://127.0.0.2:${other}`);
    expect((await rawCall(`${small.adminUrl}/admin/show`, { method: 'POST', headers: adminAuth(small), json: { email: 'demo@localhost' } })).status).toBe(200);
    expect(await fetch(`http://127.0.0.1:${other}/admin/show`, { method: 'POST' }).then(() => 'answered', () => 'refused')).toBe('refused');
  });

  test('embedded: the data-dir lock points the admin command at the admin listener', async () => {
    if (t.databaseUrl !== undefined) return; // PostgreSQL: no data-dir lock (the admin command works on the database directly)
    expect(await readLiveLock(t.dataDir)).toEqual({ pid: process.pid, adminUrl: t.adminUrl });
  });

  test('failed tokens are throttled per client address: 429 with Retry-After, even for the right token; another address still works', async () => {
    const url = `${small.adminUrl}/admin/show`;
    const wrong = { Authorization: `Bearer ${'w'.repeat(32)}` };
    const json = { email: 'demo@localhost' };
    for (let i = 0; i < 5; i++) expect((await requestFrom('127.0.0.3', url, { method: 'POST', headers: wrong, json })).status).toBe(401);
    for (const headers of [wrong, adminAuth(small), {}]) {
      const r = await requestFrom('127.0.0.3', url, { method: 'POST', headers, json });
      expect(r.status).toBe(429);
      expect(r.body.error).toBe('Too many requests');
      expect(typeof r.body.message).toBe('string');
      expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(59);
      expect(Number(r.headers['retry-after'])).toBeLessThanOrEqual(60);
    }
    const ok = await requestFrom('127.0.0.4', url, { method: 'POST', headers: adminAuth(small), json });
    expect([ok.status, ok.body.email]).toEqual([200, 'demo@localhost']);
    // right tokens are never counted
    for (let i = 0; i < 8; i++) expect((await requestFrom('127.0.0.4', url, { method: 'POST', headers: adminAuth(small), json })).status).toBe(200);
  });
});

describe('GET /me', () => {
  test('the first shape, 30 zero-filled UTC days, empty history', async () => {
    const r = await call(`${t.url}/me`, { headers: { Authorization: `Bearer ${t.key}` } });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['gateway', 'history', 'history_count', 'usage_last_30_days', 'user']);
    expect(r.body.gateway).toEqual({ connections_24h: 0, bytes_24h: 0 });
    expect(r.body.user).toMatchObject({
      email: 'demo@localhost',
      checks: 1000,
      breakdown: { root_balance: 1000, temp_balance: 0 },
      subscription_detail: { UnlimitedPro: false },
    });
    expect(r.body.user.subscription_detail.unlimited_expired_at).toBeUndefined();
    expect(r.body.user.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.body.history).toEqual([]);
    expect(r.body.history_count).toBe(0);
    const days = r.body.usage_last_30_days as { day: string; total_checked: number }[];
    expect(days).toHaveLength(30);
    expect(days[29]!.day).toBe(new Date().toISOString().slice(0, 10));
    expect(days.every((d) => d.total_checked === 0)).toBe(true);
    expect(days.map((d) => d.day)).toEqual([...days.map((d) => d.day)].sort());
  });
});

describe('check request validation', () => {
  test('/check needs JSON: 415', async () => {
    const r = await call(`${t.url}/check`, { method: 'POST', headers: { ...auth(), 'content-type': 'text/plain' }, body: '{"proxies":[]}' });
    expect(r.status).toBe(415);
    expect(r.body).toEqual({ error: 'Unsupported media type', message: 'Content-Type must be application/json' });
  });

  test('malformed JSON: 400 Invalid request', async () => {
    const r = await call(`${t.url}/check`, { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: '{"proxies": [' });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: 'Invalid request', message: 'body: malformed JSON' });
  });

  test('a field of the wrong shape: 400 with the field path, never 422', async () => {
    const r = await post('/check', { proxies: 'x' });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('Invalid request');
    expect(r.body.message).toStartWith('proxies:');
  });

  test('invalid region: 400 with the 19 accepted codes (no test1)', async () => {
    for (const region of ['xx1', 'test1']) {
      const r = await post('/check', { proxies: ['1.2.3.4:80'], region });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('Invalid region');
      expect(r.body.available_regions).toEqual([...ACCEPTED_REGIONS]);
    }
  });

  test('invalid type: 400 with available_types', async () => {
    const r = await post('/check', { proxies: ['1.2.3.4:80'], type: 'ftp' });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: 'Invalid proxy type', available_types: ['http', 'socks4', 'socks5'] });
  });

  test.each([999, 20001, 1500.5, '2000'])('timeout %p: 400 Invalid timeout', async (timeout) => {
    const r = await post('/check', { proxies: ['1.2.3.4:80'], timeout });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: 'Invalid timeout', min: 1000, max: 20000 });
  });

  test('/check-raw timeout out of range: 400 Invalid timeout', async () => {
    const r = await call(`${t.url}/check-raw?timeout=50`, { method: 'POST', headers: auth(), body: '1.2.3.4:80' });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('Invalid timeout');
  });

  test('invalid jobId: 400', async () => {
    const r = await post('/check', { proxies: ['1.2.3.4:80'], jobId: 'a b' });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('Invalid jobId');
  });

  test('no valid proxy: 400 No valid proxies found', async () => {
    for (const proxies of [[], ['nope', '1.2.3.4:0', '# comment']]) {
      const r = await post('/check', { proxies });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('No valid proxies found');
      expect(typeof r.body.message).toBe('string');
    }
    const raw = await call(`${t.url}/check-raw`, { method: 'POST', headers: auth(), body: '\n\n# nothing\n' });
    expect(raw.status).toBe(400);
    expect(raw.body.error).toBe('No valid proxies found');
  });

  test('too many proxies: 413 with max', async () => {
    const r = await post('/check', { proxies: ['1.1.1.1:1', '1.1.1.1:2', '1.1.1.1:3', '1.1.1.1:4'] }, { 'X-API-Key': small.key }, small);
    expect(r.status).toBe(413);
    expect(r.body).toEqual({ error: 'Too many proxies', message: 'At most 3 unique proxies per request (server setting MAX_PROXIES)', max: 3 });
  });

  test('body too large: 413 with max', async () => {
    const big = Array.from({ length: 300 }, (_, i) => `10.0.${i >> 8}.${i & 255}:8080`).join('\n');
    const r = await call(`${small.url}/check-raw`, { method: 'POST', headers: { 'X-API-Key': small.key }, body: big });
    expect(r.status).toBe(413);
    expect(r.body).toEqual({ error: 'Payload too large', message: 'The request body may be at most 2048 bytes (server setting MAX_BODY_BYTES)', max: 2048 });
  });

  test('too many custom URLs: 413 with max', async () => {
    const customUrls = [{ url: 'http://a.example/' }, { url: 'http://b.example/' }];
    const r = await post('/check', { proxies: ['1.2.3.4:80'], customUrls }, { 'X-API-Key': small.key }, small);
    expect(r.status).toBe(413);
    expect(r.body).toMatchObject({ error: 'Too many custom URLs', max: 1 });
  });
});

describe('docs', () => {
  test('/docs renders from local assets only', async () => {
    const page = await fetch(`${t.url}/docs`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).not.toMatch(/https?:\/\//);
    for (const src of html.match(/(?:src|href)="([^"]+)"/g) ?? []) {
      const path = src.replace(/^(?:src|href)="|"$/g, '');
      const asset = await fetch(t.url + path);
      expect(asset.status).toBe(200);
      await asset.arrayBuffer();
    }
  });

  test('/docs/json documents every route, both auth schemes and the WebSocket channel', async () => {
    const r = await rawCall(`${t.url}/docs/json`); // the docs routes are not part of the document itself
    expect(r.status).toBe(200);
    for (const p of ['/check', '/check-raw', '/me', '/regions', '/health']) expect(r.body.paths[p]).toBeDefined();
    expect(r.body.paths['/check'].post.responses['402']).toBeDefined();
    expect(Object.keys(r.body.components.securitySchemes).sort()).toEqual(['ApiKeyHeader', 'BearerAuth']);
    expect(r.body.info.description).toContain('/ws?jobId=');
  });
});

describe('health when the database is down', () => {
  test('503 degraded', async () => {
    const other = await startTestService();
    try {
      await other.service.database.close();
      const r = await call(`${other.url}/health`);
      expect(r.status).toBe(503);
      expect(r.body).toMatchObject({ status: 'degraded', database: 'down' });
    } finally {
      await other.stop();
    }
  });
});
