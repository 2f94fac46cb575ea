/** Tests for src/results/summary.ts: the summary fold and the duration formats. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import {
  formatProcessingTime,
  formatTimeout,
  SummaryFold,
} from '../../src/results/summary';
import type { Anonymity } from '../../src/probe/types';

type In = { status: 'working' | 'failed'; country_name: string | null; anonymity: Anonymity | null; isp: string | null };
const w = (country_name: string | null, isp: string | null, anonymity: Anonymity = 'elite'): In => ({
  status: 'working',
  country_name,
  anonymity,
  isp,
});
const f: In = { status: 'failed', country_name: null, anonymity: null, isp: null };

describe('SummaryFold', () => {
  test('empty', () => {
    expect(new SummaryFold().result()).toEqual({
      total_working: 0,
      countries: {},
      anonymity_levels: { elite: 0, anonymous: 0, transparent: 0 },
      top_isps: {},
      errors: {},
    });
  });

  test('counts working only; Unknown for missing names', () => {
    const s = new SummaryFold();
    s.add(w('Germany', 'Hetzner', 'elite'));
    s.add(w('Germany', 'Hetzner', 'anonymous'));
    s.add(w(null, null, 'transparent'));
    s.add(f);
    s.add(f);
    expect(s.total).toBe(5);
    expect(s.totalWorking).toBe(3);
    expect(s.result()).toEqual({
      total_working: 3,
      countries: { Germany: 2, Unknown: 1 },
      anonymity_levels: { elite: 1, anonymous: 1, transparent: 1 },
      top_isps: { Hetzner: 2, Unknown: 1 },
      errors: { bad_response: 2 },
    });
  });

  test('errors: failed proxies per error code, most frequent first, ties by code; working ones never count', () => {
    const s = new SummaryFold();
    const failed = (code: string) => ({ ...f, error: { code, message: 'm' } }) as In & { error: { code: never; message: string } };
    for (const code of ['timeout', 'connect_refused', 'timeout', 'blocked_target', 'connect_refused', 'timeout', 'dns_failed']) s.add(failed(code));
    s.add(w('X', 'Y'));
    expect(Object.entries(s.result().errors)).toEqual([
      ['timeout', 3],
      ['connect_refused', 2],
      ['blocked_target', 1],
      ['dns_failed', 1],
    ]);
    expect(s.total - s.totalWorking).toBe(7);
  });

  test('top_isps: 10 largest, ties by name ascending, in that order', () => {
    const s = new SummaryFold();
    const counts: [string, number][] = [
      ['Zeta', 5], ['Alpha', 5], ['Mid', 7], ['Beta', 1], ['Gamma', 1], ['Delta', 1], ['Eps', 1],
      ['Eta', 1], ['Theta', 1], ['Iota', 1], ['Kappa', 1], ['Aardvark', 1],
    ];
    for (const [isp, n] of counts) for (let i = 0; i < n; i++) s.add(w('X', isp));
    const top = s.result().top_isps;
    expect(Object.entries(top)).toEqual([
      ['Mid', 7], ['Alpha', 5], ['Zeta', 5], ['Aardvark', 1], ['Beta', 1], ['Delta', 1],
      ['Eps', 1], ['Eta', 1], ['Gamma', 1], ['Iota', 1],
    ]);
  });

  test('odd names stay plain keys', () => {
    const s = new SummaryFold();
    s.add(w('__proto__', 'constructor'));
    const r = s.result();
    expect(Object.keys(r.countries)).toEqual(['__proto__']);
    expect(JSON.parse(JSON.stringify(r)).countries.__proto__).toBe(1);
    expect(r.top_isps['constructor'] as unknown).toBe(1);
  });

  test('fast-check: totals agree with a naive count', () => {
    const rec = fc.oneof(
      fc.constant(f),
      fc.record({
        status: fc.constant('working' as const),
        country_name: fc.option(fc.constantFrom('A', 'B', 'C'), { nil: null }),
        anonymity: fc.constantFrom<Anonymity>('elite', 'anonymous', 'transparent'),
        isp: fc.option(fc.constantFrom('', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'Unknown'), { nil: null }),
      }),
    );
    fc.assert(
      fc.property(fc.array(rec, { maxLength: 200 }), (recs) => {
        const s = new SummaryFold();
        for (const r of recs) s.add(r);
        const out = s.result();
        const work = recs.filter((r) => r.status === 'working');
        expect(out.total_working).toBe(work.length);
        expect(Object.values(out.countries).reduce((a, b) => a + b, 0)).toBe(work.length);
        const a = out.anonymity_levels;
        expect(a.elite + a.anonymous + a.transparent).toBe(work.length);
        const naive = new Map<string, number>();
        for (const r of work) naive.set(r.isp || 'Unknown', (naive.get(r.isp || 'Unknown') ?? 0) + 1);
        const expected = [...naive].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1)).slice(0, 10);
        const isps = Object.entries(out.top_isps);
        expect(isps).toEqual(expected);
        expect(isps.length).toBeLessThanOrEqual(10);
        for (let i = 1; i < isps.length; i++) {
          const [pn, pc] = isps[i - 1]!;
          const [n, c] = isps[i]!;
          expect(pc > c || (pc === c && pn < n)).toBe(true);
        }
      }),
    );
  });
});

describe('SummaryFold, auto jobs: summary.protocols', () => {
  test('counts every protocol each working proxy passed; failed records count nowhere; last key', () => {
    const fold = new SummaryFold({ protocols: true });
    fold.add({ ...w('Germany', 'A'), protocols: ['socks5', 'socks4'] });
    fold.add({ ...w('Germany', 'A'), protocols: ['http'] });
    fold.add({ ...w(null, null), protocols: ['socks5', 'http'] });
    fold.add({ ...f, protocols: [] });
    const out = fold.result();
    expect(out.protocols).toEqual({ http: 2, socks4: 1, socks5: 2 });
    expect(Object.keys(out)).toEqual(['total_working', 'countries', 'anonymity_levels', 'top_isps', 'errors', 'protocols']);
    expect(Object.keys(out.protocols!)).toEqual(['http', 'socks4', 'socks5']);
  });

  test('an auto job with nothing working still has the key, all zero', () => {
    expect(new SummaryFold({ protocols: true }).result().protocols).toEqual({ http: 0, socks4: 0, socks5: 0 });
  });

  test('not auto: no protocols key, whatever the records carry', () => {
    const fold = new SummaryFold();
    fold.add({ ...w('Germany', 'A'), protocols: ['socks5'] });
    expect('protocols' in fold.result()).toBe(false);
  });
});

describe('SummaryFold, sampled jobs: summary.rotating', () => {
  const sampled = (unique: number) => ({ ...w('Germany', 'A'), samples: { count: 3, succeeded: 3, success_rate: '100.00%', exit_ips: [], unique_exit_ips: unique, response_time_ms: null } });

  test('counts proxies with more than one exit address; the key comes last (after protocols)', () => {
    const fold = new SummaryFold({ protocols: true, rotating: true });
    fold.add(sampled(3));
    fold.add(sampled(1));
    fold.add(sampled(2));
    fold.add({ ...f, samples: { count: 3, succeeded: 0, success_rate: '0.00%', exit_ips: [], unique_exit_ips: 0, response_time_ms: null } });
    const out = fold.result();
    expect(out.rotating).toBe(2);
    expect(Object.keys(out)).toEqual(['total_working', 'countries', 'anonymity_levels', 'top_isps', 'errors', 'protocols', 'rotating']);
    expect(new SummaryFold({ rotating: true }).result().rotating).toBe(0);
  });

  test('not sampled: no rotating key, whatever the records carry', () => {
    const fold = new SummaryFold();
    fold.add(sampled(3));
    expect('rotating' in fold.result()).toBe(false);
  });
});

describe('SummaryFold: summary.https', () => {
  test('counts working records with https true; present once a working record carries https; last key', () => {
    const fold = new SummaryFold({ protocols: true });
    fold.add({ ...w('Germany', 'A'), https: true });
    fold.add({ ...w('Germany', 'A'), https: false });
    fold.add({ ...w(null, null), https: true });
    fold.add(f);
    const out = fold.result();
    expect(out.https).toBe(2);
    expect(Object.keys(out).at(-1)).toBe('https');
  });

  test('all false: 0, not absent', () => {
    const fold = new SummaryFold();
    fold.add({ ...w('Germany', 'A'), https: false });
    expect(fold.result().https).toBe(0);
  });

  test('no working record with https (no TLS judge, or nothing working): no key', () => {
    const fold = new SummaryFold();
    fold.add(w('Germany', 'A'));
    fold.add(f);
    expect('https' in fold.result()).toBe(false);
  });
});

describe('formats', () => {
  test('processing time', () => {
    expect(formatProcessingTime(12_321)).toBe('12.32s');
    expect(formatProcessingTime(0)).toBe('0.00s');
    expect(formatProcessingTime(999.9)).toBe('1.00s');
  });
  test('timeout', () => {
    expect(formatTimeout(5000)).toBe('5000ms');
    expect(formatTimeout(2000)).toBe('2000ms');
  });
});
