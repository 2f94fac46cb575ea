/**
 * src/admin/throttle.ts with a fake clock: blocking after maxFailures in the
 * window, Retry-After seconds, per-address isolation, the window and the
 * block running out, and the bounded table.
 */
import { describe, expect, test } from 'bun:test';
import { ADMIN_THROTTLE, FailureThrottle } from '../../src/admin/throttle';

function throttled(opts: Partial<ConstructorParameters<typeof FailureThrottle>[0]> = {}) {
  const clock = { t: 1_000_000 };
  const th = new FailureThrottle({ maxFailures: 3, windowMs: 10_000, blockMs: 30_000, maxAddresses: 100, now: () => clock.t, ...opts });
  return { th, clock };
}

describe('FailureThrottle', () => {
  test('the defaults: 5 failures in 60 s block for 60 s, 10 000 addresses', () => {
    expect(ADMIN_THROTTLE).toEqual({ maxFailures: 5, windowMs: 60_000, blockMs: 60_000, maxAddresses: 10_000 });
    const th = new FailureThrottle();
    for (let i = 0; i < 4; i++) expect(th.fail('a')).toBe(false);
    expect(th.blockedFor('a')).toBeNull();
    expect(th.fail('a')).toBe(true);
    expect(th.blockedFor('a')).toBe(60);
  });

  test('maxFailures within the window block the address for blockMs; Retry-After counts down in whole seconds', () => {
    const { th, clock } = throttled();
    expect(th.fail('a')).toBe(false);
    clock.t += 4000;
    expect(th.fail('a')).toBe(false);
    expect(th.blockedFor('a')).toBeNull();
    clock.t += 4000;
    expect(th.fail('a')).toBe(true);
    expect(th.blockedFor('a')).toBe(30);
    clock.t += 100;
    expect(th.blockedFor('a')).toBe(30); // 29.9 s rounds up
    clock.t += 29_000;
    expect(th.blockedFor('a')).toBe(1);
    clock.t += 900;
    expect(th.blockedFor('a')).toBeNull();
    // after the block: maxFailures fresh tries
    expect(th.fail('a')).toBe(false);
    expect(th.fail('a')).toBe(false);
    expect(th.blockedFor('a')).toBeNull();
    expect(th.fail('a')).toBe(true);
  });

  test('failures spread wider than the window never block', () => {
    const { th, clock } = throttled();
    for (let i = 0; i < 20; i++) {
      th.fail('slow');
      th.fail('slow');
      clock.t += 10_000;
      expect(th.blockedFor('slow')).toBeNull();
    }
  });

  test('addresses are independent', () => {
    const { th } = throttled();
    for (let i = 0; i < 3; i++) th.fail('a');
    expect(th.blockedFor('a')).toBe(30);
    expect(th.blockedFor('b')).toBeNull();
    th.fail('b');
    expect(th.blockedFor('b')).toBeNull();
  });

  test('memory is bounded: expired entries go first, then the least recently failing', () => {
    const { th, clock } = throttled({ maxAddresses: 10 });
    for (let i = 0; i < 3; i++) th.fail('blocked');
    for (let i = 0; i < 9; i++) th.fail(`old-${i}`);
    expect(th.size).toBe(10);
    clock.t += 10_000; // the old windows are over, the block is not
    th.fail('new');
    expect(th.size).toBe(2);
    expect(th.blockedFor('blocked')).toBe(20);
    for (let i = 0; i < 100_000; i++) th.fail(`flood-${i}`);
    expect(th.size).toBe(10);
    // a flood of fresh addresses pushes out the oldest entries, never grows the table
    expect(th.blockedFor('blocked')).toBeNull();
  });
});
