/**
 * The seams between the pools' parts, so each can be built and tested alone
 * and the composition root (src/compose/) plugs them together:
 *
 * - PoolEventsPort: where the pool actors (src/jobs/pool-actor.ts) and the pool
 *   service publish a pool's events (src/pools/events.ts builders). The hub
 *   behind it fans them out to the owner's `GET /ws?pool={id}` subscribers,
 *   on this node and, in a cluster, on every API node; the gateway's working
 *   sets refresh from the same stream.
 * - PoolRecheckPort: a proxy of a pool failed in use (the gateway) and should
 *   be checked again at once: the pool's owner makes it due now (a proxy no
 *   longer in the pool is ignored).
 * - ServedPools / RemotePoolReads: in a cluster, the reads and re-checks of a
 *   pool another node owns, asked of that node (src/cluster/pool-reads.ts);
 *   ListingStream: an unlimited txt / csv listing read from there.
 */
import type { ProxyAddress } from '../proxy/types';
import type { PoolCounts } from './types';
import type { PoolEvent } from './events';
import type { ProxiesPage } from './proxies-sql';
import type { PoolProxiesQuery } from './query';
import type { PoolStats } from './shape';
import type { PoolUpstream } from './working-set';
import type { ProxyListing } from './proxy-listing';
import type { TextPageOptions } from './render';

export interface PoolEventsPort {
  publish(accountId: string, event: PoolEvent): void;
}

export interface PoolRecheckPort {
  recheck(poolId: string, proxies: readonly ProxyAddress[]): void;
}

/**
 * Where a pool's durable proxy.up / proxy.down become webhook messages
 * (src/webhooks/outbox.ts flushWriter): written by the pool actor in the
 * transaction of the flush chunk that makes those proxies durable (DECISIONS
 * "Webhooks": a message is written with the change that causes it).
 * `write` returns the deliveries written; `written()` after the commit (the
 * delivery loop looks at once). `Tx`: the database's transaction (this
 * layer does no I/O).
 */
export interface PoolBatchOutbox<Tx = unknown> {
  write(tx: Tx, accountId: string, poolId: string, events: readonly PoolEvent[], counts: PoolCounts): Promise<number>;
  written(): void;
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

/** A pool's stats as its owner holds them (the pool object's but checks_last_24h, pool_rounds'). */
export type OwnedPoolStats = Omit<PoolStats, 'checksLast24h'>;

/**
 * A change of a pool made through another node's PoolService, for the node that owns the pool to
 * apply at once: `settings` (the row changed: settings, the owner's pause or resume), `members`
 * (the row and its members), `sourced` (members added from a list URL), `deleted`.
 */
export type PoolChangeNote = 'settings' | 'members' | 'sourced' | 'deleted';
export const POOL_CHANGE_NOTES: readonly PoolChangeNote[] = Object.freeze(['settings', 'members', 'sourced', 'deleted']);

/** What a node's owner answers about the pools it holds (src/jobs/pool-owner.ts): null / false when it does not hold the pool. */
export interface ServedPools {
  /** Applies a change heard on another node; resolves once applied (false: the pool is not held here). */
  localChanged(poolId: string, note: PoolChangeNote): Promise<boolean>;
  localStats(poolId: string): OwnedPoolStats | null;
  localPage(poolId: string, query: PoolProxiesQuery): ProxiesPage | null;
  localRecheck(poolId: string, proxies: readonly ProxyAddress[]): boolean;
  /** The account's pool's working proxies (undefined: not held here, or another account's). */
  memory(accountId: string, poolId: string): PoolUpstream[] | undefined;
  /** An unlimited txt / csv listing from memory in one pass (null: not held here). */
  listing(poolId: string, query: PoolProxiesQuery): ProxyListing | null;
}

/** How an owner writes a listing for another node: the asker's pool type and clock (the query says the format and scheme). */
export type ListingText = Pick<TextPageOptions, 'poolType' | 'nowMs'>;

/**
 * An unlimited listing's text read from another node, a chunk at a time
 * (src/cluster/pool-reads.ts): `next` resolves the next bytes, null at the
 * end, and rejects when the owner stops answering midway (the text must not
 * end as if whole); `close` lets the owner drop it (the reader went away).
 */
export interface ListingStream {
  next(): Promise<Uint8Array | null>;
  close(): void;
}

/**
 * Another node's owner asked about a pool it holds (a cluster: src/cluster/pool-reads.ts
 * over NATS request/reply): null when it does not hold it or does not answer
 * (then the durable copy answers).
 */
export interface RemotePoolReads {
  stats(node: string, poolId: string): Promise<OwnedPoolStats | null>;
  page(node: string, poolId: string, query: PoolProxiesQuery): Promise<ProxiesPage | null>;
  recheck(node: string, poolId: string, proxies: readonly ProxyAddress[]): void;
  upstreams(node: string, accountId: string, poolId: string): Promise<PoolUpstream[] | null>;
  /** The node applied the change (false: it does not hold the pool, or did not answer). */
  changed(node: string, poolId: string, note: PoolChangeNote): Promise<boolean>;
  /** An unlimited txt / csv listing from the node's memory, its first chunk in hand (null: it does not hold the pool, or did not answer). */
  listing(node: string, poolId: string, query: PoolProxiesQuery, text: ListingText): Promise<ListingStream | null>;
}
