/**
 * A thread's lag (src/probe/workers/lag-meter.ts) on a fake clock: a tick's
 * slip is recorded in its bucket, lagSince sees the worst since a time (the
 * overdue tick included), takePeak the worst since the last take, and an
 * idle meter arms no timer.
 */
import { expect, test } from 'bun:test';
import fc from 'fast-check';
import { BUCKET_MS, LagMeter, WINDOW_MS } from '../../src/probe/workers/lag-meter';
import { FakeClock } from '../helpers/fake-clock';

test('idle: no timer; busy: one tick every interval, no slip on time', async () => {
  const clock = new FakeClock(1_000);
  const m = new LagMeter(clock, 10);
  expect(clock.pending).toBe(0);
  m.busy(true);
  m.busy(true); // twice is once
  expect(clock.pending).toBe(1);
  await clock.advance(100);
  expect(m.lagSince(0)).toBe(0);
  expect(m.takePeak()).toBe(0);
  m.busy(false);
  expect(clock.pending).toBe(0);
});

test('a late tick: its slip is seen by lagSince from before it, by takePeak once, and not by lagSince after its bucket', () => {
  let now = 10_000;
  let fire: (() => void) | null = null;
  const m = new LagMeter({ now: () => now, after: (_ms, fn) => ((fire = fn), () => (fire = null)) }, 10);
  m.busy(true); // due at 10 010
  now = 10_130; // the thread was away: the tick runs 120 ms late
  expect(m.lagSince(10_000)).toBe(120); // overdue, not yet run: seen already
  fire!();
  expect(m.lagSince(10_000)).toBe(120);
  expect(m.lagSince(10_130)).toBe(120); // same bucket
  expect(m.takePeak()).toBe(120);
  expect(m.takePeak()).toBe(0);
  now += 2 * BUCKET_MS;
  fire!(); // on time (due 10 140, runs later but the test moved time: slip 90)
  expect(m.lagSince(now)).toBe(90);
  expect(m.lagSince(now - 2 * BUCKET_MS)).toBe(120);
});

test('lagSince is the max of the slips recorded since t (any order, any spacing within the window)', () => {
  fc.assert(
    fc.property(
      fc.array(fc.record({ dt: fc.integer({ min: 0, max: 400 }), slip: fc.integer({ min: 0, max: 1_000 }) }), { minLength: 1, maxLength: 100 }),
      fc.nat(),
      (events, pick) => {
        let now = 0;
        const m = new LagMeter({ now: () => now, after: () => () => {} }, 10);
        const seen: { at: number; slip: number }[] = [];
        for (const e of events) {
          now += e.dt;
          m.record(now, e.slip);
          seen.push({ at: now, slip: e.slip });
        }
        const since = seen[pick % seen.length]!.at;
        // a bucket is the resolution: slips recorded in since's bucket count too
        const expected = Math.max(0, ...seen.filter((s) => Math.floor(s.at / BUCKET_MS) >= Math.floor(since / BUCKET_MS) && s.at > now - WINDOW_MS + BUCKET_MS).map((s) => s.slip));
        expect(m.lagSince(since)).toBe(expected);
      },
    ),
  );
});

test('older than the window: forgotten', () => {
  let now = 0;
  const m = new LagMeter({ now: () => now, after: () => () => {} }, 10);
  m.record(0, 500);
  now = WINDOW_MS + 10 * BUCKET_MS;
  expect(m.lagSince(0)).toBe(0);
});
