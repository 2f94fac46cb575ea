/** SOCKS4/4a/5 frames: exact request bytes, reply verdicts, fuzzing (never throw, split-invariant). */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import {
  buildSocks4Connect,
  buildSocks5Auth,
  buildSocks5Connect,
  buildSocks5Greeting,
  parseSocks4Reply,
  parseSocks5AuthReply,
  parseSocks5ConnectReply,
  parseSocks5MethodReply,
  type SocksReply,
} from '../../src/probe/codec/socks-codec';

const hex = (b: Buffer): string => b.toString('hex');

describe('builders', () => {
  test('SOCKS4 with an IPv4 target', () => {
    expect(hex(buildSocks4Connect('1.2.3.4', 80, ''))).toBe('0401' + '0050' + '01020304' + '00');
    expect(hex(buildSocks4Connect('1.2.3.4', 443, 'bob'))).toBe('0401' + '01bb' + '01020304' + '626f62' + '00');
  });
  test('SOCKS4a with a hostname target', () => {
    expect(hex(buildSocks4Connect('ex.com', 8080, 'u'))).toBe('0401' + '1f90' + '00000001' + '75' + '00' + Buffer.from('ex.com').toString('hex') + '00');
  });
  test('SOCKS4 cannot carry IPv6', () => {
    expect(() => buildSocks4Connect('::1', 80, '')).toThrow(RangeError);
  });
  test('SOCKS5 greeting', () => {
    expect(hex(buildSocks5Greeting(false))).toBe('050100');
    expect(hex(buildSocks5Greeting(true))).toBe('05020002');
  });
  test('RFC 1929 auth', () => {
    expect(hex(buildSocks5Auth('user', 'pässword'))).toBe(
      '01' + '04' + Buffer.from('user').toString('hex') + '09' + Buffer.from('pässword').toString('hex'),
    );
    expect(hex(buildSocks5Auth('', ''))).toBe('010000');
    expect(() => buildSocks5Auth('x'.repeat(256), '')).toThrow(RangeError);
  });
  test('SOCKS5 CONNECT for IPv4, IPv6 and names', () => {
    expect(hex(buildSocks5Connect('10.0.0.1', 1080))).toBe('05010001' + '0a000001' + '0438');
    expect(hex(buildSocks5Connect('2001:db8::1', 443))).toBe('05010004' + '20010db8000000000000000000000001' + '01bb');
    expect(hex(buildSocks5Connect('judge.example', 80))).toBe('05010003' + '0d' + Buffer.from('judge.example').toString('hex') + '0050');
    expect(() => buildSocks5Connect('a'.repeat(256), 80)).toThrow(RangeError);
  });
});

const B = (...bytes: number[]): Buffer => Buffer.from(bytes);

describe('reply parsers', () => {
  test('SOCKS4 replies', () => {
    expect(parseSocks4Reply(B(0, 0x5a, 0, 0, 0, 0, 0))).toEqual({ kind: 'incomplete' });
    expect(parseSocks4Reply(B(0, 0x5a, 0, 80, 1, 2, 3, 4, 9))).toEqual({ kind: 'ok', consumed: 8, value: 0x5a });
    expect(parseSocks4Reply(B(4, 0x5a, 0, 0, 0, 0, 0, 0))).toMatchObject({ kind: 'ok' });
    expect(parseSocks4Reply(B(0, 0x5b, 0, 0, 0, 0, 0, 0))).toMatchObject({ kind: 'fail', code: 'socks_rejected' });
    expect(parseSocks4Reply(B(0, 0x5c, 0, 0, 0, 0, 0, 0))).toMatchObject({ kind: 'fail', code: 'socks_rejected' });
    expect(parseSocks4Reply(B(0, 0x5d, 0, 0, 0, 0, 0, 0))).toMatchObject({ kind: 'fail', code: 'auth_required' });
    expect(parseSocks4Reply(B(0, 0x10, 0, 0, 0, 0, 0, 0))).toMatchObject({ kind: 'fail', code: 'bad_response' });
    expect(parseSocks4Reply(B(0x48))).toMatchObject({ kind: 'fail', code: 'bad_response' });
  });
  test('SOCKS5 method replies', () => {
    expect(parseSocks5MethodReply(B(5), false)).toEqual({ kind: 'incomplete' });
    expect(parseSocks5MethodReply(B(5, 0), false)).toEqual({ kind: 'ok', consumed: 2, value: 0 });
    expect(parseSocks5MethodReply(B(5, 2), true)).toEqual({ kind: 'ok', consumed: 2, value: 2 });
    expect(parseSocks5MethodReply(B(5, 2), false)).toMatchObject({ kind: 'fail', code: 'bad_response' });
    expect(parseSocks5MethodReply(B(5, 0xff), false)).toMatchObject({ kind: 'fail', code: 'auth_required' });
    expect(parseSocks5MethodReply(B(5, 0xff), true)).toMatchObject({ kind: 'fail', code: 'socks_rejected' });
    expect(parseSocks5MethodReply(B(4, 0), false)).toMatchObject({ kind: 'fail', code: 'bad_response' });
  });
  test('RFC 1929 replies', () => {
    expect(parseSocks5AuthReply(B(1))).toEqual({ kind: 'incomplete' });
    expect(parseSocks5AuthReply(B(1, 0))).toEqual({ kind: 'ok', consumed: 2, value: 0 });
    expect(parseSocks5AuthReply(B(5, 0))).toMatchObject({ kind: 'ok' });
    expect(parseSocks5AuthReply(B(1, 1))).toMatchObject({ kind: 'fail', code: 'auth_required' });
    expect(parseSocks5AuthReply(B(0x48, 0))).toMatchObject({ kind: 'fail', code: 'bad_response' });
  });
  test('SOCKS5 CONNECT replies', () => {
    expect(parseSocks5ConnectReply(B(5, 0, 0, 1, 1, 2, 3, 4, 0))).toEqual({ kind: 'incomplete' });
    expect(parseSocks5ConnectReply(B(5, 0, 0, 1, 1, 2, 3, 4, 0, 80, 72))).toEqual({ kind: 'ok', consumed: 10, value: 0 });
    expect(parseSocks5ConnectReply(Buffer.concat([B(5, 0, 0, 4), Buffer.alloc(18)]))).toMatchObject({ consumed: 22 });
    expect(parseSocks5ConnectReply(B(5, 0, 0, 3, 2, 97, 98, 0, 80))).toMatchObject({ consumed: 9 });
    expect(parseSocks5ConnectReply(B(5, 0, 0, 3, 2, 97, 98, 0))).toEqual({ kind: 'incomplete' });
    expect(parseSocks5ConnectReply(B(5, 5))).toMatchObject({ kind: 'fail', code: 'socks_rejected', message: 'SOCKS5 CONNECT failed: connection refused (5)' });
    expect(parseSocks5ConnectReply(B(5, 2))).toMatchObject({ kind: 'fail', code: 'socks_rejected' });
    expect(parseSocks5ConnectReply(B(5, 9))).toMatchObject({ kind: 'fail', code: 'bad_response' });
    expect(parseSocks5ConnectReply(B(5, 0, 0, 7, 0))).toMatchObject({ kind: 'fail', code: 'bad_response' });
    expect(parseSocks5ConnectReply(B(0x48, 0x54))).toMatchObject({ kind: 'fail', code: 'bad_response' });
  });
});

/** Feeds chunks into an accumulator the way the socket driver does; returns the first non-incomplete answer. */
function feed(parse: (b: Buffer) => SocksReply, input: Buffer, cuts: number[]): SocksReply {
  let acc = Buffer.alloc(0);
  let last = 0;
  for (const c of [...cuts, input.length]) {
    if (c < last) continue;
    acc = Buffer.concat([acc, input.subarray(last, c)]);
    last = c;
    const r = parse(acc);
    if (r.kind !== 'incomplete') return r;
  }
  return parse(acc);
}

const PARSERS: [string, (b: Buffer) => SocksReply][] = [
  ['socks4', parseSocks4Reply],
  ['socks5 method (no creds)', (b) => parseSocks5MethodReply(b, false)],
  ['socks5 method (creds)', (b) => parseSocks5MethodReply(b, true)],
  ['socks5 auth', parseSocks5AuthReply],
  ['socks5 connect', parseSocks5ConnectReply],
];

const replyLike = fc.oneof(
  fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.from(a)),
  fc.tuple(fc.constantFrom(0, 1, 4, 5), fc.integer({ min: 0, max: 255 }), fc.constantFrom(0, 1, 3, 4), fc.uint8Array({ maxLength: 30 })).map(
    ([v, c, t, rest]) => Buffer.concat([Buffer.from([v, c, 0, t]), Buffer.from(rest)]),
  ),
);

describe('reply parser fuzzing', () => {
  test.each(PARSERS)('%s: never throws; same answer for any split and byte by byte', (_n, parse) => {
    fc.assert(
      fc.property(replyLike, (input) => {
        const whole = feed(parse, input, []);
        if (whole.kind === 'ok') expect(whole.consumed).toBeLessThanOrEqual(input.length);
        for (let i = 0; i <= input.length; i++) expect(feed(parse, input, [i])).toEqual(whole);
        expect(feed(parse, input, Array.from({ length: input.length }, (_, i) => i))).toEqual(whole);
      }),
      { numRuns: 400 },
    );
  });
});
