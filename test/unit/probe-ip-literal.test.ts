/** IP literal parsing and normalisation. */
import { describe, expect, test } from 'bun:test';
import { normalizeIp, parseIPv4, parseIPv6 } from '../../src/probe/codec/ip-literal';

describe('parseIPv4', () => {
  test('parses dotted quads to unsigned integers', () => {
    expect(parseIPv4('0.0.0.0')).toBe(0);
    expect(parseIPv4('1.2.3.4')).toBe(0x01020304);
    expect(parseIPv4('255.255.255.255')).toBe(0xffffffff);
  });
  test.each(['', '1', '1.2.3', '1.2.3.4.', '.1.2.3', '1..2.3', '1.2.3.256', '1.2.3.04', '1.2.3.a', '1.2.3.4/8', ' 1.2.3.4'])(
    'rejects %p',
    (s) => {
      expect(parseIPv4(s)).toBe(-1);
    },
  );
});

describe('parseIPv6', () => {
  test('expands :: and embedded IPv4', () => {
    expect(parseIPv6('::')).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(parseIPv6('::1')).toEqual([0, 0, 0, 0, 0, 0, 0, 1]);
    expect(parseIPv6('2001:db8::8:800:200c:417a')).toEqual([0x2001, 0xdb8, 0, 0, 8, 0x800, 0x200c, 0x417a]);
    expect(parseIPv6('::ffff:1.2.3.4')).toEqual([0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304]);
    expect(parseIPv6('1:2:3:4:5:6:7:8')).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(parseIPv6('1:2:3:4:5:6:1.2.3.4')).toEqual([1, 2, 3, 4, 5, 6, 0x0102, 0x0304]);
  });
  test.each([':', ':::', '1::2::3', '1:2:3:4:5:6:7', '1:2:3:4:5:6:7:8:9', '12345::', 'g::', '1.2.3.4::', '::1.2.3', '1:2:3:4:5:6:7::8'])(
    'rejects %p',
    (s) => {
      expect(parseIPv6(s)).toBeNull();
    },
  );
});

describe('normalizeIp', () => {
  test.each([
    ['1.2.3.4', '1.2.3.4'],
    ['::ffff:1.2.3.4', '1.2.3.4'],
    ['::FFFF:0102:0304', '1.2.3.4'],
    ['2001:DB8::1', '2001:db8:0:0:0:0:0:1'],
    ['2001:0db8:0000:0000:0000:0000:0000:0001', '2001:db8:0:0:0:0:0:1'],
    ['fe80::1%eth0', 'fe80:0:0:0:0:0:0:1'],
    ['::', '0:0:0:0:0:0:0:0'],
  ])('%s -> %s', (input, out) => {
    expect(normalizeIp(input)).toBe(out);
  });
  test.each(['', 'example.com', '1.2.3.4:80', '[::1]', '1.2.3.45.6'])('not an address: %p', (s) => {
    expect(normalizeIp(s)).toBeNull();
  });
});
