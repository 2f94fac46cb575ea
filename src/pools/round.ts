/**
 * A pool's round: what one batch of due proxies checks and charges
 * (DECISIONS "Pools", quota). Pure decisions; the scheduler that runs rounds
 * reserves through the ledger, probes and writes the results.
 *
 * planRound(pool state, due count, balance) decides one of:
 *
 *   idle    nothing to do: paused by its owner, or nothing due
 *   check   check the `take` most overdue proxies (at most `maxRound`),
 *           reserve `units` = take x samples in ONE ledger row (charge 0
 *           under UnlimitedPro); `resumed` when the pool was paused for
 *           insufficient checks and can pay again (emit pool.resumed, and
 *           spread its overdue proxies first: schedule.ts spreadOverdue)
 *   pause   active, something due, and the balance cannot pay the round:
 *           nothing is checked or charged, the pool becomes paused with
 *           `insufficient_checks` (emit pool.paused with required/available)
 *   wait    paused for insufficient checks and still short: nothing happens
 *
 * A round the balance cannot pay is never checked in part: the contract
 * pauses it. Bounding a round by `maxRound` (what the region's spare slots
 * can take in one go) keeps "can pay" about a round, not the whole pool, so
 * a pool resumes as soon as one round is affordable.
 *
 * States (round.ts decides the moves marked *; the owner's PATCH the others):
 *
 *   active ──pause*(insufficient)──> paused(insufficient_checks) ──check(resumed)*──> active
 *   active ──PATCH state=paused────> paused(owner) ──PATCH state=active──> active
 *
 * settleRound: after the results, the units of checks that were not tried
 * (`checker_overloaded`, or a round cut short) go back (a refund row, the
 * only second ledger row a round can have); everything else stays charged.
 */
import type { PausedReason, PoolState } from './types';

/** Most proxies one round takes (DECISIONS "Pools": a pool's due proxies go in rounds of at most this many). */
export const MAX_ROUND = 2000;

export interface RoundBalance {
  unlimited: boolean;
  /** Checks the account can spend (temp + root). */
  available: number;
}

export interface RoundInput {
  state: PoolState;
  pausedReason: PausedReason | null;
  /** Proxies due now. */
  due: number;
  /** Most proxies one round takes. */
  maxRound: number;
  /** Probes per proxy (1 for pools today). */
  samples?: number;
  balance: RoundBalance;
}

export type RoundPlan =
  | { kind: 'idle' }
  | { kind: 'check'; take: number; units: number; charge: number; resumed: boolean }
  | { kind: 'pause'; reason: 'insufficient_checks'; required: number; available: number }
  | { kind: 'wait'; required: number; available: number };

export function planRound(i: RoundInput): RoundPlan {
  const ownerPaused = i.state === 'paused' && i.pausedReason !== 'insufficient_checks';
  if (ownerPaused || i.due <= 0 || i.maxRound <= 0) return { kind: 'idle' };
  const take = Math.min(i.due, i.maxRound);
  const units = take * Math.max(1, i.samples ?? 1);
  const resumed = i.state === 'paused';
  if (i.balance.unlimited) return { kind: 'check', take, units, charge: 0, resumed };
  if (i.balance.available >= units) return { kind: 'check', take, units, charge: units, resumed };
  const short = { required: units, available: Math.max(0, i.balance.available) };
  return resumed ? { kind: 'wait', ...short } : { kind: 'pause', reason: 'insufficient_checks', ...short };
}

export interface RoundSettlement {
  /** Units kept: the checks performed (x samples); 0 under UnlimitedPro. */
  kept: number;
  /** Units to refund: reserved for checks that did not happen. */
  refund: number;
}

/** `tried` proxies of a `check` plan were checked; the rest of `take` were not. */
export function settleRound(plan: Extract<RoundPlan, { kind: 'check' }>, tried: number): RoundSettlement {
  const done = Math.min(Math.max(0, tried), plan.take);
  if (plan.charge === 0) return { kept: 0, refund: 0 };
  const perProxy = plan.units / plan.take;
  const refund = Math.min(plan.charge, (plan.take - done) * perProxy);
  return { kept: plan.charge - refund, refund };
}

/**
 * Units the ledger gives back when `tried` proxies of a `check` plan were
 * checked: the not-tried part of the reservation, under UnlimitedPro too
 * (nothing was charged there, but `checks_used` counts checks performed).
 * Equals settleRound's `refund` whenever something was charged.
 */
export function untriedUnits(plan: Extract<RoundPlan, { kind: 'check' }>, tried: number): number {
  const done = Math.min(Math.max(0, tried), plan.take);
  return (plan.take - done) * (plan.units / plan.take);
}

/**
 * The ledger's job reference of a pool's round: unique per round and
 * never a client's jobId (those are 3..64 of [A-Za-z0-9_-], without ":").
 */
export function roundJobId(poolId: string, seq: number): string {
  return `pool:${poolId}:${seq}`;
}
