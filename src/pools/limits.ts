/**
 * The pools' limits and defaults (DECISIONS "Pools"), in one place. The
 * counts that an operator may change (POOL_MIN_INTERVAL_S, pools per
 * account, proxies per pool and per account) are fields of PoolLimits, handed
 * in by the composition root from its configuration; DEFAULT_POOL_LIMITS holds
 * the contract's defaults. The rest are the contract's fixed ranges.
 * checkPoolLimits tells whether counts as they would be after a change pass
 * one of the limits (the store calls it inside the transaction that holds
 * the account's pool lock, with the counts it read or wrote there).
 */
import { PoolLimitError } from './errors';

export interface PoolLimits {
  /** Shortest `interval_s` accepted (POOL_MIN_INTERVAL_S; tests lower it). */
  minIntervalS: number;
  /** Pools one account may own. */
  maxPoolsPerAccount: number;
  /** Proxies in one pool. */
  maxProxiesPerPool: number;
  /** Proxies in all of one account's pools together. */
  maxProxiesPerAccount: number;
}

export const DEFAULT_POOL_LIMITS: Readonly<PoolLimits> = Object.freeze({
  minIntervalS: 60,
  maxPoolsPerAccount: 20,
  maxProxiesPerPool: 100_000,
  maxProxiesPerAccount: 200_000,
});

/** A day in seconds: the longest interval and the longest back-off. */
export const DAY_S = 86_400;
export const MAX_INTERVAL_S = DAY_S;
export const DEFAULT_INTERVAL_S = 600;
/** A pool's probe timeout (ms): the /check range, its own default. */
export const DEFAULT_POOL_TIMEOUT_MS = 5000;
export const POOL_NAME_MAX = 100;
/** `sources[].every_s`: at least 5 minutes, at most a day; 1 hour when absent. */
export const SOURCE_MIN_EVERY_S = 300;
export const SOURCE_MAX_EVERY_S = DAY_S;
export const DEFAULT_SOURCE_EVERY_S = 3600;
/** List URLs one pool may follow. */
export const MAX_SOURCES = 10;
/** GET /pools/{id}/proxies `limit`. */
export const DEFAULT_PAGE_LIMIT = 100;
export const MAX_PAGE_LIMIT = 10_000;

/** An account's pools and pooled proxies as a change would leave them. */
export interface PoolUsage {
  /** Pools the account owns. */
  pools: number;
  /** Proxies in all of the account's pools. */
  proxies: number;
  /** Proxies in the pool being created or changed. */
  inPool: number;
}

/**
 * Throws PoolLimitError when `after` passes a limit: more pools than the
 * account may own (checked first: a new pool beyond it is refused whatever it
 * holds), more proxies in the pool, more in all of the account's pools.
 */
export function checkPoolLimits(after: PoolUsage, limits: PoolLimits): void {
  if (after.pools > limits.maxPoolsPerAccount) throw new PoolLimitError('pools_per_account', limits.maxPoolsPerAccount);
  if (after.inPool > limits.maxProxiesPerPool) throw new PoolLimitError('proxies_per_pool', limits.maxProxiesPerPool);
  if (after.proxies > limits.maxProxiesPerAccount) throw new PoolLimitError('proxies_per_account', limits.maxProxiesPerAccount);
}
