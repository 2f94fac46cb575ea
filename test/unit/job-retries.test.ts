/** src/jobs/retries.ts: probes the checker failed to run are tried again, a bounded number of times, then not charged. */
import { describe, expect, test } from 'bun:test';
import { ProbeRetries } from '../../src/jobs/retries';

describe('ProbeRetries', () => {
  test('a parked probe becomes ready after the delay; onReady asks for that many slots; take hands them out', async () => {
    const asked: number[] = [];
    const r = new ProbeRetries(10, (n) => asked.push(n), { delayMs: 5 });
    expect(r.retry(3)).toBe(true);
    expect(r.retry(7)).toBe(true);
    expect(r.take(5)).toEqual([]); // parked, not ready yet
    expect(r.waiting).toBe(2);
    await Bun.sleep(20);
    expect(asked).toEqual([2]);
    expect(r.take(1)).toEqual([3]);
    expect(r.take(5)).toEqual([7]);
    expect(r.waiting).toBe(0);
    r.stop();
  });

  test('each probe is tried again at most `max` times; then it counts as not tried', async () => {
    const r = new ProbeRetries(4, () => {}, { max: 2, delayMs: 1 });
    expect(r.retry(1)).toBe(true);
    await Bun.sleep(5);
    r.take(10);
    expect(r.retry(1)).toBe(true);
    await Bun.sleep(10);
    r.take(10);
    expect(r.retry(1)).toBe(false);
    expect(r.notTried).toBe(1);
    r.stop();
  });

  test('after stop nothing is released and nothing more is parked', async () => {
    const asked: number[] = [];
    const r = new ProbeRetries(4, (n) => asked.push(n), { delayMs: 5 });
    r.retry(0);
    r.stop();
    r.stop();
    await Bun.sleep(20);
    expect(asked).toEqual([]);
    expect(r.retry(1)).toBe(false);
  });
});
