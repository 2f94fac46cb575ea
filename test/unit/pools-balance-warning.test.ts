/** src/pools/balance-warning.ts: a pool's cost a day against the account's balance (pure arithmetic). */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { balanceWarnings, checksPerDay } from '../../src/pools/balance-warning';

const base = { proxies: 5, intervalS: 60, balance: 1000, unlimited: false, paused: false };

describe('balance_runs_out', () => {
  test('the issue\'s case: 5 proxies at 60 s cost 7 200 a day against 1 000: out in 3.3 hours', () => {
    expect(checksPerDay(5, 60)).toBe(7200);
    const [w, more] = balanceWarnings(base);
    expect(more).toBeUndefined();
    expect(w).toEqual({
      code: 'balance_runs_out',
      hours_left: 3.3,
      message:
        'This pool checks 5 proxies every 60 s: up to 7,200 checks a day, and the account has 1,000 left. ' +
        'They run out in about 3.3 hours; the pool then pauses (insufficient_checks) until the balance is topped up. ' +
        'A longer interval_s or fewer proxies cost less.',
    });
  });

  test('none when a day costs no more than the balance, for a paused pool, an empty one, an unlimited plan', () => {
    expect(balanceWarnings({ ...base, balance: 7200 })).toEqual([]);
    expect(balanceWarnings({ ...base, paused: true })).toEqual([]);
    expect(balanceWarnings({ ...base, proxies: 0 })).toEqual([]);
    expect(balanceWarnings({ ...base, unlimited: true, balance: 0 })).toEqual([]);
  });

  test('an empty balance: 0 hours left', () => {
    expect(balanceWarnings({ ...base, proxies: 1, balance: 0 })[0]).toMatchObject({ hours_left: 0 });
    expect(balanceWarnings({ ...base, proxies: 1, balance: 0 })[0]!.message).toContain('This pool checks 1 proxy every 60 s');
    expect(balanceWarnings({ ...base, proxies: 1, balance: 0 })[0]!.message).toContain('They run out within the hour');
  });

  test('property: warned exactly when a day costs more than the balance; hours_left under 24, a tenth below the exact', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 10, max: 86_400 }), fc.integer({ min: 0, max: 10_000_000 }), (proxies, intervalS, balance) => {
        const ws = balanceWarnings({ proxies, intervalS, balance, unlimited: false, paused: false });
        const perDay = (proxies * 86_400) / intervalS;
        expect(ws.length).toBe(perDay > balance ? 1 : 0);
        if (ws.length === 1) {
          const exact = (balance * 24) / perDay;
          expect(ws[0]!.hours_left).toBeLessThan(24);
          expect(ws[0]!.hours_left).toBeLessThanOrEqual(exact);
          expect(exact - ws[0]!.hours_left).toBeLessThan(0.1 + 1e-9);
        }
      }),
    );
  });
});
