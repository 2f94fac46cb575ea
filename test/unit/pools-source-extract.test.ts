/**
 * A source's body -> its addresses (src/pools/source-extract.ts): exactly
 * what /check-raw reads from the same text (src/proxy/parse.ts
 * parseProxyList), invalid lines skipped and counted; a fast-check property
 * over random lists mixing valid, invalid, blank, comment and repeated lines
 * with every line break.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { extractSourceAddresses } from '../../src/pools/source-extract';
import { parseProxyList } from '../../src/proxy/parse';
import { proxyKey } from '../../src/proxy/dedupe';

describe('extractSourceAddresses', () => {
  test('a typical public list: schemes, credentials, comments, blanks, junk, repeats', () => {
    const body = [
      '# free proxies, updated hourly',
      '',
      '1.2.3.4:8080',
      'socks5://user:pa%40ss@5.6.7.8:1080',
      '9.9.9.9:3128:bob:secret',
      '<html>not a list</html>',
      '300.1.1.1:80',
      '  1.2.3.4:8080  ',
      '[2001:db8::1]:8080',
    ].join('\r\n');
    const r = extractSourceAddresses(body);
    expect(r.proxies.map((p) => [p.host, p.port, p.username ?? null, p.password ?? null, p.format])).toEqual([
      ['1.2.3.4', 8080, null, null, 'standard'],
      ['5.6.7.8', 1080, 'user', 'pa@ss', 'url_auth'],
      ['9.9.9.9', 3128, 'bob', 'secret', 'colon_auth'],
      ['2001:db8::1', 8080, null, null, 'standard'],
    ]);
    expect(r.invalid).toBe(2);
    expect(r.duplicates).toBe(1);
  });

  test('an empty body, a body of comments: nothing, nothing invalid', () => {
    expect(extractSourceAddresses('')).toEqual({ proxies: [], invalid: 0, duplicates: 0 });
    expect(extractSourceAddresses('# a\n\n   \n#b')).toEqual({ proxies: [], invalid: 0, duplicates: 0 });
  });

  const line = fc.oneof(
    fc.tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 1, max: 65535 })).map(([a, b, port]) => `10.${a}.${b}.1:${port}`),
    fc.tuple(fc.stringMatching(/^[a-z]{1,8}$/), fc.stringMatching(/^[a-z0-9]{0,8}$/), fc.integer({ min: 1, max: 65535 })).map(([u, p, port]) => `${u}:${p}@example.com:${port}`),
    fc.constantFrom('', '   ', '# comment', 'garbage', '1.2.3.4', '1.2.3.4:0', 'host:99999', '\u00a0'),
    fc.string({ maxLength: 20 }),
  );
  const breaks = fc.constantFrom('\n', '\r\n', '\r');

  test('property: the same as /check-raw reads the text; every line counted once', () => {
    fc.assert(
      fc.property(fc.array(line, { maxLength: 60 }), breaks, (lines, br) => {
        const body = lines.join(br);
        const got = extractSourceAddresses(body);
        const raw = parseProxyList(body);
        expect(got.proxies).toEqual(raw.proxies);
        expect(got.invalid).toBe(raw.invalid);
        expect(got.duplicates).toBe(raw.duplicates);
        // unique, and each line is an address, a repeat, invalid or ignored
        expect(new Set(got.proxies.map(proxyKey)).size).toBe(got.proxies.length);
        const lineCount = body === '' ? 1 : body.split(/\r\n|\r|\n/).length;
        expect(got.proxies.length + got.duplicates + got.invalid + raw.ignored).toBe(lineCount);
      }),
      { numRuns: 300 },
    );
  });

  test('property: never throws on any text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 500, unit: 'binary' }), (s) => {
        const r = extractSourceAddresses(s);
        expect(r.invalid).toBeGreaterThanOrEqual(0);
      }),
      { numRuns: 300 },
    );
  });
});
