/** src/results/samples.ts: a proxy's sample results folded into its record's probe result and `samples` block (pure). */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { isServiceError } from '../../src/errors';
import type { ProbeResult } from '../../src/probe/types';
import { foldSamples, nearestRankMedian } from '../../src/results/samples';

const pass = (index: number, origin: string, ms: number, anonymity: ProbeResult['anonymity'] = 'elite'): ProbeResult => ({
  index,
  status: 'working',
  statusCode: 200,
  responseTimeMs: ms,
  anonymity,
  origin,
  error: null,
});
const fail = (index: number, code: 'timeout' | 'connect_refused' | 'checker_overloaded' = 'timeout', ms = 1000): ProbeResult => ({
  index,
  status: 'failed',
  statusCode: null,
  responseTimeMs: ms,
  anonymity: null,
  origin: null,
  error: { code, message: code },
});

describe('foldSamples', () => {
  test('a rotating proxy: every exit once, first seen first; rates and times over the passing samples', () => {
    const { result, samples } = foldSamples([pass(0, '198.51.100.2', 40.126), pass(1, '198.51.100.3', 10), fail(2), pass(3, '198.51.100.2', 25.5)]);
    expect(result.index).toBe(0); // the first passing sample
    expect(samples).toEqual({
      count: 4,
      succeeded: 3,
      success_rate: '75.00%',
      exit_ips: ['198.51.100.2', '198.51.100.3'],
      unique_exit_ips: 2,
      response_time_ms: { min: 10, p50: 25.5, max: 40.13 },
    });
  });

  test('the record is the first PASSING sample (by sample number): its anonymity, origin and time', () => {
    const { result, samples } = foldSamples([fail(0), fail(1, 'connect_refused'), pass(2, '203.0.113.9', 77, 'anonymous'), pass(3, '203.0.113.8', 5)]);
    expect(result).toEqual(pass(2, '203.0.113.9', 77, 'anonymous'));
    expect(samples.exit_ips).toEqual(['203.0.113.9', '203.0.113.8']);
    expect(samples.success_rate).toBe('50.00%');
  });

  test('none passed: failed, no exits, no times; the first failure of the proxy\'s own (our shortage says nothing)', () => {
    const { result, samples } = foldSamples([fail(0, 'checker_overloaded', 0), fail(1, 'connect_refused', 3), fail(2)]);
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('connect_refused');
    expect(samples).toEqual({ count: 3, succeeded: 0, success_rate: '0.00%', exit_ips: [], unique_exit_ips: 0, response_time_ms: null });
    expect(foldSamples([fail(0, 'checker_overloaded'), fail(1, 'checker_overloaded')]).result.index).toBe(0);
  });

  test('one exit for a proxy that does not rotate; two samples of two', () => {
    const { samples } = foldSamples([pass(0, '192.0.2.1', 12), pass(1, '192.0.2.1', 14)]);
    expect(samples).toMatchObject({ succeeded: 2, success_rate: '100.00%', exit_ips: ['192.0.2.1'], unique_exit_ips: 1, response_time_ms: { min: 12, p50: 12, max: 14 } });
  });

  test('no samples is a ServiceError, not a record', () => {
    let err: unknown;
    try {
      foldSamples([]);
    } catch (e) {
      err = e;
    }
    expect(isServiceError(err, 'samples_empty')).toBe(true);
  });

  test('property: the block agrees with the samples whatever they are', () => {
    const origin = fc.constantFrom('10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4');
    const sample = fc.oneof(
      fc.record({ ok: fc.constant(true), origin, ms: fc.double({ min: 0, max: 20000, noNaN: true }) }),
      fc.record({ ok: fc.constant(false), code: fc.constantFrom('timeout' as const, 'connect_refused' as const, 'checker_overloaded' as const) }),
    );
    fc.assert(
      fc.property(fc.array(sample, { minLength: 1, maxLength: 10 }), (xs) => {
        const results = xs.map((x, i) => (x.ok ? pass(i, x.origin, x.ms) : fail(i, x.code)));
        const { result, samples } = foldSamples(results);
        const passing = results.filter((r) => r.status === 'working');
        expect(samples.count).toBe(results.length);
        expect(samples.succeeded).toBe(passing.length);
        expect(samples.exit_ips).toEqual([...new Set(passing.map((r) => r.origin!))]);
        expect(samples.unique_exit_ips).toBe(samples.exit_ips.length);
        expect(result.status).toBe(passing.length > 0 ? 'working' : 'failed');
        if (passing.length > 0) expect(result).toBe(passing[0]!);
        expect(samples.success_rate).toBe(`${((passing.length * 100) / results.length).toFixed(2)}%`);
        const t = samples.response_time_ms;
        if (passing.length === 0) expect(t).toBeNull();
        else {
          expect(t!.min).toBeLessThanOrEqual(t!.p50);
          expect(t!.p50).toBeLessThanOrEqual(t!.max);
          expect(t!.min).toBeCloseTo(Math.min(...passing.map((r) => r.responseTimeMs)), 2);
          expect(t!.max).toBeCloseTo(Math.max(...passing.map((r) => r.responseTimeMs)), 2);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('nearestRankMedian', () => {
  test('an observed value: the middle one, the lower middle one of an even count', () => {
    expect(nearestRankMedian([7])).toBe(7);
    expect(nearestRankMedian([1, 2])).toBe(1);
    expect(nearestRankMedian([1, 2, 3])).toBe(2);
    expect(nearestRankMedian([10, 20, 30, 40])).toBe(20);
  });
});
