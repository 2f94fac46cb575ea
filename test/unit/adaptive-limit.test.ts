/**
 * The adaptive in-flight limit's arithmetic (src/jobs/adaptive-limit.ts):
 * bounded, monotone in the lag, never lowered by an allowed lag, never grown
 * while unused, and it recovers to max after any history.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { AdaptiveLimit, type AdaptiveLimitOptions } from '../../src/jobs/adaptive-limit';

const lag = fc.double({ min: 0, max: 5_000, noNaN: true });
const sample = fc.record({ lagMs: lag, inFlight: fc.integer({ min: 0, max: 50_000 }) });
const options: fc.Arbitrary<AdaptiveLimitOptions> = fc.record({
  max: fc.integer({ min: 1, max: 20_000 }),
  min: fc.integer({ min: 1, max: 500 }),
  targetMs: fc.integer({ min: 1, max: 50 }),
  ceilingMs: fc.integer({ min: 1, max: 500 }),
  smoothing: fc.double({ min: 0.05, max: 1, noNaN: true }),
  growth: fc.double({ min: 0.01, max: 1, noNaN: true }),
});

/** A limit that has lived through `history`. */
function lived(o: AdaptiveLimitOptions, history: { lagMs: number; inFlight: number }[]): AdaptiveLimit {
  const l = new AdaptiveLimit(o);
  for (const s of history) l.update(s);
  return l;
}

describe('AdaptiveLimit', () => {
  test('the limit is an integer in [min, max] after any history', () => {
    fc.assert(
      fc.property(options, fc.array(sample, { maxLength: 200 }), (o, history) => {
        const l = new AdaptiveLimit(o);
        for (const s of history) {
          const n = l.update(s);
          expect(Number.isInteger(n)).toBe(true);
          expect(n).toBeGreaterThanOrEqual(l.min);
          expect(n).toBeLessThanOrEqual(l.max);
        }
      }),
    );
  });

  test('monotone: from the same state a higher lag never gives a higher limit', () => {
    fc.assert(
      fc.property(options, fc.array(sample, { maxLength: 50 }), lag, lag, fc.integer({ min: 0, max: 50_000 }), (o, history, a, b, inFlight) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        const x = lived(o, history);
        const y = lived(o, history);
        expect(y.update({ lagMs: hi, inFlight })).toBeLessThanOrEqual(x.update({ lagMs: lo, inFlight }));
      }),
    );
  });

  test('a lag within what is allowed never lowers the limit; above it the limit never rises', () => {
    fc.assert(
      fc.property(options, fc.array(sample, { maxLength: 50 }), fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 0, max: 50_000 }), (o, history, share, inFlight) => {
        const l = lived(o, history);
        const before = l.limit;
        const ok = l.allowedMs;
        expect(l.update({ lagMs: ok * share, inFlight })).toBeGreaterThanOrEqual(before);
        const m = lived(o, history);
        expect(m.update({ lagMs: ok * 1.01 + 1, inFlight })).toBeLessThanOrEqual(before);
      }),
    );
  });

  test('an unused limit (few probes in flight) does not grow', () => {
    fc.assert(
      fc.property(options, fc.array(sample, { maxLength: 50 }), (o, history) => {
        const l = lived(o, history);
        const before = l.limit;
        const inFlight = Math.floor(before / 2) - 1;
        if (inFlight < 0) return;
        expect(l.update({ lagMs: 0, inFlight })).toBe(before);
      }),
    );
  });

  test('recovers: after any history, low lag with the limit in use brings it back to max', () => {
    fc.assert(
      fc.property(options, fc.array(sample, { maxLength: 200 }), (o, history) => {
        const l = lived(o, history);
        let ticks = 0;
        while (l.limit < l.max && ticks < 10_000) {
          l.update({ lagMs: 0, inFlight: l.limit });
          ticks++;
        }
        expect(l.limit).toBe(l.max);
      }),
    );
  });

  test('sustained lag above the ceiling brings it down to min, whatever the long average learned', () => {
    fc.assert(
      fc.property(options, fc.array(sample, { maxLength: 200 }), (o, history) => {
        const l = lived(o, history);
        for (let i = 0; i < 10_000 && l.limit > l.min; i++) l.update({ lagMs: 10_000, inFlight: l.limit });
        expect(l.limit).toBe(l.min);
      }),
    );
  });

  test('the figures at the defaults: twice the allowed lag moves 30 % of the way to half; a lag at rest grows 7.5 % a tick', () => {
    const l = new AdaptiveLimit({ max: 12_288 });
    expect(l.limit).toBe(12_288);
    expect(l.allowedMs).toBe(50);
    // lag 100 ms against 50 allowed: gradient 0.5, the limit moves 30 % of the way to half
    expect(l.update({ lagMs: 100, inFlight: 12_288 })).toBe(Math.floor(12_288 - 0.3 * 6_144));
    // at rest (lag within what is allowed) with the limit in use: +25 % x 0.3 per tick
    const before = l.limit;
    expect(l.update({ lagMs: 5, inFlight: before })).toBe(Math.ceil(before * (1 + 0.25 * 0.3)));
  });

  test('a steady lag of another process (below the ceiling) is learned as the floor: the limit comes back', () => {
    const l = new AdaptiveLimit({ max: 10_000 });
    for (let i = 0; i < 20; i++) l.update({ lagMs: 90, inFlight: l.limit });
    const low = l.limit;
    expect(low).toBeLessThan(10_000);
    for (let i = 0; i < 1_000; i++) l.update({ lagMs: 90, inFlight: l.limit });
    expect(l.allowedMs).toBeGreaterThanOrEqual(90);
    expect(l.limit).toBe(10_000);
  });

  test('options out of range are refused or clamped', () => {
    expect(() => new AdaptiveLimit({ max: 0 })).toThrow(RangeError);
    expect(new AdaptiveLimit({ max: 10, min: 50 }).min).toBe(10);
    expect(new AdaptiveLimit({ max: 100, initial: 5 }).limit).toBe(64);
    expect(new AdaptiveLimit({ max: 100 }).update({ lagMs: Number.NaN, inFlight: 100 })).toBe(100);
  });
});
