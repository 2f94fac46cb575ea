/**
 * The one-pass listing from the owner's memory (src/pools/proxy-listing.ts):
 * for random tables and queries (fast-check) its order is exactly the
 * concatenated pages of memoryPage followed by their cursors, and its text
 * (txt, `scheme=true`, csv) exactly their rows' text (render.ts textRows):
 * IPv6 hosts, credentials in every form, non-ASCII ones included. A proxy
 * removed after the snapshot is left out, one added is not in it, a pool
 * gone ends the text; each call is a bounded piece of work.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { queryFilterArbs } from '../helpers/pool-query-arb';
import { decodeCursor } from '../../src/pools/cursor';
import { CSV_CHUNK, LINE_STEP, listingOrder, MemoryListing, TXT_CHUNK } from '../../src/pools/proxy-listing';
import { memoryPage } from '../../src/pools/proxy-page';
import { ProxyTable } from '../../src/pools/proxy-table';
import { DEFAULT_PROXIES_QUERY, type PoolProxiesQuery } from '../../src/pools/query';
import { textRows, type TextPageOptions } from '../../src/pools/render';
import type { PoolProxyRow } from '../../src/pools/shape';
import type { CheckType } from '../../src/proxy/types';

const NOW = Date.UTC(2026, 5, 1, 12);

interface Spec {
  status: 'working' | 'failed' | 'unchecked';
  host: string;
  credentials: [string, string] | null;
  format: 'standard' | 'url_auth' | 'colon_auth';
  country: string | null;
  anonymity: 'elite' | 'anonymous' | 'transparent' | null;
  https: boolean | null;
  type: 'http' | 'socks4' | 'socks5' | null;
  protocol: 'http' | 'socks4' | 'socks5' | null;
  protocols: number;
  latency: number | null;
  uptimePpm: number | null;
  checkedAt: number | null;
  /** The id's step from the row before (ids ascend with the slot, with gaps). */
  gap: number;
}

const specArb: fc.Arbitrary<Spec> = fc.record({
  status: fc.constantFrom('working' as const, 'failed' as const, 'unchecked' as const),
  host: fc.constantFrom('192.0.2.7', '2001:db8::1', 'proxy.example', '10.0.0.1'),
  credentials: fc.option(fc.tuple(fc.constantFrom('u', 'user:x', 'ü', ''), fc.constantFrom('p', 'p:w@', 'pä ss', '')), { nil: null }),
  format: fc.constantFrom('standard' as const, 'url_auth' as const, 'colon_auth' as const),
  country: fc.constantFrom(null, 'DE', 'US'),
  anonymity: fc.constantFrom(null, 'elite' as const, 'anonymous' as const, 'transparent' as const),
  https: fc.constantFrom(null, true, false),
  type: fc.constantFrom(null, 'http' as const, 'socks5' as const),
  protocol: fc.constantFrom(null, null, 'socks4' as const),
  protocols: fc.integer({ min: 0, max: 7 }),
  latency: fc.option(fc.integer({ min: 0, max: 30 }), { nil: null }), // few values: many ties
  uptimePpm: fc.option(fc.constantFrom(0, 250_000, 500_000, 1_000_000), { nil: null }),
  checkedAt: fc.option(fc.integer({ min: 0, max: 5 }).map((m) => NOW - m * 60_000 + (m % 2)), { nil: null }),
  gap: fc.integer({ min: 1, max: 3 }),
});

const queryArb = fc.record({
  ...queryFilterArbs,
  format: fc.constantFrom('txt' as const, 'csv' as const),
  scheme: fc.boolean(),
  poolType: fc.constantFrom<CheckType>('auto', 'http'),
  /** Start after the first page's cursor (a listing from `cursor`). */
  fromCursor: fc.boolean(),
});

/** A plain working proxy without credentials, `over` changed. */
const spec = (over: Partial<Spec>): Spec => ({
  status: 'working', host: '192.0.2.7', credentials: null, format: 'standard', country: null, anonymity: null, https: null,
  type: 'http', protocol: null, protocols: 1, latency: null, uptimePpm: null, checkedAt: null, gap: 1, ...over,
});

function rowOf(s: Spec, id: number): PoolProxyRow {
  const [username, password] = s.credentials ?? ['', ''];
  const checked = s.checkedAt === null ? null : new Date(s.checkedAt);
  return {
    id, host: s.host, port: 1000 + (id % 60_000), username, password, format: s.format, status: s.status, failures: 0, checks: 1,
    type: s.type, protocols: s.protocols, anonymity: s.anonymity, https: s.https, origin: null, country: s.country, countryName: null,
    location: null, isp: null, asn: null, statusCode: null, responseTimeMs: null, errorCode: null, errorMessage: null,
    latencyP50Ms: s.latency, uptimeH24Ppm: s.uptimePpm, history: null, firstSeenAt: new Date(NOW - 86_400_000),
    lastCheckedAt: checked, lastChangeAt: checked, nextCheckAt: new Date(NOW), ...(s.protocol === null ? {} : { protocol: s.protocol }),
  };
}

function tableOf(specs: readonly Spec[]): ProxyTable {
  const t = new ProxyTable(4);
  let id = 0;
  for (const s of specs) t.add(rowOf(s, (id += s.gap)));
  return t;
}

/** Every page of memoryPage from the query's cursor on. */
function pages(t: ProxyTable, q: PoolProxiesQuery): number[] {
  const slots: number[] = [];
  let query = q;
  for (;;) {
    const p = memoryPage(t, query);
    slots.push(...p.slots);
    if (p.nextCursor === null) return slots;
    query = { ...q, cursor: decodeCursor(p.nextCursor) };
  }
}

/** The whole text of a listing, and how many calls it took. */
function drain(l: MemoryListing, o: TextPageOptions): { text: string; calls: number } {
  const decoder = new TextDecoder();
  let text = '';
  let calls = 0;
  for (let b = l.next(o); b !== null; b = l.next(o)) {
    calls++;
    text += decoder.decode(b);
  }
  return { text, calls };
}

const inOrder = (t: ProxyTable, q: PoolProxiesQuery): number[] => {
  const { scan, order } = listingOrder(t, q);
  return [...order].map((i) => scan[i]!);
};

describe('the one-pass listing', () => {
  test('property: its order is the concatenated pages of memoryPage and its text their rows\' text', () => {
    fc.assert(
      fc.property(fc.array(specArb, { maxLength: 40 }), queryArb, (specs, a) => {
        const t = tableOf(specs);
        const { poolType, scheme, fromCursor, ...rest } = a;
        let q: PoolProxiesQuery = { ...DEFAULT_PROXIES_QUERY, ...rest, cursor: null, all: true, scheme };
        if (fromCursor) {
          const first = memoryPage(t, q).nextCursor;
          if (first !== null) q = { ...q, cursor: decodeCursor(first) };
        }
        const expected = pages(t, q);
        expect(inOrder(t, q)).toEqual(expected);
        const o: TextPageOptions = { format: a.format, scheme, poolType, nowMs: NOW };
        const text = drain(new MemoryListing(t, listingOrder(t, q), () => false), o).text;
        expect(text).toBe(textRows(expected.map((s) => t.rowOf(s)), o));
      }),
      { numRuns: 300 },
    );
  });

  const txt: TextPageOptions = { format: 'txt', scheme: false, poolType: 'http', nowMs: NOW };
  const q: PoolProxiesQuery = { ...DEFAULT_PROXIES_QUERY, format: 'txt', all: true };
  /** n working proxies 192.0.2.7:1001.. with latencies in id order. */
  const working = (n: number): ProxyTable => tableOf(Array.from({ length: n }, (_, i) => spec({ latency: i })));

  test('a proxy removed after the snapshot is left out; one added after it is not listed', () => {
    const t = working(6);
    const l = new MemoryListing(t, listingOrder(t, q), () => false);
    t.live[2] = 0;
    t.add(rowOf(spec({ latency: 0 }), 99));
    expect(drain(l, txt).text.split('\n').filter(Boolean)).toEqual(['192.0.2.7:1001', '192.0.2.7:1002', '192.0.2.7:1004', '192.0.2.7:1005', '192.0.2.7:1006']);
  });

  test('the pool gone: the text ends where it is', () => {
    const t = working(3 * TXT_CHUNK);
    let gone = false;
    const l = new MemoryListing(t, listingOrder(t, q), () => gone);
    let b = l.next(txt);
    while (b !== null && b.length === 0) b = l.next(txt); // the lines written, then the first chunk
    expect(new TextDecoder().decode(b!).split('\n').filter(Boolean).length).toBe(TXT_CHUNK);
    gone = true;
    expect(l.next(txt)).toBeNull();
  });

  test('each call is a bounded piece: LINE_STEP lines written, or TXT_CHUNK lines / CSV_CHUNK rows out', () => {
    const n = LINE_STEP + TXT_CHUNK + 1;
    const t = working(n);
    const steps = Math.ceil(n / LINE_STEP) + Math.ceil(n / TXT_CHUNK);
    const all = drain(new MemoryListing(t, listingOrder(t, q), () => false), txt);
    expect(all.calls).toBe(steps);
    expect(all.text.split('\n').length - 1).toBe(n);
    const small = working(2 * CSV_CHUNK + 1);
    expect(drain(new MemoryListing(small, listingOrder(small, q), () => false), { ...txt, format: 'csv' }).calls).toBe(3);
  });

  test('no match: no bytes at all', () => {
    const t = working(3);
    expect(new MemoryListing(t, listingOrder(t, { ...q, status: 'failed' }), () => false).next(txt)).toBeNull();
  });
});
