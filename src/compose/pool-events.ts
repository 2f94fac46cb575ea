/**
 * The pool events' composition: the owner's changes told to the events feed
 * (src/pools/events-hub.ts, or the cluster's src/cluster/pool-events.ts), and
 * the re-check port the gateway reports to.
 *
 * - PoolService.onChange `updated` with a change of state: the owner paused
 *   or resumed the pool -> `pool.paused` (reason `owner`) / `pool.resumed`
 *   (src/pools/owner-events.ts), with the pool's counts read after the change.
 * - `deleted`: the pool's /ws?pool= subscribers are closed (1000, on every
 *   node) and the gateway forgets its working set.
 */
import type { PoolChange } from '../jobs/pool-service';
import type { Logger } from '../log';
import type { PoolEventsFeed } from '../pools/events-hub';
import { ownerStateEvent } from '../pools/owner-events';
import type { PoolObject } from '../pools/shape';

export interface OwnerEventsParts {
  feed: Pick<PoolEventsFeed, 'publish' | 'closePool'>;
  /** The pool after the change (its counts). */
  get(accountId: string, poolId: string): Promise<PoolObject | null>;
  log: Pick<Logger, 'warn'>;
  now?: () => number;
}

/** A PoolService change listener (pools.onChange(ownerPoolEvents(...))). */
export function ownerPoolEvents(p: OwnerEventsParts): (change: PoolChange) => void {
  const now = p.now ?? Date.now;
  // one after another, so a pause and a resume right after it go out in that order
  let chain: Promise<void> = Promise.resolve();
  return (change) => {
    if (change.kind === 'deleted') {
      p.feed.closePool(change.accountId, change.poolId);
      return;
    }
    if (change.kind !== 'updated' || change.previousState === change.state) return;
    chain = chain
      .then(async () => {
        const pool = await p.get(change.accountId, change.poolId);
        if (pool === null) return;
        const event = ownerStateEvent(change.poolId, change.previousState, change.state, pool.counts, now());
        if (event !== null) p.feed.publish(change.accountId, event);
      })
      .catch((err: unknown) => p.log.warn('pool event of an owner change not published', { pool: change.poolId, err }));
  };
}
