/**
 * The heads the gateway writes (src/gateway/codec/forward-head.ts,
 * response-head.ts, headers.ts) and the first-byte sniff (sniff.ts): exact
 * bytes, the client's key never forwarded, and round trips through the
 * house's own parsers (the request parser reads a forwarded head back; the
 * probe's response parser reads every response head).
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { forwardRequestHead } from '../../src/gateway/codec/forward-head';
import { endToEnd } from '../../src/gateway/codec/headers';
import { ProxyRequestParser, RequestHeadState, type ProxyRequestHead } from '../../src/gateway/codec/request-head';
import { CONTINUE_HEAD, GATEWAY_ERRORS, connectEstablished, gatewayError, isUpstreamFailure, proxyAuthRequired, relayedResponseHead } from '../../src/gateway/codec/response-head';
import { sniffFront } from '../../src/gateway/codec/sniff';
import { HttpResponseParser, ResponseState } from '../../src/probe/codec/http-response';

const parseReq = (s: string): ProxyRequestHead => {
  const p = new ProxyRequestParser();
  p.push(Buffer.from(s, 'latin1'));
  expect(p.state).toBe(RequestHeadState.DONE);
  return p.head as ProxyRequestHead;
};
const parseRes = (s: string, headOnly = false) => {
  const p = new HttpResponseParser({ bodyCap: 1 << 16, headOnly });
  p.push(Buffer.from(s, 'latin1'));
  p.end();
  return p;
};

describe('sniff', () => {
  test('SOCKS5, SOCKS4, an HTTP method, anything else', () => {
    expect(sniffFront(5)).toBe('socks5');
    expect(sniffFront(4)).toBe('socks4');
    for (const m of ['GET', 'CONNECT', 'POST', 'Z']) expect(sniffFront(m.charCodeAt(0))).toBe('http');
    for (const b of [0x16, 0, 0x61, 0x40, 0x5b, 0xff]) expect(sniffFront(b)).toBe('unknown');
  });
});

describe('hop-by-hop', () => {
  test('dropped, with everything Connection names; framing kept', () => {
    expect(
      endToEnd([
        ['Connection', 'keep-alive, X-Secret'],
        ['X-Secret', '1'],
        ['Keep-Alive', 'timeout=5'],
        ['Proxy-Authorization', 'Basic a2V5'],
        ['proxy-connection', 'keep-alive'],
        ['TE', 'trailers'],
        ['Upgrade', 'websocket'],
        ['Transfer-Encoding', 'chunked'],
        ['Accept', '*/*'],
      ]),
    ).toEqual([
      ['Transfer-Encoding', 'chunked'],
      ['Accept', '*/*'],
    ]);
  });
});

describe('forwarded request heads', () => {
  const client = parseReq('POST http://Target.example:8080/p?q=1 HTTP/1.0\r\nHost: evil\r\nProxy-Authorization: Basic cG9vbC14OmtleQ==\r\nConnection: keep-alive\r\nExpect: 100-continue\r\nContent-Length: 3\r\nX-A: b\r\n\r\n');

  test('through an HTTP upstream: absolute-form, the upstream credentials, never the client key', () => {
    const s = forwardRequestHead(client, { form: 'absolute', credentials: { username: 'up', password: 'pw' } });
    expect(s).toBe(
      'POST http://target.example:8080/p?q=1 HTTP/1.1\r\nHost: target.example:8080\r\nContent-Length: 3\r\nX-A: b\r\nConnection: close\r\nProxy-Authorization: Basic dXA6cHc=\r\n\r\n',
    );
    expect(s).not.toContain('cG9vbC14OmtleQ==');
  });

  test('through a tunnel: origin-form, no Proxy-Authorization at all', () => {
    const s = forwardRequestHead(client, { form: 'origin' });
    expect(s).toBe('POST /p?q=1 HTTP/1.1\r\nHost: target.example:8080\r\nContent-Length: 3\r\nX-A: b\r\nConnection: close\r\n\r\n');
    expect(forwardRequestHead(parseReq('GET http://[::1]/ HTTP/1.1\r\n\r\n'), { form: 'absolute', credentials: null })).toBe(
      'GET http://[::1]/ HTTP/1.1\r\nHost: [::1]\r\nConnection: close\r\n\r\n',
    );
  });

  test('property: a forwarded absolute-form head parses back to the same request, without the client credentials', () => {
    const token = fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,10}$/);
    fc.assert(
      fc.property(
        fc.constantFrom('GET', 'POST', 'PUT', 'DELETE'),
        fc.constantFrom('h.example', '1.2.3.4', '[2001:db8::1]'),
        fc.integer({ min: 1, max: 65535 }),
        fc.stringMatching(/^\/[A-Za-z0-9/._~%-]{0,20}$/),
        fc.array(fc.tuple(token, fc.stringMatching(/^[\x21-\x7e]([\x20-\x7e]{0,15}[\x21-\x7e])?$/)), { maxLength: 5 }),
        (method, host, port, path, extra) => {
          const headers = extra.filter(([n]) => !['host', 'connection', 'proxy-authorization', 'content-length', 'transfer-encoding', 'expect', 'keep-alive', 'te', 'trailer', 'upgrade', 'proxy-connection', 'proxy-authenticate'].includes(n.toLowerCase()));
          const req = parseReq(`${method} http://${host}:${port}${path} HTTP/1.1\r\nProxy-Authorization: Basic a2V5\r\n${headers.map(([n, v]) => `${n}: ${v}\r\n`).join('')}\r\n`);
          const back = parseReq(forwardRequestHead(req, { form: 'absolute', credentials: null }));
          expect([back.method, back.host, back.port, back.path, back.auth]).toEqual([req.method, req.host, req.port, req.path, 'none']);
          expect(back.headers.slice(1, -1)).toEqual(headers);
        },
      ),
    );
  });
});

describe('response heads', () => {
  test('407 with Proxy-Authenticate Basic, a body, closing', () => {
    const p = parseRes(proxyAuthRequired());
    expect(p.statusCode).toBe(407);
    expect(p.header('proxy-authenticate')).toBe('Basic realm="proxycheck gateway"');
    expect(p.header('connection')).toBe('close');
    expect(p.body().toString()).toContain('pool-<id>');
  });

  test('each gateway error: its status and X-Gateway-Error, a fixed text', () => {
    for (const [code, e] of Object.entries(GATEWAY_ERRORS)) {
      const p = parseRes(gatewayError(code as keyof typeof GATEWAY_ERRORS));
      expect(p.state).toBe(ResponseState.DONE);
      expect(p.statusCode).toBe(e.status);
      expect(p.header('x-gateway-error')).toBe(code);
      expect(p.body().toString()).toBe(`${e.text}\n`);
    }
    expect(GATEWAY_ERRORS.no_upstream.status).toBe(502);
  });

  test('the CONNECT answer names the upstream; 100 Continue', () => {
    expect(connectEstablished({ host: '2001:db8::1', port: 3128 })).toBe('HTTP/1.1 200 Connection established\r\nX-Gateway-Upstream: [2001:db8::1]:3128\r\n\r\n');
    const p = parseRes(connectEstablished({ host: '1.2.3.4', port: 80 }), true);
    expect([p.statusCode, p.header('x-gateway-upstream')]).toEqual([200, '1.2.3.4:80']);
    expect(CONTINUE_HEAD).toBe('HTTP/1.1 100 Continue\r\n\r\n');
  });

  test('a relayed response: its status and end-to-end headers, our upstream header (not the upstream own), closing', () => {
    const s = relayedResponseHead(
      404,
      [
        ['Content-Type', 'text/html'],
        ['Connection', 'keep-alive'],
        ['X-Gateway-Upstream', 'spoofed'],
        ['Transfer-Encoding', 'chunked'],
        ['Proxy-Authenticate', 'Basic'],
      ],
      { host: '5.6.7.8', port: 3128 },
    );
    expect(s).toBe('HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\nX-Gateway-Upstream: 5.6.7.8:3128\r\nConnection: close\r\n\r\n');
    expect(relayedResponseHead(299, [], { host: 'h', port: 1 }).startsWith('HTTP/1.1 299 \r\n')).toBe(true);
  });

  test('an upstream failure in a forwarded answer: 407 only (the target\'s answers pass through)', () => {
    expect(isUpstreamFailure(407)).toBe(true);
    for (const s of [200, 403, 404, 502, 503]) expect(isUpstreamFailure(s)).toBe(false);
  });

  test('auth_blocked carries Retry-After in whole seconds (at least 1)', () => {
    expect(parseRes(gatewayError('auth_blocked', 42)).header('retry-after')).toBe('42');
    expect(parseRes(gatewayError('auth_blocked', 0.2)).header('retry-after')).toBe('1');
    expect(parseRes(gatewayError('no_upstream')).header('retry-after')).toBeUndefined();
  });
});
