/**
 * The pool routes declare their schemas (src/http/routes/pools.ts; the
 * contract's bodies as read, contract/pools.ts poolBodiesAsRead), in the real
 * app (createApp, no sockets) over a fake pools port: the contract's order
 * still comes first (401, then 404 for an id that cannot be a pool's, 415,
 * the body's exact 400), null is absent, an entry that is no string is an
 * invalid line, and `interval_s` is bounded by this server's
 * POOL_MIN_INTERVAL_S, not by the default the document states.
 */
import { beforeEach, describe, expect, test } from 'bun:test';
import { createApp } from '../../src/http/app';
import type { AppDeps } from '../../src/http/context';
import { DEFAULT_POOL_LIMITS } from '../../src/pools/limits';
import { fakeAppDeps } from '../helpers/app-deps';

const KEY = 'pc_pool-routes-key';
const POOL = 'pool0000000001';
const made: unknown[] = [];
const patched: unknown[] = [];
const pool = { id: POOL, type: 'http', interval_s: 5, state: 'active', counts: { total: 1, working: 0, failed: 0, unchecked: 1 } };

function deps(): AppDeps {
  const base = fakeAppDeps();
  return fakeAppDeps(
    {
      accounts: { findByApiKey: async (k) => (k === KEY ? { id: 'acc-1', email: 'a@b.io' } : null), overview: async () => ({}) },
      pools: {
        ...base.pools,
        limits: { ...DEFAULT_POOL_LIMITS, minIntervalS: 5 },
        create: async (_account, req) => {
          made.push(req);
          return { pool, added: req.proxies.length } as never;
        },
        update: async (_account, id, patch) => {
          patched.push(patch);
          return id === POOL ? ({ pool, added: 0, removed: 0 } as never) : null;
        },
      },
    },
    'the pool routes',
  );
}

const app = createApp(deps());
async function call(method: string, path: string, o: { key?: boolean; json?: unknown; body?: string; type?: string } = {}) {
  const headers: Record<string, string> = {};
  if (o.key !== false) headers['x-api-key'] = KEY;
  const body = o.json !== undefined ? JSON.stringify(o.json) : o.body;
  if (body !== undefined) headers['content-type'] = o.type ?? 'application/json';
  const res = await app.handle(new Request(`http://127.0.0.1${path}`, { method, headers, ...(body !== undefined ? { body } : {}) }));
  const text = await res.text();
  return { status: res.status, body: text === '' ? null : JSON.parse(text) };
}
const bad = (message: string) => ({ error: 'Invalid request', message });
const notFound = { error: 'Not found', message: 'No pool with this id in this account' };

beforeEach(() => {
  made.length = 0;
  patched.length = 0;
});

describe('the pool routes declare their schemas', () => {
  test('the order: 401, then 404 for an id that cannot be a pool\'s, then 415, then the body\'s exact 400', async () => {
    expect((await call('PATCH', '/pools/NOT-AN-ID', { key: false, json: { interval_s: 'x' } })).status).toBe(401);
    expect((await call('GET', '/pools/NOT-AN-ID', { key: false })).status).toBe(401);
    expect(await call('GET', '/pools/NOT-AN-ID')).toEqual({ status: 404, body: notFound });
    expect(await call('PATCH', '/pools/NOT-AN-ID', { body: 'x', type: 'text/plain' })).toEqual({ status: 404, body: notFound });
    expect((await call('PATCH', `/pools/${POOL}`, { body: 'x', type: 'text/plain' })).status).toBe(415);
    expect(await call('PATCH', `/pools/${POOL}`, { json: { interval_s: 'x' } })).toEqual({ status: 400, body: bad('interval_s: expected an integer from 5 (server setting POOL_MIN_INTERVAL_S) to 86400') });
    expect(await call('POST', '/pools', { json: { proxies: ['1.2.3.4:80'] } })).toEqual({ status: 400, body: bad('name: required') });
    expect(await call('POST', '/pools', { json: 'x' })).toEqual({ status: 400, body: bad('body: expected a JSON object') });
    expect(made).toEqual([]);
    expect(patched).toEqual([]);
  });

  test('null is absent; an entry that is no string is an invalid line; interval_s from this server\'s minimum', async () => {
    const r = await call('POST', '/pools', { json: { name: 'p', proxies: ['1.2.3.4:80', 7], interval_s: 5, region: null, customUrls: [{ url: 'http://a.example/ü', requiredText: null }] } });
    expect(r.status).toBe(201);
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({ totalInvalid: 1, settings: { intervalS: 5, region: 'us1', customUrls: [{ url: 'http://a.example/ü' }] } });
    const p = await call('PATCH', `/pools/${POOL}`, { json: { name: null, state: 'paused', add: [null, '1.2.3.5:80'] } });
    expect(p.status).toBe(200);
    expect(patched[0]).toMatchObject({ state: 'paused', add: { totalInvalid: 1 } });
  });
});

test('a member the contract does not name is ignored (POST and PATCH)', async () => {
  expect((await call('POST', '/pools', { json: { name: 'p', proxies: ['1.2.3.4:80'], colour: 'blue' } })).status).toBe(201);
  expect((await call('PATCH', `/pools/${POOL}`, { json: { state: 'active', colour: 'blue' } })).status).toBe(200);
});
