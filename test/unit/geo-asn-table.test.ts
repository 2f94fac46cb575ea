/** Unit tests for src/geo/asn-table.ts: CSV -> compact ASN ranges, lookups, cache codec. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import {
  buildAsnTable,
  deserializeAsnTable,
  findRange,
  findRangeV4,
  NO_ORG,
  serializeAsnTable,
  type AsnTable,
} from '../../src/geo/asn-table';
import { parseIp } from '../../src/geo/ip-words';

const enc = (s: string) => new TextEncoder().encode(s);

const V4 = [
  '1.0.0.0,1.0.0.255,13335,"Cloudflare, Inc."',
  '1.0.1.0,1.0.1.255,13335,"Cloudflare, Inc."', // adjacent, same AS: merged
  '1.0.4.0,1.0.7.255,38803,Gtelecom Pty Ltd', // gap before it
  '1.0.6.0,1.0.8.255,1,Overlap Corp', // overlaps: clipped to 1.0.8.0
  '2.0.0.0,2.0.0.255,5,"LLC ""SPUTNIK"""',
  '8.8.8.0,8.8.8.255,15169,Google LLC\r',
  '',
].join('\n');
const V6 = ['2001:4860::,2001:4860:ffff:ffff:ffff:ffff:ffff:ffff,15169,Google LLC', '2606:4700::,2606:4700:ffff:ffff:ffff:ffff:ffff:ffff,13335,"Cloudflare, Inc."'].join('\n');

function who(t: AsnTable, ip: string): [number, string | null] | null {
  const p = parseIp(ip)!;
  const r = p.v === 4 ? t.v4 : t.v6;
  const i = p.v === 4 ? findRangeV4(r, p.n) : findRange(r, p.w);
  if (i < 0) return null;
  const org = r.orgs[i]!;
  return [r.asns[i]!, org === NO_ORG ? null : t.orgNames[org]!];
}

describe('buildAsnTable', () => {
  const t = buildAsnTable(enc(V4), enc(V6));
  test('ranges, gaps, merges, overlaps and CSV quoting', () => {
    expect(who(t, '0.255.255.255')).toEqual([0, null]);
    expect(who(t, '1.0.0.0')).toEqual([13335, 'Cloudflare, Inc.']);
    expect(who(t, '1.0.1.255')).toEqual([13335, 'Cloudflare, Inc.']);
    expect(who(t, '1.0.2.0')).toEqual([0, null]);
    expect(who(t, '1.0.5.1')).toEqual([38803, 'Gtelecom Pty Ltd']);
    expect(who(t, '1.0.7.255')).toEqual([38803, 'Gtelecom Pty Ltd']);
    expect(who(t, '1.0.8.0')).toEqual([1, 'Overlap Corp']);
    expect(who(t, '1.0.9.0')).toEqual([0, null]);
    expect(who(t, '2.0.0.7')).toEqual([5, 'LLC "SPUTNIK"']);
    expect(who(t, '8.8.8.8')).toEqual([15169, 'Google LLC']);
    expect(who(t, '8.8.9.0')).toEqual([0, null]);
    expect(who(t, '255.255.255.255')).toEqual([0, null]);
    // adjacent equal rows were merged into one entry
    expect(t.v4.asns.filter((a) => a === 13335).length).toBe(1);
    expect(t.orgNames.filter((n) => n === 'Google LLC').length).toBe(1);
  });
  test('IPv6 ranges', () => {
    expect(who(t, '2001:4860:4860::8888')).toEqual([15169, 'Google LLC']);
    expect(who(t, '2606:4700:4700::1111')).toEqual([13335, 'Cloudflare, Inc.']);
    expect(who(t, '2001:4861::')).toEqual([0, null]);
    expect(who(t, '::2')).toEqual([0, null]);
    expect(who(t, 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff')).toEqual([0, null]);
  });
  test('a range reaching the last address leaves no trailing gap', () => {
    const last = buildAsnTable(enc('0.0.0.0,255.255.255.255,7,All\n'), enc(''));
    expect(last.v4.asns.length).toBe(1);
    expect(who(last, '255.255.255.255')).toEqual([7, 'All']);
  });
  test('malformed rows throw a coded error', () => {
    expect(() => buildAsnTable(enc('1.0.0.0,1.0.0.255\n'), enc(''))).toThrow(expect.objectContaining({ code: 'geo_bad_asn_data' }));
    expect(() => buildAsnTable(enc('1.0.0.9,1.0.0.1,5,x\n'), enc(''))).toThrow(expect.objectContaining({ code: 'geo_bad_asn_data' }));
    expect(() => buildAsnTable(enc('1.0.0.0,1.0.0.1,-5,x\n'), enc(''))).toThrow(expect.objectContaining({ code: 'geo_bad_asn_data' }));
  });
  test('matches a linear scan of random sorted ranges', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 2000 }), { minLength: 2, maxLength: 40 }).map((xs) => xs.sort((a, b) => a - b)),
        fc.array(fc.integer({ min: 0, max: 2100 }), { minLength: 1, maxLength: 30 }),
        (cuts, probes) => {
          const rows: { s: number; e: number; asn: number }[] = [];
          for (let k = 0; k + 1 < cuts.length; k += 2) rows.push({ s: cuts[k]!, e: cuts[k + 1]!, asn: (k % 3) + 1 });
          const ip = (n: number) => `10.0.${n >> 8}.${n & 255}`;
          const csv = rows.map((r) => `${ip(r.s)},${ip(r.e)},${r.asn},AS${r.asn}`).join('\n');
          const t2 = buildAsnTable(enc(csv), enc(''));
          for (const p of probes) {
            const hit = rows.find((r) => r.s <= p && p <= r.e);
            expect(who(t2, ip(p))).toEqual(hit ? [hit.asn, `AS${hit.asn}`] : [0, null]);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('serialize / deserialize', () => {
  const t = buildAsnTable(enc(V4), enc(V6));
  test('round trip keeps every array and name', () => {
    const bytes = serializeAsnTable(t, 'k1');
    const back = deserializeAsnTable(bytes, 'k1')!;
    expect(back).not.toBeNull();
    expect([...back.v4.starts]).toEqual([...t.v4.starts]);
    expect([...back.v4.asns]).toEqual([...t.v4.asns]);
    expect([...back.v6.starts]).toEqual([...t.v6.starts]);
    expect([...back.v6.orgs]).toEqual([...t.v6.orgs]);
    expect(back.orgNames).toEqual(t.orgNames);
    expect(who(back, '8.8.8.8')).toEqual([15169, 'Google LLC']);
  });
  test('another key, truncation or junk gives null (stale cache)', () => {
    const bytes = serializeAsnTable(t, 'k1');
    expect(deserializeAsnTable(bytes, 'k2')).toBeNull();
    expect(deserializeAsnTable(bytes.slice(0, bytes.length - 1), 'k1')).toBeNull();
    expect(deserializeAsnTable(new Uint8Array(64), 'k1')).toBeNull();
    expect(deserializeAsnTable(new Uint8Array(3), 'k1')).toBeNull();
  });
});
