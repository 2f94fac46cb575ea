/**
 * The farm proxy's reading of a client (bench/farm/handshake.ts): HTTP
 * absolute-form rewrite and CONNECT, SOCKS4/4a, SOCKS5 with and without
 * auth, the refusals (bad request, non-loopback target, unsupported
 * method / address type), bytes sent ahead, and split-invariance (a message
 * fed byte by byte is `more` until its last byte, then the same step).
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { connectFailedReply, HEAD_MAX, httpErrorReply, isLoopbackTarget, readClient, Stage, type Step, type StageValue } from '../../bench/farm/handshake';

const b = (...x: number[]): Buffer => Buffer.from(x);
const text = (s: string): Buffer => Buffer.from(s, 'latin1');
const tunnel = (s: Step) => {
  if (s.kind !== 'tunnel') throw new Error(`expected tunnel, got ${JSON.stringify(s)}`);
  return { host: s.host, port: s.port, toClient: s.toClient && s.toClient.toString('latin1'), toUpstream: s.toUpstream.toString('latin1') };
};
const socks4 = (port: number, ip: number[], user = '', host?: string): Buffer =>
  Buffer.concat([b(4, 1, port >> 8, port & 0xff, ...ip), text(user), b(0), ...(host === undefined ? [] : [text(host), b(0)])]);
const socks5Req = (atyp: number, addr: number[], port: number, cmd = 1): Buffer => b(5, cmd, 0, atyp, ...addr, port >> 8, port & 0xff);

describe('HTTP', () => {
  test('absolute-form is rewritten to origin-form, proxy headers dropped, the body kept', () => {
    const req = 'GET http://127.0.0.1:8080/judge?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nProxy-Connection: keep-alive\r\nProxy-Authorization: Basic eDp5\r\nX-A: 1\r\n\r\nBODY';
    expect(tunnel(readClient(Stage.HEAD, text(req)))).toEqual({
      host: '127.0.0.1',
      port: 8080,
      toClient: null,
      toUpstream: 'GET /judge?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nX-A: 1\r\n\r\nBODY',
    });
  });

  test('absolute-form: default port 80, default path /, bracketed IPv6', () => {
    expect(tunnel(readClient(Stage.HEAD, text('GET http://localhost HTTP/1.1\r\n\r\n')))).toMatchObject({ host: 'localhost', port: 80, toUpstream: 'GET / HTTP/1.1\r\n\r\n' });
    expect(tunnel(readClient(Stage.HEAD, text('GET http://[::1]:81/a HTTP/1.1\r\n\r\n')))).toMatchObject({ host: '::1', port: 81 });
  });

  test('CONNECT: 200 to the client once connected; bytes sent ahead go upstream', () => {
    expect(tunnel(readClient(Stage.HEAD, text('CONNECT 127.0.0.1:443 HTTP/1.1\r\nHost: x\r\n\r\n\x16\x03')))).toEqual({
      host: '127.0.0.1',
      port: 443,
      toClient: 'HTTP/1.1 200 Connection established\r\n\r\n',
      toUpstream: '\x16\x03',
    });
    expect(tunnel(readClient(Stage.HEAD, text('CONNECT [::1]:8443 HTTP/1.1\r\n\r\n')))).toMatchObject({ host: '::1', port: 8443, toUpstream: '' });
  });

  test('refusals: 400, 403 (counted as a refused target), 431', () => {
    expect(readClient(Stage.HEAD, text('GET\r\n\r\n'))).toEqual({ kind: 'refuse', reply: httpErrorReply('400 Bad Request'), refusedTarget: false });
    expect(readClient(Stage.HEAD, text('GET /origin-form HTTP/1.1\r\n\r\n'))).toEqual({ kind: 'refuse', reply: httpErrorReply('400 Bad Request'), refusedTarget: false });
    expect(readClient(Stage.HEAD, text('GET http://example.com/ HTTP/1.1\r\n\r\n'))).toEqual({ kind: 'refuse', reply: httpErrorReply('403 Forbidden'), refusedTarget: true });
    expect(readClient(Stage.HEAD, text('CONNECT 10.0.0.1:443 HTTP/1.1\r\n\r\n'))).toMatchObject({ kind: 'refuse', refusedTarget: true });
    expect(readClient(Stage.HEAD, text('GET http://127.0.0.1/ HTTP/1.1\r\nX: ' + 'a'.repeat(HEAD_MAX)))).toEqual({
      kind: 'refuse',
      reply: httpErrorReply('431 Request Header Fields Too Large'),
      refusedTarget: false,
    });
    expect(readClient(Stage.HEAD, text('GET http://127.0.0.1/ HTTP/1.1\r\nX: 1'))).toEqual({ kind: 'more' });
    expect(httpErrorReply('403 Forbidden')).toBe('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
  });
});

describe('SOCKS4/4a', () => {
  test('SOCKS4 with an IPv4 target and a user id; bytes sent ahead go upstream', () => {
    const req = Buffer.concat([socks4(80, [127, 0, 0, 2], 'bob'), text('GET')]);
    expect(tunnel(readClient(Stage.HEAD, req))).toEqual({ host: '127.0.0.2', port: 80, toClient: b(0, 0x5a, 0, 0, 0, 0, 0, 0).toString('latin1'), toUpstream: 'GET' });
  });

  test('SOCKS4a: the host name after the user id', () => {
    expect(tunnel(readClient(Stage.HEAD, socks4(8080, [0, 0, 0, 1], '', 'localhost')))).toMatchObject({ host: 'localhost', port: 8080, toUpstream: '' });
  });

  test('refused: a target that is not loopback, a command other than CONNECT', () => {
    const rejected: Step = { kind: 'refuse', reply: b(0, 0x5b, 0, 0, 0, 0, 0, 0), refusedTarget: false };
    expect(readClient(Stage.HEAD, socks4(80, [10, 0, 0, 1]))).toEqual(rejected);
    const bind = socks4(80, [127, 0, 0, 1]);
    bind[1] = 2;
    expect(readClient(Stage.HEAD, bind)).toEqual(rejected);
  });
});

describe('SOCKS5', () => {
  test('no auth: the greeting is answered, the request may come in the same bytes', () => {
    const step = readClient(Stage.HEAD, Buffer.concat([b(5, 1, 0), socks5Req(1, [127, 0, 0, 1], 80)]));
    expect(step).toMatchObject({ kind: 'reply', reply: b(5, 0), next: Stage.SOCKS5_REQ });
    if (step.kind !== 'reply') throw new Error('reply');
    expect(tunnel(readClient(step.next, step.rest!))).toEqual({
      host: '127.0.0.1',
      port: 80,
      toClient: b(5, 0, 0, 1, 0, 0, 0, 0, 0, 0).toString('latin1'),
      toUpstream: '',
    });
    expect(readClient(Stage.HEAD, b(5, 1, 0))).toEqual({ kind: 'reply', reply: b(5, 0), next: Stage.SOCKS5_REQ, rest: null });
  });

  test('username/password: chosen when no-auth is not offered; any credentials pass', () => {
    expect(readClient(Stage.HEAD, b(5, 1, 2))).toEqual({ kind: 'reply', reply: b(5, 2), next: Stage.SOCKS5_AUTH, rest: null });
    expect(readClient(Stage.SOCKS5_AUTH, b(1, 1, 0x75, 2, 0x70, 0x77))).toEqual({ kind: 'reply', reply: b(1, 0), next: Stage.SOCKS5_REQ, rest: null });
    expect(readClient(Stage.HEAD, b(5, 1, 1))).toEqual({ kind: 'refuse', reply: b(5, 0xff), refusedTarget: false });
  });

  test('address types: IPv4, domain; others refused', () => {
    expect(tunnel(readClient(Stage.SOCKS5_REQ, socks5Req(3, [9, ...text('localhost')], 81)))).toMatchObject({ host: 'localhost', port: 81 });
    expect(readClient(Stage.SOCKS5_REQ, socks5Req(9, [0], 80))).toEqual({ kind: 'refuse', reply: b(5, 8, 0, 1, 0, 0, 0, 0, 0, 0), refusedTarget: false });
  });

  test('refused: a target that is not loopback, a command other than CONNECT', () => {
    const refused: Step = { kind: 'refuse', reply: b(5, 2, 0, 1, 0, 0, 0, 0, 0, 0), refusedTarget: false };
    expect(readClient(Stage.SOCKS5_REQ, socks5Req(1, [8, 8, 8, 8], 53))).toEqual(refused);
    expect(readClient(Stage.SOCKS5_REQ, socks5Req(1, [127, 0, 0, 1], 80, 2))).toEqual(refused);
    // as it stands, an IPv6 address (atyp 4) is read in full form, which is not "::1": even loopback is refused
    expect(readClient(Stage.SOCKS5_REQ, socks5Req(4, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], 82))).toEqual(refused);
    expect(isLoopbackTarget('0:0:0:0:0:0:0:1')).toBe(false);
  });
});

describe('split-invariance', () => {
  const messages: [StageValue, Buffer][] = [
    [Stage.HEAD, text('GET http://127.0.0.1:9/judge HTTP/1.1\r\nHost: a\r\n\r\n')],
    [Stage.HEAD, text('CONNECT 127.0.0.1:9 HTTP/1.1\r\n\r\n')],
    [Stage.HEAD, socks4(9, [127, 0, 0, 1], 'u')],
    [Stage.HEAD, socks4(9, [0, 0, 0, 7], 'u', 'localhost')],
    [Stage.HEAD, b(5, 2, 0, 2)],
    [Stage.SOCKS5_AUTH, b(1, 2, 0x75, 0x76, 1, 0x70)],
    [Stage.SOCKS5_REQ, socks5Req(1, [127, 0, 0, 1], 9)],
    [Stage.SOCKS5_REQ, socks5Req(3, [9, ...text('localhost')], 9)],
    [Stage.SOCKS5_REQ, socks5Req(4, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], 9)],
  ];
  test('every proper prefix is `more`; the whole message gives the same step as at once', () => {
    for (const [stage, msg] of messages) {
      const whole = readClient(stage, msg);
      expect(whole.kind).not.toBe('more');
      for (let i = 1; i < msg.length; i++) expect(readClient(stage, msg.subarray(0, i))).toEqual({ kind: 'more' });
    }
  });

  test('never throws on arbitrary bytes', () => {
    fc.assert(
      fc.property(fc.constantFrom<StageValue>(Stage.HEAD, Stage.SOCKS5_AUTH, Stage.SOCKS5_REQ), fc.uint8Array({ maxLength: 64 }), (stage, bytes) => {
        readClient(stage, Buffer.from(bytes));
      }),
    );
  });
});

test('a failed upstream connect: SOCKS general failure by version, else 502', () => {
  expect(connectFailedReply(null)).toBe(httpErrorReply('502 Bad Gateway'));
  expect(connectFailedReply(text('HTTP/1.1 200 Connection established\r\n\r\n'))).toBe(httpErrorReply('502 Bad Gateway'));
  expect(connectFailedReply(b(5, 0, 0, 1, 0, 0, 0, 0, 0, 0))).toEqual(b(5, 1, 0, 1, 0, 0, 0, 0, 0, 0));
  expect(connectFailedReply(b(0, 0x5a, 0, 0, 0, 0, 0, 0))).toEqual(b(0, 0x5b, 0, 0, 0, 0, 0, 0));
});
