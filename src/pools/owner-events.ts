/**
 * The event an owner's PATCH of a pool's state makes (pure): paused by its
 * owner -> `pool.paused` with reason `owner`; active again -> `pool.resumed`;
 * no change of state -> none. The pauses for `insufficient_checks` and the
 * resumes after a top-up are the pool actor's (src/jobs/pool-actor.ts), never this.
 */
import { pausedEvent, resumedEvent, type PoolEvent } from './events';
import type { PoolCounts, PoolState } from './types';

export function ownerStateEvent(poolId: string, previousState: PoolState, state: PoolState, counts: PoolCounts, nowMs: number): PoolEvent | null {
  if (previousState === state) return null;
  return state === 'paused' ? pausedEvent(poolId, nowMs, counts, 'owner') : resumedEvent(poolId, nowMs, counts);
}
