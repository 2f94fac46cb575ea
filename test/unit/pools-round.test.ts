/** A pool's round (src/pools/round.ts): check, pause, wait, resume, idle; settlement; properties over balances. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { MAX_ROUND, planRound, roundJobId, settleRound, untriedUnits, type RoundInput } from '../../src/pools/round';
import { JOB_ID } from '../../src/job-id';

const input = (over: Partial<RoundInput> = {}): RoundInput => ({
  state: 'active',
  pausedReason: null,
  due: 50,
  maxRound: 1000,
  balance: { unlimited: false, available: 1000 },
  ...over,
});

describe('planRound', () => {
  test('active, due, affordable: check and charge them all, one reservation', () => {
    expect(planRound(input())).toEqual({ kind: 'check', take: 50, units: 50, charge: 50, resumed: false });
  });
  test('a round takes at most maxRound proxies; samples multiply the units', () => {
    expect(planRound(input({ due: 5000, maxRound: 1000, samples: 3, balance: { unlimited: false, available: 3000 } }))).toEqual({
      kind: 'check',
      take: 1000,
      units: 3000,
      charge: 3000,
      resumed: false,
    });
  });
  test('short balance: pause with insufficient_checks, nothing checked', () => {
    expect(planRound(input({ balance: { unlimited: false, available: 49 } }))).toEqual({ kind: 'pause', reason: 'insufficient_checks', required: 50, available: 49 });
  });
  test('paused for insufficient checks: wait while short, resume once a round is affordable', () => {
    const paused = { state: 'paused' as const, pausedReason: 'insufficient_checks' as const };
    expect(planRound(input({ ...paused, balance: { unlimited: false, available: 10 } }))).toEqual({ kind: 'wait', required: 50, available: 10 });
    expect(planRound(input({ ...paused }))).toEqual({ kind: 'check', take: 50, units: 50, charge: 50, resumed: true });
    expect(planRound(input({ ...paused, due: 0 }))).toEqual({ kind: 'idle' });
  });
  test('UnlimitedPro: never charged, never paused, resumes a pool paused for checks', () => {
    expect(planRound(input({ balance: { unlimited: true, available: 0 } }))).toEqual({ kind: 'check', take: 50, units: 50, charge: 0, resumed: false });
    expect(planRound(input({ state: 'paused', pausedReason: 'insufficient_checks', balance: { unlimited: true, available: 0 } }))).toMatchObject({
      kind: 'check',
      resumed: true,
    });
  });
  test('paused by the owner, or nothing due: idle', () => {
    expect(planRound(input({ state: 'paused', pausedReason: 'owner' }))).toEqual({ kind: 'idle' });
    expect(planRound(input({ due: 0 }))).toEqual({ kind: 'idle' });
    expect(planRound(input({ maxRound: 0 }))).toEqual({ kind: 'idle' });
  });

  test('property: a check never charges more than the balance, a pause charges nothing, units = take x samples', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('active' as const, 'paused' as const),
        fc.constantFrom(null, 'owner' as const, 'insufficient_checks' as const),
        fc.nat(200_000),
        fc.integer({ min: 1, max: 20_000 }),
        fc.integer({ min: 1, max: 10 }),
        fc.boolean(),
        fc.integer({ min: -5, max: 1_000_000 }),
        (state, pausedReason, due, maxRound, samples, unlimited, available) => {
          const plan = planRound({ state, pausedReason, due, maxRound, samples, balance: { unlimited, available } });
          if (plan.kind === 'check') {
            expect(plan.take).toBeLessThanOrEqual(Math.min(due, maxRound));
            expect(plan.units).toBe(plan.take * samples);
            expect(plan.charge).toBe(unlimited ? 0 : plan.units);
            if (!unlimited) expect(plan.charge).toBeLessThanOrEqual(available);
            expect(plan.resumed).toBe(state === 'paused');
          }
          if (plan.kind === 'pause') expect(state).toBe('active');
          if (plan.kind === 'wait') expect(pausedReason).toBe('insufficient_checks');
          if (state === 'paused' && pausedReason !== 'insufficient_checks') expect(plan.kind).toBe('idle');
        },
      ),
    );
  });
});

describe('settleRound', () => {
  const plan = { kind: 'check' as const, take: 10, units: 20, charge: 20, resumed: false };
  test('the units of proxies not tried come back; the rest stays charged', () => {
    expect(settleRound(plan, 10)).toEqual({ kept: 20, refund: 0 });
    expect(settleRound(plan, 7)).toEqual({ kept: 14, refund: 6 });
    expect(settleRound(plan, 0)).toEqual({ kept: 0, refund: 20 });
    expect(settleRound(plan, 99)).toEqual({ kept: 20, refund: 0 });
    expect(settleRound({ ...plan, charge: 0 }, 3)).toEqual({ kept: 0, refund: 0 });
  });
});

describe('roundJobId', () => {
  test('unique per pool and round, never a client jobId', () => {
    expect(roundJobId('abcdefghij', 7)).toBe('pool:abcdefghij:7');
    expect(JOB_ID.test(roundJobId('abcdefghij', 7))).toBe(false);
  });
});

describe('untriedUnits', () => {
  const plan = { kind: 'check' as const, take: 10, units: 20, charge: 20, resumed: false };
  test('the not-tried part of the reservation: settleRound\'s refund when charged, and under UnlimitedPro too', () => {
    for (const tried of [-1, 0, 3, 7, 10, 99]) {
      expect(untriedUnits(plan, tried)).toBe(settleRound(plan, tried).refund);
      const free = { ...plan, charge: 0 };
      expect(untriedUnits(free, tried)).toBe(settleRound(plan, tried).refund);
      expect(settleRound(free, tried).refund).toBe(0);
    }
  });

  test('a round takes at most MAX_ROUND (DECISIONS: rounds of about 2 000)', () => {
    const p = planRound({ state: 'active', pausedReason: null, due: 50_000, maxRound: MAX_ROUND, balance: { unlimited: true, available: 0 } });
    expect(p).toMatchObject({ kind: 'check', take: 2000, units: 2000, charge: 0 });
  });
});
