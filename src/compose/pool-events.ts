/**
 * The pool events' composition: a deleted pool told to the events feed
 * (src/pools/events-hub.ts, or the cluster's src/cluster/pool-events.ts):
 * its /ws?pool= subscribers are closed (1000, on every node) and the gateway
 * forgets its working set. The owner's pause and resume are published by the
 * PoolService itself (src/jobs/pool-service.ts publishTo).
 */
import type { PoolChange } from '../jobs/pool-service';
import type { PoolEventsFeed } from '../pools/events-hub';

/** A PoolService change listener (pools.onChange(closeDeletedPools(feed))). */
export function closeDeletedPools(feed: Pick<PoolEventsFeed, 'closePool'>): (change: PoolChange) => void {
  return (change) => {
    if (change.kind === 'deleted') feed.closePool(change.accountId, change.poolId);
  };
}
