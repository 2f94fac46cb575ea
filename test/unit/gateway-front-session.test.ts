/**
 * The front of a gateway connection (src/gateway/front-session.ts), pure:
 * bytes in, actions out. HTTP and SOCKS5 to the credential check and the
 * target, every refusal with its answer, any split of the client's bytes
 * (fast-check), and any bytes never throw.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { blockedBytes, deniedBytes, FrontSession, refusalBytes, type FrontAction } from '../../src/gateway/front-session';
import { SOCKS5_REP, socks4Refusal, socks5AuthReply, socks5MethodReply } from '../../src/gateway/codec/socks5-server';
import { gatewayError, proxyAuthRequired } from '../../src/gateway/codec/response-head';
import { basicAuth } from '../../src/probe/codec/http-request';
import { SOCKS5_USER_PASS } from '../../src/probe/codec/socks-codec';

const B = (...bytes: number[]) => Buffer.from(bytes);
const AUTH = `Proxy-Authorization: ${basicAuth('pool-abcdefghij', 'key-1')}\r\n`;
const connectHead = (auth = AUTH) => `CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n${auth}\r\n`;
const SOCKS_GREETING = B(5, 1, 2);
const socksAuth = (user: string, pass: string) => Buffer.concat([B(1, user.length), Buffer.from(user), B(pass.length), Buffer.from(pass)]);
const SOCKS_REQUEST = Buffer.concat([B(5, 1, 0, 3, 11), Buffer.from('example.com'), B(0, 80)]);

/** Pushes `bytes` cut at `cuts`; every action. */
function pushAll(s: FrontSession, bytes: Buffer, cuts: number[] = []): FrontAction[] {
  const out: FrontAction[] = [];
  let at = 0;
  for (const c of [...new Set(cuts.map((x) => x % (bytes.length + 1)))].sort((a, b) => a - b).concat(bytes.length)) {
    if (c > at) out.push(...s.push(bytes.subarray(at, c)));
    at = c;
  }
  return out;
}

describe('HTTP', () => {
  test('CONNECT with Basic credentials: check them; accepted: the target, with the bytes that followed the head', () => {
    const s = new FrontSession();
    expect(s.push(Buffer.from(connectHead() + 'early'))).toEqual([{ kind: 'check', username: 'pool-abcdefghij', password: 'key-1' }]);
    expect([s.stage, s.front]).toEqual(['checking', 'http']);
    const [a] = s.accepted([Buffer.from('more')]);
    expect(a).toMatchObject({ kind: 'target', target: { host: 'example.com', port: 443, head: { method: 'CONNECT', connect: true } } });
    expect((a as { rest: Buffer[] }).rest.map(String)).toEqual(['early', 'more']);
    expect(s.stage).toBe('done');
    expect(s.accepted([])).toEqual([]);
  });

  test('an absolute-form request carries its head (to forward)', () => {
    const s = new FrontSession();
    s.push(Buffer.from(`GET http://example.com/a?b HTTP/1.1\r\nHost: example.com\r\n${AUTH}\r\n`));
    expect(s.accepted([])).toMatchObject([{ kind: 'target', target: { host: 'example.com', port: 80, head: { method: 'GET', connect: false, path: '/a?b' } }, rest: [] }]);
  });

  test('no credentials: 407, not a failed attempt; other or malformed credentials: 407, a failed attempt', () => {
    expect(new FrontSession().push(Buffer.from(connectHead('')))).toEqual([
      { kind: 'write', bytes: proxyAuthRequired() },
      { kind: 'refuse', reason: 'auth', failedAttempt: false },
    ]);
    expect(new FrontSession().push(Buffer.from(connectHead('Proxy-Authorization: Bearer x\r\n')))).toEqual([
      { kind: 'write', bytes: proxyAuthRequired() },
      { kind: 'refuse', reason: 'auth', failedAttempt: true },
    ]);
  });

  test('denied: 407 and a failed attempt', () => {
    const s = new FrontSession();
    s.push(Buffer.from(connectHead()));
    expect(s.denied()).toEqual([{ kind: 'write', bytes: proxyAuthRequired() }, { kind: 'refuse', reason: 'auth', failedAttempt: true }]);
    expect(s.denied()).toEqual([]);
  });

  test('a bad head: bad_request; an origin-form request (not a proxy request): unsupported', () => {
    expect(new FrontSession().push(Buffer.from('CONNECT nope HTTP/1.1\r\n\r\n'))).toEqual([
      { kind: 'write', bytes: gatewayError('bad_request') },
      { kind: 'refuse', reason: 'bad_request', failedAttempt: false },
    ]);
    expect(new FrontSession().push(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'))).toEqual([
      { kind: 'write', bytes: gatewayError('unsupported') },
      { kind: 'refuse', reason: 'unsupported', failedAttempt: false },
    ]);
  });
});

describe('SOCKS5', () => {
  test('greeting: username/password asked; auth: check; accepted: the auth reply, then the request\'s target and the bytes after it', () => {
    const s = new FrontSession();
    expect(s.push(SOCKS_GREETING)).toEqual([{ kind: 'write', bytes: socks5MethodReply(SOCKS5_USER_PASS) }]);
    expect(s.push(socksAuth('pool-abcdefghij', 'k'))).toEqual([{ kind: 'check', username: 'pool-abcdefghij', password: 'k' }]);
    expect(s.accepted([SOCKS_REQUEST, Buffer.from('hi')])).toEqual([
      { kind: 'write', bytes: socks5AuthReply(true) },
      { kind: 'target', target: { host: 'example.com', port: 80, head: null }, rest: [Buffer.from('hi')] },
    ]);
  });

  test('the request may come later than the accept', () => {
    const s = new FrontSession();
    s.push(Buffer.concat([SOCKS_GREETING, socksAuth('u', 'p')]));
    expect(s.accepted([])).toEqual([{ kind: 'write', bytes: socks5AuthReply(true) }]);
    expect(s.stage).toBe('socks');
    expect(s.push(SOCKS_REQUEST)).toEqual([{ kind: 'target', target: { host: 'example.com', port: 80, head: null }, rest: [] }]);
  });

  test('denied: the SOCKS5 auth failure; a bad request: the server codec\'s reply, bad_request', () => {
    const s = new FrontSession();
    s.push(Buffer.concat([SOCKS_GREETING, socksAuth('u', 'p')]));
    expect(s.denied()).toEqual([{ kind: 'write', bytes: socks5AuthReply(false) }, { kind: 'refuse', reason: 'auth', failedAttempt: true }]);
    const bad = new FrontSession().push(B(5, 1, 0));
    expect(bad.at(-1)).toEqual({ kind: 'refuse', reason: 'bad_request', failedAttempt: false });
  });

  test('any split of the greeting and auth gives the same actions', () => {
    const dialog = Buffer.concat([SOCKS_GREETING, socksAuth('pool-abcdefghij', 'secret')]);
    fc.assert(
      fc.property(fc.array(fc.nat(dialog.length)), (cuts) => {
        expect(pushAll(new FrontSession(), dialog, cuts)).toEqual([
          { kind: 'write', bytes: socks5MethodReply(SOCKS5_USER_PASS) },
          { kind: 'check', username: 'pool-abcdefghij', password: 'secret' },
        ]);
      }),
    );
  });
});

describe('sniff', () => {
  test('SOCKS4: its refusal; anything else: closed without an answer', () => {
    expect(new FrontSession().push(B(4, 1, 0, 80))).toEqual([{ kind: 'write', bytes: socks4Refusal() }, { kind: 'refuse', reason: 'unsupported', failedAttempt: false }]);
    expect(new FrontSession().push(B(0x16, 3, 1))).toEqual([{ kind: 'refuse', reason: 'unsupported', failedAttempt: false }]);
  });

  test('any bytes, any split: no throw, and at most one check, target or refusal', () => {
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 200 }), fc.constantFrom(Buffer.from(connectHead()), Buffer.concat([SOCKS_GREETING, socksAuth('u', 'p')]))), fc.array(fc.nat(200)), (bytes, cuts) => {
        const acts = pushAll(new FrontSession(), Buffer.from(bytes), cuts);
        expect(acts.filter((a) => a.kind !== 'write').length).toBeLessThanOrEqual(1);
      }),
    );
  });
});

describe('answers', () => {
  test('refusals: X-Gateway-Error for HTTP, the SOCKS5 REP for SOCKS5 (the upstream\'s own when given)', () => {
    expect(refusalBytes('http', 'dns_failed')).toBe(gatewayError('dns_failed'));
    expect(refusalBytes('socks5', 'dns_failed')[1]).toBe(SOCKS5_REP.HOST_UNREACHABLE);
    expect(refusalBytes('socks5', 'blocked_target')[1]).toBe(SOCKS5_REP.NOT_ALLOWED);
    expect(refusalBytes('socks5', 'target_unreachable', 5)[1]).toBe(5);
    expect(refusalBytes('socks5', 'upstream_failed')[1]).toBe(SOCKS5_REP.GENERAL_FAILURE);
    expect(blockedBytes('http', 7)).toBe(gatewayError('auth_blocked', 7));
    expect(blockedBytes('socks5', 7)).toEqual(socks5AuthReply(false));
    expect(deniedBytes('http')).toBe(proxyAuthRequired());
  });
});
