/**
 * DueTimer (src/jobs/pool-due-timer.ts), the pools' one due-time loop, on a
 * fake clock: it fires once at the time it is armed for; an earlier time set
 * stays when armed for a later one, a later one moves to an earlier; never
 * more than maxDelayMs nor less than minDelayMs ahead; cancel stops it.
 */
import { describe, expect, test } from 'bun:test';
import { DueTimer } from '../../src/jobs/pool-due-timer';
import { FakeClock } from '../helpers/fake-clock';

function timer(min = 20, max = 5000) {
  const clock = new FakeClock(1_000_000);
  const fired: number[] = [];
  const t = new DueTimer(clock, () => fired.push(clock.now()), { minDelayMs: min, maxDelayMs: max });
  return { clock, fired, t };
}

describe('DueTimer', () => {
  test('fires once at the time armed for', async () => {
    const { clock, fired, t } = timer();
    t.arm(1_000_300);
    expect(t.at).toBe(1_000_300);
    await clock.advance(10_000);
    expect(fired).toEqual([1_000_300]);
    expect(t.at).toBeNull();
    expect(clock.pending).toBe(0);
  });

  test('an earlier time set stays when armed for a later one; an earlier one moves it', async () => {
    const { clock, fired, t } = timer();
    t.arm(1_000_500);
    t.arm(1_000_900);
    expect(t.at).toBe(1_000_500);
    t.arm(1_000_100);
    expect(t.at).toBe(1_000_100);
    expect(clock.pending).toBe(1);
    await clock.advance(10_000);
    expect(fired).toEqual([1_000_100]);
  });

  test('never more than maxDelayMs ahead (Infinity included), never less than minDelayMs (a time passed)', async () => {
    const { clock, fired, t } = timer(20, 5000);
    t.arm(Infinity);
    expect(t.at).toBe(1_005_000);
    t.cancel();
    t.arm(999_000); // already passed
    expect(t.at).toBe(1_000_020);
    await clock.advance(100);
    expect(fired).toEqual([1_000_020]);
  });

  test('cancel: it does not fire; armed again, it does', async () => {
    const { clock, fired, t } = timer();
    t.arm(1_000_200);
    t.cancel();
    expect(t.at).toBeNull();
    await clock.advance(1000);
    expect(fired).toEqual([]);
    t.arm(1_001_500);
    await clock.advance(1000);
    expect(fired).toEqual([1_001_500]);
  });
});
