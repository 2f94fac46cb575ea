/**
 * The seams between the pools' parts, so each can be built and tested alone
 * and the composition root (src/compose/) plugs them together:
 *
 * - PoolEventsPort: where the rounds (src/jobs/pool-rounds.ts) and the pool
 *   service publish a pool's events (src/pools/events.ts builders). The hub
 *   behind it fans them out to the owner's `GET /ws?pool={id}` subscribers,
 *   on this node and, in a cluster, on every API node; the gateway's working
 *   sets refresh from the same stream.
 * - PoolRecheckPort: a proxy of a pool failed in use (the gateway) and should
 *   be checked again at once: the rounds make it due now (coalesced; a proxy
 *   no longer in the pool is ignored).
 */
import type { ProxyAddress } from '../proxy/types';
import type { PoolEvent } from './events';

export interface PoolEventsPort {
  publish(accountId: string, event: PoolEvent): void;
}

export interface PoolRecheckPort {
  recheck(poolId: string, proxies: readonly ProxyAddress[]): void;
}

/** Publishes nowhere: a service or test with no subscribers. */
export const NO_POOL_EVENTS: PoolEventsPort = Object.freeze({ publish() {} });

/** `first`, and `second` too when given (a test's recorder beside the hub). */
export function alsoTo(first: PoolEventsPort, second?: PoolEventsPort): PoolEventsPort {
  if (second === undefined) return first;
  return {
    publish(accountId, event) {
      first.publish(accountId, event);
      second.publish(accountId, event);
    },
  };
}
