/**
 * The gateway's HTTP proxy request head parser (src/gateway/codec/request-head.ts):
 * CONNECT and absolute-form, credentials, framing, limits, and fast-check:
 * no throw on any bytes, the same answer for any split of the same stream.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { ProxyRequestParser, RequestHeadState, type ProxyRequestHead } from '../../src/gateway/codec/request-head';

const B = (s: string) => Buffer.from(s, 'latin1');
function parse(s: string | Buffer, opts = {}): ProxyRequestParser {
  const p = new ProxyRequestParser(opts);
  p.push(typeof s === 'string' ? B(s) : s);
  return p;
}
const head = (s: string): ProxyRequestHead => {
  const p = parse(s);
  expect(p.error).toBeNull();
  expect(p.state).toBe(RequestHeadState.DONE);
  return p.head as ProxyRequestHead;
};
const err = (s: string, opts = {}) => parse(s, opts).error;
const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`, 'utf8').toString('base64')}`;

describe('request heads', () => {
  test('CONNECT: authority target, credentials, tunnel bytes after the head', () => {
    const p = parse(`CONNECT Example.COM:443 HTTP/1.1\r\nHost: example.com:443\r\nProxy-Authorization: ${basic('pool-abcdefghij', 'k:e:y')}\r\n\r\n\x16\x03\x01`);
    expect(p.head).toMatchObject({
      method: 'CONNECT',
      connect: true,
      host: 'example.com',
      port: 443,
      path: '',
      version: '1.1',
      auth: 'basic',
      credentials: { username: 'pool-abcdefghij', password: 'k:e:y' },
      framing: { kind: 'none' },
    });
    expect([...(p.rest as Buffer)]).toEqual([0x16, 3, 1]);
    expect(head('CONNECT [2001:DB8::1]:8443 HTTP/1.0\r\n\r\n')).toMatchObject({ host: '2001:db8::1', port: 8443, version: '1.0', auth: 'none', credentials: null });
  });

  test('absolute-form: host, default port, origin path and query, headers kept in order', () => {
    const h = head('GET http://h.example/a/b?c=d HTTP/1.1\r\nHost: other\r\nX-A: 1\r\nx-a: 2\r\n\r\n');
    expect(h).toMatchObject({ method: 'GET', connect: false, host: 'h.example', port: 80, path: '/a/b?c=d' });
    expect(h.headers).toEqual([
      ['Host', 'other'],
      ['X-A', '1'],
      ['x-a', '2'],
    ]);
    expect(head('GET HTTP://1.2.3.4:8080 HTTP/1.1\r\n\r\n')).toMatchObject({ host: '1.2.3.4', port: 8080, path: '/' });
    expect(head('GET http://[::1]?x HTTP/1.1\r\n\r\n')).toMatchObject({ host: '::1', port: 80, path: '/?x' });
    expect(head('\r\n\nPOST http://h.example/ HTTP/1.1\nContent-Length: 5\n\n')).toMatchObject({ framing: { kind: 'length', length: 5 } });
  });

  test('framing: chunked, length, refusals', () => {
    expect(head('POST http://h/ HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n').framing).toEqual({ kind: 'chunked' });
    expect(head('POST http://h/ HTTP/1.1\r\nContent-Length: 7\r\nContent-Length: 7\r\n\r\n').framing).toEqual({ kind: 'length', length: 7 });
    expect(head('POST http://h/ HTTP/1.1\r\nContent-Length: 0\r\n\r\n').framing).toEqual({ kind: 'none' });
    expect(err('POST http://h/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n')).toBe('bad_framing');
    expect(err('POST http://h/ HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n')).toBe('bad_framing');
    expect(err('POST http://h/ HTTP/1.1\r\nContent-Length: 7\r\nContent-Length: 8\r\n\r\n')).toBe('bad_framing');
    expect(err('POST http://h/ HTTP/1.1\r\nContent-Length: -1\r\n\r\n')).toBe('bad_framing');
    expect(head('CONNECT h:1 HTTP/1.1\r\nContent-Length: 9\r\n\r\n').framing).toEqual({ kind: 'none' });
    expect(head('POST http://h/ HTTP/1.1\r\nExpect: 100-Continue\r\nContent-Length: 1\r\n\r\n').expectsContinue).toBe(true);
  });

  test('Proxy-Authorization: none, other scheme, malformed, twice', () => {
    expect(head('GET http://h/ HTTP/1.1\r\nProxy-Authorization: Bearer x\r\n\r\n').auth).toBe('other');
    expect(head('GET http://h/ HTTP/1.1\r\nProxy-Authorization: Basic !!!\r\n\r\n').auth).toBe('malformed');
    expect(head(`GET http://h/ HTTP/1.1\r\nProxy-Authorization: Basic ${Buffer.from('nocolon').toString('base64')}\r\n\r\n`).auth).toBe('malformed');
    const twice = head(`GET http://h/ HTTP/1.1\r\nProxy-Authorization: ${basic('a', 'b')}\r\nproxy-authorization: ${basic('c', 'd')}\r\n\r\n`);
    expect([twice.auth, twice.credentials]).toEqual(['malformed', null]);
    expect(head(`GET http://h/ HTTP/1.1\r\nProxy-Authorization: basic   ${Buffer.from('ü:€').toString('base64')}  \r\n\r\n`).credentials).toEqual({ username: 'ü', password: '€' });
  });

  test('refusals', () => {
    expect(err('GET /index.html HTTP/1.1\r\n\r\n')).toBe('not_a_proxy_request');
    expect(err('OPTIONS * HTTP/1.1\r\n\r\n')).toBe('not_a_proxy_request');
    expect(err('GET https://h/ HTTP/1.1\r\n\r\n')).toBe('bad_target');
    expect(err('GET http://u:p@h/ HTTP/1.1\r\n\r\n')).toBe('bad_target');
    expect(err('GET http://h/#x HTTP/1.1\r\n\r\n')).toBe('bad_target');
    expect(err('GET http://h:0/ HTTP/1.1\r\n\r\n')).toBe('bad_target');
    expect(err('GET http://h:65536/ HTTP/1.1\r\n\r\n')).toBe('bad_target');
    expect(err('GET http://-h/ HTTP/1.1\r\n\r\n')).toBe('bad_target');
    expect(err('GET http://010.0.0.1/ HTTP/1.1\r\n\r\n')).toBe('bad_target');
    expect(err('CONNECT h HTTP/1.1\r\n\r\n')).toBe('bad_target');
    expect(err('CONNECT ::1:443 HTTP/1.1\r\n\r\n')).toBe('bad_target');
    expect(err('GET  http://h/ HTTP/1.1\r\n\r\n')).toBe('bad_request_line');
    expect(err('GET http://h/ HTTP/2.0\r\n\r\n')).toBe('bad_request_line');
    expect(err('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n')).toBe('bad_request_line');
    expect(err('GET http://h/ HTTP/1.1\r\nBad Name: x\r\n\r\n')).toBe('bad_header');
    expect(err('GET http://h/ HTTP/1.1\r\nName : x\r\n\r\n')).toBe('bad_header');
    expect(err('GET http://h/ HTTP/1.1\r\nA: x\r\n folded\r\n\r\n')).toBe('bad_header');
    expect(err('GET http://h/ HTTP/1.1\r\nA: x\ry\r\n\r\n')).toBe('bad_header');
    expect(err('GET http://h/ HTTP/1.1\r\nnocolon\r\n\r\n')).toBe('bad_header');
    expect(err(`GET http://h/ HTTP/1.1\r\n${'A: b\r\n'.repeat(3)}\r\n`, { maxHeaders: 2 })).toBe('too_many_headers');
    expect(err(`GET http://h/ HTTP/1.1\r\nA: ${'x'.repeat(200)}\r\n\r\n`, { headMax: 100 })).toBe('head_too_large');
  });

  test('a head over the limit fails before its end arrives; EOF: empty or truncated', () => {
    const p = new ProxyRequestParser({ headMax: 64 });
    p.push(B('GET http://h/ HTTP/1.1\r\n'));
    expect(p.state).toBe(RequestHeadState.HEAD);
    p.push(B(`X: ${'y'.repeat(100)}`));
    expect(p.error).toBe('head_too_large');
    const q = new ProxyRequestParser();
    expect(q.end()).toBe(RequestHeadState.ERROR);
    expect(q.error).toBe('empty');
    const r = new ProxyRequestParser();
    r.push(B('GET http://h/'));
    r.end();
    expect(r.error).toBe('truncated');
  });

  test('bytes pushed after DONE join rest', () => {
    const p = parse('CONNECT h:1 HTTP/1.1\r\n\r\nab');
    p.push(B('cd'));
    expect((p.rest as Buffer).toString()).toBe('abcd');
  });
});

describe('fuzzing', () => {
  const sample = [
    'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nProxy-Authorization: Basic cG9vbC14OnE=\r\n\r\nDATA',
    'POST http://h.example:8080/x?y HTTP/1.1\r\nTransfer-Encoding: chunked\r\nX: y\r\n\r\n5\r\nhello\r\n0\r\n\r\n',
    'GET http://[::1]/ HTTP/1.0\n\n',
  ];

  /** Split `b` at the given cut points and push the pieces; the final state, error, head and rest. */
  function run(b: Buffer, cuts: number[]) {
    const p = new ProxyRequestParser({ headMax: 1024 });
    let at = 0;
    for (const c of [...new Set(cuts.map((x) => x % (b.length + 1)))].sort((x, y) => x - y)) {
      p.push(b.subarray(at, c));
      at = c;
    }
    p.push(b.subarray(at));
    p.end();
    return { state: p.state, error: p.error, head: p.head, rest: p.rest?.toString('latin1') ?? null };
  }

  test('any bytes: never throws, always ends DONE or ERROR', () => {
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 400 }), fc.constantFrom(...sample).map((s) => B(s))), fc.array(fc.nat(), { maxLength: 5 }), (bytes, cuts) => {
        const r = run(Buffer.from(bytes), cuts);
        expect(r.state === RequestHeadState.DONE || r.state === RequestHeadState.ERROR).toBe(true);
        if (r.state === RequestHeadState.DONE) expect(r.head).not.toBeNull();
      }),
      { numRuns: 3000 },
    );
  });

  test('any split of the same stream gives the same answer (mutated valid heads included)', () => {
    const mutated = fc
      .tuple(fc.constantFrom(...sample), fc.nat(), fc.integer({ min: 0, max: 255 }))
      .map(([s, i, byte]) => {
        const b = B(s);
        b[i % b.length] = byte;
        return b;
      });
    fc.assert(
      fc.property(fc.oneof(mutated, fc.constantFrom(...sample).map((s) => B(s))), fc.array(fc.nat(), { maxLength: 6 }), (b, cuts) => {
        expect(run(b, cuts)).toEqual(run(b, []));
      }),
      { numRuns: 3000 },
    );
  });
});
