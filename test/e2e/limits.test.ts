/**
 * End to end, over real sockets: the per-account limits (docs/API.md
 * "Limits") with small values set through the environment.
 *
 * - requests per second (RATE_LIMIT_PER_S=1, so a burst of 2): the third
 *   request at once is 429 with Retry-After; the refused /check reserved
 *   nothing (balance and history unchanged); the account's other keys share
 *   its bucket, another account is not slowed; after Retry-After it works.
 * - RateLimit-Limit / -Remaining / -Reset on every answer of a keyed route
 *   once the key is known (successes, errors, the 429s), on no other.
 * - running checks per account (MAX_JOBS_PER_ACCOUNT=1): a second check while
 *   one runs is 429 with Retry-After, nothing reserved.
 * - WebSocket caps (2 per address, WS_MAX_PER_ACCOUNT=2): the third
 *   anonymous socket from one address is closed 1013; an authenticated
 *   subscriber from the same address is still accepted; a closed socket gives
 *   its place back.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startBlackHoleAnyAddress, type FakeServer } from '../fixtures/fake-servers';
import { checkedCall } from '../helpers/openapi-check';
import { call, startTestService, type TestService } from '../helpers/service';

let hole: FakeServer;
beforeAll(async () => {
  hole = await startBlackHoleAnyAddress();
});
afterAll(async () => {
  await hole?.close();
});

async function waitFor(cond: () => Promise<boolean> | boolean, ms: number, what: string) {
  const end = performance.now() + ms;
  while (!(await cond())) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

const rateLimit = (h: Headers) => ({ limit: h.get('ratelimit-limit'), remaining: h.get('ratelimit-remaining'), reset: h.get('ratelimit-reset') });

const holes = (n: number, b: number) => Array.from({ length: n }, (_, i) => `127.${b}.2.${1 + i}:${hole.port}`);

describe('requests per second per account', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ RATE_LIMIT_PER_S: '1', BOOTSTRAP_CHECKS: '1000' });
  });
  afterAll(async () => {
    await t?.stop();
  });

  test('over the burst: 429 + Retry-After before anything is reserved; other accounts unaffected; back after Retry-After', async () => {
    const admin = { Authorization: `Bearer ${t.service.config.http.adminToken}` };
    // set-up through the admin API (not rate limited): a second key of the demo account, and another account
    const key2 = (await call(`${t.adminUrl}/admin/issue-key`, { method: 'POST', headers: admin, json: { email: 'demo@localhost', label: 'second' } })).body.apiKey as string;
    const other = (await call(`${t.adminUrl}/admin/create-account`, { method: 'POST', headers: admin, json: { email: 'other@example.com', checks: 10 } })).body.apiKey as string;
    expect(typeof key2).toBe('string');
    expect(typeof other).toBe('string');

    const me1 = await checkedCall(`${t.url}/me`, { headers: { 'x-api-key': t.key } }); // token 1 of 2
    expect(me1.status).toBe(200);
    // the IETF RateLimit fields on every keyed answer: the burst, what is left, seconds until the bucket is full
    expect(rateLimit(me1.headers)).toEqual({ limit: '2', remaining: '1', reset: '1' });
    const balance = me1.body.user.checks as number;
    const scans = me1.body.history_count as number;
    const ok = await checkedCall(`${t.url}/check`, { method: 'POST', headers: { 'x-api-key': t.key }, json: { proxies: ['x'] } }); // token 2: 400, but counted
    expect(ok.status).toBe(400);
    // an error after the key carries them too (0 left, 2 s to full; 1 and 1 s when a token came back meanwhile, on a slow machine)
    const either: ReturnType<typeof rateLimit>[] = [{ limit: '2', remaining: '0', reset: '2' }, { limit: '2', remaining: '1', reset: '1' }];
    expect(either).toContainEqual(rateLimit(ok.headers));

    const refused = await checkedCall(`${t.url}/check`, { method: 'POST', headers: { 'x-api-key': t.key }, json: { proxies: holes(3, 1), timeout: 1000 } });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(rateLimit(refused.headers)).toEqual({ limit: '2', remaining: '0', reset: '1' }); // Reset = Retry-After
    expect(refused.body).toEqual({ error: 'Too many requests', message: 'Rate limit: 1 requests per second per account, bursts of 2 (server setting RATE_LIMIT_PER_S; bursts are twice it); retry in 1 s' });
    // the account's other key shares the bucket; /me is limited too; a bad key is still 401
    expect((await checkedCall(`${t.url}/me`, { headers: { authorization: `Bearer ${key2}` } })).status).toBe(429);
    expect((await checkedCall(`${t.url}/check-raw`, { method: 'POST', headers: { 'x-api-key': t.key }, body: '127.0.0.1:1' })).status).toBe(429);
    const unknown = await checkedCall(`${t.url}/me`, { headers: { 'x-api-key': 'pc_unknown_key_000000000' } });
    expect(unknown.status).toBe(401);
    expect(rateLimit(unknown.headers)).toEqual({ limit: null, remaining: null, reset: null }); // no account, no bucket
    expect(rateLimit((await checkedCall(`${t.url}/regions`)).headers)).toEqual({ limit: null, remaining: null, reset: null }); // not a keyed route
    // another account is not slowed by this one
    expect((await checkedCall(`${t.url}/me`, { headers: { 'x-api-key': other } })).status).toBe(200);
    expect(hole.open()).toBe(0); // the refused check probed nothing

    await Bun.sleep(1100); // Retry-After
    const me2 = await checkedCall(`${t.url}/me`, { headers: { 'x-api-key': t.key } });
    expect(me2.status).toBe(200);
    expect(me2.body.user.checks).toBe(balance); // nothing was reserved for the refused check
    expect(me2.body.history_count).toBe(scans); // and no scan row written
  }, 15_000);
});

describe('running checks per account, and WebSocket caps', () => {
  let t: TestService;
  beforeAll(async () => {
    // per address a quarter of WS_MAX_PER_ACCOUNT in a real start; 2 here, as the account's
    t = await startTestService({ MAX_JOBS_PER_ACCOUNT: '1', WS_MAX_PER_ACCOUNT: '2', BOOTSTRAP_CHECKS: '1000' }, { configure: (c) => void (c.limits.wsMaxPerAddress = 2) });
  });
  afterAll(async () => {
    await t?.stop();
  });
  const me = async () => (await checkedCall(`${t.url}/me`, { headers: { 'x-api-key': t.key } })).body;

  test('a second check while one runs: 429 + Retry-After, nothing reserved; accepted once the first ends', async () => {
    const before = (await me()).user.checks as number;
    const first = checkedCall(`${t.url}/check`, { method: 'POST', headers: { 'x-api-key': t.key }, json: { proxies: holes(5, 2), timeout: 2000, jobId: 'limit-first' } });
    await waitFor(() => hole.open() >= 5, 5000, 'the first check to probe');
    const reserved = await me();
    expect(reserved.user.checks).toBe(before - 5);

    const second = await checkedCall(`${t.url}/check`, { method: 'POST', headers: { 'x-api-key': t.key }, json: { proxies: holes(3, 3), timeout: 1000, jobId: 'limit-second' } });
    expect(second.status).toBe(429);
    expect(second.headers.get('retry-after')).toBe('5');
    // whatever refused it, a 429 says nothing remains until Retry-After; the limit stays the request bucket's
    expect(rateLimit(second.headers)).toEqual({ limit: '40', remaining: '0', reset: '5' });
    expect(second.body).toEqual({ error: 'Too many requests', message: 'At most 1 checks may run at once per account (server setting MAX_JOBS_PER_ACCOUNT); retry in 5 s' });
    const after = await me();
    expect(after.user.checks).toBe(before - 5); // unchanged by the refused check
    expect(after.history_count).toBe(reserved.history_count); // no scan row for it

    expect((await first).status).toBe(200);
    const third = await checkedCall(`${t.url}/check`, { method: 'POST', headers: { 'x-api-key': t.key }, json: { proxies: holes(2, 4), timeout: 1000, jobId: 'limit-third' } });
    expect(third.status).toBe(200);
  }, 20_000);

  /** Opens a WebSocket; resolves with its close event, or 'open' if still open after `ms`. */
  function socket(query: string) {
    const ws = new WebSocket(`${t.url.replace('http', 'ws')}/ws?${query}`);
    const closed = new Promise<{ code: number; reason: string }>((resolve) => {
      ws.onclose = (ev) => resolve({ code: ev.code, reason: ev.reason });
    });
    const opened = new Promise<void>((resolve) => {
      ws.onopen = () => resolve();
    });
    const after = async (ms: number) => Promise.race([closed, Bun.sleep(ms).then(() => 'open' as const)]);
    return { ws, closed, opened, after };
  }

  test('WebSockets: one address at its cap is refused 1013; an account from the same address still subscribes; a place comes back', async () => {
    const a1 = socket('jobId=ws-anon-1');
    const a2 = socket('jobId=ws-anon-2');
    await Promise.all([a1.opened, a2.opened]);
    expect(await a1.after(100)).toBe('open');
    expect(await a2.after(0)).toBe('open');

    const a3 = socket('jobId=ws-anon-3');
    expect(await a3.closed).toEqual({ code: 1013, reason: 'too many subscriptions for this address (a quarter of WS_MAX_PER_ACCOUNT)' });

    // the same address with a key counts against the account, not the address
    const k1 = socket(`jobId=ws-key-1&apiKey=${t.key}`);
    const k2 = socket(`jobId=ws-key-2&apiKey=${t.key}`);
    await Promise.all([k1.opened, k2.opened]);
    expect(await k1.after(100)).toBe('open');
    expect(await k2.after(0)).toBe('open');
    const k3 = socket(`jobId=ws-key-3&apiKey=${t.key}`);
    expect(await k3.closed).toEqual({ code: 1013, reason: 'too many subscriptions for this account (WS_MAX_PER_ACCOUNT)' });

    // a closed socket gives its place back
    a1.ws.close();
    await a1.closed;
    await Bun.sleep(50); // the server's close handler
    const a4 = socket('jobId=ws-anon-4');
    await a4.opened;
    expect(await a4.after(100)).toBe('open');
    for (const s of [a2, a4, k1, k2]) s.ws.close();
    await Promise.all([a2.closed, a4.closed, k1.closed, k2.closed]);
  }, 15_000);
});
