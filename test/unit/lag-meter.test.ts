/**
 * A thread's lag (src/probe/workers/lag-meter.ts) on a fake clock: lateness
 * is how overdue the armed tick is now, takePeak the worst slip since the
 * last take (the overdue tick's included), and an idle meter arms no timer.
 */
import { expect, test } from 'bun:test';
import fc from 'fast-check';
import { LagMeter, newLagShare, sharedLateness } from '../../src/probe/workers/lag-meter';
import { FakeClock } from '../helpers/fake-clock';

test('idle: no timer and no lateness; busy: one tick every interval, none late on time', async () => {
  const clock = new FakeClock(1_000);
  const m = new LagMeter(clock, 10);
  expect(clock.pending).toBe(0);
  expect(m.lateness()).toBe(0);
  m.busy(true);
  m.busy(true); // twice is once
  expect(clock.pending).toBe(1);
  await clock.advance(100);
  expect(m.lateness()).toBe(0);
  expect(m.takePeak()).toBe(0);
  m.busy(false);
  expect(clock.pending).toBe(0);
  expect(m.lateness()).toBe(0);
});

test('a thread away for a while: lateness grows while the tick is overdue and stays for an interval after it ran; takePeak once', () => {
  let now = 10_000;
  let fire: (() => void) | null = null;
  const m = new LagMeter({ now: () => now, after: (_ms, fn) => ((fire = fn), () => (fire = null)) }, 10);
  m.busy(true); // due at 10 010
  now = 10_005;
  expect(m.lateness()).toBe(0);
  now = 10_130; // the thread was away
  expect(m.lateness()).toBe(120);
  fire!(); // runs 120 ms late; the next is due at 10 140
  expect(m.lateness()).toBe(120); // what runs in the same turn (a deadline) still sees the stretch
  now = 10_139;
  expect(m.lateness()).toBe(120);
  now = 10_140; // an interval later: on time again
  expect(m.lateness()).toBe(0);
  now = 10_130;
  expect(m.takePeak()).toBe(120);
  expect(m.takePeak()).toBe(0);
  now = 10_170; // overdue by 30, not yet run: takePeak sees it
  expect(m.takePeak()).toBe(30);
});

test('takePeak is the worst slip of the ticks since the last take', () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: 500 }), { minLength: 1, maxLength: 50 }), (slips) => {
      let now = 0;
      let fire: (() => void) | null = null;
      const m = new LagMeter({ now: () => now, after: (ms, fn) => ((fire = fn), () => (fire = null)) }, 10);
      m.busy(true);
      for (const s of slips) {
        now += 10 + s;
        fire!();
      }
      expect(m.takePeak()).toBe(Math.max(...slips));
    }),
  );
});

test('shared: another thread reads the same lateness from the share (absolute time), none once stopped', () => {
  let now = 0;
  let fire: (() => void) | null = null;
  const share = newLagShare();
  expect(sharedLateness(share)).toBe(0); // never started
  const m = new LagMeter({ now: () => now, after: (_ms, fn) => ((fire = fn), () => (fire = null)) }, 10, share);
  m.busy(true); // due at 10
  const off = share[0]! - 10; // the share's time line against this clock's
  const at = (t: number) => sharedLateness(share, t + off);
  expect(at(5)).toBe(0);
  now = 130;
  expect(at(130)).toBe(m.lateness());
  expect(at(130)).toBe(120);
  fire!(); // ran 120 late; next due at 140
  expect(at(135)).toBe(120); // within an interval after the late tick
  expect(at(140)).toBe(0);
  expect(at(150)).toBe(10); // overdue again
  m.busy(false);
  expect(at(500)).toBe(0);
});
