/**
 * The admin HTTP API (src/admin/routes.ts) on a real listener on 127.0.0.1:
 * token guard, every command, error statuses and bodies.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Elysia } from 'elysia';
import { adminRoutes } from '../../src/admin/routes';
import { freshDatabase, type TestDatabase } from '../helpers/db';

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
