/** src/jobs/url-stage.ts: the custom-URL stage's pair count and fold. */
import { describe, expect, test } from 'bun:test';
import type { CustomUrlResult } from '../../src/probe/types';
import { UrlStage } from '../../src/jobs/url-stage';

const rules = [
  { url: 'http://a/', requiredStatusCodes: [200], caseSensitive: false },
  { url: 'http://b/', requiredStatusCodes: [200], caseSensitive: false },
];
const res = (index: number, success: boolean): CustomUrlResult => ({ index, urlIndex: 0, success, statusCode: 200, responseTimeMs: 5, error: null });

describe('UrlStage', () => {
  test('counts pairs to working x rules and says when all are in', () => {
    const s = new UrlStage(rules, 3, 1000);
    expect(s.total).toBe(6);
    expect(s.add([res(1, true), res(2, false), res(3, true)], 0)).toBe(false);
    expect(s.done).toBe(3);
    expect(s.add([res(1, false), res(2, false), res(3, true)], 1)).toBe(true);
  });

  test('the validation block folds each batch under the job\'s URL index', async () => {
    const s = new UrlStage(rules, 2, 1000);
    s.add([res(0, true), res(1, false)], 1);
    s.add([res(0, true), res(1, true)], 0);
    const text = [...s.validation((i) => ({ host: `h${i}`, port: 1 }), 1500).toJsonChunks()].join('');
    const block = JSON.parse(text) as { per_url_summary: { url: string; success_count: number; failed_count: number }[] };
    expect(block.per_url_summary.map((u) => [u.url, u.success_count, u.failed_count])).toEqual([
      ['http://a/', 2, 0],
      ['http://b/', 1, 1],
    ]);
  });
});
