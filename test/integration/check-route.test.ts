/**
 * Tests for src/http/routes/check.ts inside the real app (createApp, no
 * sockets) over a fake ChecksPort that records what it is asked to run: the
 * query reaches the validator whole (a repeated parameter is a 400, never its
 * last value), the cheap counts answer before per-entry validation, and
 * nothing rejected ever reaches the check (so nothing is charged).
 */
import { beforeEach, describe, expect, test } from 'bun:test';
import { parseConfig, type LimitsConfig } from '../../src/config';
import { createApp } from '../../src/http/app';
import type { AppDeps } from '../../src/http/context';
import type { CheckRequest } from '../../src/http/check-request';
import { fakeAppDeps } from '../helpers/app-deps';

const KEY = 'pc_route-test-key';
const ran: CheckRequest[] = [];

function deps(env: Record<string, string> = {}, limits: Partial<LimitsConfig> = {}): AppDeps {
  const config = parseConfig({ PORT: '0', DATA_DIR: '/tmp/pc-check-route-unused', ...env }, process.cwd());
  return fakeAppDeps(
    {
      limits: { ...config.limits, ...limits },
      http: config.http,
      accounts: { findByApiKey: async (k) => (k === KEY ? { id: 'acc-1', email: 'a@b.io' } : null), overview: async () => ({}) },
      checks: {
        run: async (_owner, req) => {
          ran.push(req);
          return { ok: true };
        },
        submit: async (_owner, req) => {
          ran.push(req);
          return { jobId: req.jobId ?? 'job_generated' };
        },
        assertAccepting: () => {},
      },
    },
    'the check routes',
  );
}

const app = createApp(deps());
const BASE = 'http://127.0.0.1:3000';

async function post(path: string, body: RequestInit['body'], contentType = 'text/plain') {
  const res = await app.handle(new Request(BASE + path, { method: 'POST', body, headers: { 'x-api-key': KEY, 'content-type': contentType } }));
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

beforeEach(() => {
  ran.length = 0;
});

describe('POST /check-raw query parameters', () => {
  test('?type=http&type=socks5 is a 400 naming the parameter, and no check runs', async () => {
    const r = await post('/check-raw?type=http&type=socks5', '1.2.3.4:80\n');
    expect(r).toEqual({ status: 400, body: { error: 'Invalid request', message: 'type: expected a single value, given 2 times' } });
    expect(ran).toHaveLength(0);
  });

  test.each(['region=us1&region=us1', 'timeout=2000&jobId=abc&timeout=3000', 'jobId=abc&jobId=abc'])('?%s is a 400', async (qs) => {
    const r = await post(`/check-raw?${qs}`, '1.2.3.4:80\n');
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('Invalid request');
    expect(ran).toHaveLength(0);
  });

  test('single parameters are taken; unknown ones may repeat', async () => {
    const r = await post('/check-raw?type=socks5&region=de1&timeout=4000&foo=1&foo=2', '1.2.3.4:80\n');
    expect(r.status).toBe(200);
    expect(ran.map((q) => [q.type, q.region, q.timeoutMs])).toEqual([['socks5', 'de1', 4000]]);
  });
});

describe('POST /check: cheap counts first', () => {
  const rules = (n: number) => Array.from({ length: n }, (_, i) => ({ url: `http://u${i}.example/` }));

  test('11 custom URL rules whose first is malformed: 413 Too many custom URLs, not the 400 of rule 0', async () => {
    const body = { proxies: ['1.2.3.4:80'], customUrls: [{ url: 'ftp://not-http' }, ...rules(10)] };
    const r = await post('/check', JSON.stringify(body), 'application/json');
    expect(r).toEqual({ status: 413, body: { error: 'Too many custom URLs', message: 'At most 10 custom URLs per request (server setting MAX_CUSTOM_URLS)', max: 10 } });
    expect(ran).toHaveLength(0);
  });

  test('10 rules whose first is malformed: the rule 400', async () => {
    const body = { proxies: ['1.2.3.4:80'], customUrls: [{ url: 'ftp://not-http' }, ...rules(9)] };
    const r = await post('/check', JSON.stringify(body), 'application/json');
    expect(r).toEqual({ status: 400, body: { error: 'Invalid request', message: 'customUrls[0].url: expected an http or https URL' } });
  });
});

describe('large bodies: limits.maxLargeBodies at once', () => {
  const MiB = 1024 * 1024;
  const capped = createApp(deps({}, { maxLargeBodies: 1 })); // a constant: a test starts with a smaller one
  const bigText = `1.2.3.4:80\n#${'x'.repeat(MiB + 100)}\n`;
  const send = (body: RequestInit['body'], headers: Record<string, string> = {}) =>
    capped.handle(new Request(`${BASE}/check-raw`, { method: 'POST', body, headers: { 'x-api-key': KEY, ...headers } }));

  test('a second body over 1 MiB while one is being read: 503 + Retry-After; the slot comes back', async () => {
    const bytes = new TextEncoder().encode(bigText);
    let pulls = 0;
    let reading!: () => void;
    const started = new Promise<void>((r) => (reading = r));
    let finish!: () => void;
    const finished = new Promise<void>((r) => (finish = r));
    const slow = new ReadableStream<Uint8Array>({
      async pull(c) {
        pulls++;
        if (pulls === 1) return c.enqueue(bytes.slice(0, 100));
        reading(); // the reader took the first chunk: the route is inside its read
        await finished;
        c.enqueue(bytes.slice(100));
        c.close();
      },
    });
    const first = send(slow, { 'content-length': String(bytes.length) });
    await started;
    await Bun.sleep(5);

    const second = await send(bigText);
    expect(second.status).toBe(503);
    expect(second.headers.get('retry-after')).toBe('1');
    expect(await second.json()).toEqual({ error: 'Service unavailable', message: 'Too many large request bodies are being read (2 at once); retry in 1 s' });
    // a small body is never held back
    expect((await send('1.2.3.4:80\n')).status).toBe(200);

    finish();
    expect((await first).status).toBe(200);
    expect((await send(bigText)).status).toBe(200);
    expect(ran).toHaveLength(3);
  });
});

describe('POST /check: the route declares its body (the contract\'s schema, checked by Elysia before the handler)', () => {
  const send = (body: string, headers: Record<string, string>) => app.handle(new Request(BASE + '/check', { method: 'POST', body, headers }));

  test('a body the schema refuses is answered with the ordered checks\' exact 400, and no check runs', async () => {
    const cases: [unknown, Record<string, unknown>][] = [
      [{ proxies: ['1.2.3.4:80'], timeout: 'fast' }, { error: 'Invalid timeout', message: 'timeout must be an integer number of milliseconds from 1000 to 20000', min: 1000, max: 20000 }],
      [{ proxies: ['1.2.3.4:80'], timeout: 999 }, { error: 'Invalid timeout', message: 'timeout must be an integer number of milliseconds from 1000 to 20000', min: 1000, max: 20000 }],
      [{ proxies: ['1.2.3.4:80'], type: 'socks6' }, { error: 'Invalid proxy type', message: 'Proxy type must be one of: http, socks4, socks5', available_types: ['http', 'socks4', 'socks5'] }],
      [{ proxies: 'x' }, { error: 'Invalid request', message: 'proxies: expected an array of strings' }],
      [[], { error: 'Invalid request', message: 'body: expected a JSON object' }],
      [null, { error: 'Invalid request', message: 'body: expected a JSON object' }],
      ['proxies', { error: 'Invalid request', message: 'body: expected a JSON object' }],
      [{ proxies: ['1.2.3.4:80'], samples: 11 }, { error: 'Invalid request', message: 'samples: expected an integer from 1 to 10' }],
      [{ proxies: ['1.2.3.4:80'], customUrls: [{ url: 'http://a.example/', caseSensitive: 'yes' }] }, { error: 'Invalid request', message: 'customUrls[0].caseSensitive: expected a boolean' }],
    ];
    for (const [body, answer] of cases) {
      const r = await post('/check', JSON.stringify(body), 'application/json');
      expect(r).toEqual({ status: 400, body: answer });
    }
    expect(ran).toHaveLength(0);
  });

  test('null is the same as absent, and an entry that is not a string is an invalid line (not a 400)', async () => {
    const r = await post('/check', JSON.stringify({ proxies: ['1.2.3.4:80', 7, null], unknown: { x: null }, timeout: null, type: null, customUrls: [{ url: 'http://a.example/', requiredText: null }] }), 'application/json');
    expect(r.status).toBe(200);
    expect(ran.map((q) => [q.proxies.length, q.totalInvalid, q.timeoutMs, q.type, q.customUrls])).toEqual([
      [1, 2, 2000, 'http', [{ url: 'http://a.example/', requiredStatusCodes: [200], caseSensitive: false }]],
    ]);
  });

  test('a custom URL the ordered checks take is taken, whatever the uri format says (a non-ASCII path)', async () => {
    const r = await post('/check', JSON.stringify({ proxies: ['1.2.3.4:80'], customUrls: [{ url: 'http://a.example/ü' }] }), 'application/json');
    expect(r.status).toBe(200);
    expect(ran[0]!.customUrls.map((u) => u.url)).toEqual(['http://a.example/ü']);
  });

  test('the contract\'s order holds ahead of the schema: 401, then 415, then the 400', async () => {
    const bad = JSON.stringify({ proxies: 'x', timeout: 'fast' });
    expect((await send(bad, { 'content-type': 'text/plain' })).status).toBe(401);
    expect((await send(bad, { 'x-api-key': 'pc_wrong', 'content-type': 'application/json' })).status).toBe(401);
    expect((await send(bad, { 'x-api-key': KEY, 'content-type': 'text/plain' })).status).toBe(415);
    expect((await send('{"proxies": [', { 'x-api-key': KEY, 'content-type': 'application/json' })).status).toBe(400);
    expect((await send(bad, { 'x-api-key': KEY, 'content-type': 'application/json', prefer: 'respond-async' })).status).toBe(400);
    expect(ran).toHaveLength(0);
  });
});

describe('a hostile value where the schema refuses it (Elysia cannot build its validation error: a member named toString)', () => {
  test('still the ordered checks\' exact 400, never a 500', async () => {
    const r = await post('/check', JSON.stringify({ proxies: ['1.2.3.4:80'], region: { toString: 0 } }), 'application/json');
    expect(r).toEqual({ status: 400, body: { error: 'Invalid request', message: 'region: expected a string' } });
    const t = await post('/check', JSON.stringify({ proxies: { valueOf: 1, toString: 0 } }), 'application/json');
    expect(t).toEqual({ status: 400, body: { error: 'Invalid request', message: 'proxies: expected an array of strings' } });
    expect(ran).toHaveLength(0);
  });
});

describe('GET and DELETE /checks/{jobId} declare their path parameter', () => {
  test('the key first (401), then a jobId the schema refuses: 400 Invalid jobId', async () => {
    for (const method of ['GET', 'DELETE']) {
      expect((await app.handle(new Request(`${BASE}/checks/x`, { method }))).status).toBe(401);
      const r = await app.handle(new Request(`${BASE}/checks/x`, { method, headers: { 'x-api-key': KEY } }));
      expect(r.status).toBe(400);
      expect(((await r.json()) as { error: string }).error).toBe('Invalid jobId');
    }
  });
});

describe('declared queries stay open: a parameter the contract does not name is ignored, as before', () => {
  test('POST /check?foo=1&async=false', async () => {
    const r = await post('/check?foo=1&async=false', JSON.stringify({ proxies: ['1.2.3.4:80'] }), 'application/json');
    expect(r.status).toBe(200);
    expect(ran).toHaveLength(1);
    expect((await post('/check?async=maybe', JSON.stringify({ proxies: ['1.2.3.4:80'] }), 'application/json')).status).toBe(400);
  });
});
