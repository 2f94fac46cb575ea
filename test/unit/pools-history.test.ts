/**
 * A pooled proxy's rolling history (src/pools/history.ts): the windows, the
 * late results, saturation, the latency median, and fast-check properties
 * against a model that keeps every check (uptime equal in any order of folds;
 * p50 the weighted median of the hours' geometric means).
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { HISTORY_BYTES, checksIn24h, emptyHistory, foldHistory, latencyP50, uptime, uptimeH24, type HistoryCheck } from '../../src/pools/history';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
/** A Monday, 00:00 UTC: periods line up with it. */
const T0 = Date.UTC(2026, 5, 1);

const pass = (latencyMs: number): HistoryCheck => ({ passed: true, latencyMs });
const fail: HistoryCheck = { passed: false };

function foldAll(events: readonly { at: number; check: HistoryCheck }[]): Uint8Array {
  let h: Uint8Array | null = null;
  for (const e of events) h = foldHistory(h, e.check, e.at);
  return h ?? emptyHistory();
}

describe('encoding', () => {
  test('always HISTORY_BYTES long, the input left unchanged', () => {
    const a = foldHistory(null, pass(120), T0);
    expect(a.length).toBe(HISTORY_BYTES);
    const copy = a.slice();
    const b = foldHistory(a, fail, T0 + MIN);
    expect(a).toEqual(copy);
    expect(b).not.toEqual(a);
  });

  test('a missing, short or foreign history reads as empty and folds from scratch', () => {
    for (const h of [null, undefined, new Uint8Array(0), new Uint8Array(HISTORY_BYTES), new Uint8Array(HISTORY_BYTES + 1).fill(1)]) {
      expect(uptime(h, T0)).toEqual({ h1: null, h24: null, d7: null });
      expect(latencyP50(h, T0)).toBeNull();
      expect(checksIn24h(h, T0)).toBe(0);
      expect(uptime(foldHistory(h, pass(5), T0), T0)).toEqual({ h1: 1, h24: 1, d7: 1 });
    }
  });
});

describe('windows', () => {
  test('null with no check in the window; fractions of the checks that passed', () => {
    let h = foldHistory(null, pass(100), T0);
    h = foldHistory(h, fail, T0 + MIN);
    h = foldHistory(h, pass(100), T0 + 2 * MIN);
    h = foldHistory(h, pass(100), T0 + 3 * MIN);
    expect(uptime(h, T0 + 4 * MIN)).toEqual({ h1: 0.75, h24: 0.75, d7: 0.75 });
    expect(uptimeH24(h, T0 + 4 * MIN)).toBe(0.75);
    expect(uptimeH24(null, T0)).toBeNull();
    expect(checksIn24h(h, T0 + 4 * MIN)).toBe(4);
    // an hour later the minute ring is empty, the others still hold them
    expect(uptime(h, T0 + HOUR + 5 * MIN)).toEqual({ h1: null, h24: 0.75, d7: 0.75 });
    expect(uptime(h, T0 + DAY + HOUR)).toEqual({ h1: null, h24: null, d7: 0.75 });
    expect(uptime(h, T0 + 7 * DAY + HOUR)).toEqual({ h1: null, h24: null, d7: null });
  });

  test('the ring moves on: old periods are cleared when a newer check is folded', () => {
    let h = foldHistory(null, fail, T0);
    h = foldHistory(h, pass(50), T0 + 2 * HOUR);
    expect(uptime(h, T0 + 2 * HOUR)).toEqual({ h1: 1, h24: 0.5, d7: 0.5 });
    h = foldHistory(h, pass(50), T0 + 25 * HOUR);
    expect(uptime(h, T0 + 25 * HOUR).h24).toBe(1); // the failure at T0 left the 24 h window
    expect(uptime(h, T0 + 25 * HOUR).d7).toBeCloseTo(2 / 3);
  });

  test('a late result counts where its period is still in the window, and nowhere else', () => {
    let h = foldHistory(null, pass(10), T0 + 2 * DAY);
    h = foldHistory(h, fail, T0 + 2 * DAY - 30 * MIN); // same hour ring window, outside no ring
    expect(uptime(h, T0 + 2 * DAY)).toEqual({ h1: 0.5, h24: 0.5, d7: 0.5 });
    h = foldHistory(h, fail, T0 + 2 * DAY - 2 * HOUR); // too old for the minute ring
    expect(uptime(h, T0 + 2 * DAY).h1).toBe(0.5);
    expect(uptime(h, T0 + 2 * DAY).h24).toBeCloseTo(1 / 3);
    h = foldHistory(h, fail, T0 - 30 * DAY); // too old for every ring
    expect(uptime(h, T0 + 2 * DAY).d7).toBeCloseTo(1 / 3);
  });

  test('a clock behind the newest check reads as the newest check', () => {
    const h = foldHistory(null, pass(10), T0 + 10 * MIN);
    expect(uptime(h, T0 + 9 * MIN)).toEqual({ h1: 1, h24: 1, d7: 1 });
  });

  test('a full slot halves its counters first: the ratio holds, all-pass stays all-pass, none-pass stays 0', () => {
    let h: Uint8Array | null = null;
    for (let i = 0; i < 600; i++) h = foldHistory(h, i % 4 === 0 ? fail : pass(20), T0 + i); // one 5-minute period
    const u = uptime(h, T0 + 1000);
    expect(u.h1).toBeCloseTo(0.75, 1);
    let allPass: Uint8Array | null = null;
    let nonePass: Uint8Array | null = null;
    for (let i = 0; i < 600; i++) {
      allPass = foldHistory(allPass, pass(20), T0 + i);
      nonePass = foldHistory(nonePass, fail, T0 + i);
    }
    expect(uptime(allPass, T0)).toEqual({ h1: 1, h24: 1, d7: 1 });
    expect(uptime(nonePass, T0)).toEqual({ h1: 0, h24: 0, d7: 0 });
  });
});

describe('latency p50', () => {
  test('a steady proxy: its latency', () => {
    let h: Uint8Array | null = null;
    for (let i = 0; i < 50; i++) h = foldHistory(h, pass(237), T0 + i * 10 * MIN);
    expect(latencyP50(h, T0 + 50 * 10 * MIN)).toBe(237);
  });

  test('failed checks carry no latency; none passing: null', () => {
    let h = foldHistory(null, fail, T0);
    expect(latencyP50(h, T0)).toBeNull();
    h = foldHistory(h, pass(80), T0 + MIN);
    h = foldHistory(h, fail, T0 + 2 * MIN);
    expect(latencyP50(h, T0 + 3 * MIN)).toBe(80);
  });

  test('the hour that holds the middle passing check decides; older than 24 h does not count', () => {
    let h: Uint8Array | null = null;
    for (let i = 0; i < 3; i++) h = foldHistory(h, pass(1000), T0 + i * MIN);
    for (let i = 0; i < 5; i++) h = foldHistory(h, pass(100), T0 + HOUR + i * MIN);
    expect(latencyP50(h, T0 + 2 * HOUR)).toBe(100);
    for (let i = 0; i < 7; i++) h = foldHistory(h, pass(1000), T0 + 2 * HOUR + i * MIN);
    expect(latencyP50(h, T0 + 3 * HOUR)).toBe(1000);
    expect(latencyP50(h, T0 + 24 * HOUR + 30 * MIN)).toBe(1000); // the first hour is gone
    expect(latencyP50(h, T0 + 50 * HOUR)).toBeNull();
  });

  test('sub-millisecond, huge and non-finite latencies are clamped, not lost', () => {
    expect(latencyP50(foldHistory(null, pass(0), T0), T0)).toBe(0);
    expect(latencyP50(foldHistory(null, pass(10 ** 9), T0), T0)).toBe(65_535);
    expect(latencyP50(foldHistory(null, pass(Number.NaN), T0), T0)).toBe(65_535);
  });
});

// ---- properties against a model that keeps every check ----------------------------------------

interface Event {
  at: number;
  check: HistoryCheck;
}

const eventArb: fc.Arbitrary<Event> = fc.record({
  at: fc.integer({ min: T0, max: T0 + 9 * DAY }),
  check: fc.oneof(fc.constant<HistoryCheck>(fail), fc.double({ min: 0.5, max: 20_000, noNaN: true }).map((ms) => pass(ms))),
});

const PERIOD = 5 * MIN;
/** The model: count the checks whose ring period is in the window at `now` (see the module header). */
function modelRatio(events: readonly Event[], now: number, perMs: number, slots: number): number | null {
  if (events.length === 0) return null;
  const k = (t: number) => Math.floor(Math.floor(t / PERIOD) / (perMs / PERIOD));
  const newest = Math.max(...events.map((e) => k(e.at)));
  const lo = Math.max(newest, k(now)) - slots;
  const inside = events.filter((e) => k(e.at) > lo);
  if (inside.length === 0) return null;
  return inside.filter((e) => e.check.passed).length / inside.length;
}

describe('properties', () => {
  test('uptime equals the model, whatever the order the checks were folded in', () => {
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 200 }), fc.integer({ min: 0, max: 10 * DAY }), (events, dt) => {
        const now = T0 + dt;
        const h = foldAll(events);
        const u = uptime(h, now);
        const close = (a: number | null, b: number | null) => (a === null || b === null ? a === b : Math.abs(a - b) < 1e-12);
        expect(close(u.h1, modelRatio(events, now, PERIOD, 12))).toBe(true);
        expect(close(u.h24, modelRatio(events, now, HOUR, 24))).toBe(true);
        expect(close(u.d7, modelRatio(events, now, DAY, 7))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  test('p50: the weighted median of the hours geometric means, within 0.1 %', () => {
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 120 }), (events) => {
        const sorted = [...events].sort((a, b) => a.at - b.at);
        const now = sorted.length === 0 ? T0 : (sorted[sorted.length - 1] as Event).at;
        const h = foldAll(sorted);
        const hourOf = (t: number) => Math.floor(t / HOUR);
        const byHour = new Map<number, number[]>();
        for (const e of sorted) {
          if (!e.check.passed || hourOf(e.at) <= hourOf(now) - 24) continue;
          const list = byHour.get(hourOf(e.at)) ?? [];
          list.push(Math.log2(e.check.latencyMs));
          byHour.set(hourOf(e.at), list);
        }
        const hours = [...byHour.values()].map((logs) => ({ ms: 2 ** (logs.reduce((a, b) => a + b, 0) / logs.length), w: logs.length }));
        const p50 = latencyP50(h, now);
        if (hours.length === 0) return p50 === null;
        hours.sort((a, b) => a.ms - b.ms);
        const total = hours.reduce((a, b) => a + b.w, 0);
        // any hour whose value is within tolerance of an hour at the weighted median is right
        let seen = 0;
        let median = 0;
        for (const x of hours) {
          seen += x.w;
          if (seen * 2 >= total) {
            median = x.ms;
            break;
          }
        }
        return p50 !== null && Math.abs(p50 - median) <= median * 0.001 + 0.5;
      }),
      { numRuns: 300 },
    );
  });

  test('any bytes: reads never throw, and fold always gives a readable history', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.boolean(), fc.integer({ min: T0, max: T0 + DAY }), (bytes, first, at) => {
        if (first && bytes.length > 0) bytes[0] = 1;
        uptime(bytes, at);
        latencyP50(bytes, at);
        const h = foldHistory(bytes, pass(10), at);
        expect(h.length).toBe(HISTORY_BYTES);
        expect(uptime(h, at).h1).not.toBeNull();
      }),
    );
  });
});
