/**
 * The webhook routes (src/http/routes/webhooks.ts) over the real app and a
 * real WebhookService on PGlite (and PostgreSQL with DATABASE_URL), the SSRF
 * guard ON (no loop runs: nothing is sent): the life of an endpoint, every
 * bad input's clear 4xx (non-http URL, private target literal or by name,
 * unknown event, another account's pool, over 10, bad id, no JSON, nothing
 * to change), another account's endpoint 404 on every route, 405s, and
 * fuzzed bodies (never a 500).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { pools } from '../../db/schema';
import { createAccount } from '../../src/accounts/accounts';
import { createApp } from '../../src/http/app';
import { sealingKey } from '../../src/webhooks/seal';
import { WebhookService } from '../../src/webhooks/service';
import { fakeAppDeps } from '../helpers/app-deps';
import { freshPglite, freshPostgres, testDatabaseUrl, type TestDatabase } from '../helpers/db';

const url = testDatabaseUrl();
const DRIVERS: [string, () => Promise<TestDatabase>][] = [['PGlite', freshPglite], ...(url !== undefined ? [['PostgreSQL', () => freshPostgres(url)] as [string, () => Promise<TestDatabase>]] : [])];
const NAMES: Record<string, string[]> = { 'hooks.example.com': ['93.184.216.34'], 'internal.example.com': ['93.184.216.35', '10.0.0.5'] };

for (const [name, open] of DRIVERS) {
  describe(`the webhook routes on ${name}`, () => {
    let tdb: TestDatabase;
    let app: ReturnType<typeof createApp>;
    const accounts: Record<string, { id: string; email: string }> = {};
    beforeAll(async () => {
      tdb = await open();
      for (const k of ['mine', 'theirs']) accounts[k] = await createAccount(tdb.db, { email: `${k}@routes.test` });
      await tdb.db.insert(pools).values([
        { id: 'poolmine00001', accountId: accounts.mine!.id, name: 'm', type: 'http', region: 'us1', intervalS: 600, timeoutMs: 5000 },
        { id: 'pooltheirs001', accountId: accounts.theirs!.id, name: 't', type: 'http', region: 'us1', intervalS: 600, timeoutMs: 5000 },
      ]);
      const service = new WebhookService({ db: tdb.db, key: sealingKey('routes-secret-0123456789'), allowPrivateTargets: false, resolve: async (h) => NAMES[h] ?? [] });
      const deps = fakeAppDeps({ accounts: { findByApiKey: async (k) => accounts[k] ?? null, overview: async () => ({}) }, webhooks: service });
      // the request rate is not what these tests are about (the fuzz sends hundreds at once)
      app = createApp({ ...deps, limits: { ...deps.limits, rateLimitPerS: 1_000_000, rateLimitBurst: 2_000_000 } });
    });
    afterAll(async () => {
      await tdb?.cleanup();
    });

    const req = async (method: string, path: string, o: { key?: string; json?: unknown; body?: string; type?: string } = {}) => {
      const headers: Record<string, string> = {};
      if (o.key !== undefined) headers['x-api-key'] = o.key;
      const body = o.json !== undefined ? JSON.stringify(o.json) : o.body;
      if (body !== undefined) headers['content-type'] = o.type ?? 'application/json';
      const res = await app.handle(new Request(`http://127.0.0.1${path}`, { method, headers, ...(body !== undefined ? { body } : {}) }));
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: text === '' ? null : JSON.parse(text) };
    };
    const bad = (message: string) => ({ error: 'Invalid request', message });

    test('the life of an endpoint: create (201, Location, secret once), list, read, change, test (202), rotate, deliveries, delete (204)', async () => {
      const made = await req('POST', '/webhooks', { key: 'mine', json: { url: 'https://hooks.example.com/in', pools: ['poolmine00001'] } });
      expect(made.status).toBe(201);
      const id = made.body.id as string;
      expect(made.headers.get('location')).toBe(`/webhooks/${id}`);
      expect(made.headers.get('ratelimit-limit')).not.toBeNull();
      expect(made.body).toMatchObject({ url: 'https://hooks.example.com/in', events: ['pool.proxies_changed', 'pool.paused', 'pool.resumed'], pools: ['poolmine00001'], state: 'enabled', disabled_reason: null, last_success_at: null });
      expect(made.body.secret).toMatch(/^whsec_/);
      const listed = await req('GET', '/webhooks', { key: 'mine' });
      expect(listed.body.webhooks).toHaveLength(1);
      expect(listed.body.webhooks[0].secret).toBeUndefined();
      expect((await req('GET', `/webhooks/${id}`, { key: 'mine' })).body.id).toBe(id);
      const changed = await req('PATCH', `/webhooks/${id}`, { key: 'mine', json: { events: ['check.completed'], pools: null, state: 'disabled' } });
      expect(changed.body).toMatchObject({ events: ['check.completed'], pools: null, state: 'disabled', disabled_reason: 'disabled by its owner' });
      expect((await req('PATCH', `/webhooks/${id}`, { key: 'mine', json: { state: 'enabled' } })).body).toMatchObject({ state: 'enabled', disabled_reason: null });
      expect(await req('POST', `/webhooks/${id}/test`, { key: 'mine' })).toMatchObject({ status: 202, body: { id, event: 'webhook.test' } });
      const rotated = await req('POST', `/webhooks/${id}/rotate-secret`, { key: 'mine' });
      expect(rotated.status).toBe(200);
      expect(rotated.body.secret).not.toBe(made.body.secret);
      const d = await req('GET', `/webhooks/${id}/deliveries`, { key: 'mine' });
      expect(d.status).toBe(200);
      expect(d.body.deliveries).toHaveLength(1);
      expect(d.body.deliveries[0]).toMatchObject({ event: 'webhook.test', state: 'pending', attempts: [] });
      expect((await req('DELETE', `/webhooks/${id}`, { key: 'mine' })).status).toBe(204);
      expect((await req('GET', `/webhooks/${id}`, { key: 'mine' })).status).toBe(404);
    });

    test('bad input: a clear 400 for each rule', async () => {
      const post = (json: unknown) => req('POST', '/webhooks', { key: 'mine', json });
      expect(await post({ url: 'ftp://hooks.example.com/' })).toMatchObject({ status: 400, body: bad('url: expected an http or https URL') });
      expect(await post({})).toMatchObject({ status: 400, body: bad('url: required') });
      expect(await post({ url: `https://hooks.example.com/${'a'.repeat(2100)}` })).toMatchObject({ status: 400, body: bad('url: longer than 2048 characters') });
      const literal = await post({ url: 'http://127.0.0.1:8080/hook' });
      expect(literal.status).toBe(400);
      expect(literal.body.message).toBe('url: 127.0.0.1 is in a private, loopback or reserved range; refused unless the server sets ALLOW_PRIVATE_TARGETS=true');
      const named = await post({ url: 'https://internal.example.com/hook' });
      expect(named.body.message).toBe('url: internal.example.com resolves to 10.0.0.5, a private, loopback or reserved address; refused unless the server sets ALLOW_PRIVATE_TARGETS=true');
      expect(await post({ url: 'https://nowhere.example.com/' })).toMatchObject({ status: 400, body: bad('url: nowhere.example.com did not resolve') });
      expect(await post({ url: 'https://hooks.example.com/', events: ['pool.deleted'] })).toMatchObject({
        status: 400,
        body: bad('events[0]: unknown event "pool.deleted"; expected one of pool.proxies_changed, pool.paused, pool.resumed, check.completed'),
      });
      expect(await post({ url: 'https://hooks.example.com/', pools: ['poolmine00001', 'pooltheirs001'] })).toMatchObject({ status: 400, body: bad('pools[1]: no pool pooltheirs001 in this account') });
      expect(await req('POST', '/webhooks', { key: 'mine', body: '{"url":' })).toMatchObject({ status: 400 });
      expect(await req('POST', '/webhooks', { key: 'mine', body: 'url=x', type: 'text/plain' })).toMatchObject({ status: 415 });
      expect(await req('POST', '/webhooks', { json: { url: 'https://hooks.example.com/' } })).toMatchObject({ status: 401 });
      expect((await req('GET', '/webhooks', { key: 'mine' })).body.webhooks).toEqual([]); // nothing of it was written
    });

    test('over 10 endpoints: 429 with limit, no Retry-After', async () => {
      for (let i = 0; i < 10; i++) expect((await req('POST', '/webhooks', { key: 'theirs', json: { url: `https://hooks.example.com/${i}` } })).status).toBe(201);
      const over = await req('POST', '/webhooks', { key: 'theirs', json: { url: 'https://hooks.example.com/x' } });
      expect(over).toMatchObject({ status: 429, body: { error: 'Too many requests', message: 'At most 10 webhooks per account; delete one to add another', limit: 10 } });
      expect(over.headers.get('retry-after')).toBeNull();
    });

    test("another account's endpoint is 404 on every route, and is left as it was", async () => {
      const theirs = (await req('GET', '/webhooks', { key: 'theirs' })).body.webhooks[0];
      const id = theirs.id as string;
      const nf = { status: 404, body: { error: 'Not found', message: 'No webhook with this id in this account' } };
      expect(await req('GET', `/webhooks/${id}`, { key: 'mine' })).toMatchObject(nf);
      expect(await req('PATCH', `/webhooks/${id}`, { key: 'mine', json: { state: 'disabled' } })).toMatchObject(nf);
      expect(await req('POST', `/webhooks/${id}/test`, { key: 'mine' })).toMatchObject(nf);
      expect(await req('POST', `/webhooks/${id}/rotate-secret`, { key: 'mine' })).toMatchObject(nf);
      expect(await req('GET', `/webhooks/${id}/deliveries`, { key: 'mine' })).toMatchObject(nf);
      expect(await req('DELETE', `/webhooks/${id}`, { key: 'mine' })).toMatchObject(nf);
      expect(await req('GET', '/webhooks/not-an-id', { key: 'mine' })).toMatchObject(nf);
      expect((await req('GET', `/webhooks/${id}`, { key: 'theirs' })).body).toEqual(theirs);
      expect((await req('GET', `/webhooks/${id}/deliveries`, { key: 'theirs' })).body.deliveries).toEqual([]);
    });

    test('fuzzed bodies and ids: a JSON answer of 201, 200, 400, 404 or 429, never a 500', async () => {
      const id = (await req('GET', '/webhooks', { key: 'theirs' })).body.webhooks[0].id as string;
      const field = fc.oneof(fc.anything(), fc.constantFrom('https://hooks.example.com/f', 'http://10.0.0.1/', 'https://internal.example.com/', ['pool.paused'], ['x'], null, ['poolmine00001'], ['pooltheirs001'], 'enabled', 'disabled'));
      const body = fc.oneof(fc.json(), fc.record({ url: field, events: field, pools: field, state: field }, { requiredKeys: [] }).map((o) => JSON.stringify(o)));
      await fc.assert(
        fc.asyncProperty(body, fc.constantFrom('POST', 'PATCH'), fc.constantFrom(id, 'wh_aaaaaaaaaaaaaaaaaaaa', 'wh_AAAAAAAAAAAAAAAAAAAA', 'x'), async (text, method, target) => {
          const r = await req(method, method === 'POST' ? '/webhooks' : `/webhooks/${target}`, { key: 'theirs', body: text });
          expect([200, 201, 400, 404, 429]).toContain(r.status);
          if (r.status === 429) expect(r.body.limit).toBe(10); // the endpoints' limit, not the request rate
          expect(typeof r.body.message).toBe(r.status < 300 ? 'undefined' : 'string');
        }),
        { numRuns: 300 },
      );
    });

    test('PATCH: nothing to change is 400; a wrong method is 405 with Allow', async () => {
      const id = (await req('GET', '/webhooks', { key: 'theirs' })).body.webhooks[0].id as string;
      expect(await req('PATCH', `/webhooks/${id}`, { key: 'theirs', json: { stat: 'enabled' } })).toMatchObject({ status: 400, body: bad('body: expected at least one of url, events, pools, state') });
      expect(await req('PATCH', `/webhooks/${id}`, { key: 'theirs', json: { url: 'http://10.1.1.1/' } })).toMatchObject({ status: 400 });
      const wrong = await req('PUT', `/webhooks/${id}`, { key: 'theirs' });
      expect(wrong.status).toBe(405);
      expect(wrong.headers.get('allow')).toBe('GET, PATCH, DELETE');
      expect((await req('GET', `/webhooks/${id}/test`, { key: 'theirs' })).status).toBe(405);
    });

    test('the routes declare their schemas, the contract\'s order holds ahead of them: 401, then 404 for an id that cannot be a webhook\'s, then 415 / the body\'s exact 400; null is absent', async () => {
      const id = (await req('GET', '/webhooks', { key: 'theirs' })).body.webhooks[0].id as string;
      const nf = { status: 404, body: { error: 'Not found', message: 'No webhook with this id in this account' } };
      expect((await req('GET', '/webhooks/not-an-id')).status).toBe(401);
      expect((await req('PATCH', '/webhooks/not-an-id', { json: { events: 'x' } })).status).toBe(401);
      expect(await req('PATCH', '/webhooks/not-an-id', { key: 'theirs', body: 'x', type: 'text/plain' })).toMatchObject(nf);
      expect(await req('DELETE', '/webhooks/not-an-id', { key: 'theirs' })).toMatchObject(nf);
      expect((await req('PATCH', `/webhooks/${id}`, { key: 'theirs', body: 'x', type: 'text/plain' })).status).toBe(415);
      expect(await req('PATCH', `/webhooks/${id}`, { key: 'theirs', json: {} })).toMatchObject({ status: 400, body: bad('body: expected at least one of url, events, pools, state') });
      expect(await req('PATCH', `/webhooks/${id}`, { key: 'theirs', json: { events: 'x' } })).toMatchObject({ status: 400 });
      expect(await req('POST', '/webhooks', { key: 'theirs', json: [] })).toMatchObject({ status: 400, body: bad('body: expected a JSON object') });
      const changed = await req('PATCH', `/webhooks/${id}`, { key: 'theirs', json: { url: null, events: null, state: 'disabled' } });
      expect(changed).toMatchObject({ status: 200, body: { state: 'disabled' } });
      expect((await req('PATCH', `/webhooks/${id}`, { key: 'theirs', json: { pools: null, state: 'enabled' } })).body).toMatchObject({ pools: null, state: 'enabled' });
      expect((await req('PATCH', `/webhooks/${id}`, { key: 'theirs', json: { state: 'enabled', colour: 'blue' } })).status).toBe(200); // a member the contract does not name is ignored
    });
  });
}
