/**
 * The pool routes end to end, through the real service on 127.0.0.1 (every
 * response checked against the served OpenAPI document): the life of a pool
 * (create, list, read, change, list its proxies in json / txt / csv with
 * cursors, delete), the filters and sorts over proxies with verdicts
 * (written as the rounds will write them: test/helpers/pool-seed.ts),
 * another account's pools (404, never 403, nothing changed), every bad
 * input on every route (the house's error bodies), the limits, the request
 * rate, and that nothing of it is charged.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NEXT_CURSOR_HEADER } from '../../src/http/routes/pools';
import { POOL_CSV_COLUMNS } from '../../src/pools/render';
import { checkedCall as call, checkedFetch } from '../helpers/openapi-check';
import { failed, seedVerdicts, working } from '../helpers/pool-seed';
import { call as rawCall, startTestService, type TestService } from '../helpers/service';

let t: TestService;
let otherKey = '';
// the lists the pools' sources follow (loopback: the test service allows private targets)
let listServer: Server;
let lists = '';
const LIST_BODIES: Record<string, string> = { '/empty.txt': '# nothing yet\n', '/two.txt': '127.0.2.1:3128\njunk\n127.0.2.2:8080\n' };

// 50 proxies per pool, so 100 in all of an account's pools
const LIMITS = { POOL_MIN_INTERVAL_S: '5', MAX_POOLS_PER_ACCOUNT: '4', MAX_PROXIES_PER_POOL: '50' };

beforeAll(async () => {
  listServer = createServer((req, res) => {
    const body = LIST_BODIES[req.url ?? ''];
    if (body === undefined) res.writeHead(404).end();
    else res.end(body);
  });
  await new Promise<void>((r) => listServer.listen(0, '127.0.0.1', r));
  lists = `http://127.0.0.1:${(listServer.address() as AddressInfo).port}`;
  t = await startTestService({ ...LIMITS, MAX_BODY_BYTES: '65536', MAX_CUSTOM_URLS: '1', RATE_LIMIT_PER_S: '100000', POOL_ROUNDS: 'false' /* verdicts seeded, nothing charged: the rounds are pools-rounds.test.ts's */ });
  const admin = { Authorization: `Bearer ${t.service.config.http.adminToken}` };
  otherKey = (await rawCall(`${t.adminUrl}/admin/create-account`, { method: 'POST', headers: admin, json: { email: 'other@example.com', checks: 10 } })).body.apiKey;
}, 60_000);
afterAll(async () => {
  await t?.stop();
  listServer?.close();
}, 30_000);

const key = () => ({ 'x-api-key': t.key });
const other = () => ({ 'x-api-key': otherKey });
const post = (json: unknown, headers = key()) => call(`${t.url}/pools`, { method: 'POST', headers, json });
const patch = (id: string, json: unknown, headers = key()) => call(`${t.url}/pools/${id}`, { method: 'PATCH', headers, json });
const get = (path: string, headers: Record<string, string> = key()) => call(`${t.url}${path}`, { headers });
const del = (id: string, headers = key()) => call(`${t.url}/pools/${id}`, { method: 'DELETE', headers });
const bad = (message: string) => ({ error: 'Invalid request', message });
const balance = async () => (await get('/me')).body.user.checks as number;
/** The pool once its first source has been fetched (the service fetches a new source at once). */
const fetched = async (id: string): Promise<Record<string, any>> => {
  for (let i = 0; i < 200; i++) {
    const p = (await get(`/pools/${id}`)).body;
    if (p.sources[0]?.last_fetch !== null) return p;
    await Bun.sleep(25);
  }
  throw new Error(`pool ${id}: its source was not fetched within 5 s`);
};
const deleteAll = async () => {
  for (const p of (await get('/pools')).body.pools) expect((await del(p.id)).status).toBe(204);
};

describe('the life of a pool', () => {
  test('create (201, Location, submitted), list, read, change, list proxies in three formats, delete (204); nothing charged', async () => {
    const before = await balance();
    const r = await post({
      name: 'scraper list',
      proxies: ['127.0.0.1:8080', 'user:pa ss@127.0.0.2:3128', '127.0.0.1:8080', 'junk'],
      text: '# mine\n127.0.0.3:1080:u:p\n\nhttp://127.0.0.1:8080\n',
      interval_s: 30,
      timeout: 3000,
      customUrls: [{ url: 'https://example.com/' }],
      sources: [{ url: `${lists}/empty.txt`, every_s: 900 }],
    });
    expect(r.status).toBe(201);
    const id = r.body.id as string;
    expect(id).toMatch(/^[a-z0-9]{20}$/);
    expect(r.headers.get('location')).toBe(`/pools/${id}`);
    expect(r.headers.get('ratelimit-limit')).toBe('200000'); // twice RATE_LIMIT_PER_S
    expect(r.body).toMatchObject({
      name: 'scraper list',
      type: 'http',
      region: 'us1',
      interval_s: 30,
      timeout: 3000,
      https: true,
      state: 'active',
      paused_reason: null,
      counts: { total: 3, working: 0, failed: 0, unchecked: 3 },
      last_round_at: null,
      checks_last_24h: 0,
      customUrls: [{ url: 'https://example.com/', requiredStatusCodes: [200], caseSensitive: false }],
      sources: [{ url: `${lists}/empty.txt`, every_s: 900 }],
      submitted: { added: 3, removed: 0, total_invalid: 1, total_duplicates: 2 },
    });
    // 3 proxies every 30 s cost 8 640 checks a day: warned when the account has fewer
    expect(r.body.warnings.map((w: { code: string }) => w.code)).toEqual(before < 8640 ? ['balance_runs_out'] : []);
    const { submitted: _, warnings: _w, ...created } = r.body;
    // its source is fetched at once (an empty list: nothing added); the rest is as created
    const pool = await fetched(id);
    expect(pool.sources).toEqual([
      { url: `${lists}/empty.txt`, every_s: 900, next_fetch_at: expect.any(String), last_fetch: { at: expect.any(String), error: null, found: 0, invalid: 0, added: 0, not_added: 0, limit: null } },
    ]);
    expect(pool).toEqual({ ...created, sources: pool.sources });
    expect((await get('/pools')).body).toEqual({ pools: [pool] });

    // every proxy, as given: txt keeps the forms and the credentials
    const txt = await checkedFetch(`${t.url}/pools/${id}/proxies?status=all&format=txt`, { headers: key() });
    expect(txt.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(txt.headers.get(NEXT_CURSOR_HEADER)).toBeNull();
    // (a space in a url_auth password is written %20, as the result downloads write it: the list parser reads it back the same)
    expect((await txt.text()).split('\n')).toEqual(['127.0.0.1:8080', 'user:pa%20ss@127.0.0.2:3128', '127.0.0.3:1080:u:p', '']);
    // working is the default: none yet
    expect((await get(`/pools/${id}/proxies`)).body).toEqual({ proxies: [], next_cursor: null });
    const all = await get(`/pools/${id}/proxies?status=all`);
    expect(all.body.proxies[1]).toMatchObject({ proxy: { host: '127.0.0.2', port: 3128, hasAuth: true, username: 'user', password: 'pa ss' }, status: 'unchecked', checks: 0, uptime: { h1: null, h24: null, d7: null } });
    const csv = await checkedFetch(`${t.url}/pools/${id}/proxies?status=all&format=csv`, { headers: key() });
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const lines = (await csv.text()).split('\r\n');
    expect(lines[0]).toBe(POOL_CSV_COLUMNS.join(','));
    expect(lines).toHaveLength(5);
    expect(lines[2]).toStartWith('127.0.0.2,3128,true,user,pa ss,unchecked,http,');

    // change: settings, remove one, add two (one already there)
    const p = await patch(id, { name: 'renamed', interval_s: 60, https: false, remove: ['127.0.0.3:1080:u:p', '10.9.9.9:1'], add: ['127.0.0.4:80', '127.0.0.1:8080', 'x'] });
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({ name: 'renamed', interval_s: 60, https: false, counts: { total: 3 }, submitted: { added: 1, removed: 1, total_invalid: 1, total_duplicates: 0 } });
    const paused = await patch(id, { state: 'paused' });
    expect(paused.body).toMatchObject({ state: 'paused', paused_reason: 'owner', next_due_at: null });
    const resumed = await patch(id, { state: 'active' });
    expect(resumed.body).toMatchObject({ state: 'active', paused_reason: null });
    expect(typeof resumed.body.next_due_at).toBe('string');

    const d = await del(id);
    expect([d.status, d.text, d.headers.get('ratelimit-limit')]).toEqual([204, '', '200000']);
    expect((await get(`/pools/${id}`)).status).toBe(404);
    expect((await get('/pools')).body).toEqual({ pools: [] });
    expect(await balance()).toBe(before);
  });

  test('an auto pool, from text only; a pool from sources only (no proxies yet)', async () => {
    const a = await post({ name: 'auto', text: '127.0.0.9:1080', type: 'auto' });
    expect(a.body).toMatchObject({ type: 'auto', counts: { total: 1 } });
    const proxies = (await get(`/pools/${a.body.id}/proxies?status=unchecked`)).body.proxies;
    expect(proxies[0]).toMatchObject({ type: null, protocols: [] });
    const s = await post({ name: 'followed', sources: [{ url: `${lists}/two.txt` }] });
    expect(s.body).toMatchObject({ counts: { total: 0 }, sources: [{ url: `${lists}/two.txt`, every_s: 3600, last_fetch: null }], next_due_at: null, submitted: { added: 0 } });
    // fetched at once: its two addresses join, due at once; its junk line is counted
    const f = await fetched(s.body.id);
    expect(f).toMatchObject({ counts: { total: 2, unchecked: 2 }, sources: [{ last_fetch: { error: null, found: 2, invalid: 1, added: 2, not_added: 0, limit: null } }] });
    const txt = await checkedFetch(`${t.url}/pools/${s.body.id}/proxies?status=all&format=txt`, { headers: key() });
    expect((await txt.text()).split('\n').sort()).toEqual(['', '127.0.2.1:3128', '127.0.2.2:8080']);
    await deleteAll();
  });
});

describe('the proxies listing over verdicts', () => {
  let id = '';
  beforeAll(async () => {
    const hosts = Array.from({ length: 12 }, (_, i) => `127.0.1.${i + 1}:${8000 + i}`);
    id = (await post({ name: 'seeded', proxies: [...hosts, 'u:p@127.0.1.99:9999'], interval_s: 60 })).body.id;
    const de = { country: 'DE', country_name: 'Germany', location: 'Berlin', isp: 'Example', asn: 64500, coordinates: null };
    const us = { country: 'US', country_name: 'United States', location: 'Ashburn', isp: 'Other', asn: 64501, coordinates: null };
    await seedVerdicts(t.service.database.db, id, {
      poolType: 'http',
      intervalS: 60,
      nowMs: Date.now(),
      plan: (_row, i) => {
        if (i === 12) return null; // the one with credentials stays unchecked
        if (i >= 9) return [{ probe: working(100) }, { probe: failed() }]; // up, then down
        // working; latency 50 + 10 i; every third transparent; the first six in DE; proxy i failed i % 4 of 4 earlier checks
        const earlier = Array.from({ length: 4 }, (_, k) => ({ probe: k < i % 4 ? failed() : working(50 + 10 * i) }));
        const last = { probe: working(50 + 10 * i, { anonymity: i % 3 === 0 ? 'transparent' : 'elite', https: i % 2 === 0 }), geo: i < 6 ? de : us };
        return [...earlier, last];
      },
    });
  });

  test('the pool object counts the verdicts', async () => {
    expect((await get(`/pools/${id}`)).body.counts).toEqual({ total: 13, working: 9, failed: 3, unchecked: 1 });
  });

  test('working by latency (default), filters, sorts; txt of working is what a scraper fetches', async () => {
    const w = await get(`/pools/${id}/proxies`);
    expect(w.body.proxies.map((p: { proxy: { port: number } }) => p.proxy.port)).toEqual([8000, 8001, 8002, 8003, 8004, 8005, 8006, 8007, 8008]);
    expect(w.body.proxies[1]).toMatchObject({ status: 'working', latency_p50_ms: 60, responseTime: '60.00 ms', country: 'DE', checks: 5, anonymity: 'elite', https: false });
    expect(w.body.proxies[1].uptime.h24).toBe(0.8);
    const txt = await checkedFetch(`${t.url}/pools/${id}/proxies?format=txt&country=de&anonymity=elite`, { headers: key() });
    expect(await txt.text()).toBe('127.0.1.2:8001\n127.0.1.3:8002\n127.0.1.5:8004\n127.0.1.6:8005\n');
    const ports = async (q: string) => (await get(`/pools/${id}/proxies?${q}`)).body.proxies.map((p: { proxy: { port: number } }) => p.proxy.port);
    expect(await ports('https=true&max_latency_ms=100')).toEqual([8000, 8002, 8004]);
    expect(await ports('min_uptime=1')).toEqual([8000, 8004, 8008]);
    expect(await ports('sort=uptime&limit=3')).toEqual([8008, 8004, 8000]);
    expect(await ports('status=failed')).toEqual([8009, 8010, 8011]);
    expect(await ports('status=unchecked')).toEqual([9999]);
    expect(await ports('type=socks5')).toEqual([]);
    const failedOne = (await get(`/pools/${id}/proxies?status=failed&limit=1`)).body.proxies[0];
    expect(failedOne).toMatchObject({ status: 'failed', error: { code: 'timeout', message: 'no answer within the timeout' }, anonymity: 'elite' });
  });

  test('cursors: json next_cursor and the txt header page through every proxy once', async () => {
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const q: string = `status=all&sort=checked&limit=5${cursor === null ? '' : `&cursor=${cursor}`}`;
      const page = await get(`/pools/${id}/proxies?${q}`);
      seen.push(...page.body.proxies.map((p: { proxy: { port: number } }) => p.proxy.port));
      cursor = page.body.next_cursor;
    } while (cursor !== null);
    expect(seen.sort()).toEqual([...Array.from({ length: 12 }, (_, i) => 8000 + i), 9999]);
    const lines: string[] = [];
    let header: string | null = null;
    do {
      const res = await checkedFetch(`${t.url}/pools/${id}/proxies?format=txt&limit=4${header === null ? '' : `&cursor=${header}`}`, { headers: key() });
      lines.push(...(await res.text()).split('\n').filter((l) => l !== ''));
      header = res.headers.get(NEXT_CURSOR_HEADER);
    } while (header !== null);
    expect(lines).toHaveLength(9);
  });
});

describe('another account', () => {
  test('sees no pool of ours: 404 on every route, never 403; nothing changed', async () => {
    const id = (await post({ name: 'mine', proxies: ['127.0.0.1:1'] })).body.id;
    expect((await get('/pools', other())).body).toEqual({ pools: [] });
    const notFound = { error: 'Not found', message: 'No pool with this id in this account' };
    for (const r of [
      await get(`/pools/${id}`, other()),
      await patch(id, { name: 'theirs', add: ['127.0.0.2:2'] }, other()),
      await del(id, other()),
      await get(`/pools/${id}/proxies?status=all`, other()),
    ]) {
      expect([r.status, r.body]).toEqual([404, notFound]);
    }
    expect((await get(`/pools/${id}`)).body).toMatchObject({ name: 'mine', counts: { total: 1 } });
    await deleteAll();
  });
});

describe('bad input: every route answers a clear 4xx, nothing charged', () => {
  let id = '';
  let before = 0;
  beforeAll(async () => {
    before = await balance();
    id = (await post({ name: 'target', proxies: ['127.0.0.1:1', '127.0.0.1:2'] })).body.id;
  });
  afterAll(async () => {
    await deleteAll();
    expect(await balance()).toBe(before);
  });

  test('401 without a key and with a wrong one, on every route', async () => {
    const routes: [string, string, unknown?][] = [
      ['POST', '/pools', { name: 'x', proxies: ['127.0.0.1:1'] }],
      ['GET', '/pools'],
      ['GET', `/pools/${id}`],
      ['PATCH', `/pools/${id}`, { name: 'x' }],
      ['DELETE', `/pools/${id}`],
      ['GET', `/pools/${id}/proxies`],
    ];
    for (const [method, path, json] of routes) {
      for (const [headers, error] of [
        [{}, 'API key is required'],
        [{ 'x-api-key': 'pc_nope' }, 'Invalid API key'],
      ] as const) {
        const r = await call(`${t.url}${path}`, { method, headers, ...(json !== undefined ? { json } : {}) });
        expect([method, path, r.status, r.body.error]).toEqual([method, path, 401, error]);
      }
    }
  });

  test('POST /pools: 415, 400 (malformed JSON, every field), 413 (proxies, body, custom URLs)', async () => {
    const raw = await call(`${t.url}/pools`, { method: 'POST', headers: { ...key(), 'content-type': 'text/plain' }, body: '{"name":"x"}' });
    expect([raw.status, raw.body]).toEqual([415, { error: 'Unsupported media type', message: 'Content-Type must be application/json' }]);
    const broken = await call(`${t.url}/pools`, { method: 'POST', headers: { ...key(), 'content-type': 'application/json' }, body: '{"name":' });
    expect([broken.status, broken.body]).toEqual([400, bad('body: malformed JSON')]);
    const ok = { name: 'x', proxies: ['127.0.0.1:1'] };
    const cases: [unknown, number, unknown][] = [
      [[], 400, bad('body: expected a JSON object')],
      [{ proxies: ['127.0.0.1:1'] }, 400, bad('name: required')],
      [{ name: 'x' }, 400, bad('proxies: required (an array of addresses), or text, or sources')],
      [{ ...ok, name: '   ' }, 400, bad('name: expected 1 to 100 characters, not blank, no control characters')],
      [{ ...ok, name: 'x'.repeat(101) }, 400, bad('name: expected 1 to 100 characters, not blank, no control characters')],
      [{ ...ok, proxies: '127.0.0.1:1' }, 400, bad('proxies: expected an array of strings')],
      [{ ...ok, interval_s: 4 }, 400, bad('interval_s: expected an integer from 5 (server setting POOL_MIN_INTERVAL_S) to 86400')],
      [{ ...ok, interval_s: 86_401 }, 400, bad('interval_s: expected an integer from 5 (server setting POOL_MIN_INTERVAL_S) to 86400')],
      [{ ...ok, https: 'yes' }, 400, bad('https: expected true or false')],
      [{ ...ok, sources: [{ url: 'ftp://x.example/' }] }, 400, null],
      [{ ...ok, sources: [{ url: 'https://x.example/', every_s: 10 }] }, 400, bad('sources[0].every_s: expected an integer from 300 to 86400')],
      [{ name: 'x', proxies: ['junk', 'more junk'] }, 400, null],
      [{ ...ok, region: 'mars1' }, 400, null],
      [{ ...ok, type: 'https' }, 400, null],
      [{ ...ok, timeout: 999 }, 400, null],
      [{ ...ok, customUrls: [{ url: 'https://a.example/' }, { url: 'https://b.example/' }] }, 413, null],
      [{ name: 'x', proxies: Array.from({ length: 51 }, (_, i) => `127.0.2.${i}:80`) }, 413, { error: 'Too many proxies', message: 'At most 50 proxies per pool (server setting MAX_PROXIES_PER_POOL)', max: 50 }],
      [{ name: 'x', text: '#'.repeat(70_000) }, 413, null],
    ];
    for (const [body, status, expected] of cases) {
      const r = await post(body);
      expect([JSON.stringify(body).slice(0, 80), r.status]).toEqual([JSON.stringify(body).slice(0, 80), status]);
      if (expected !== null) expect(r.body).toEqual(expected);
    }
    const errors = new Set<string>();
    for (const body of [{ ...ok, region: 'mars1' }, { ...ok, type: 'https' }, { ...ok, timeout: 999 }, { name: 'x', proxies: ['junk'] }, { ...ok, customUrls: [{}, {}] }, { name: 'x', text: '#'.repeat(70_000) }]) {
      errors.add((await post(body)).body.error);
    }
    expect([...errors].sort()).toEqual(['Invalid proxy type', 'Invalid region', 'Invalid timeout', 'No valid proxies found', 'Payload too large', 'Too many custom URLs']);
    expect((await get('/pools')).body.pools).toHaveLength(1);
  });

  test('the limits: pools per account (429, limit, no Retry-After), proxies in all pools (413); a refused request leaves nothing', async () => {
    // 2 proxies in "target"; 3 more pools of 32: 98 in all
    for (let i = 0; i < 3; i++) expect((await post({ name: `p${i}`, proxies: Array.from({ length: 32 }, (_, k) => `127.0.3.${i * 32 + k}:80`) })).status).toBe(201);
    const fifth = await post({ name: 'fifth', proxies: ['127.0.0.1:5'] });
    expect([fifth.status, fifth.body, fifth.headers.get('retry-after')]).toEqual([
      429,
      { error: 'Too many requests', message: 'At most 4 pools per account (server setting MAX_POOLS_PER_ACCOUNT); delete one to create another', limit: 4 },
      null,
    ]);
    const over = await patch(id, { name: 'not kept', add: ['127.0.4.1:80', '127.0.4.2:80', '127.0.4.3:80'] });
    expect([over.status, over.body]).toEqual([413, { error: 'Too many proxies', message: "At most 100 proxies in all of an account's pools together (twice the server setting MAX_PROXIES_PER_POOL)", max: 100 }]);
    expect((await get(`/pools/${id}`)).body).toMatchObject({ name: 'target', counts: { total: 2 } });
    // two fit exactly
    expect((await patch(id, { add: ['127.0.4.1:80', '127.0.4.2:80'] })).body.submitted.added).toBe(2);
    // the other account has its own limits
    expect((await post({ name: 'theirs', proxies: ['127.0.0.1:1'] }, other())).status).toBe(201);
  });

  test('GET, PATCH, DELETE with an id that cannot be a pool, or no pool: 404', async () => {
    for (const bogus of ['short', 'UPPERCASE0123', 'a'.repeat(33), 'zzzzzzzzzzzzzzzzzzzz', 'abcdefghij%00', 'abc%20defghij']) {
      for (const r of [await get(`/pools/${bogus}`), await patch(bogus, { name: 'x' }), await del(bogus), await get(`/pools/${bogus}/proxies`)]) {
        expect([bogus, r.status, r.body.message]).toEqual([bogus, 404, 'No pool with this id in this account']);
      }
    }
  });

  test('PATCH /pools/{id}: 415, 400 (malformed, nothing to change, each field), 404 after a valid body', async () => {
    const raw = await call(`${t.url}/pools/${id}`, { method: 'PATCH', headers: key(), body: '{"name":"x"}' });
    expect(raw.status).toBe(415);
    const broken = await call(`${t.url}/pools/${id}`, { method: 'PATCH', headers: { ...key(), 'content-type': 'application/json' }, body: 'nope' });
    expect([broken.status, broken.body]).toEqual([400, bad('body: malformed JSON')]);
    const cases: [unknown, unknown][] = [
      [{}, bad('body: expected at least one of name, interval_s, timeout, https, state, customUrls, add, remove')],
      [{ nmae: 'typo' }, bad('body: expected at least one of name, interval_s, timeout, https, state, customUrls, add, remove')],
      [{ state: 'stopped' }, bad('state: expected "active" or "paused"')],
      [{ add: 'x' }, bad('add: expected an array of strings')],
      [{ remove: {} }, bad('remove: expected an array of strings')],
      [{ interval_s: 1.5 }, bad('interval_s: expected an integer from 5 (server setting POOL_MIN_INTERVAL_S) to 86400')],
      [{ name: '' }, bad('name: expected 1 to 100 characters, not blank, no control characters')],
    ];
    for (const [body, expected] of cases) {
      const r = await patch(id, body);
      expect([JSON.stringify(body), r.status, r.body]).toEqual([JSON.stringify(body), 400, expected]);
    }
    expect((await patch(id, { add: ['junk'] })).body.error).toBe('No valid proxies found');
    expect((await patch(id, { timeout: 30_000 })).body.error).toBe('Invalid timeout');
    expect((await patch('abcdefghijklmnopqrst', { name: 'x' })).status).toBe(404);
  });

  test('GET /pools/{id}/proxies: every bad query value is a 400 naming the parameter', async () => {
    const cursor = (await get(`/pools/${id}/proxies?status=all&limit=1&sort=uptime`)).body.next_cursor as string;
    const cases: [string, string][] = [
      ['status=up', 'status: expected one of working, failed, unchecked, all'],
      ['country=DEU', 'country: expected an ISO 3166 alpha-2 code (two letters)'],
      ['anonymity=high', 'anonymity: expected one of elite, anonymous, transparent'],
      ['https=1', 'https: expected one of true, false'],
      ['max_latency_ms=-1', 'max_latency_ms: expected a whole number of milliseconds'],
      ['min_uptime=1.5', 'min_uptime: expected a number from 0 to 1'],
      ['sort=fast', 'sort: expected one of latency, uptime, checked'],
      ['limit=0', 'limit: expected an integer from 1 to 10000'],
      ['limit=10001', 'limit: expected an integer from 1 to 10000'],
      ['format=xml', 'format: expected one of json, txt, csv'],
      ['cursor=nope', 'cursor: not a next_cursor of this listing'],
      [`cursor=${cursor}`, 'cursor: belongs to sort=uptime, not sort=latency'],
    ];
    for (const [q, message] of cases) {
      const r = await get(`/pools/${id}/proxies?${q}`);
      expect([q, r.status, r.body]).toEqual([q, 400, bad(message)]);
    }
    const twice = await get(`/pools/${id}/proxies?limit=1&limit=2`);
    expect([twice.status, twice.body.error]).toEqual([400, 'Invalid request']);
    const type = await get(`/pools/${id}/proxies?type=auto`);
    expect([type.status, type.body.error]).toEqual([400, 'Invalid proxy type']);
  });

  test('405 with Allow for every other method', async () => {
    const cases: [string, string, string][] = [
      ['/pools', 'PUT', 'GET, POST'],
      ['/pools', 'DELETE', 'GET, POST'],
      [`/pools/${id}`, 'POST', 'GET, PATCH, DELETE'],
      [`/pools/${id}`, 'PUT', 'GET, PATCH, DELETE'],
      [`/pools/${id}/proxies`, 'POST', 'GET'],
      [`/pools/${id}/proxies`, 'DELETE', 'GET'],
    ];
    for (const [path, method, allow] of cases) {
      const r = await call(`${t.url}${path}`, { method, headers: key() });
      expect([path, method, r.status, r.headers.get('allow')]).toEqual([path, method, 405, allow]);
    }
  });
});

describe('the request rate', () => {
  let s: TestService;
  beforeAll(async () => {
    s = await startTestService({ RATE_LIMIT_PER_S: '1', POOL_ROUNDS: 'false' });
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
  });

  test('the pool routes take tokens of the account bucket: over the burst, 429 with Retry-After and RateLimit-*', async () => {
    const h = { 'x-api-key': s.key };
    // 6 requests at once against a bucket of 2 refilled once a second: some are refused, whatever the machine's load
    const answers = await Promise.all([
      call(`${s.url}/pools`, { method: 'POST', headers: h, json: { name: 'x', proxies: ['127.0.0.1:1'] } }),
      ...Array.from({ length: 5 }, () => call(`${s.url}/pools`, { headers: h })),
    ]);
    const refused = answers.filter((r) => r.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(answers.filter((r) => r.status !== 429).every((r) => r.status === 200 || r.status === 201)).toBe(true);
    const r = refused[0]!;
    expect(r.body.error).toBe('Too many requests');
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(r.headers.get('ratelimit-remaining')).toBe('0');
  });
});

describe('a pool that costs more a day than the account has (DECISIONS "Mixed lists")', () => {
  test('POST and PATCH say balance_runs_out with hours_left; a paused pool or a longer interval does not', async () => {
    // the other account has 10 checks; 5 proxies every 60 s cost 7 200 a day
    const made = await post({ name: 'too dear', proxies: ['127.0.0.1:1', '127.0.0.1:2', '127.0.0.1:3', '127.0.0.1:4', '127.0.0.1:5'], interval_s: 60 }, other());
    expect(made.status, made.text).toBe(201);
    expect(made.body.warnings).toEqual([{ code: 'balance_runs_out', hours_left: 0, message: expect.stringContaining('up to 7,200 checks a day, and the account has 10 left') }]);
    expect(made.body.warnings[0].message).toContain('They run out within the hour');
    const id = String(made.body.id);
    const paused = await patch(id, { state: 'paused' }, other());
    expect(paused.body.warnings).toEqual([]);
    const cheap = await patch(id, { state: 'active', interval_s: 86_400 }, other());
    expect(cheap.body.warnings).toEqual([]); // 5 a day
    const more = await patch(id, { interval_s: 3600 }, other()); // 120 a day against 10
    // at most 10 checks left (a round may have spent some): at most 10 x 24 / 120 = 2 hours
    expect(more.body.warnings).toEqual([{ code: 'balance_runs_out', hours_left: expect.any(Number), message: expect.stringContaining('up to 120 checks a day') }]);
    expect(more.body.warnings[0].hours_left).toBeLessThanOrEqual(2);
    expect((await call(`${t.url}/pools/${id}`, { method: 'DELETE', headers: other() })).status).toBe(204);
  });
  test('a scheme is the proxy\'s own protocol (DECISIONS "Mixed lists"): kept, part of its identity, no warning', async () => {
    const http = await post({ name: 'mixed http', proxies: ['socks5://127.0.0.1:9', 'http://127.0.0.1:9', '127.0.0.1:9'], interval_s: 86_400 }, other());
    expect(http.status, http.text).toBe(201);
    // socks5://h:p is its own proxy; http:// in an http pool is the plain line's
    expect(http.body.submitted).toMatchObject({ added: 2, total_duplicates: 1 });
    expect(http.body.warnings.map((w: { code: string }) => w.code)).not.toContain('schemes_ignored');
    const added = await patch(String(http.body.id), { add: ['socks4://127.0.0.1:9', 'http://127.0.0.1:9'] }, other());
    expect(added.body.submitted).toMatchObject({ added: 1 });
    for (const id of [http.body.id]) expect((await call(`${t.url}/pools/${id}`, { method: 'DELETE', headers: other() })).status).toBe(204);
  });
});

describe('the cron one-liner (DECISIONS "Mixed lists"): txt and csv without limit are every match', () => {
  let s: TestService;
  beforeAll(async () => {
    s = await startTestService({ RATE_LIMIT_PER_S: '100000', POOL_ROUNDS: 'false' });
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
  });

  test('150 of 150 in txt and csv; json still pages (100, next_cursor); limit still one page', async () => {
    const t = s; // this block's service (the file's has a pool cap of 50)
    const key = () => ({ 'x-api-key': s.key });
    const get = (path: string) => call(`${s.url}${path}`, { headers: key() });
    const proxies = Array.from({ length: 150 }, (_, i) => `127.0.${Math.floor(i / 200)}.${(i % 200) + 1}:${8000 + i}`);
    const made = await call(`${s.url}/pools`, { method: 'POST', headers: key(), json: { name: 'cron', proxies, interval_s: 86_400 } });
    expect(made.status, made.text).toBe(201);
    const id = String(made.body.id);
    const txt = await checkedFetch(`${t.url}/pools/${id}/proxies?status=all&format=txt`, { headers: key() });
    expect(txt.headers.get('x-next-cursor')).toBeNull();
    expect((await txt.text()).split('\n').filter(Boolean).sort()).toEqual([...proxies].sort());
    const csv = await checkedFetch(`${t.url}/pools/${id}/proxies?status=all&format=csv`, { headers: key() });
    expect((await csv.text()).split('\r\n').filter(Boolean).length).toBe(151);
    const json = await get(`/pools/${id}/proxies?status=all`);
    expect(json.body.proxies.length).toBe(100);
    expect(json.body.next_cursor).not.toBeNull();
    const page = await checkedFetch(`${t.url}/pools/${id}/proxies?status=all&format=txt&limit=100`, { headers: key() });
    expect((await page.text()).split('\n').filter(Boolean).length).toBe(100);
    expect(page.headers.get('x-next-cursor')).not.toBeNull();
    // scheme=true: the pool's type before each line
    const schemed = await checkedFetch(`${t.url}/pools/${id}/proxies?status=all&format=txt&scheme=true&limit=2`, { headers: key() });
    expect((await schemed.text()).split('\n').filter(Boolean).every((l) => l.startsWith('http://127.0.0.'))).toBe(true);
    expect((await call(`${t.url}/pools/${id}`, { method: 'DELETE', headers: key() })).status).toBe(204);
  });
});
