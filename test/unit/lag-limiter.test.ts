/**
 * The adaptive limit at work (src/jobs/lag-limiter.ts) on a fake clock: it
 * ticks only while probes are in flight, takes the worst of the lanes' lag
 * and its own tick's slip, and hands the limit to its target when it
 * changed; wake() after a rest, stop() for good.
 */
import { expect, test } from 'bun:test';
import { LagLimiter } from '../../src/jobs/lag-limiter';
import { newLagShare } from '../../src/probe/workers/lag-meter';
import { FakeClock } from '../helpers/fake-clock';

function rig(inFlight: number) {
  const clock = new FakeClock();
  const limits: number[] = [];
  const target = { totalInFlight: inFlight, setLoadLimit: (n: number) => limits.push(n) };
  let laneLag = 0;
  let takes = 0;
  const source = {
    takeLag: () => {
      takes++;
      const l = laneLag;
      laneLag = 0;
      return l;
    },
  };
  const limiter = new LagLimiter({ max: 1000, min: 10, clock, intervalMs: 50 });
  return { clock, limits, target, source, limiter, setLaneLag: (l: number) => (laneLag = l), takes: () => takes };
}

test('the lanes\' lag shrinks the limit, their calm grows it back; the target hears only changes', async () => {
  const r = rig(1000);
  r.limiter.start(r.target, r.source);
  expect(r.limits).toEqual([1000]); // the first limit, at start
  await r.clock.advance(50); // calm at max: unchanged, nothing set
  expect(r.limits).toEqual([1000]);
  r.setLaneLag(400);
  await r.clock.advance(50);
  expect(r.limiter.lastLagMs).toBe(400);
  expect(r.limits.length).toBe(2);
  const low = r.limits[1]!;
  expect(low).toBeLessThan(1000);
  r.target.totalInFlight = low;
  for (let i = 0; i < 100; i++) {
    r.target.totalInFlight = r.limiter.limit;
    await r.clock.advance(50);
  }
  expect(r.limiter.limit).toBe(1000);
  expect(r.limits.at(-1)).toBe(1000);
  r.limiter.stop();
  expect(r.limiter.ticking).toBe(false);
});

test('its meter shares the main thread\'s lag with the lanes while it ticks; resting or stopped, nothing', async () => {
  const clock = new FakeClock();
  const limiter = new LagLimiter({ max: 1000, clock, intervalMs: 50 });
  const mainLag = newLagShare();
  const target = { totalInFlight: 1000, setLoadLimit: () => {} };
  limiter.start(target, { takeLag: () => 0, mainLag });
  expect(clock.pending).toBe(2); // the limiter's tick and its meter's
  expect(Number.isNaN(mainLag[0])).toBe(false); // the meter's due time, shared
  target.totalInFlight = 0;
  await clock.advance(50); // a tick with nothing in flight: rest
  expect(clock.pending).toBe(0);
  expect(Number.isNaN(mainLag[0])).toBe(true);
  limiter.wake();
  expect(Number.isNaN(mainLag[0])).toBe(false);
  limiter.stop();
  expect(clock.pending).toBe(0);
  expect(Number.isNaN(mainLag[0])).toBe(true);
});

test('a late tick: its slip is the lag it feeds', () => {
  let now = 0;
  const timers: { at: number; fn: () => void }[] = [];
  const clock = { now: () => now, after: (ms: number, fn: () => void) => (timers.push({ at: now + ms, fn }), () => {}) };
  const limiter = new LagLimiter({ max: 1000, clock, intervalMs: 50 });
  limiter.start({ totalInFlight: 1000, setLoadLimit: () => {} }, { takeLag: () => 0 });
  now = 350; // the limiter's tick was due at 50: 300 ms late
  const tick = timers.find((t) => t.at === 50)!;
  tick.fn();
  expect(limiter.lastLagMs).toBeGreaterThanOrEqual(300);
  expect(limiter.limit).toBeLessThan(1000);
  limiter.stop();
});

test('no probes in flight: it rests (no timer) until wake(), which drops the lag reported while resting', async () => {
  const r = rig(0);
  r.limiter.start(r.target, r.source);
  expect(r.clock.pending).toBe(0);
  r.target.totalInFlight = 500;
  r.setLaneLag(900); // reported during the rest: old news
  r.limiter.wake();
  r.limiter.wake(); // twice is once
  expect(r.clock.pending).toBe(2); // its tick and its meter's
  await r.clock.advance(50);
  expect(r.limiter.lastLagMs).toBe(0);
  expect(r.limiter.limit).toBe(1000);
  r.target.totalInFlight = 0;
  await r.clock.advance(50); // the tick that sees none in flight arms no other
  expect(r.clock.pending).toBe(0);
  r.limiter.stop();
  r.limiter.wake();
  expect(r.clock.pending).toBe(0);
});
