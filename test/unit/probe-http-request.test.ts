/** Request bytes: absolute-form and origin-form GET, CONNECT, Basic auth, IPv6 authorities. */
import { describe, expect, test } from 'bun:test';
import { authority, basicAuth, buildConnectRequest, buildGetRequest, judgePathWithNonce, USER_AGENT } from '../../src/probe/codec/http-request';

describe('http-request', () => {
  test('absolute-form GET through an HTTP proxy with credentials', () => {
    expect(
      buildGetRequest({
        scheme: 'http',
        host: '203.0.113.5',
        port: 8080,
        pathWithQuery: '/judge?n=abc',
        absoluteForm: true,
        proxyAuthorization: basicAuth('user', 'pass'),
      }),
    ).toBe(
      'GET http://203.0.113.5:8080/judge?n=abc HTTP/1.1\r\nHost: 203.0.113.5:8080\r\n' +
        `User-Agent: ${USER_AGENT}\r\nAccept: */*\r\nConnection: close\r\nProxy-Authorization: Basic dXNlcjpwYXNz\r\n\r\n`,
    );
  });
  test('origin-form GET never carries Proxy-Authorization; default ports are omitted', () => {
    expect(
      buildGetRequest({ scheme: 'https', host: 'judge.example', port: 443, pathWithQuery: '/', absoluteForm: false, proxyAuthorization: 'Basic x' }),
    ).toBe(`GET / HTTP/1.1\r\nHost: judge.example\r\nUser-Agent: ${USER_AGENT}\r\nAccept: */*\r\nConnection: close\r\n\r\n`);
    expect(buildGetRequest({ scheme: 'http', host: 'h', port: 80, pathWithQuery: '/p', absoluteForm: true, proxyAuthorization: null })).toStartWith(
      'GET http://h/p HTTP/1.1\r\nHost: h\r\n',
    );
  });
  test('CONNECT with and without credentials', () => {
    expect(buildConnectRequest('judge.example', 443, null)).toBe(
      `CONNECT judge.example:443 HTTP/1.1\r\nHost: judge.example:443\r\nUser-Agent: ${USER_AGENT}\r\n\r\n`,
    );
    expect(buildConnectRequest('2001:db8::1', 443, 'Basic eA==')).toBe(
      `CONNECT [2001:db8::1]:443 HTTP/1.1\r\nHost: [2001:db8::1]:443\r\nUser-Agent: ${USER_AGENT}\r\nProxy-Authorization: Basic eA==\r\n\r\n`,
    );
  });
  test('authority brackets IPv6', () => {
    expect(authority('::1', 80, 80)).toBe('[::1]');
    expect(authority('::1', 81, 80)).toBe('[::1]:81');
    expect(authority('a.b', 81, null)).toBe('a.b:81');
  });
  test('basicAuth encodes UTF-8 and colons in passwords', () => {
    expect(basicAuth('ü', 'a:b')).toBe('Basic ' + Buffer.from('ü:a:b', 'utf8').toString('base64'));
  });
  test('judgePathWithNonce appends n', () => {
    expect(judgePathWithNonce('/judge', 'abc')).toBe('/judge?n=abc');
    expect(judgePathWithNonce('/judge?x=1', 'abc')).toBe('/judge?x=1&n=abc');
  });
});
