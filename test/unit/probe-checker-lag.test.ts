/**
 * Which timeouts are the checker's (src/probe/codec/checker-lag.ts): a
 * timeout code and a lateness at or above the threshold; everything else
 * stays the proxy's verdict.
 */
import { expect, test } from 'bun:test';
import fc from 'fast-check';
import { checkerLagError, isCheckerTimeout, LAG_MIN_MS, LAG_SHARE, lagThresholdMs } from '../../src/probe/codec/checker-lag';
import { PROBE_ERROR_CODES } from '../../src/probe/types';

test('the threshold: 5 % of the timeout, at least 50 ms', () => {
  expect(lagThresholdMs(2_000)).toBe(100);
  expect(lagThresholdMs(1_000)).toBe(LAG_MIN_MS);
  expect(lagThresholdMs(20_000)).toBe(20_000 * LAG_SHARE);
});

test("only timeouts at or above the threshold are the checker's", () => {
  fc.assert(
    fc.property(fc.constantFrom(...PROBE_ERROR_CODES), fc.integer({ min: 1_000, max: 20_000 }), fc.double({ min: 0, max: 5_000, noNaN: true }), (code, timeout, late) => {
      const ours = isCheckerTimeout({ code }, late, timeout);
      expect(ours).toBe((code === 'timeout' || code === 'connect_timeout') && late >= lagThresholdMs(timeout));
    }),
  );
  expect(isCheckerTimeout(null, 1_000, 2_000)).toBe(false);
});

test('the error: checker_overloaded with the lateness, the message says why', () => {
  const e = checkerLagError({ code: 'connect_timeout' }, 312.6);
  expect(e).toMatchObject({ code: 'checker_overloaded', checkerLagMs: 313 });
  expect(e.message).toContain('313 ms late');
  expect(e.message).toContain('connect_timeout was ours');
});
