/** Tests for src/proxy/host.ts: strict IPv4, DNS names, IPv6 validation and canonical text. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { isIPv6 } from 'node:net';
import { HOST_INVALID, HOST_NAME, HOST_NAME_UPPER, canonicalIPv6, hostKindAt, hostNameAt, ipv4At, isStrictIPv4 } from '../../src/proxy/host';

/**
 * WHATWG URL's IPv6 serialisation as the reference. Bun's URL (WebKit) rejects a
 * few valid forms that Node accepts (e.g. "0:0:0::0:0.0.0.0" -> "::" in Node);
 * for those the reference is the canonical text of the address re-serialised,
 * which must then be a fixed point.
 */
const whatwg = (v6: string): string => {
  try {
    return new URL(`http://[${v6}]/`).hostname.slice(1, -1);
  } catch {
    const c = canonicalIPv6(v6);
    if (c === null) throw new Error(`not an address: ${v6}`);
    return whatwg(c);
  }
};

describe('IPv4', () => {
  test.each([
    ['0.0.0.0', 0],
    ['1.2.3.4', 0x01020304],
    ['255.255.255.255', 0xffffffff],
    ['10.0.0.1', 0x0a000001],
  ])('%p is valid', (s, v) => {
    expect(isStrictIPv4(s)).toBe(true);
    expect(ipv4At(s, 0, s.length)).toBe(v);
  });
  test.each(['', '1.2.3', '1.2.3.4.', '.1.2.3.4', '01.2.3.4', '1.2.3.00', '256.0.0.0', '1.2.3.1000', '1..3.4', '1.2.3.a', ' 1.2.3.4'])(
    '%p is invalid',
    (s) => {
      expect(isStrictIPv4(s)).toBe(false);
    },
  );
  test('agrees with a reference on generated dotted quads', () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[0-9]{1,4}$/), { minLength: 4, maxLength: 4 }), (parts) => {
        const s = parts.join('.');
        const ref = parts.every((p) => Number(p) <= 255 && (p === '0' || !p.startsWith('0')));
        expect(isStrictIPv4(s)).toBe(ref);
      }),
      { numRuns: 500 },
    );
  });
});

describe('host names', () => {
  const name = (s: string) => hostNameAt(s, 0, s.length);
  test('lower-cases and validates labels', () => {
    expect(name('Example.COM')).toBe('example.com');
    expect(name('xn--bcher-kva.example')).toBe('xn--bcher-kva.example');
    expect(name('a')).toBe('a');
    expect(name('1.2.3.4')).toBe('1.2.3.4');
    expect(name('1a.example')).toBe('1a.example');
    expect(name('0x.example')).toBe('0x.example');
  });
  test.each(['', '-a', 'a-', 'a..b', 'a.', '.a', 'a_b', 'a b', '1.2.3', '0x1', 'a.0XFF', 'a.12', `${'a'.repeat(64)}`])(
    '%p is invalid',
    (s) => {
      expect(name(s)).toBeNull();
    },
  );
  test('fast-check domains are accepted', () => {
    fc.assert(
      fc.property(fc.domain(), (d) => {
        expect(name(d)).toBe(d.toLowerCase());
      }),
      { numRuns: 300 },
    );
  });
  test('hostKindAt: the IPv4 value, a name with or without upper case, or invalid; within [a, b) only', () => {
    const kind = (s: string) => hostKindAt(s, 0, s.length);
    expect(kind('1.2.3.4')).toBe(0x01020304);
    expect(kind('0.0.0.0')).toBe(0);
    expect(kind('255.255.255.255')).toBe(0xffffffff);
    expect(kind('example.com')).toBe(HOST_NAME);
    expect(kind('1a.example')).toBe(HOST_NAME);
    expect(kind('Example.com')).toBe(HOST_NAME_UPPER);
    expect(kind('a.0x1')).toBe(HOST_INVALID);
    expect(kind('127.1')).toBe(HOST_INVALID);
    expect(kind('')).toBe(HOST_INVALID);
    expect(hostKindAt('x1.2.3.4:80', 1, 8)).toBe(0x01020304);
    expect(hostKindAt('[Ab.c]', 1, 5)).toBe(HOST_NAME_UPPER);
  });
  test('hostKindAt agrees with hostNameAt and ipv4At', () => {
    const hostish = fc
      .array(fc.constantFrom('a', 'Z', '0', '1', '25', '256', '.', '-', '_', 'x', '0x', 'F'), { maxLength: 12 })
      .map((a) => a.join(''));
    fc.assert(
      fc.property(fc.oneof(hostish, fc.domain(), fc.ipV4()), (s) => {
        const k = hostKindAt(s, 0, s.length);
        const n = hostNameAt(s, 0, s.length);
        expect(k === HOST_INVALID).toBe(n === null);
        if (k >= 0) expect(k).toBe(ipv4At(s, 0, s.length));
        if (k === HOST_NAME) expect(n).toBe(s);
        if (k === HOST_NAME_UPPER) expect(n).toBe(s.toLowerCase());
        if (k === HOST_NAME_UPPER) expect(s).not.toBe(s.toLowerCase());
      }),
      { numRuns: 1000 },
    );
  });
});

describe('IPv6', () => {
  test.each([
    ['::', '::'],
    ['::1', '::1'],
    ['1::', '1::'],
    ['2001:DB8::1', '2001:db8::1'],
    ['2001:0db8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
    ['1:0:0:2:0:0:0:3', '1:0:0:2::3'],
    ['1:0:0:2:0:0:3:4', '1::2:0:0:3:4'],
    ['1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8'],
    ['1:0:3:4:5:6:7:8', '1:0:3:4:5:6:7:8'],
    ['::ffff:1.2.3.4', '::ffff:102:304'],
    ['1:2:3:4:5:6:1.2.3.4', '1:2:3:4:5:6:102:304'],
    ['1:2:3:4:5:6:7::', '1:2:3:4:5:6:7:0'],
    ['0:0:0::0:0.0.0.0', '::'], // Node's URL agrees; Bun's URL rejects it
  ])('%p -> %p', (input, out) => {
    expect(canonicalIPv6(input)).toBe(out);
  });
  test.each([
    '', ':', ':::', '1:2', '1::2::3', ':1::2', '1::2:', '1:2:3:4:5:6:7:8:9', '1:2:3:4:5:6:7:8::', '12345::',
    'g::', '::1.2.3', '::1.2.3.04', '1:2:3:4:5:6:7:1.2.3.4', '::1.2.3.4:5', 'fe80::1%eth0', '1.2.3.4',
  ])('%p is invalid', (s) => {
    expect(canonicalIPv6(s)).toBeNull();
  });
  test('canonical text is a fixed point, for every pattern of zero groups; near misses are rebuilt', () => {
    for (let m = 0; m < 256; m++) {
      const full = Array.from({ length: 8 }, (_, k) => ((m >> k) & 1 ? (k * 0x1111 + 0xa).toString(16) : '0')).join(':');
      const canon = whatwg(full);
      expect(canonicalIPv6(full)).toBe(canon);
      expect(canonicalIPv6(canon)).toBe(canon);
      expect(canonicalIPv6(canon.toUpperCase())).toBe(canon);
    }
    expect(canonicalIPv6('1:0:0:2:0:0:0:3')).toBe('1:0:0:2::3'); // same groups, longer run wins
    expect(canonicalIPv6('1::2:0:0:3')).toBe('1::2:0:0:3');
    expect(canonicalIPv6('1:0::3')).toBe('1::3');
    expect(canonicalIPv6('01::3')).toBe('1::3');
  });
  test('canonical text equals WHATWG URL serialisation for generated addresses', () => {
    fc.assert(
      fc.property(fc.ipV6(), (v6) => {
        expect(canonicalIPv6(v6)).toBe(whatwg(v6));
        expect(canonicalIPv6(v6.toUpperCase())).toBe(whatwg(v6));
      }),
      { numRuns: 1000 },
    );
  });
  test('accepts exactly what node:net isIPv6 accepts (no zone ids)', () => {
    const chunk = fc.constantFrom('0', '1', 'a', 'F', 'ffff', '12345', ':', '::', '.', '1.2.3.4', '255', '09', 'g');
    fc.assert(
      fc.property(fc.array(chunk, { maxLength: 16 }), (parts) => {
        const s = parts.join('');
        const ok = canonicalIPv6(s) !== null;
        expect(ok).toBe(isIPv6(s));
        if (ok) expect(canonicalIPv6(s)).toBe(whatwg(s));
      }),
      { numRuns: 1500 },
    );
  });
});
