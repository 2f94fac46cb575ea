/**
 * Tests for src/results/retention-clock.ts: the retention clock follows the
 * wall clock while it moves with the monotonic one (within the tolerance),
 * leaves out forward jumps beyond it, pays them back on backward moves, and
 * never runs ahead of the wall clock.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { RetentionClock } from '../../src/results/retention-clock';

const TOL = 5 * 60_000;

function clocks(wall0 = 1_700_000_000_000) {
  const c = { wall: wall0, mono: 0 };
  const rc = new RetentionClock(() => c.wall, () => c.mono, TOL);
  return { c, rc };
}

describe('RetentionClock', () => {
  test('time that passes on both clocks is followed', () => {
    const { c, rc } = clocks();
    c.wall += 3_600_000;
    c.mono += 3_600_000;
    expect(rc.read()).toEqual({ now: c.wall, jumpMs: 0 });
  });

  test('a forward jump beyond the tolerance is left out and reported once', () => {
    const { c, rc } = clocks();
    const start = c.wall;
    c.mono += 1000;
    c.wall += 1000 + 365 * 86_400_000;
    expect(rc.read()).toEqual({ now: start + 1000, jumpMs: 365 * 86_400_000 });
    c.mono += 1000;
    c.wall += 1000;
    expect(rc.read()).toEqual({ now: start + 2000, jumpMs: 0 });
    expect(rc.skewMs).toBe(365 * 86_400_000);
  });

  test('running ahead by the tolerance or less is not a jump', () => {
    const { c, rc } = clocks();
    c.wall += TOL;
    expect(rc.read()).toEqual({ now: c.wall, jumpMs: 0 });
  });

  test('a backward move pays the skew back, never below 0', () => {
    const { c, rc } = clocks();
    const start = c.wall;
    c.wall += 10 * TOL;
    rc.read();
    c.wall -= 4 * TOL;
    expect(rc.read()).toEqual({ now: start, jumpMs: 0 });
    expect(rc.skewMs).toBe(6 * TOL);
    c.wall -= 20 * TOL;
    expect(rc.read().now).toBe(start - 14 * TOL); // the wall clock, once the skew is spent
    expect(rc.skewMs).toBe(0);
  });

  test('for any moves: never ahead of the wall clock, never ahead of the monotonic time elapsed plus tolerances', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 86_400_000 }), fc.integer({ min: -10 * 86_400_000, max: 400 * 86_400_000 })), { maxLength: 30 }), (moves) => {
        const { c, rc } = clocks();
        const start = c.wall;
        let steps = 0;
        for (const [dm, extra] of moves) {
          c.mono += dm;
          c.wall += dm + extra;
          steps++;
          const { now } = rc.read();
          expect(now).toBeLessThanOrEqual(c.wall);
          expect(now - start).toBeLessThanOrEqual(c.mono + steps * TOL);
        }
      }),
    );
  });
});
