/** The retry schedule, the disable rule and the delivery's states (src/webhooks/schedule.ts, delivery-states.ts), on a fake clock's times. */
import { describe, expect, test } from 'bun:test';
import { afterAttempt, DELIVERY_TRANSITIONS, isSuccess } from '../../src/webhooks/delivery-states';
import { DISABLE_AFTER_MS, RETRY_DELAYS_MS, retryDelayMs, shouldDisable } from '../../src/webhooks/schedule';
import { isFinalState } from '../../src/state-machine';
import { FakeClock } from '../helpers/fake-clock';

const S = 1000;
const M = 60 * S;
const H = 60 * M;

describe('retry schedule', () => {
  test('5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then none', () => {
    expect(RETRY_DELAYS_MS).toEqual([5 * S, 5 * M, 30 * M, 2 * H, 5 * H, 10 * H, 10 * H]);
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => retryDelayMs(n, 0.5))).toEqual([...RETRY_DELAYS_MS]);
    expect(retryDelayMs(8, 0.5)).toBeNull();
  });

  test('each delay within +-10 %, the whole range used', () => {
    for (let n = 1; n <= 7; n++) {
      const base = RETRY_DELAYS_MS[n - 1]!;
      expect(retryDelayMs(n, 0)).toBe(Math.round(base * 0.9));
      expect(retryDelayMs(n, 0.999999)).toBe(Math.round(base * 1.1 - base * 0.2 * 0.000001));
      for (let i = 0; i < 200; i++) {
        const d = retryDelayMs(n, Math.random())!;
        expect(d).toBeGreaterThanOrEqual(Math.round(base * 0.9));
        expect(d).toBeLessThanOrEqual(Math.round(base * 1.1));
      }
    }
    expect(() => retryDelayMs(0, 0.5)).toThrow(RangeError);
  });

  test('a delivery that never succeeds: 8 attempts over about 27.6 hours, then failed (fake clock)', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const start = clock.now();
    let attempt = 0;
    let step = afterAttempt(++attempt, { status: 500 }, clock.now(), 0.5);
    while (step.state === 'pending') {
      await clock.advance(step.nextAttemptAtMs! - clock.now());
      step = afterAttempt(++attempt, { status: null }, clock.now(), 0.5);
    }
    expect(step).toEqual({ state: 'failed', nextAttemptAtMs: null, success: false });
    expect(attempt).toBe(8);
    expect(clock.now() - start).toBe(99_305 * S); // 27 h 35 min 5 s
  });
});

describe('a delivery after an attempt', () => {
  test('2xx delivered; 1xx, 3xx, 4xx, 5xx and no answer retried', () => {
    expect(afterAttempt(1, { status: 204 }, 1000, 0.5)).toEqual({ state: 'delivered', nextAttemptAtMs: null, success: true });
    for (const status of [101, 302, 404, 410, 500, 503, null]) {
      expect(afterAttempt(1, { status }, 1000, 0.5)).toEqual({ state: 'pending', nextAttemptAtMs: 6000, success: false });
    }
    expect([199, 200, 299, 300].map(isSuccess)).toEqual([false, true, true, false]);
  });

  test('delivered and failed are final', () => {
    expect(isFinalState(DELIVERY_TRANSITIONS, 'delivered')).toBe(true);
    expect(isFinalState(DELIVERY_TRANSITIONS, 'failed')).toBe(true);
    expect(isFinalState(DELIVERY_TRANSITIONS, 'pending')).toBe(false);
  });
});

describe('the disable rule', () => {
  test('disabled once the first failure since the last success is 3 days old', () => {
    const t0 = Date.UTC(2026, 0, 1);
    expect(DISABLE_AFTER_MS).toBe(3 * 24 * H);
    expect(shouldDisable(null, t0)).toBe(false);
    expect(shouldDisable(t0, t0 + 3 * 24 * H - 1)).toBe(false);
    expect(shouldDisable(t0, t0 + 3 * 24 * H)).toBe(true);
  });

  test('a message that keeps failing alone never gets there (27.6 h); messages over 3 days do', () => {
    // one message: its last attempt is ~27.6 h after the first failure
    let since: number | null = null;
    let at = 0;
    let disabled = false;
    for (let n = 1; n <= 8; n++) {
      since ??= at;
      disabled ||= shouldDisable(since, at);
      at += retryDelayMs(n, 0.5) ?? 0;
    }
    expect(disabled).toBe(false);
    // a later message's failure, 3 days after the streak began
    expect(shouldDisable(since, 3 * 24 * H)).toBe(true);
  });
});
