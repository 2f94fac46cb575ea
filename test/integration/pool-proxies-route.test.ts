/**
 * GET /pools/{id}/proxies in the real app (createApp, no sockets) over a fake
 * pools port that pages 150 proxies by id (DECISIONS "Mixed lists"): txt and
 * csv without `limit` return every match, streamed page after page; with
 * `limit` one page and X-Next-Cursor; JSON keeps its pages; `scheme=true`
 * writes `<protocol>://...`; a bad `scheme` is a 400 before the pool is read.
 * From the owner's memory (the port's `all`): the same text in one fetch,
 * its pieces streamed (empty ones skipped), a pool deleted meanwhile ends it.
 */
import { describe, expect, test } from 'bun:test';
import { createApp } from '../../src/http/app';
import type { AppDeps } from '../../src/http/context';
import { NEXT_CURSOR_HEADER } from '../../src/http/routes/pools';
import { encodeCursor } from '../../src/pools/cursor';
import { DEFAULT_POOL_LIMITS } from '../../src/pools/limits';
import type { PoolProxiesQuery } from '../../src/pools/query';
import type { PoolProxyRow } from '../../src/pools/shape';
import type { CheckType } from '../../src/proxy/types';
import { listingOrder, MemoryListing, type ProxyListing } from '../../src/pools/proxy-listing';
import { ProxyTable } from '../../src/pools/proxy-table';
import { poolCsvHeader } from '../../src/pools/render';
import { fakeAppDeps } from '../helpers/app-deps';

const KEY = 'pc_pool-proxies-route-key';
const POOL = 'pool0000000001';
const N = 150;

function row(id: number): PoolProxyRow {
  const at = new Date(1_800_000_000_000);
  return {
    id,
    host: '192.0.2.1',
    port: 1000 + id,
    username: id % 10 === 0 ? 'u' : '',
    password: id % 10 === 0 ? 'p:w' : '',
    format: id % 10 === 0 ? 'colon_auth' : 'standard',
    status: 'working',
    failures: 0,
    checks: 1,
    type: id % 2 === 0 ? 'socks5' : 'http',
    protocols: 0,
    anonymity: 'elite',
    https: null,
    origin: '203.0.113.1',
    country: null,
    countryName: null,
    location: null,
    isp: null,
    asn: null,
    statusCode: 200,
    responseTimeMs: 10,
    errorCode: null,
    errorMessage: null,
    latencyP50Ms: 10,
    uptimeH24Ppm: 1_000_000,
    history: null,
    firstSeenAt: at,
    lastCheckedAt: at,
    lastChangeAt: at,
    nextCheckAt: at,
  };
}

const ROWS = Array.from({ length: N }, (_, i) => row(i + 1));
/** What the fake port was asked (one entry per page). */
const asked: PoolProxiesQuery[] = [];
let poolType: CheckType = 'auto';
/** Rows the next page repeats from the page before (a row whose sort key moved while the listing streamed). */
let overlap = 0;
/** Pages answered before the pool "is deleted" (null). */
let pagesLeft = Number.POSITIVE_INFINITY;
/** The fake's largest page (the route asks for 10 000: a smaller page makes 150 rows several pages). */
let pageCap = 40;
/** The owner's memory answers `all` (a listing of ROWS, or the pieces given); null: pages. */
let memory: ProxyListing | null = null;

function deps(): AppDeps {
  return fakeAppDeps(
    {
      accounts: { findByApiKey: async (k) => (k === KEY ? { id: 'acc-1', email: 'a@b.io' } : null), overview: async () => ({}) },
      pools: {
        ...fakeAppDeps().pools,
        limits: DEFAULT_POOL_LIMITS,
        proxies: async (_account, id, q) => {
          asked.push(q);
          if (id !== POOL || pagesLeft-- <= 0) return null;
          if (memory !== null && q.all === true) return { type: poolType, page: { rows: [], nextCursor: null }, all: memory, nowMs: 1_800_000_000_000 };
          const from = q.cursor === null ? 0 : Math.max(0, ROWS.findIndex((r) => r.id === q.cursor!.id) + 1 - overlap);
          const size = Math.min(q.limit, pageCap);
          const rows = ROWS.slice(from, from + size);
          const last = rows.at(-1);
          const nextCursor = from + size < N && last !== undefined ? encodeCursor({ sort: q.sort, key: '10', id: last.id }) : null;
          return { type: poolType, page: { rows, nextCursor }, nowMs: 1_800_000_000_000 };
        },
      },
    },
    'the pool proxies route',
  );
}

const app = createApp(deps());
const get = (query: string) => app.handle(new Request(`http://127.0.0.1/pools/${POOL}/proxies?${query}`, { headers: { 'x-api-key': KEY } }));
const lines = (text: string) => text.split('\n').filter((l) => l !== '');

function reset(o: { type?: CheckType; overlap?: number; pages?: number; cap?: number; memory?: ProxyListing } = {}): void {
  asked.length = 0;
  memory = o.memory ?? null;
  pageCap = o.cap ?? 40;
  poolType = o.type ?? 'auto';
  overlap = o.overlap ?? 0;
  pagesLeft = o.pages ?? Number.POSITIVE_INFINITY;
}

describe('GET /pools/{id}/proxies: every match in text forms', () => {
  test('txt without limit: all 150 lines (four pages of the port fetched, 10 000 asked each), no X-Next-Cursor', async () => {
    reset();
    const res = await get('format=txt');
    expect(res.status).toBe(200);
    expect(res.headers.get(NEXT_CURSOR_HEADER)).toBeNull();
    const got = lines(await res.text());
    expect(got.length).toBe(N);
    expect(new Set(got).size).toBe(N);
    expect(asked.length).toBe(4);
    expect(asked.every((q) => q.limit === 10_000)).toBe(true);
    expect(asked.map((q) => q.cursor?.id ?? 0)).toEqual([0, 40, 80, 120]);
  });

  test('one page of the port (a store whose page holds them all) is one fetch', async () => {
    reset({ cap: 10_000 });
    expect(lines(await (await get('format=txt&status=all')).text()).length).toBe(N);
    expect(asked.length).toBe(1);
  });

  test('csv without limit: a header and 150 rows; with limit=100, one page and X-Next-Cursor', async () => {
    reset();
    const all = (await (await get('format=csv')).text()).split('\r\n').filter(Boolean);
    expect(all.length).toBe(N + 1);
    expect(all[0]!.startsWith('proxy_host,proxy_port')).toBe(true);
    reset({ cap: 10_000 });
    const res = await get('format=csv&limit=100');
    expect((await res.text()).split('\r\n').filter(Boolean).length).toBe(101);
    expect(res.headers.get(NEXT_CURSOR_HEADER)).not.toBeNull();
  });

  test('txt with limit: that page only, and its cursor; json keeps 100 and next_cursor', async () => {
    reset({ cap: 10_000 });
    const res = await get('format=txt&limit=40');
    expect(lines(await res.text()).length).toBe(40);
    expect(res.headers.get(NEXT_CURSOR_HEADER)).not.toBeNull();
    reset({ cap: 10_000 });
    const json = (await (await get('')).json()) as { proxies: unknown[]; next_cursor: string | null };
    expect(json.proxies.length).toBe(100);
    expect(json.next_cursor).not.toBeNull();
  });
});

describe('paging underneath', () => {
  test('a listing that starts at a cursor streams from there to the end, fetching page after page', async () => {
    reset();
    const c = encodeCursor({ sort: 'latency', key: '10', id: 100 });
    const got = lines(await (await get(`format=txt&cursor=${c}`)).text());
    expect(got.length).toBe(50);
    expect(got[0]).toBe('192.0.2.1:1101');
  });

  test('a row met again on the next page (its sort key moved) is written once', async () => {
    reset({ overlap: 3 });
    const got = lines(await (await get('format=txt')).text());
    expect(got.length).toBe(N);
    expect(new Set(got).size).toBe(N);
  });

  test('a pool deleted while the listing streams: the text ends where it is', async () => {
    reset({ pages: 2 });
    const res = await get('format=txt');
    expect(res.status).toBe(200);
    expect(lines(await res.text()).length).toBe(80); // the two pages answered
  });
});

describe('from the owner\'s memory (one pass)', () => {
  const table = (): ProxyTable => {
    const t = new ProxyTable(N);
    for (const r of ROWS) t.add(r);
    return t;
  };
  /** ROWS' listing for the query the port was asked (made at its first read). */
  const ofRows = (): ProxyListing => {
    let inner: MemoryListing | null = null;
    return {
      next: (o) => {
        const t = table();
        inner ??= new MemoryListing(t, listingOrder(t, asked.at(-1)!), () => false);
        return inner.next(o);
      },
    };
  };
  /** A listing whose pieces are given (a string: its bytes; '' an empty piece), then its end. */
  const pieces = (...texts: string[]): ProxyListing => {
    let i = 0;
    return { next: () => (i < texts.length ? new TextEncoder().encode(texts[i++]!) : null) };
  };

  test('txt, txt with scheme, csv: the text the pages make, in one fetch of the port', async () => {
    for (const q of ['format=txt', 'format=txt&scheme=true', 'format=csv']) {
      reset();
      const paged = await (await get(q)).text();
      reset({ memory: ofRows() });
      const res = await get(q);
      expect(res.status).toBe(200);
      expect(res.headers.get(NEXT_CURSOR_HEADER)).toBeNull();
      expect(await res.text()).toBe(paged);
      expect(asked.length).toBe(1);
    }
  });

  test('its pieces streamed in order, empty ones skipped, the csv header first', async () => {
    reset({ memory: pieces('', '', 'a\n', '', 'b\n') });
    expect(await (await get('format=csv')).text()).toBe(`${poolCsvHeader()}a\nb\n`);
  });

  test('a pool deleted while the listing streams (its listing ends): the text ends where it is', async () => {
    reset({ memory: pieces('a\n', 'b\n') });
    expect(await (await get('format=txt')).text()).toBe('a\nb\n');
  });
});

describe('scheme', () => {
  test('scheme=true: <protocol>://[user:pass@]host:port; auto pools by the protocol found, others by the pool type', async () => {
    reset();
    const got = lines(await (await get('format=txt&scheme=true')).text());
    expect(got[0]).toBe('http://192.0.2.1:1001');
    expect(got[1]).toBe('socks5://192.0.2.1:1002');
    expect(got[9]).toBe('socks5://u:p%3Aw@192.0.2.1:1010');
    reset({ type: 'socks4' });
    expect(lines(await (await get('format=txt&scheme=true&limit=2')).text())).toEqual(['socks4://192.0.2.1:1001', 'socks4://192.0.2.1:1002']);
    reset();
    expect(lines(await (await get('format=txt&limit=1')).text())).toEqual(['192.0.2.1:1001']);
    expect(lines(await (await get('format=txt&limit=10&scheme=false')).text())[9]).toBe('192.0.2.1:1010:u:p:w');
  });

  test('a bad scheme is a 400 naming it, before the pool is read', async () => {
    reset();
    const res = await get('format=txt&scheme=yes');
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'Invalid request', message: 'scheme: expected true or false' });
    expect(asked.length).toBe(0);
  });
});
