/**
 * The pools' start step: the PoolService of this deployment (its limits from
 * the configuration; the HTTP layer's PoolsPort, handed to the listeners),
 * and PoolSources, which follows the pools' list URLs (src/jobs/pool-sources.ts)
 * through the guarded fetcher (src/jobs/source-fetch.ts: ALLOW_PRIVATE_TARGETS,
 * POOL_SOURCE_MAX_BYTES, POOL_SOURCE_TIMEOUT_MS) and wakes on the pool
 * service's changes. Started after the storage, before the listeners; its
 * undo (stop: timer, fetches under way) runs before the storage closes.
 */
import type { Config } from '../config';
import { PoolService } from '../jobs/pool-service';
import { PoolSources } from '../jobs/pool-sources';
import { fetchSource } from '../jobs/source-fetch';
import type { Logger } from '../log';
import type { PoolLimits } from '../pools/limits';
import type { StopStep } from '../stop-steps';
import type { Storage } from './storage';

/** The pool limits of this deployment (MAX_POOLS_PER_ACCOUNT, MAX_PROXIES_PER_POOL, POOL_MIN_INTERVAL_S). */
export function poolLimits(config: Config): PoolLimits {
  return {
    minIntervalS: config.limits.poolMinIntervalS,
    maxPoolsPerAccount: config.limits.maxPoolsPerAccount,
    maxProxiesPerPool: config.limits.maxProxiesPerPool,
    maxProxiesPerAccount: config.limits.maxPoolProxiesPerAccount,
  };
}

export function startPools(config: Config, p: { storage: Storage; log: Logger; undo: StopStep[] }): { pools: PoolService; sources: PoolSources } {
  const db = p.storage.database.db;
  const limits = poolLimits(config);
  const pools = new PoolService({ db, limits, log: p.log });
  const options = { maxBytes: config.limits.poolSourceMaxBytes, timeoutMs: config.limits.poolSourceTimeoutMs, allowPrivateTargets: config.probes.allowPrivateTargets };
  const sources = new PoolSources({ db, limits, changes: pools, log: p.log, fetch: (url, signal) => fetchSource(url, { ...options, signal }) });
  sources.start();
  p.undo.push(() => sources.stop());
  return { pools, sources };
}
