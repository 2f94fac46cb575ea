/**
 * The gateway's SOCKS5 server side (src/gateway/codec/socks5-server.ts):
 * the dialog, every error and its reply, and round trips with the house's
 * own client side (src/probe/codec/socks-codec.ts) in both directions;
 * fast-check: no throw on any bytes, the same messages for any split.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import {
  SOCKS5_REP,
  Socks5ServerReader,
  socks4Refusal,
  socks5AuthReply,
  socks5MethodReply,
  socks5Reply,
  type Socks5Message,
} from '../../src/gateway/codec/socks5-server';
import {
  SOCKS5_USER_PASS,
  buildSocks5Auth,
  buildSocks5Connect,
  buildSocks5Greeting,
  parseSocks4Reply,
  parseSocks5AuthReply,
  parseSocks5ConnectReply,
  parseSocks5MethodReply,
} from '../../src/probe/codec/socks-codec';

const B = (...bytes: number[]) => Buffer.from(bytes);

/** Every message the reader gives for the stream, pushed in pieces cut at `cuts`; then the tunnel bytes, when it got there. */
function dialog(stream: Buffer, cuts: number[] = []): (Socks5Message | { kind: 'rest'; bytes: string })[] {
  const r = new Socks5ServerReader();
  const out: (Socks5Message | { kind: 'rest'; bytes: string })[] = [];
  let at = 0;
  const pieces: Buffer[] = [];
  for (const c of [...new Set(cuts.map((x) => x % (stream.length + 1)))].sort((a, b) => a - b)) {
    pieces.push(stream.subarray(at, c));
    at = c;
  }
  pieces.push(stream.subarray(at));
  feed: for (const p of pieces) {
    r.push(p);
    for (;;) {
      const m = r.next();
      if (m.kind === 'need_more') break;
      out.push(m);
      if (m.kind === 'error') break feed;
    }
  }
  if (r.phase === 'done') out.push({ kind: 'rest', bytes: r.rest().toString('latin1') });
  return out;
}

describe('the dialog', () => {
  test('greeting, auth, request, tunnel bytes: all in one write or byte by byte', () => {
    const stream = Buffer.concat([buildSocks5Greeting(true), buildSocks5Auth('pool-abcdefghij-session-x1', 'key'), buildSocks5Connect('example.com', 443), Buffer.from('GET')]);
    const expected: ReturnType<typeof dialog> = [
      { kind: 'greeting', methods: [0, 2] },
      { kind: 'auth', username: 'pool-abcdefghij-session-x1', password: 'key' },
      { kind: 'request', command: 1, host: 'example.com', port: 443, addressType: 'domain' },
      { kind: 'rest', bytes: 'GET' },
    ];
    expect(dialog(stream)).toEqual(expected);
    expect(dialog(stream, Array.from({ length: stream.length }, (_, i) => i))).toEqual(expected);
  });

  test('IPv4, IPv6 and names that are IP literals, normalised', () => {
    const req = (b: Buffer) => dialog(Buffer.concat([buildSocks5Greeting(true), buildSocks5Auth('u', 'p'), b]))[2];
    expect(req(buildSocks5Connect('10.1.2.3', 80))).toEqual({ kind: 'request', command: 1, host: '10.1.2.3', port: 80, addressType: 'ipv4' });
    expect(req(buildSocks5Connect('2001:db8::1', 8080))).toEqual({ kind: 'request', command: 1, host: '2001:db8::1', port: 8080, addressType: 'ipv6' });
    const name = (n: string) => Buffer.concat([B(5, 1, 0, 3, n.length), Buffer.from(n, 'latin1'), B(0, 80)]);
    expect(req(name('Example.ORG'))).toMatchObject({ host: 'example.org' });
    expect(req(name('127.0.0.1'))).toMatchObject({ host: '127.0.0.1', addressType: 'domain' });
    expect(req(name('::FFFF:1.2.3.4'))).toMatchObject({ host: '::ffff:102:304' });
  });

  test('errors and their replies', () => {
    const after = (b: Buffer) => dialog(Buffer.concat([buildSocks5Greeting(true), buildSocks5Auth('u', 'p'), b])).find((m) => m.kind === 'error');
    expect(dialog(B(4, 1, 0, 80))).toEqual([{ kind: 'error', code: 'bad_version', reply: null }]);
    expect(dialog(buildSocks5Greeting(false))).toEqual([{ kind: 'error', code: 'no_acceptable_method', reply: B(5, 0xff) }]);
    expect(dialog(B(5, 0))).toEqual([{ kind: 'error', code: 'no_acceptable_method', reply: B(5, 0xff) }]);
    expect(dialog(Buffer.concat([buildSocks5Greeting(true), B(5, 1, 0x61)]))[1]).toEqual({ kind: 'error', code: 'bad_auth_version', reply: B(1, 1) });
    expect(after(B(5, 2, 0, 1, 1, 2, 3, 4, 0, 80))).toMatchObject({ code: 'command_not_supported', reply: socks5Reply(SOCKS5_REP.COMMAND_NOT_SUPPORTED) });
    expect(after(B(5, 1, 0, 9, 1, 2, 3, 4, 0, 80))).toMatchObject({ code: 'address_type_not_supported', reply: socks5Reply(8) });
    expect(after(B(5, 1, 0, 3, 0, 0, 80))).toMatchObject({ code: 'bad_address', reply: socks5Reply(SOCKS5_REP.HOST_UNREACHABLE) });
    expect(after(Buffer.concat([B(5, 1, 0, 3, 5), Buffer.from('a b.c'), B(0, 80)]))).toMatchObject({ code: 'bad_address' });
    expect(after(B(5, 1, 0, 1, 1, 2, 3, 4, 0, 0))).toMatchObject({ code: 'bad_address' });
    expect(after(B(4, 1, 0, 1))).toMatchObject({ code: 'bad_version', reply: socks5Reply(1) });
    const r = new Socks5ServerReader();
    r.push(B(6));
    expect(r.next()).toEqual(r.next());
    expect(r.phase).toBe('error');
    r.push(B(5, 1, 2));
    expect(r.next()).toMatchObject({ kind: 'error', code: 'bad_version' });
  });
});

describe('replies, read by the client side', () => {
  test('method, auth, connect replies; SOCKS4 refusal', () => {
    expect(parseSocks5MethodReply(socks5MethodReply(SOCKS5_USER_PASS), true)).toEqual({ kind: 'ok', consumed: 2, value: 2 });
    expect(parseSocks5MethodReply(socks5MethodReply(0xff), true)).toMatchObject({ kind: 'fail', code: 'socks_rejected' });
    expect(parseSocks5AuthReply(socks5AuthReply(true))).toEqual({ kind: 'ok', consumed: 2, value: 0 });
    expect(parseSocks5AuthReply(socks5AuthReply(false))).toMatchObject({ kind: 'fail', code: 'auth_required' });
    expect(parseSocks5ConnectReply(socks5Reply(0))).toEqual({ kind: 'ok', consumed: 10, value: 0 });
    expect(parseSocks5ConnectReply(socks5Reply(0, { host: '2001:db8::2', port: 1080 }))).toEqual({ kind: 'ok', consumed: 22, value: 0 });
    expect(socks5Reply(0, { host: '1.2.3.4', port: 258 }).toString('hex')).toBe('05000001010203040102');
    expect(socks5Reply(0, { host: 'not-an-ip', port: 9 }).toString('hex')).toBe('05000001000000000000');
    expect(parseSocks5ConnectReply(socks5Reply(SOCKS5_REP.GENERAL_FAILURE))).toMatchObject({ kind: 'fail', code: 'socks_rejected' });
    expect(parseSocks4Reply(socks4Refusal())).toMatchObject({ kind: 'fail', code: 'socks_rejected' });
  });
});

describe('properties', () => {
  const host = fc.oneof(
    fc.ipV4(),
    fc.ipV6().filter((h) => !h.includes('.')),
    fc.domain().filter((d) => d.length <= 253 && !/^[0-9.]+$/.test(d) && !/\.[0-9]+$/.test(d)),
  );

  test('the client builders, read by the server: the same credentials and target, however split', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 40 }).filter((s) => Buffer.byteLength(s) <= 255 && !s.includes('\ufffd') && s === Buffer.from(s).toString()),
        fc.string({ maxLength: 40 }).filter((s) => Buffer.byteLength(s) <= 255 && s === Buffer.from(s).toString()),
        host,
        fc.integer({ min: 1, max: 65535 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        (user, pass, h, port, cuts) => {
          const stream = Buffer.concat([buildSocks5Greeting(true), buildSocks5Auth(user, pass), buildSocks5Connect(h, port)]);
          const m = dialog(stream, cuts);
          expect(m[1]).toEqual({ kind: 'auth', username: user, password: pass });
          const req = m[2] as Extract<Socks5Message, { kind: 'request' }>;
          expect(req.kind).toBe('request');
          expect(req.port).toBe(port);
          expect(req.host).toBe(h.includes(':') ? req.host : h.toLowerCase());
          expect(buildSocks5Connect(req.host, port).subarray(4)).toEqual(buildSocks5Connect(h.toLowerCase(), port).subarray(4));
        },
      ),
    );
  });

  test('any bytes: never throws; any split gives the same messages', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 120 }), fc.array(fc.nat(), { maxLength: 6 }), (bytes, cuts) => {
        const b = Buffer.from(bytes);
        expect(dialog(b, cuts)).toEqual(dialog(b));
      }),
      { numRuns: 3000 },
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 60 }), fc.array(fc.nat(), { maxLength: 4 }), (tail, cuts) => {
        const b = Buffer.concat([B(5, 1, 2, 1, 1, 0x75, 1, 0x70), Buffer.from(tail)]);
        expect(dialog(b, cuts)).toEqual(dialog(b));
      }),
      { numRuns: 3000 },
    );
  });
});
