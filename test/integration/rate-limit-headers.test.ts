/**
 * RateLimit-Limit / -Remaining / -Reset on the keyed routes (src/http/
 * account-rate-limit.ts, rate-limit.ts, errors.ts), in the app with a
 * stopped clock (no token comes back while the test runs): on every answer
 * once the key resolved to an account (successes, later errors, both kinds
 * of 429), never on a 401 nor on a route without a key.
 */
import { describe, expect, test } from 'bun:test';
import { parseConfig } from '../../src/config';
import { createApp } from '../../src/http/app';
import { RateLimitedError } from '../../src/jobs/job-errors';
import { fakeAppDeps } from '../helpers/app-deps';

const KEY = 'pc_rate-limit-key';
const BUSY = 'pc_busy-account-key';
const at = new Date('2026-11-22T10:00:00Z');

function app() {
  const config = parseConfig({ PORT: '0', DATA_DIR: '/tmp/pc-rl-unused', RATE_LIMIT_PER_S: '2' }, process.cwd());
  return createApp(
    fakeAppDeps(
      {
        // a burst other than twice the rate (the derived one), to tell them apart in the headers
        limits: { ...config.limits, rateLimitBurst: 3 },
        now: () => at,
        accounts: {
          findByApiKey: async (k) => (k === KEY ? { id: 'acc-1', email: 'a@b.io' } : k === BUSY ? { id: 'acc-2', email: 'b@b.io' } : null),
          overview: async () => ({ user: {} }),
        },
        checks: {
          assertAccepting: () => {},
          run: async (owner) => {
            if (owner.id === 'acc-2') throw new RateLimitedError('concurrent_jobs', 4, 5);
            return { ok: true };
          },
          submit: async () => {
            throw new Error('not used here');
          },
        },
      },
      'the RateLimit headers',
    ),
  );
}

const fields = (r: Response) => ({
  status: r.status,
  limit: r.headers.get('ratelimit-limit'),
  remaining: r.headers.get('ratelimit-remaining'),
  reset: r.headers.get('ratelimit-reset'),
  retryAfter: r.headers.get('retry-after'),
});

describe('RateLimit headers', () => {
  test('keyed answers count down the burst; the 429 says 0 left and Reset = Retry-After; unkeyed answers have none', async () => {
    const a = app();
    const get = (path: string, init: RequestInit = {}) => a.handle(new Request(`http://127.0.0.1:3000${path}`, init));
    expect(fields(await get('/me', { headers: { 'X-API-Key': KEY } }))).toEqual({ status: 200, limit: '3', remaining: '2', reset: '1', retryAfter: null });
    // an error past the key (a 400 from the validator) carries them too
    expect(fields(await get('/check-raw', { method: 'POST', headers: { 'X-API-Key': KEY }, body: 'nothing valid' }))).toEqual({ status: 400, limit: '3', remaining: '1', reset: '1', retryAfter: null });
    expect(fields(await get('/check', { method: 'POST', headers: { 'X-API-Key': KEY, 'content-type': 'application/json' }, body: '{"proxies":["1.2.3.4:80"]}' }))).toEqual({
      status: 200,
      limit: '3',
      remaining: '0',
      reset: '2',
      retryAfter: null,
    });
    expect(fields(await get('/me', { headers: { 'X-API-Key': KEY } }))).toEqual({ status: 429, limit: '3', remaining: '0', reset: '1', retryAfter: '1' });
    // no account, no bucket; a route without a key has none either
    expect(fields(await get('/me', { headers: { 'X-API-Key': 'pc_nobody' } }))).toEqual({ status: 401, limit: null, remaining: null, reset: null, retryAfter: null });
    expect(fields(await get('/me'))).toMatchObject({ status: 401, limit: null });
    expect(fields(await get('/regions'))).toMatchObject({ status: 200, limit: null, remaining: null, reset: null });
  });

  test('a 429 from a job limit: the bucket’s limit, 0 left, Reset = its Retry-After', async () => {
    const a = app();
    const r = await a.handle(new Request('http://127.0.0.1:3000/check-raw', { method: 'POST', headers: { 'X-API-Key': BUSY }, body: '1.2.3.4:80' }));
    expect(fields(r)).toEqual({ status: 429, limit: '3', remaining: '0', reset: '5', retryAfter: '5' });
  });
});
