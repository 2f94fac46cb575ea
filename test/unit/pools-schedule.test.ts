/** The pools' schedule (src/pools/schedule.ts): back-off, jitter, the spread after a restart, checks per day. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { JITTER, RETRY_NOT_TRIED_S, backoffS, checksPerDay, newProxyDueAt, nextCheckAt, spreadOverdue } from '../../src/pools/schedule';

const NOW = Date.UTC(2026, 5, 1, 12);
const DAY_S = 86_400;

describe('back-off', () => {
  test('working or new: the interval; failing: doubling from the interval, at most a day', () => {
    expect(backoffS(300, 0)).toBe(300);
    expect(backoffS(300, 1)).toBe(300);
    expect(backoffS(300, 2)).toBe(600);
    expect(backoffS(300, 3)).toBe(1200);
    expect(backoffS(300, 9)).toBe(76_800);
    expect(backoffS(300, 10)).toBe(DAY_S);
    expect(backoffS(300, 10_000)).toBe(DAY_S);
    expect(backoffS(DAY_S, 5)).toBe(DAY_S);
  });
});

describe('due times', () => {
  test('a new proxy is due at once', () => {
    expect(newProxyDueAt(NOW)).toBe(NOW);
  });

  test('jitter only shortens: the next check is within (1 - JITTER) .. 1 of the delay', () => {
    expect(nextCheckAt(NOW, 600, 0, () => 0)).toBe(NOW + 600_000);
    expect(nextCheckAt(NOW, 600, 0, () => 0.999_999)).toBe(NOW + Math.round(600_000 * (1 - JITTER * 0.999_999)));
    expect(nextCheckAt(NOW, 600, 3, () => 0.5)).toBe(NOW + 2400_000 * (1 - JITTER / 2));
  });

  test("a proxy's first check: its next anywhere in [delay / 2, delay], never below 1 s (the proxies checked together spread)", () => {
    expect(nextCheckAt(NOW, 600, 0, () => 0.25, true, true)).toBe(NOW + 375_000);
    expect(nextCheckAt(NOW, 600, 1, () => 1, true, true)).toBe(NOW + 600_000);
    expect(nextCheckAt(NOW, 1, 0, () => 0.0001, true, true)).toBe(NOW + 1000);
    // not tried: the retry, never spread
    expect(nextCheckAt(NOW, 600, 0, () => 0.25, false, true)).toBe(NOW + RETRY_NOT_TRIED_S * 1000 * (1 - JITTER * 0.25));
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 86_400 }), fc.integer({ min: 0, max: 30 }), fc.double({ min: -1, max: 2, noNaN: false }), (interval, failures, x) => {
        const d = nextCheckAt(NOW, interval, failures, () => x, true, true) - NOW;
        const delay = backoffS(interval, failures) * 1000;
        return d >= Math.max(1000, Math.floor(delay / 2)) && d <= Math.max(1000, delay);
      }),
    );
  });

  test('a check that was not tried comes back soon, not after a back-off', () => {
    expect(nextCheckAt(NOW, 600, 7, () => 0, false)).toBe(NOW + RETRY_NOT_TRIED_S * 1000);
    expect(nextCheckAt(NOW, 5, 7, () => 0, false)).toBe(NOW + 5_000);
  });

  test('property: always after now, never later than the back-off, whatever the random source says', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: DAY_S }),
        fc.integer({ min: 0, max: 100 }),
        fc.oneof(fc.double(), fc.constant(Number.NaN), fc.constant(-1), fc.constant(2)),
        (interval, failures, r) => {
          const at = nextCheckAt(NOW, interval, failures, () => r);
          expect(at).toBeGreaterThan(NOW);
          expect(at).toBeLessThanOrEqual(NOW + Math.max(1000, backoffS(interval, failures) * 1000));
          expect(at).toBeGreaterThanOrEqual(NOW + Math.min(backoffS(interval, failures) * 1000 * (1 - JITTER), 1000) - 1);
        },
      ),
    );
  });

  test('proxies added together drift apart', () => {
    let seed = 1;
    const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
    const due = Array.from({ length: 1000 }, () => nextCheckAt(NOW, 300, 0, random));
    const seconds = new Set(due.map((d) => Math.floor(d / 1000)));
    expect(seconds.size).toBeGreaterThan(25); // 30 s of jitter, one-second buckets
  });
});

describe('spread after a restart', () => {
  test('the overdue are spread over the next interval, most overdue first; the rest unchanged', () => {
    const due = [NOW - 5000, NOW + 10, NOW - 1, NOW - 90_000, NOW];
    expect(spreadOverdue(due, NOW, 300)).toEqual([NOW + 100_000, NOW + 10, NOW + 200_000, NOW, NOW]);
  });

  test('property: every new due time in [now, now + interval), none earlier than now, evenly spaced in overdue order', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: NOW - 10 * 86_400_000, max: NOW + 86_400_000 })), fc.integer({ min: 1, max: DAY_S }), (due, interval) => {
        const out = spreadOverdue(due, NOW, interval);
        expect(out.length).toBe(due.length);
        const moved: { before: number; after: number }[] = [];
        due.forEach((d, i) => {
          if (d >= NOW) expect(out[i]).toBe(d);
          else moved.push({ before: d, after: out[i] as number });
        });
        for (const m of moved) {
          expect(m.after).toBeGreaterThanOrEqual(NOW);
          expect(m.after).toBeLessThan(NOW + interval * 1000);
        }
        moved.sort((a, b) => a.before - b.before);
        for (let i = 1; i < moved.length; i++) expect((moved[i] as { after: number }).after).toBeGreaterThanOrEqual((moved[i - 1] as { after: number }).after);
        // no second of the interval gets more than its share (plus one)
        const perSecond = new Map<number, number>();
        for (const m of moved) perSecond.set(Math.floor((m.after - NOW) / 1000), (perSecond.get(Math.floor((m.after - NOW) / 1000)) ?? 0) + 1);
        for (const n of perSecond.values()) expect(n).toBeLessThanOrEqual(Math.ceil(moved.length / interval) + 1);
      }),
    );
  });
});

describe('checks per day', () => {
  test('working at 300 s: 288 a day, jitter included', () => {
    expect(checksPerDay(300, 0)).toBeCloseTo(288 / (1 - JITTER / 2));
    expect(checksPerDay(300, 2)).toBeCloseTo(144 / (1 - JITTER / 2));
    expect(checksPerDay(300, 50)).toBeCloseTo(1 / (1 - JITTER / 2));
  });

  test('property: the mean delay of jittered due times matches checksPerDay', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 48271) % 2147483647) - 1) / 2147483646;
    let sum = 0;
    const n = 20_000;
    for (let i = 0; i < n; i++) sum += nextCheckAt(0, 600, 0, random);
    expect(86_400_000 / (sum / n)).toBeCloseTo(checksPerDay(600, 0), 0);
  });
});
