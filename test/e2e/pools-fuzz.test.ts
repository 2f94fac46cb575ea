/**
 * Property-based fuzzing of the pool routes of the real service (real
 * sockets, startTestService), in the style of http-fuzz.test.ts: random
 * methods on /pools, /pools/{id} and /pools/{id}/proxies (ids of real pools,
 * of another account's pool, well-formed unknown ones and junk), random
 * query strings over the listing's parameters (repeated keys, junk values,
 * real and forged cursors), Content-Type variants, good and bad keys, and
 * bodies built from the pool fields with any JSON in them.
 *
 * Properties, for every request:
 * - never a 5xx and never a hang;
 * - every answer matches the OpenAPI document the service serves (status
 *   declared for the operation, media type, JSON body against its schema):
 *   so every error is the house's JSON error body;
 * - a pool of the other account is never changed or shown (its object
 *   reads the same after the run);
 * - nothing is charged: /me's balance and history count are the same after
 *   the run; the server is healthy afterwards.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import fc from 'fast-check';
import { checkerFor, type OpenApiResponseChecker } from '../helpers/openapi-check';
import { failed, seedVerdicts, working } from '../helpers/pool-seed';
import { call, startTestService, type TestService } from '../helpers/service';

const DEADLINE_MS = 10_000;
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);

let t: TestService;
let checker: OpenApiResponseChecker;
let otherKey = '';
let otherPool = '';
const mine: string[] = [];

beforeAll(async () => {
  // the fuzzer is about the surface: the request rate (429) would hide it after 40 requests
  t = await startTestService({ RATE_LIMIT_PER_S: '1000000', MAX_PROXIES_PER_POOL: '20', MAX_POOLS_PER_ACCOUNT: '30', MAX_BODY_BYTES: '32768', POOL_ROUNDS: 'false' });
  checker = await checkerFor(t.url);
  const admin = { Authorization: `Bearer ${t.service.config.http.adminToken}` };
  otherKey = (await call(`${t.adminUrl}/admin/create-account`, { method: 'POST', headers: admin, json: { email: 'other@example.com', checks: 10 } })).body.apiKey;
  otherPool = (await call(`${t.url}/pools`, { method: 'POST', headers: { 'x-api-key': otherKey }, json: { name: 'theirs', proxies: ['127.0.0.1:1'] } })).body.id;
  for (const type of ['http', 'auto']) {
    const id = (await call(`${t.url}/pools`, { method: 'POST', headers: { 'x-api-key': t.key }, json: { name: type, type, proxies: Array.from({ length: 8 }, (_, i) => `127.0.5.${i}:80`) } })).body.id as string;
    await seedVerdicts(t.service.database.db, id, { poolType: type as 'http', intervalS: 600, nowMs: Date.now(), plan: (_r, i) => (i === 7 ? null : [{ probe: i % 3 === 0 ? failed() : working(40 + i, { protocols: ['http'] }) }]) });
    mine.push(id);
  }
}, 60_000);
afterAll(async () => {
  await t?.stop();
}, 30_000);

const idArb = fc.oneof(
  fc.constantFrom(...[0, 1].map((i) => () => mine[i]!), () => otherPool, () => 'abcdefghijklmnopqrst'),
  fc.stringMatching(/^[a-z0-9]{10,32}$/).map((s) => () => s),
  fc.oneof(fc.constantFrom('', '%00', '..', '%2F', 'ABCDEFGHIJKL', 'x'.repeat(40), '__proto__', 'constructor'), fc.string({ maxLength: 12 }).map(encodeURIComponent)).map((s) => () => s),
);
const pathArb = fc.oneof(
  { weight: 2, arbitrary: fc.constant(() => '/pools') },
  { weight: 3, arbitrary: idArb.map((id) => () => `/pools/${id()}`) },
  { weight: 4, arbitrary: idArb.map((id) => () => `/pools/${id()}/proxies`) },
  { weight: 1, arbitrary: fc.tuple(idArb, fc.constantFrom('/', '/x', '/proxies/', '//proxies')).map(([id, tail]) => () => `/pools/${id()}${tail}`) },
);

const QUERY_KEYS = ['status', 'country', 'anonymity', 'type', 'https', 'max_latency_ms', 'min_uptime', 'sort', 'limit', 'cursor', 'format'];
const queryValue = fc.oneof(
  fc.constantFrom('working', 'failed', 'unchecked', 'all', 'DE', 'de', 'elite', 'http', 'socks5', 'auto', 'true', 'false', '0', '1', '0.5', '.5', '100', '10000', '10001', '-1', '1e3'),
  fc.constantFrom('latency', 'uptime', 'checked', 'json', 'txt', 'csv', 'xml', ''),
  fc.constantFrom('WzEsImxhdGVuY3kiLDEsIjEwMCJd', 'WzEsInVwdGltZSIsMSwiLTEiXQ', 'WzIsImxhdGVuY3kiLDEsIjEwMCJd', 'WzEsImxhdGVuY3kiLDAsIjEwMCJd', 'bm9wZQ'),
  fc.string({ unit: 'grapheme', maxLength: 16 }).map(encodeURIComponent),
  fc.integer({ min: 250, max: 3000 }).map((n) => 'x'.repeat(n)),
);
const query = fc
  .array(fc.tuple(fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...QUERY_KEYS) }, { weight: 1, arbitrary: fc.string({ maxLength: 6 }).map(encodeURIComponent) }), queryValue), { maxLength: 5 })
  .map((pairs) => (pairs.length === 0 ? '' : `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`));

const field = fc.oneof(fc.anything({ maxDepth: 2 }), fc.constantFrom('x', 'active', 'paused', 60, 600, 5000, 86_400, true, null, ['127.0.0.1:9'], ['127.0.5.1:80'], 'us1', 'auto'));
const addresses = fc.array(fc.oneof(fc.constantFrom('127.0.0.1:9', '127.0.5.2:80', 'u:p@127.0.0.2:8', '127.0.0.3:7:u:p', 'junk', ''), fc.string({ maxLength: 20 }), fc.integer()), { maxLength: 30 });
const body = fc.oneof(
  fc.constant(undefined),
  fc.json({ maxDepth: 3 }),
  fc
    .record(
      {
        name: fc.oneof(fc.string({ maxLength: 120 }), field),
        proxies: fc.oneof(addresses, field),
        text: fc.oneof(addresses.map((a) => a.join('\n')), field),
        type: field,
        region: fc.oneof(fc.constantFrom('us1', 'de1', 'test1'), field),
        interval_s: field,
        timeout: field,
        https: field,
        state: field,
        add: fc.oneof(addresses, field),
        remove: fc.oneof(addresses, field),
        customUrls: fc.oneof(fc.array(fc.record({ url: fc.oneof(fc.webUrl(), field) }), { maxLength: 3 }), field),
        sources: fc.oneof(fc.array(fc.record({ url: fc.oneof(fc.webUrl(), field), every_s: field }, { requiredKeys: [] }), { maxLength: 12 }), field),
      },
      { requiredKeys: [] },
    )
    .map((o) => JSON.stringify(o)),
  fc.constantFrom('{', '[', 'null', '{"name":"x","proxies":[', '{"__proto__":{"name":"x"}}'),
  fc.uint8Array({ maxLength: 200 }),
  fc.integer({ min: 33_000, max: 40_000 }).map((n) => JSON.stringify({ name: 'big', text: '#'.repeat(n) })),
);
const contentType = fc.constantFrom(undefined, 'application/json', 'application/json; charset=utf-8', 'application/merge-patch+json', 'text/plain', 'application/x-www-form-urlencoded', '');
// only our key or none: the other account's pool is a target our key must not reach
const auth = fc.constantFrom<'good' | 'none' | 'bad'>('good', 'good', 'good', 'good', 'none', 'bad');
const method = fc.constantFrom('GET', 'GET', 'POST', 'POST', 'PATCH', 'PATCH', 'DELETE', 'PUT', 'HEAD');

const request = fc.record({ method, path: pathArb, query, contentType, auth, body });

type FuzzRequest = typeof request extends fc.Arbitrary<infer R> ? R : never;

async function send(r: FuzzRequest) {
  const url = `${t.url}${r.path()}${r.query}`;
  const headers: Record<string, string> = {};
  if (r.contentType !== undefined) headers['content-type'] = r.contentType;
  if (r.auth === 'good') headers['x-api-key'] = t.key;
  if (r.auth === 'bad') headers['x-api-key'] = 'pc_nope';
  const b = r.method === 'GET' || r.method === 'HEAD' ? undefined : r.body;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${r.method} ${url}: no answer within ${DEADLINE_MS} ms`)), DEADLINE_MS);
  });
  try {
    return await Promise.race([
      (async () => {
        const res = await fetch(url, { method: r.method, headers, ...(b !== undefined ? { body: b } : {}) });
        return { url, method: r.method, status: res.status, contentType: res.headers.get('content-type'), text: await res.text() };
      })(),
      deadline,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

async function account() {
  const me = (await call(`${t.url}/me`, { headers: { 'x-api-key': t.key } })).body;
  return { checks: me.user.checks, history: me.history_count };
}

test(
  'pool routes: no 5xx, every answer as the OpenAPI document says, the other account untouched, nothing charged, healthy after',
  async () => {
    const statuses = new Set<number>();
    const before = await account();
    const theirs = (await call(`${t.url}/pools/${otherPool}`, { headers: { 'x-api-key': otherKey } })).body;
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const a = await send(r);
        statuses.add(a.status);
        if (a.status >= 500) throw new Error(`${a.method} ${a.url}: ${a.status} ${a.text.slice(0, 300)}`);
        if (r.method === 'HEAD') return; // no body to check
        // a path the WHATWG URL parser rewrote (e.g. "/pools/.." -> "/") is another route's business
        const u = new URL(a.url);
        if (!u.pathname.startsWith('/pools')) return;
        // the router reads "/pools/x/" as "/pools/x" (as "/check/" as "/check"): checked as the route it reached
        if (/[^/]\/$/.test(u.pathname)) u.pathname = u.pathname.slice(0, -1);
        checker.assert({ method: a.method, url: u.toString(), status: a.status, contentType: a.contentType, text: a.text });
      }),
      { numRuns: RUNS, ...(process.env.FUZZ_SEED !== undefined ? { seed: Number(process.env.FUZZ_SEED) } : {}) },
    );
    // past every gate: successes, validation, auth, not found, methods, media type, limits
    expect([...statuses]).toEqual(expect.arrayContaining([200, 400, 401, 404, 405, 415]));
    expect(await account()).toEqual(before);
    const after = (await call(`${t.url}/pools/${otherPool}`, { headers: { 'x-api-key': otherKey } })).body;
    expect({ ...after, next_due_at: null }).toEqual({ ...theirs, next_due_at: null });
    const health = await call(`${t.url}/health`);
    expect([health.status, health.body.status]).toEqual([200, 'ok']);
  },
  120_000,
);
