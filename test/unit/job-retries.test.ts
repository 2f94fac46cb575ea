/** src/jobs/retries.ts: probes the checker failed to run are tried again, a bounded number of times, then not charged. */
import { describe, expect, test } from 'bun:test';
import { ProbeRetries } from '../../src/jobs/retries';
import { FakeClock } from '../helpers/fake-clock';

describe('ProbeRetries', () => {
  test('a parked probe becomes ready after the delay; onReady asks for that many slots; take hands them out', async () => {
    const clock = new FakeClock();
    const asked: number[] = [];
    const r = new ProbeRetries(10, (n) => asked.push(n), { delayMs: 5, clock });
    expect(r.retry(3)).toBe(true);
    expect(r.retry(7)).toBe(true);
    expect(r.take(5)).toEqual([]); // parked, not ready yet
    expect(r.waiting).toBe(2);
    await clock.advance(4);
    expect(asked).toEqual([]);
    await clock.advance(1);
    expect(asked).toEqual([2]);
    expect(r.take(1)).toEqual([3]);
    expect(r.take(5)).toEqual([7]);
    expect(r.waiting).toBe(0);
    r.stop();
  });

  test('each probe is tried again at most `max` times, each time later; then it counts as not tried', async () => {
    const clock = new FakeClock();
    const r = new ProbeRetries(4, () => {}, { max: 2, delayMs: 10, clock });
    expect(r.retry(1)).toBe(true);
    await clock.advance(10);
    expect(r.take(10)).toEqual([1]);
    expect(r.retry(1)).toBe(true); // the second try waits twice the delay
    await clock.advance(19);
    expect(r.take(10)).toEqual([]);
    await clock.advance(1);
    expect(r.take(10)).toEqual([1]);
    expect(r.retry(1)).toBe(false);
    expect(r.notTried).toBe(1);
    r.stop();
  });

  test('after stop nothing is released and nothing more is parked', async () => {
    const clock = new FakeClock();
    const asked: number[] = [];
    const r = new ProbeRetries(4, (n) => asked.push(n), { delayMs: 5, clock });
    r.retry(0);
    r.stop();
    r.stop();
    expect(clock.pending).toBe(0);
    await clock.advance(20);
    expect(asked).toEqual([]);
    expect(r.retry(1)).toBe(false);
  });
});
