import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { guardedCapacity, judgeReserve, JUDGE_FD_SHARE, maxInFlightFor, parseOpenFilesLimit, RESERVED_FDS, spareFds } from '../../src/limits';

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            20000                20000                files
Max locked memory         8388608              8388608              bytes
`;

describe('open-file limit', () => {
  test('the soft "Max open files" of /proc/self/limits', () => {
    expect(parseOpenFilesLimit(LIMITS)).toBe(20000);
    expect(parseOpenFilesLimit(LIMITS.replace('20000                20000', 'unlimited            unlimited'))).toBe(Number.POSITIVE_INFINITY);
    expect(parseOpenFilesLimit('garbage')).toBeNull();
  });

  test('probes in flight: the guarded built-in judge (a service or an agent) leaves JUDGE_FD_SHARE, an external one nothing', () => {
    expect(JUDGE_FD_SHARE).toBe(0.1);
    expect(maxInFlightFor(20000, 'guarded')).toBe(17_100); // (20 000 - 1 000) x 0.9
    expect(maxInFlightFor(20000, 'elsewhere')).toBe(20000 - RESERVED_FDS);
    expect(maxInFlightFor(1024, 'guarded')).toBe(64);
    expect(maxInFlightFor(null, 'guarded')).toBe(65_536);
    expect(maxInFlightFor(Number.POSITIVE_INFINITY, 'elsewhere')).toBe(65_536);
  });
});

describe('guarded capacity', () => {
  test("the judge's reserve: its share of what is left above the spare and the baseline; nothing at the defaults' cap", () => {
    expect(judgeReserve(1200, 95)).toBe(Math.floor((1200 - 32 - 95) * JUDGE_FD_SHARE));
    expect(judgeReserve(100, 200)).toBe(0);
    // 20 000 descriptors, 12 288 probes: the reserve leaves the cap as it is
    expect(guardedCapacity({ openFiles: 20000, cap: 12_288, others: 150 + judgeReserve(20000, 150) })).toBe(12_288);
  });

  test('the static cap while the others leave room; lowered by what they hold past it', () => {
    expect(spareFds(20000)).toBe(400);
    expect(spareFds(700)).toBe(32);
    // idle service: ~150 descriptors that are not probes
    expect(guardedCapacity({ openFiles: 20000, cap: 17_100, others: 150 })).toBe(17_100);
    // the judge holds 3 000 connections: 20 000 - 400 - 3 150
    expect(guardedCapacity({ openFiles: 20000, cap: 17_100, others: 3150 })).toBe(16_450);
    expect(guardedCapacity({ openFiles: 700, cap: 5000, others: 200 })).toBe(468);
    expect(guardedCapacity({ openFiles: 700, cap: 5000, others: 10_000 })).toBe(1);
    expect(guardedCapacity({ openFiles: 700, cap: 5000, others: -50 })).toBe(668); // probes between grant and socket: never above the limit - spare
  });

  test('probes at the cap + the others + the spare never exceed the limit (unless the others alone do)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 64, max: 1_000_000 }), fc.integer({ min: 1, max: 2_000_000 }), fc.integer({ min: -1000, max: 1_000_000 }), (openFiles, cap, others) => {
        const c = guardedCapacity({ openFiles, cap, others });
        expect(c).toBeGreaterThanOrEqual(1);
        expect(c).toBeLessThanOrEqual(cap);
        if (openFiles - spareFds(openFiles) - Math.max(0, others) >= 1) expect(c + Math.max(0, others) + spareFds(openFiles)).toBeLessThanOrEqual(openFiles);
      }),
    );
  });
});
