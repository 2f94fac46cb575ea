/**
 * The dashboard's check-flow helpers (src/web/client/format.ts): list
 * parsing, status codes, custom-URL rows, job ids, ETA text, download links
 * and same-origin result links, error sentences.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { JOB_ID } from '../../src/job-id';
import { buildCustomUrls, errorText, formatEta, formatTime, jobIdFrom, latestResultLink, parseProxyList, parseSamples, parseStatusCodes, proxyCountText, resultLinks, sameOriginResultUrl } from '../../src/web/client/format';

describe('parseProxyList', () => {
  test('trims, drops blanks and comments, any line ending', () => {
    expect(parseProxyList(' 1.2.3.4:80 \r\n\r\n# comment\n  #also\nuser:pw@host:8080\r5.6.7.8:1:u:p')).toEqual(['1.2.3.4:80', 'user:pw@host:8080', '5.6.7.8:1:u:p']);
    expect(parseProxyList('')).toEqual([]);
  });
  test('never yields blank or comment lines', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        for (const l of parseProxyList(s)) {
          expect(l).toBe(l.trim());
          expect(l === '' || l.startsWith('#')).toBe(false);
        }
      }),
    );
  });
});

describe('custom URLs', () => {
  test('status codes', () => {
    expect(parseStatusCodes('')).toBeUndefined();
    expect(parseStatusCodes('200, 301 302;404')).toEqual([200, 301, 302, 404]);
    expect(parseStatusCodes('200,abc')).toEqual({ error: '"abc" is not an HTTP status code (100-599)' });
    expect(parseStatusCodes('99')).toMatchObject({ error: expect.any(String) });
  });
  test('rows -> rules; empty URL rows skipped; the first bad row is named', () => {
    expect(
      buildCustomUrls([
        { url: ' https://example.com/ ', codes: '', text: '', caseSensitive: true },
        { url: '', codes: '200', text: 'x', caseSensitive: false },
        { url: 'http://a.test/x', codes: '200 204', text: 'Hello', caseSensitive: true },
      ]),
    ).toEqual({
      rules: [{ url: 'https://example.com/' }, { url: 'http://a.test/x', requiredStatusCodes: [200, 204], requiredText: 'Hello', caseSensitive: true }],
    });
    expect(buildCustomUrls([{ url: 'nope', codes: '', text: '', caseSensitive: false }])).toEqual({ error: 'Custom URL 1: "nope" is not a valid URL', row: 0 });
    expect(buildCustomUrls([{ url: 'http://a.test', codes: '', text: '', caseSensitive: false }, { url: 'ftp://x', codes: '', text: '', caseSensitive: false }])).toMatchObject({ row: 1 });
    expect(buildCustomUrls([{ url: 'http://a.test', codes: '2000', text: '', caseSensitive: false }])).toMatchObject({ row: 0, error: expect.stringContaining('2000') });
  });
});

test('job ids fit the API rule', () => {
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 0, maxLength: 40 }), (bytes) => {
      expect(jobIdFrom(bytes)).toMatch(JOB_ID);
    }),
  );
  expect(jobIdFrom(new Uint8Array([0, 255, 16]))).toBe('web-00ff10');
});

test('formatEta', () => {
  expect(formatEta(null)).toBe('estimating…');
  expect(formatEta(-1)).toBe('estimating…');
  expect(formatEta(0)).toBe('0 s');
  expect(formatEta(59.4)).toBe('59 s');
  expect(formatEta(60)).toBe('1 min');
  expect(formatEta(185)).toBe('3 min 5 s');
  expect(formatEta(7440)).toBe('2 h 4 min');
  expect(formatEta(3600)).toBe('1 h');
});

describe('links', () => {
  const json = 'http://127.0.0.1:3000/result/abc_-1.json?token=ff&expires=99';
  test('result_urls win; else the .json link with its extension replaced', () => {
    expect(resultLinks(json, { json: 'j', csv: 'c', txt: 't' })).toEqual({ json: 'j', csv: 'c', txt: 't' });
    expect(resultLinks(json, null)).toEqual({
      json,
      csv: 'http://127.0.0.1:3000/result/abc_-1.csv?token=ff&expires=99',
      txt: 'http://127.0.0.1:3000/result/abc_-1.txt?token=ff&expires=99',
    });
    expect(resultLinks(json, { json: 'j' })!.csv).toContain('.csv?');
    expect(resultLinks(null)).toBeNull();
  });
  test('same-origin form of a result link keeps the query; other paths are refused', () => {
    expect(sameOriginResultUrl('https://content.example/files/result/abc.json?token=ff&expires=1', 'http://localhost:3000')).toBe('http://localhost:3000/result/abc.json?token=ff&expires=1');
    expect(sameOriginResultUrl('https://x.example/other/abc.json', 'http://localhost:3000')).toBeNull();
  });
});

test('errorText and formatTime', () => {
  expect(errorText(402, { error: 'Insufficient Checks', message: 'You need 5 checks but only have 2 remaining.' })).toBe('Insufficient Checks: You need 5 checks but only have 2 remaining.');
  expect(errorText(405, { message: 'accepts POST only' })).toBe('accepts POST only');
  expect(errorText(0, null)).toContain('could not be reached');
  expect(errorText(502, '<html>')).toBe('The service answered with status 502.');
  expect(formatTime('2026-06-01T14:03:59.123Z')).toBe('2026-06-01 14:03 UTC');
  expect(formatTime('not a date')).toBe('not a date');
  expect(formatTime(undefined)).toBe('');
});

describe('parseSamples', () => {
  test('1..10, empty = 1, anything else a message', () => {
    expect(parseSamples('3')).toBe(3);
    expect(parseSamples(' 10 ')).toBe(10);
    expect(parseSamples('')).toBe(1);
    for (const bad of ['0', '11', '2.5', '-1', 'x', '1e1']) expect(parseSamples(bad)).toEqual({ error: 'Samples per proxy must be a whole number from 1 to 10.' });
  });
});

describe('proxyCountText', () => {
  test('the valid unique proxies, as the service counts them, and what is skipped', () => {
    const list = ['# mine', '127.0.0.1:8001', 'http://127.0.0.1:8001', 'user:pw@127.0.0.2:8002', '127.0.0.3:8003:bob:pw', '[2001:db8::1]:1080', '127.0.0.4:8004', 'not a proxy', ''].join('\n');
    expect(proxyCountText(list, 'http')).toBe('5 proxies (1 invalid, 1 duplicate skipped)');
    expect(proxyCountText('1.2.3.4:80\n1.2.3.4:80\n1.2.3.4:80')).toBe('1 proxy (2 duplicates skipped)');
    expect(proxyCountText('')).toBe('0 proxies');
  });
});

describe('latestResultLink', () => {
  test("the newest history entry that still has its link; none: null", () => {
    const me = {
      history: [
        { id: 3, scanned_at: '2026-11-28T10:00:00.000Z', result_url: null },
        { id: 2, scanned_at: '2026-11-28T09:00:00.000Z', result_url: 'http://h/result/b.json?token=t' },
        { id: 1, scanned_at: '2026-11-27T09:00:00.000Z', result_url: 'http://h/result/a.json?token=t' },
      ],
    };
    expect(latestResultLink(me)).toBe('http://h/result/b.json?token=t');
    expect(latestResultLink({ history: [] })).toBeNull();
    expect(latestResultLink({})).toBeNull();
    expect(latestResultLink(null)).toBeNull();
  });
});
