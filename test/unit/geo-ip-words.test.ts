/** Unit tests for src/geo/ip-words.ts: IP text -> numbers for the geo lookups. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { isIP } from 'node:net';
import { parseIp, parseIpv4, parseIpv6Groups } from '../../src/geo/ip-words';

describe('parseIpv4', () => {
  test('valid dotted quads', () => {
    expect(parseIpv4('0.0.0.0')).toBe(0);
    expect(parseIpv4('8.8.8.8')).toBe(0x08080808);
    expect(parseIpv4('255.255.255.255')).toBe(0xffffffff);
    expect(parseIpv4('x1.2.3.4y', 1, 8)).toBe(0x01020304);
  });
  test('rejects everything else', () => {
    for (const s of ['', '1.2.3', '1.2.3.4.5', '256.1.1.1', '01.2.3.4', '1..2.3', '1.2.3.', '.1.2.3', '1.2.3.4 ', 'a.b.c.d', '1.2.3.-4']) {
      expect(parseIpv4(s)).toBe(-1);
    }
  });
  test('agrees with node:net on random strings and on every uint32 rendering', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), (n) => {
        const s = [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
        expect(parseIpv4(s)).toBe(n);
      }),
    );
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9.]{0,16}$/), (s) => {
        expect(parseIpv4(s) >= 0).toBe(isIP(s) === 4);
      }),
    );
  });
});

describe('parseIpv6Groups', () => {
  test('forms with ::, embedded IPv4 and zone', () => {
    expect([...parseIpv6Groups('::')!]).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect([...parseIpv6Groups('::1')!]).toEqual([0, 0, 0, 0, 0, 0, 0, 1]);
    expect([...parseIpv6Groups('1::')!]).toEqual([1, 0, 0, 0, 0, 0, 0, 0]);
    expect([...parseIpv6Groups('2001:4860:4860::8888')!]).toEqual([0x2001, 0x4860, 0x4860, 0, 0, 0, 0, 0x8888]);
    expect([...parseIpv6Groups('::ffff:1.2.3.4')!]).toEqual([0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304]);
    expect([...parseIpv6Groups('fe80::1%eth0')!]).toEqual([0xfe80, 0, 0, 0, 0, 0, 0, 1]);
    expect([...parseIpv6Groups('1:2:3:4:5:6:7:8')!]).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect([...parseIpv6Groups('1:2:3:4:5:6:7::')!]).toEqual([1, 2, 3, 4, 5, 6, 7, 0]);
  });
  test('rejects malformed text', () => {
    for (const s of ['', ':', ':::', '1:2:3:4:5:6:7', '1:2:3:4:5:6:7:8:9', '1::2::3', '12345::', 'g::', '1:', ':1', '::1.2.3', '1.2.3.4::', '%eth0']) {
      expect(parseIpv6Groups(s)).toBeNull();
    }
  });
  test('eight groups in full, compressed (URL canonical) and mixed forms parse back to the same groups', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 }), (g) => {
        const full = g.map((x) => x.toString(16)).join(':');
        expect([...parseIpv6Groups(full)!]).toEqual(g);
        const compressed = new URL(`http://[${full}]/`).hostname.slice(1, -1);
        expect([...parseIpv6Groups(compressed)!]).toEqual(g);
        const mixed = `${g.slice(0, 6).map((x) => x.toString(16)).join(':')}:${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`;
        expect([...parseIpv6Groups(mixed)!]).toEqual(g);
      }),
      { numRuns: 500 },
    );
  });
  test('accepts exactly what node:net accepts', () => {
    fc.assert(
      fc.property(fc.ipV6(), (s) => {
        expect(parseIpv6Groups(s)).not.toBeNull();
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9a-f:.]{0,20}$/), (s) => {
        expect(parseIpv6Groups(s) !== null).toBe(isIP(s) === 6);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('parseIp', () => {
  test('v4, v6, mapped v4, brackets, junk', () => {
    expect(parseIp('1.2.3.4')).toEqual({ v: 4, n: 0x01020304 });
    expect(parseIp('::ffff:8.8.8.8')).toEqual({ v: 4, n: 0x08080808 });
    expect(parseIp('::ffff:808:808')).toEqual({ v: 4, n: 0x08080808 });
    const v6 = parseIp('[2001:db8::1]');
    expect(v6?.v).toBe(6);
    expect(v6?.v === 6 ? [...v6.w] : null).toEqual([0x20010db8, 0, 0, 1]);
    expect(parseIp('example.com')).toBeNull();
    expect(parseIp('')).toBeNull();
  });
});
