/**
 * A delivery's states (src/state-machine.ts) and what one attempt makes of
 * it. Pure.
 *
 *   pending ──2xx──────────────────────────> delivered   (final)
 *      │ └──anything else, a retry left──> pending (next_attempt_at later)
 *      └────anything else, none left─────> failed      (final)
 *
 * The row is in the database (webhook_deliveries.state); this table is the
 * one that decides the move, and the UPDATE that records it is guarded by
 * `state = 'pending'` and the claim, so a move is made once.
 */
import { transition, transitionTable } from '../state-machine';
import { retryDelayMs } from './schedule';
import type { DeliveryState } from './types';

export const DELIVERY_TRANSITIONS = transitionTable<DeliveryState>({
  pending: ['pending', 'delivered', 'failed'],
  delivered: [],
  failed: [],
});

export interface AttemptOutcome {
  /** The status answered, null when none (refused, timed out, blocked). */
  status: number | null;
}

export interface NextStep {
  state: DeliveryState;
  /** When to try again (pending only), ms since the epoch. */
  nextAttemptAtMs: number | null;
  /** Whether the attempt succeeded (the endpoint's last success). */
  success: boolean;
}

export function isSuccess(status: number | null): boolean {
  return status !== null && status >= 200 && status < 300;
}

/**
 * The delivery after its attempt number `attempt` (1-based) ended at `nowMs`
 * with `outcome`; `random` in [0, 1) jitters the next delay.
 */
export function afterAttempt(attempt: number, outcome: AttemptOutcome, nowMs: number, random: number, delays?: readonly number[]): NextStep {
  if (isSuccess(outcome.status)) return { state: transition('delivery', DELIVERY_TRANSITIONS, 'pending', 'pending', 'delivered'), nextAttemptAtMs: null, success: true };
  const delay = retryDelayMs(attempt, random, delays);
  if (delay === null) return { state: transition('delivery', DELIVERY_TRANSITIONS, 'pending', 'pending', 'failed'), nextAttemptAtMs: null, success: false };
  return { state: transition('delivery', DELIVERY_TRANSITIONS, 'pending', 'pending', 'pending'), nextAttemptAtMs: nowMs + delay, success: false };
}
