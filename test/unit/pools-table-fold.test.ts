/**
 * The owner's table (src/pools/proxy-table.ts) and its in-place fold
 * (src/pools/table-fold.ts): a row goes in and comes out the same; folding a
 * result into a slot gives exactly the row fold.ts foldCheck gives (verdict,
 * history, schedule, the fields of the last passing check), for any sequence
 * of results (fast-check, a fixed random source and a fake clock), and says
 * when the wide row's verdict fields changed.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { foldCheck, type PoolProbeResult } from '../../src/pools/fold';
import { ProxyTable } from '../../src/pools/proxy-table';
import { AddressColumn, MAX_TEXTS, TextColumn } from '../../src/pools/text-columns';
import type { PoolProxyRow } from '../../src/pools/shape';
import type { ProxyType } from '../../src/proxy/types';
import { foldSlot } from '../../src/pools/table-fold';

const NOW = Date.UTC(2026, 5, 1, 12);

const fresh = (id: number, host = `10.0.0.${id}`): PoolProxyRow => ({
  id, host, port: 8080, username: id % 2 === 0 ? 'u' : '', password: id % 2 === 0 ? 'p:w' : '', format: 'standard', status: 'unchecked', failures: 0, checks: 0,
  type: null, protocols: 0, anonymity: null, https: null, origin: null, country: null, countryName: null, location: null, isp: null, asn: null,
  statusCode: null, responseTimeMs: null, errorCode: null, errorMessage: null, latencyP50Ms: null, uptimeH24Ppm: null, history: null,
  firstSeenAt: new Date(NOW - 1000), lastCheckedAt: null, lastChangeAt: null, nextCheckAt: new Date(NOW),
});

const plain = (r: PoolProxyRow) => ({ ...r, history: r.history === null ? null : [...r.history] });

const resultArb: fc.Arbitrary<PoolProbeResult & { geo: boolean }> = fc.oneof(
  fc.record({
    status: fc.constant('working' as const),
    statusCode: fc.constantFrom(200, 204),
    responseTimeMs: fc.float({ min: 1, max: 9000, noNaN: true }),
    anonymity: fc.constantFrom('elite' as const, 'anonymous' as const, 'transparent' as const),
    origin: fc.constantFrom('203.0.113.1', '203.0.113.2'),
    error: fc.constant(null),
    protocols: fc.constantFrom<ProxyType[]>(['http'], ['socks5', 'socks4']),
    https: fc.constantFrom(true, false, undefined),
    geo: fc.boolean(),
  }) as fc.Arbitrary<PoolProbeResult & { geo: boolean }>,
  fc.record({
    status: fc.constant('failed' as const),
    statusCode: fc.constant(null),
    responseTimeMs: fc.constant(5000),
    anonymity: fc.constant(null),
    origin: fc.constant(null),
    error: fc.constantFrom({ code: 'timeout', message: 'no answer' }, { code: 'checker_overloaded', message: 'EMFILE' }),
    geo: fc.constant(false),
  }) as fc.Arbitrary<PoolProbeResult & { geo: boolean }>,
);

describe('ProxyTable', () => {
  test('a row in, the same row out; the table grows past its capacity', () => {
    const t = new ProxyTable(1);
    const rows = [fresh(1), { ...fresh(2), status: 'working' as const, type: 'socks5' as const, protocols: 6, anonymity: 'elite' as const, https: true, country: 'DE', asn: 3320, responseTimeMs: Math.fround(12.5), history: new Uint8Array(153).fill(1) }, fresh(3)];
    for (const r of rows) t.add(r);
    expect(t.size).toBe(3);
    expect(rows.map((_, i) => plain(t.rowOf(i)))).toEqual(rows.map(plain));
  });

  test('the extremes of the narrowed columns come out as they went in (asn 32-bit, status code, origin as its host)', () => {
    const t = new ProxyTable(4);
    const rows = [
      { ...fresh(1), asn: 4_294_967_294, statusCode: 599, origin: '10.0.0.1', history: new Uint8Array(153).fill(1) },
      { ...fresh(2), asn: 0, statusCode: 100, origin: '203.0.113.7' },
      { ...fresh(3), asn: null, statusCode: null, origin: null },
    ];
    for (const r of rows) t.add(r);
    expect(rows.map((_, i) => plain(t.rowOf(i)))).toEqual(rows.map(plain));
    expect([t.hasHistoryAt(0), t.hasHistoryAt(1)]).toEqual([true, false]);
  });

  /**
   * Memory per pooled proxy (issue 29: service RSS over idle <= 300 B per proxy at 1 000 000;
   * bench/micro-pool-memory.ts measures the heap). Exact for the table's own storage: every typed
   * array's bytes per capacity slot, its text columns' included (an IPv4 host or origin in 4 bytes,
   * credentials and error messages as 2-byte codes); no string per proxy in the usual case.
   */
  test('bytes per proxy: 249 in typed arrays per slot, no string reference; fit() leaves no slot idle', () => {
    const t = new ProxyTable(64);
    for (let i = 1; i <= 1000; i++) t.add({ ...fresh(i, `10.0.${i >> 8}.${i & 255}`), status: 'failed', errorCode: 'timeout', errorMessage: `no answer within ${i % 3} ms` });
    expect(t.capacity).toBeLessThanOrEqual(Math.ceil(1000 * 1.5));
    t.fit();
    expect(t.capacity).toBe(1000);
    let typed = 0;
    let refs = 0;
    for (const v of Object.values(t)) {
      if (ArrayBuffer.isView(v)) typed += v.byteLength;
      else if (Array.isArray(v) && v !== t.targets) refs += 8;
      else if (v instanceof AddressColumn || v instanceof TextColumn) {
        for (const w of Object.values(v)) if (ArrayBuffer.isView(w)) typed += w.byteLength;
        expect((v instanceof AddressColumn ? v.other : v.own).size).toBe(0);
      }
    }
    expect(typed / t.capacity).toBe(249);
    expect(refs).toBe(0);
    expect(t.errorMessages.distinct).toBe(3);
    expect(t.rowOf(999)).toEqual(expect.objectContaining({ host: '10.0.3.232', errorMessage: 'no answer within 1 ms' }));
  });

  test('property: any row written then read back through the table is unchanged (hosts, credentials, origins, texts, ids)', () => {
    const ipv4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((o) => o.join('.'));
    const address = fc.oneof(ipv4, fc.constantFrom('0.0.0.0', '010.1.1.1', '1.2.3', '::1', '2001:db8::7', 'proxy.example.com', '255.255.255.255'));
    const text = fc.option(fc.string({ maxLength: 12 }), { nil: null });
    const rowArb = fc.record({
      host: address,
      username: fc.constantFrom('', 'u', 'user-7'),
      password: fc.constantFrom('', 'p:w', 'secret'),
      origin: fc.option(address, { nil: null }),
      country: text,
      isp: text,
      errorCode: fc.option(fc.constantFrom('timeout', 'connect_refused'), { nil: null }),
      errorMessage: text,
      id: fc.oneof(fc.integer({ min: 1, max: 2 ** 32 - 1 }), fc.constant(2 ** 40 + 3)),
    });
    fc.assert(
      fc.property(fc.array(rowArb, { minLength: 1, maxLength: 40 }), (parts) => {
        const t = new ProxyTable(2);
        const rows = parts.map((p, i) => ({ ...fresh(i + 1), ...p, id: p.id + i, username: p.password === '' ? '' : p.username || 'u' }));
        rows.sort((a, b) => a.id - b.id);
        for (const r of rows) t.add(r);
        t.fit();
        expect(rows.map((_, i) => plain(t.rowOf(i)))).toEqual(rows.map(plain));
      }),
      { numRuns: 200 },
    );
  });

  test('the Interner\'s columns widen to Int32 past 32 768 texts; error messages past MAX_TEXTS are kept per slot', () => {
    const t = new ProxyTable(4);
    const n = 40_000;
    for (let i = 1; i <= n; i++) t.add({ ...fresh(i), isp: `isp ${i}`, errorMessage: `message ${i % 66_000}` });
    expect(t.isp).toBeInstanceOf(Int32Array);
    expect(t.country).toBeInstanceOf(Int32Array);
    for (const i of [1, 32_767, 32_768, 32_769, n]) expect(t.rowOf(i - 1)).toEqual(expect.objectContaining({ isp: `isp ${i}`, errorMessage: `message ${i}` }));
    const m = new ProxyTable(4);
    for (let i = 1; i <= MAX_TEXTS + 10; i++) m.add({ ...fresh(i), errorMessage: `m${i}` });
    expect(m.errorMessages.own.size).toBe(10);
    expect(m.errorMessageOf(MAX_TEXTS + 9)).toBe(`m${MAX_TEXTS + 10}`);
    m.setErrorMessage(MAX_TEXTS + 9, 'm1');
    expect([m.errorMessages.own.size, m.errorMessageOf(MAX_TEXTS + 9)]).toEqual([9, 'm1']);
  });
});

describe('foldSlot', () => {
  test('property: the slot after any results equals foldCheck\'s rows, for an http and an auto pool', () => {
    fc.assert(
      fc.property(fc.constantFrom('http' as const, 'auto' as const), fc.array(resultArb, { minLength: 1, maxLength: 12 }), (poolType, results) => {
        const t = new ProxyTable(2);
        const slot = t.add(fresh(7));
        let row = fresh(7);
        let at = NOW;
        for (const r of results) {
          at += 97_000;
          const geo = r.geo ? { country: 'FR', country_name: 'France', location: 'Paris', isp: 'x', asn: 12, coordinates: null } : null;
          const ctx = { poolType, intervalS: 300, nowMs: at, random: () => 0.25 };
          const before = plain(row);
          const want = foldCheck(row, r, geo, ctx);
          const got = foldSlot(t, slot, r, geo, ctx);
          expect([got.outcome, got.event]).toEqual([want.outcome, want.event]);
          row = { ...want.row, responseTimeMs: want.row.responseTimeMs === null ? null : Math.fround(want.row.responseTimeMs) };
          expect(plain(t.rowOf(slot))).toEqual(plain(row));
          const verdictKeys = ['type', 'protocols', 'anonymity', 'https', 'origin', 'country', 'countryName', 'location', 'isp', 'asn'] as const;
          const changed = verdictKeys.some((k) => JSON.stringify(before[k]) !== JSON.stringify(row[k]));
          expect(got.verdictChanged).toBe(changed);
        }
      }),
      { numRuns: 150 },
    );
  });
});
