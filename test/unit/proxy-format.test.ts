/** Tests for src/proxy/format.ts: output forms and parse(format(x)) == x. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { colonRepresentable, formatHost, formatProxy, formatProxyUrl } from '../../src/proxy/format';
import { canonicalIPv6 } from '../../src/proxy/host';
import { parseProxyLine } from '../../src/proxy/parse';
import type { AddressFormat, ProxyAddress } from '../../src/proxy/types';

const FORMATS: AddressFormat[] = ['standard', 'url_auth', 'colon_auth'];
const auth: ProxyAddress = { host: '1.2.3.4', port: 8080, username: 'user', password: 'pass' };

describe('formatProxy', () => {
  test.each<[ProxyAddress, AddressFormat, string]>([
    [{ host: '1.2.3.4', port: 80 }, 'standard', '1.2.3.4:80'],
    [{ host: '1.2.3.4', port: 80 }, 'url_auth', '1.2.3.4:80'],
    [{ host: '1.2.3.4', port: 80 }, 'colon_auth', '1.2.3.4:80'],
    [{ host: '2001:db8::1', port: 80 }, 'standard', '[2001:db8::1]:80'],
    [auth, 'url_auth', 'user:pass@1.2.3.4:8080'],
    [auth, 'colon_auth', '1.2.3.4:8080:user:pass'],
    [auth, 'standard', 'user:pass@1.2.3.4:8080'],
    [{ ...auth, host: '::1' }, 'colon_auth', '[::1]:8080:user:pass'],
    [{ ...auth, host: '::1' }, 'url_auth', 'user:pass@[::1]:8080'],
    [{ ...auth, username: 'u@x:y', password: 'p w%#' }, 'url_auth', 'u%40x%3Ay:p%20w%25%23@1.2.3.4:8080'],
    [{ ...auth, username: "a-._~!$&'()*+,;=", password: 'ü€' }, 'url_auth', "a-._~!$&'()*+,;=:%C3%BC%E2%82%AC@1.2.3.4:8080"],
    [{ ...auth, username: 'u@x', password: 'p:w@' }, 'colon_auth', '1.2.3.4:8080:u@x:p:w@'],
    [{ ...auth, username: 'u:x' }, 'colon_auth', 'u%3Ax:pass@1.2.3.4:8080'],
    [{ ...auth, password: 'trailing ' }, 'colon_auth', 'user:trailing%20@1.2.3.4:8080'],
    [{ host: 'h', port: 1, username: 'u' }, 'url_auth', 'u:@h:1'],
  ])('%o as %s', (p, f, out) => {
    expect(formatProxy(p, f)).toBe(out);
  });

  test('never throws on unpaired surrogates', () => {
    expect(formatProxy({ ...auth, username: '\ud800' }, 'url_auth')).toBe('%EF%BF%BD:pass@1.2.3.4:8080');
  });

  test('helpers', () => {
    expect(formatHost('::1')).toBe('[::1]');
    expect(formatHost('h.io')).toBe('h.io');
    expect(colonRepresentable('u', 'p')).toBe(true);
    expect(colonRepresentable('', 'p')).toBe(false);
    expect(colonRepresentable('u:', 'p')).toBe(false);
    expect(colonRepresentable('u', 'p\t')).toBe(false);
  });
});

// ---- round trip ----------------------------------------------------------------

/** A credential the parser accepts: no C0 controls, no DEL (fast-check 'binary' never yields lone surrogates). */
const credential = fc
  .string({ unit: fc.oneof({ weight: 3, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) }, { weight: 1, arbitrary: fc.constantFrom(':', '@', '%', '#', ' ', '/', '[', ']', '%41') }), maxLength: 12 })
  .filter((s) => !/[\u0000-\u001f\u007f]/.test(s));

const hostArb = fc.oneof(
  fc.ipV4(),
  fc.ipV6().map((v6) => canonicalIPv6(v6) as string),
  fc.domain().map((d) => d.toLowerCase()),
);

const proxyArb: fc.Arbitrary<ProxyAddress> = fc
  .tuple(hostArb, fc.integer({ min: 1, max: 65535 }), fc.option(fc.tuple(credential.filter((u) => u.length > 0), credential)))
  .map(([host, port, creds]) => (creds === null ? { host, port } : { host, port, username: creds[0], password: creds[1] }));

const identity = (p: ProxyAddress) =>
  p.username === undefined ? { host: p.host, port: p.port } : { host: p.host, port: p.port, username: p.username, password: p.password };

describe('parse(format(x)) == x', () => {
  test('for every format (unrepresentable colon form falls back to url_auth)', () => {
    fc.assert(
      fc.property(proxyArb, fc.constantFrom(...FORMATS), (p, f) => {
        const text = formatProxy(p, f);
        const back = parseProxyLine(text);
        expect(back).not.toBeNull();
        expect(identity(back as ProxyAddress)).toEqual(identity(p));
        const expectedFormat =
          p.username === undefined
            ? 'standard'
            : f === 'colon_auth' && colonRepresentable(p.username, p.password ?? '')
              ? 'colon_auth'
              : 'url_auth';
        expect(back?.format).toBe(expectedFormat);
        expect(back?.raw).toBe(text);
      }),
      { numRuns: 1000 },
    );
  });

  test('with a scheme prefix and a trailing slash (url and standard forms)', () => {
    fc.assert(
      fc.property(proxyArb, fc.constantFrom('http://', 'SOCKS5h://'), (p, scheme) => {
        const back = parseProxyLine(`${scheme}${formatProxy(p, 'url_auth')}/`);
        expect(identity(back as ProxyAddress)).toEqual(identity(p));
      }),
      { numRuns: 500 },
    );
  });

  test('formatProxyUrl: <protocol>://[user:pass@]host:port reads back to the proxy with that protocol as its own', () => {
    expect(formatProxyUrl({ host: '1.2.3.4', port: 1080 }, 'socks5')).toBe('socks5://1.2.3.4:1080');
    expect(formatProxyUrl({ host: '::1', port: 80, username: 'u@x', password: 'p:w' }, 'http')).toBe('http://u%40x:p%3Aw@[::1]:80');
    fc.assert(
      fc.property(proxyArb, fc.constantFrom('http' as const, 'socks4' as const, 'socks5' as const), (p, protocol) => {
        const back = parseProxyLine(formatProxyUrl(p, protocol));
        expect(identity(back as ProxyAddress)).toEqual(identity(p));
        expect(back?.protocol).toBe(protocol);
      }),
      { numRuns: 500 },
    );
  });
});
