/**
 * The admin HTTP API (src/admin/routes.ts) on a real listener on 127.0.0.1:
 * token guard, every command, error statuses and bodies; the failed-token
 * throttle per peer address (a fake clock; requests from 127.0.0.x); the
 * admin listener's app (src/admin/app.ts): 404 / 405 for anything else.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Elysia } from 'elysia';
import { createAdminApp } from '../../src/admin/app';
import { adminRoutes } from '../../src/admin/routes';
import { FailureThrottle } from '../../src/admin/throttle';
import { memoryLogger } from '../../src/log';
import { freshDatabase, type TestDatabase } from '../helpers/db';
import { requestFrom } from '../helpers/from-address';

const TOKEN = 'admin-token-for-tests-0123456789';
let tdb: TestDatabase;
let app: { stop(): Promise<void> | void; server: { port: number } | null };
let base = '';

beforeAll(async () => {
  tdb = await freshDatabase();
  const a = new Elysia().use(adminRoutes({ database: tdb, adminToken: TOKEN, now: () => new Date('2029-01-01T00:00:00Z') })).listen({ hostname: '127.0.0.1', port: 0 });
  app = a as unknown as typeof app;
  base = `http://127.0.0.1:${a.server?.port}`;
}, 60_000);
afterAll(async () => {
  await app.stop();
  await tdb.cleanup();
});

async function call(command: string, body: unknown, token: string | null = TOKEN) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${base}/admin/${command}`, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('admin routes', () => {
  test('missing or wrong token -> 401, before anything else', async () => {
    expect(await call('show', { email: 'x@y.z' }, null)).toEqual({
      status: 401,
      body: { error: 'Unauthorized', message: 'A valid admin token is required (Authorization: Bearer <ADMIN_TOKEN>)' },
    });
    expect((await call('show', { email: 'x@y.z' }, TOKEN + 'x')).status).toBe(401);
    expect((await call('nope', 'not json', 'wrong-token-but-long')).status).toBe(401);
  });

  test('every command end to end', async () => {
    const created = await call('create-account', { email: 'Routes@Example.test', checks: 10, temp: 2 });
    expect(created.status).toBe(200);
    expect(Object.keys(created.body).sort()).toEqual(['apiKey', 'email', 'id']);
    expect(created.body.email).toBe('routes@example.test');
    const issued = await call('issue-key', { email: 'routes@example.test', label: 'second' });
    expect(issued.body).toMatchObject({ email: 'routes@example.test', label: 'second' });
    expect(String(issued.body.apiKey)).toMatch(/^pc_/);
    expect((await call('revoke-key', { key: issued.body.apiKey })).body).toMatchObject({ revoked: true, alreadyRevoked: false });
    expect((await call('top-up', { email: 'routes@example.test', checks: 5, temp: true })).body).toMatchObject({
      checks: 17,
      root_balance: 10,
      temp_balance: 7,
      balance: 'temp',
    });
    expect((await call('set-plan', { email: 'routes@example.test', unlimitedUntil: '2030-01-01' })).body).toMatchObject({
      unlimited_pro: true,
      subscription_detail: { UnlimitedPro: true, unlimited_expired_at: '2030-01-01T00:00:00.000Z' },
    });
    expect((await call('clear-plan', { email: 'routes@example.test' })).body).toMatchObject({ subscription_detail: { UnlimitedPro: false } });
    const shown = await call('show', { email: 'routes@example.test' });
    expect(shown.body).toMatchObject({ email: 'routes@example.test', checks: 17 });
    expect((shown.body.keys as unknown[]).length).toBe(2);
  });

  test('errors: 400 bad body, 404 unknown command/account/key, 409 duplicate', async () => {
    expect(await call('show', '{bad json')).toEqual({ status: 400, body: { error: 'Invalid request', message: 'body: malformed JSON' } });
    expect((await call('show', {})).body).toEqual({ error: 'Invalid request', message: 'show: --email is required' });
    expect((await call('top-up', { email: 'a@b.io', checks: 'lots' })).status).toBe(400);
    expect(await call('frobnicate', {})).toEqual({ status: 404, body: { error: 'Not found', message: 'No admin command "frobnicate"' } });
    expect(await call('show', { email: 'ghost@example.test' })).toEqual({
      status: 404,
      body: { error: 'Not found', message: 'no account with e-mail ghost@example.test' },
    });
    expect((await call('revoke-key', { key: 'pc_nosuchkey' })).status).toBe(404);
    await call('create-account', { email: 'twice@example.test' });
    expect(await call('create-account', { email: 'twice@example.test' })).toEqual({
      status: 409,
      body: { error: 'Conflict', message: 'an account with e-mail twice@example.test already exists' },
    });
  });
});

describe('failed tokens are throttled per client address', () => {
  const clock = { t: 5_000_000 };
  const log = memoryLogger('debug');
  let server: { stop(): Promise<void> | void };
  let url = '';
  beforeAll(() => {
    const throttle = new FailureThrottle({ maxFailures: 3, windowMs: 60_000, blockMs: 60_000, now: () => clock.t });
    const a = createAdminApp({ database: tdb, adminToken: TOKEN, throttle, log }).listen({ hostname: '127.0.0.1', port: 0 });
    server = a as unknown as typeof server;
    url = `http://127.0.0.1:${a.server?.port}`;
  });
  afterAll(async () => {
    await server.stop();
  });
  const show = (from: string, token: string | null) =>
    requestFrom(from, `${url}/admin/show`, { method: 'POST', headers: token === null ? {} : { authorization: `Bearer ${token}` }, json: { email: 'routes@example.test' } });

  test('N failures -> 429 with Retry-After without checking the token; another address still works; after the block, tries again', async () => {
    expect((await show('127.0.0.5', 'wrong-token-0000000000')).status).toBe(401);
    expect((await show('127.0.0.5', null)).status).toBe(401); // a missing token is a failure too
    clock.t += 30_000;
    expect((await show('127.0.0.5', 'wrong-token-0000000000')).status).toBe(401);
    expect(log.lines.some((l) => l.msg === 'admin token failures: address blocked' && l.address === '127.0.0.5')).toBe(true);
    for (const token of ['wrong-token-0000000000', TOKEN]) {
      const r = await show('127.0.0.5', token);
      expect(r.status).toBe(429);
      expect(r.headers['retry-after']).toBe('60');
      expect(r.body).toEqual({ error: 'Too many requests', message: 'Slow down; retry in 60 s' });
    }
    // the right token from another address
    const other = await show('127.0.0.6', TOKEN);
    expect([other.status, other.body.email]).toEqual([200, 'routes@example.test']);
    clock.t += 45_000;
    expect((await show('127.0.0.5', TOKEN)).headers['retry-after']).toBe('15');
    clock.t += 15_000;
    const again = await show('127.0.0.5', TOKEN);
    expect([again.status, again.body.email]).toEqual([200, 'routes@example.test']);
    expect((await show('127.0.0.5', 'wrong-token-0000000000')).status).toBe(401);
  });

  test('the admin app answers the JSON 404 elsewhere and 405 for another method', async () => {
    const health = await requestFrom('127.0.0.7', `${url}/health`);
    expect([health.status, health.body]).toEqual([404, { error: 'Not found', message: 'No route GET /health' }]);
    const get = await requestFrom('127.0.0.7', `${url}/admin/show`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect([get.status, get.headers.allow, get.body]).toEqual([405, 'POST', { message: 'The /admin/show route accepts POST only' }]);
  });
});
