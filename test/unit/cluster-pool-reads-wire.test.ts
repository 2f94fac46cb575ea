/**
 * The pool reads' wire (src/cluster/pool-reads-wire.ts) is pure: every
 * request and reply the encoder makes decodes to itself (rows with their
 * dates and history bytes included, a proxy's own protocol and its targets), and anything else (another version, a
 * bad query, a row of the wrong shape, junk, too many bytes) decodes to null.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { decodePoolReadReply, decodePoolReadRequest, encodePoolRead, MAX_POOL_READ_BYTES, poolReadsSubject } from '../../src/cluster/pool-reads-wire';
import { DEFAULT_PROXIES_QUERY } from '../../src/pools/query';
import type { PoolProxyRow } from '../../src/pools/shape';
import { TARGET_HOUR_BYTES, TARGET_HOURS } from '../../src/pools/target-columns';

const row: PoolProxyRow = {
  id: 42, host: 'h.example', port: 8080, username: 'u', password: 'p:"w', format: 'colon_auth', status: 'failed', failures: 3, checks: 9,
  type: 'socks5', protocols: 6, anonymity: 'elite', https: false, origin: '203.0.113.9', country: 'DE', countryName: 'Germany', location: null, isp: 'x',
  asn: 3320, statusCode: null, responseTimeMs: 12.5, errorCode: 'timeout', errorMessage: 'no answer', latencyP50Ms: 12, uptimeH24Ppm: 500_000,
  history: Uint8Array.from([1, 0, 255, 7]), firstSeenAt: new Date(1_000), lastCheckedAt: new Date(2_000), lastChangeAt: null, nextCheckAt: new Date(3_000),
};
const te = new TextEncoder();

describe('pool reads wire', () => {
  test('the subject is per node; a node id that is not one token is refused', () => {
    expect(poolReadsSubject('node-1')).toBe('pc.pools.node-1');
    expect(() => poolReadsSubject('a.b')).toThrow();
  });

  test('requests round-trip: stats, a page with a cursor, a recheck', () => {
    const reqs = [
      { v: 1, op: 'stats', pool: 'p1' },
      { v: 1, op: 'page', pool: 'p1', query: { ...DEFAULT_PROXIES_QUERY, sort: 'checked', cursor: { sort: 'checked', key: '2026-06-01T12:00:00.123000', id: 5 }, country: 'DE' } },
      { v: 1, op: 'recheck', pool: 'p1', proxies: [{ host: 'a', port: 1 }, { host: 'b', port: 2, username: 'u', password: '' }] },
      { v: 1, op: 'upstreams', pool: 'p1', account: 'acct' },
      { v: 1, op: 'changed', pool: 'p1', note: 'settings' },
      { v: 1, op: 'changed', pool: 'p1', note: 'deleted' },
      { v: 1, op: 'listing', pool: 'p1', query: { ...DEFAULT_PROXIES_QUERY, status: 'working', format: 'txt', all: true, scheme: true }, text: { poolType: 'auto', nowMs: 1_700_000_000_123 } },
      { v: 1, op: 'more', pool: 'p1', listing: 'a1b2c3', seq: 3 },
      { v: 1, op: 'close', pool: 'p1', listing: 'a1b2c3' },
    ] as const;
    for (const r of reqs) expect(decodePoolReadRequest(encodePoolRead(r as never))).toEqual(r as never);
  });

  test('replies round-trip: not found, stats, a page of rows, a recheck done', () => {
    expect(decodePoolReadReply(encodePoolRead({ v: 1, found: false }))).toEqual({ v: 1, found: false });
    const stats = { counts: { total: 3, working: 1, failed: 1, unchecked: 1 }, nextDueAt: new Date(5_000), checksPerDay: 123.5 };
    expect(decodePoolReadReply(encodePoolRead({ v: 1, found: true, stats }))).toEqual({ v: 1, found: true, stats });
    const page = { rows: [row, { ...row, id: 43, history: null, lastCheckedAt: null }], nextCursor: 'abc' };
    expect(decodePoolReadReply(encodePoolRead({ v: 1, found: true, page }))).toEqual({ v: 1, found: true, page });
    expect(decodePoolReadReply(encodePoolRead({ v: 1, found: true }))).toEqual({ v: 1, found: true });
    const upstreams = [{ key: 'k', host: 'h', port: 1, username: 'u', password: 'p', type: 'socks5' as const, protocols: ['socks5' as const], country: null }];
    expect(decodePoolReadReply(encodePoolRead({ v: 1, found: true, upstreams }))).toEqual({ v: 1, found: true, upstreams });
  });

  test("a proxy's own protocol and its targets cross the wire (a page's rows, the upstreams, the query's target)", () => {
    const hours = new Uint8Array(TARGET_HOUR_BYTES);
    hours[3] = 2;
    hours[TARGET_HOURS + 3] = 1;
    const targets = { shop: { ok: true, status: 200, responseTimeMs: 41.5, lastCheckedAt: new Date(9_000), hourAt: 490_000, hours }, api: null };
    const rows = [{ ...row, protocol: 'http' as const, targets }, { ...row, id: 43, protocol: null, targets: {} }];
    expect(decodePoolReadReply(encodePoolRead({ v: 1, found: true, page: { rows, nextCursor: null } }))).toEqual({ v: 1, found: true, page: { rows, nextCursor: null } });
    const upstreams = [{ key: 'k', host: 'h', port: 1, type: 'http' as const, protocols: ['http' as const], country: 'DE', targets: ['api', 'shop'] }];
    expect(decodePoolReadReply(encodePoolRead({ v: 1, found: true, upstreams }))).toEqual({ v: 1, found: true, upstreams });
    const page = { v: 1, op: 'page', pool: 'p1', query: { ...DEFAULT_PROXIES_QUERY, target: 'shop', scheme: true, all: true } } as const;
    expect(decodePoolReadRequest(encodePoolRead(page))).toEqual(page);
    const badRows = [{ ...row, protocol: 'ftp' }, { ...row, targets: { shop: { ...targets.shop, hours: 'AAAA' } } }, { ...row, targets: { 'Not A Name': null } }];
    for (const r of badRows) expect(decodePoolReadReply(te.encode(JSON.stringify({ v: 1, found: true, page: { rows: [r], next_cursor: null } })))).toBeNull();
    expect(decodePoolReadReply(te.encode(JSON.stringify({ v: 1, found: true, upstreams: [{ ...upstreams[0], targets: [1] }] })))).toBeNull();
    expect(decodePoolReadRequest(te.encode(JSON.stringify({ ...page, query: { ...page.query, target: 'DROP TABLE' } })))).toBeNull();
  });

  test('anything else is null', () => {
    const bad = [
      { v: 2, op: 'stats', pool: 'p' },
      { v: 1, op: 'drop', pool: 'p' },
      { v: 1, op: 'stats', pool: '' },
      { v: 1, op: 'page', pool: 'p', query: { ...DEFAULT_PROXIES_QUERY, limit: 0 } },
      { v: 1, op: 'page', pool: 'p', query: { ...DEFAULT_PROXIES_QUERY, cursor: { sort: 'latency', key: 'DROP', id: 1 } } },
      { v: 1, op: 'recheck', pool: 'p', proxies: [{ host: 'a' }] },
      { v: 1, op: 'changed', pool: 'p', note: 'renamed' },
      { v: 1, op: 'changed', pool: 'p' },
      // a listing: json is never one, a pool type and a clock are needed, a chunk number from 1, an id of the owner's kind
      { v: 1, op: 'listing', pool: 'p', query: { ...DEFAULT_PROXIES_QUERY, format: 'json' }, pool_type: 'http', now_ms: 1 },
      { v: 1, op: 'listing', pool: 'p', query: { ...DEFAULT_PROXIES_QUERY, format: 'txt' }, pool_type: 'ftp', now_ms: 1 },
      { v: 1, op: 'listing', pool: 'p', query: { ...DEFAULT_PROXIES_QUERY, format: 'csv' }, pool_type: 'http' },
      { v: 1, op: 'more', pool: 'p', listing: 'abc', seq: 0 },
      { v: 1, op: 'more', pool: 'p', listing: 'a.b', seq: 1 },
      { v: 1, op: 'close', pool: 'p', listing: '' },
    ];
    for (const b of bad) expect(decodePoolReadRequest(te.encode(JSON.stringify(b)))).toBeNull();
    expect(decodePoolReadReply(te.encode(JSON.stringify({ v: 1, found: true, page: { rows: [{ ...row, id: 'x' }], next_cursor: null } })))).toBeNull();
    expect(decodePoolReadReply(te.encode(JSON.stringify({ v: 1, found: true, stats: { counts: { total: -1 } } })))).toBeNull();
    expect(decodePoolReadReply(new Uint8Array(MAX_POOL_READ_BYTES + 1))).toBeNull();
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        decodePoolReadRequest(bytes);
        decodePoolReadReply(bytes);
      }),
    );
  });
});
