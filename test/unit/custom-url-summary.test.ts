/** Tests for src/results/custom-url-summary.ts: the per-URL fold and its streamed JSON. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import type { CustomUrlResult } from '../../src/probe/types';
import { ServiceError } from '../../src/errors';
import { CustomUrlFold, successRate } from '../../src/results/custom-url-summary';

const proxies = Array.from({ length: 20 }, (_, i) => ({ host: `10.0.0.${i}`, port: 8000 + i, username: 'u', password: 'p' }));
const proxyAt = (i: number) => proxies[i]!;
const res = (index: number, urlIndex: number, success: boolean): CustomUrlResult => ({
  index,
  urlIndex,
  success,
  statusCode: success ? 200 : 403,
  responseTimeMs: 10,
  error: null,
});

describe('CustomUrlFold', () => {
  test('the seed shape, rules order, input order, host/port only', () => {
    const fold = new CustomUrlFold(['https://a.example/', 'http://b.example/x']);
    // arrival order scrambled
    for (const r of [res(5, 0, true), res(2, 0, true), res(7, 0, false), res(2, 1, false), res(5, 1, false), res(7, 1, true)]) fold.add(r);
    expect(fold.resultsSeen).toBe(6);
    expect(fold.result(proxyAt, 1234)).toEqual({
      summary: { total_urls_tested: 2, total_proxies_tested: 3, processing_time: '1.23s' },
      per_url_summary: [
        {
          url: 'https://a.example/',
          success_count: 2,
          failed_count: 1,
          success_rate: '66.67%',
          successful_proxies: [{ proxy: { host: '10.0.0.2', port: 8002 } }, { proxy: { host: '10.0.0.5', port: 8005 } }],
          failed_proxies: [{ proxy: { host: '10.0.0.7', port: 8007 } }],
        },
        {
          url: 'http://b.example/x',
          success_count: 1,
          failed_count: 2,
          success_rate: '33.33%',
          successful_proxies: [{ proxy: { host: '10.0.0.7', port: 8007 } }],
          failed_proxies: [{ proxy: { host: '10.0.0.2', port: 8002 } }, { proxy: { host: '10.0.0.5', port: 8005 } }],
        },
      ],
    });
  });

  test('nothing tested (no working proxies)', () => {
    const fold = new CustomUrlFold(['https://a.example/']);
    const r = fold.result(proxyAt, 0);
    expect(r.summary).toEqual({ total_urls_tested: 1, total_proxies_tested: 0, processing_time: '0.00s' });
    expect(r.per_url_summary[0]!.success_rate).toBe('0.00%');
    expect(JSON.parse([...fold.jsonChunks(proxyAt, 0)].join(''))).toEqual(r);
  });

  test('success rate format', () => {
    expect(successRate(2, 1)).toBe('66.67%');
    expect(successRate(1, 0)).toBe('100.00%');
    expect(successRate(0, 0)).toBe('0.00%');
    expect(successRate(1, 2)).toBe('33.33%');
  });

  test('out-of-range results are refused with a code', () => {
    const fold = new CustomUrlFold(['u']);
    expect(() => fold.add(res(1, 1, true))).toThrow(ServiceError);
    expect(() => fold.add(res(1, 1, true))).toThrow(expect.objectContaining({ code: 'custom_url_result_out_of_range' }));
    expect(() => fold.add(res(-1, 0, true))).toThrow('out of range');
  });

  test('fast-check: jsonChunks is exactly JSON.stringify(result)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 4 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 19 }), fc.nat(), fc.boolean()), { maxLength: 80 }),
        fc.integer({ min: 1, max: 7 }),
        (nUrls, raw, per) => {
          const urls = Array.from({ length: nUrls }, (_, i) => `https://u${i}.example/"q"`);
          const fold = new CustomUrlFold(urls);
          if (nUrls > 0) for (const [i, u, s] of raw) fold.add(res(i, u % nUrls, s));
          const text = [...fold.jsonChunks(proxyAt, 42, per)].join('');
          expect(text).toBe(JSON.stringify(fold.result(proxyAt, 42)));
        },
      ),
    );
  });
});
