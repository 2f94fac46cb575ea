/** Tests for src/jobs/judge-warnings.ts: a check whose proxies cannot reach the judge says so. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { JUDGE_WARNING_CODES, judgeWarnings } from '../../src/jobs/judge-warnings';

const own = new Set(['127.0.0.1', '::1', '10.0.0.5']);
const url = 'http://127.0.0.1:3000/judge';

describe('judgeWarnings', () => {
  test('this machine only: a proxy elsewhere (another address, a host name) gives one judge_local_only naming the settings', () => {
    const [w, ...rest] = judgeWarnings({ url, reach: 'this machine only' }, ['127.0.0.1', '10.0.0.5', '203.0.113.9'], own);
    expect(rest).toEqual([]);
    expect(w!.code).toBe(JUDGE_WARNING_CODES.localOnly);
    expect(w!.message).toContain(url);
    expect(w!.message).toContain('BASE_URL');
    expect(judgeWarnings({ url, reach: 'this machine only' }, ['proxy.example.net'], own)).toHaveLength(1);
  });

  test('this machine only: proxies on this machine (loopback, its own addresses, localhost) give none', () => {
    expect(judgeWarnings({ url, reach: 'this machine only' }, ['127.0.0.1', '127.9.9.9', '[::1]', 'localhost', '10.0.0.5'], own)).toEqual([]);
  });

  test('this network only: a public address or a name gives judge_network_only; private ones none', () => {
    expect(judgeWarnings({ url, reach: 'this network only' }, ['10.9.9.9', '192.168.1.4', '127.0.0.1'], own)).toEqual([]);
    expect(judgeWarnings({ url, reach: 'this network only' }, ['10.9.9.9', '8.8.8.8'], own)[0]!.code).toBe(JUDGE_WARNING_CODES.networkOnly);
  });

  test('a public judge, or one not known: never a warning', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.ipV4(), fc.domain())), fc.constantFrom('public' as const, null), (hosts, reach) => judgeWarnings({ url, reach }, hosts, own).length === 0),
      { numRuns: 100 },
    );
  });
});
