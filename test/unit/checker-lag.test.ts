/**
 * Which timeouts are the checker's (src/probe/workers/checker-lag.ts): a
 * timeout code and a lag at or above the threshold; everything else stays
 * the proxy's verdict.
 */
import { expect, test } from 'bun:test';
import fc from 'fast-check';
import { asCheckerLag, isCheckerTimeout, LAG_MIN_MS, LAG_SHARE, lagThresholdMs } from '../../src/probe/workers/checker-lag';
import { PROBE_ERROR_CODES, type ProbeResult } from '../../src/probe/types';

const failed = (code: (typeof PROBE_ERROR_CODES)[number]): ProbeResult => ({
  index: 7,
  status: 'failed',
  statusCode: null,
  responseTimeMs: 2_001,
  anonymity: null,
  origin: null,
  error: { code, message: 'x' },
});

test('the threshold: 5 % of the timeout, at least 50 ms', () => {
  expect(lagThresholdMs(2_000)).toBe(100);
  expect(lagThresholdMs(1_000)).toBe(LAG_MIN_MS);
  expect(lagThresholdMs(20_000)).toBe(20_000 * LAG_SHARE);
});

test('only timeouts at or above the threshold are the checker\'s', () => {
  fc.assert(
    fc.property(fc.constantFrom(...PROBE_ERROR_CODES), fc.integer({ min: 1_000, max: 20_000 }), fc.double({ min: 0, max: 5_000, noNaN: true }), (code, timeout, lag) => {
      const ours = isCheckerTimeout(failed(code), lag, timeout);
      expect(ours).toBe((code === 'timeout' || code === 'connect_timeout') && lag >= lagThresholdMs(timeout));
    }),
  );
  expect(isCheckerTimeout({ status: 'working', error: null }, 1_000, 2_000)).toBe(false);
});

test('rewritten: checker_overloaded with the lag, index and timing kept, the message says why', () => {
  const r = asCheckerLag(failed('timeout'), 312.6);
  expect(r).toMatchObject({ index: 7, status: 'failed', responseTimeMs: 2_001, error: { code: 'checker_overloaded', checkerLagMs: 313 } });
  expect(r.error!.message).toContain('313 ms late');
  expect(r.error!.message).toContain('timeout was ours');
});
