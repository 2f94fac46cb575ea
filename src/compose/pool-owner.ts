/**
 * The pools' owner: the PoolOwner (src/jobs/pool-owner.ts) that holds the
 * pools of this process as actors and keeps their proxies checked, on the
 * checks' own probe execution (priority `background`), judge settings, geo
 * and ledger; the pool service (pool-sources.ts) reads counts and pages
 * from it, and it is the PoolRecheckPort the gateway takes.
 *
 * Started after the checks and before the listeners; stopped before the
 * checks (its undo, pushed after theirs, runs first): probes cut short, a
 * last flush of every pool and its lease released (the unsettled rest of
 * each reservation refunded) while the ledger, the scheduler and the
 * database are still there. Embedded (ROLE=embedded) the process takes
 * every pool's lease; a cluster's API node takes the pools whose lease
 * expired.
 *
 * POOL_ROUNDS=false: no owner on this node (its pools are read from the
 * durable copy). POOL_FLUSH_S: the owner's flush period; a pool's lease lasts
 * three of them or NODE_LEASE_MS, the longer. On PGlite the
 * tables the flushes rewrite are vacuumed periodically (no autovacuum).
 *
 * Each durable batch, pause and resume is counted in /metrics
 * (proxycheck_pool_rounds_total, proxycheck_pool_checks_total); the pools
 * with probes out are a gauge.
 *
 * `events`: where pool events go (the events hub plugs in here); none given:
 * nowhere (NO_POOL_EVENTS).
 */
import { sql } from 'drizzle-orm';
import type { Config } from '../config';
import type { Geo } from '../geo/geo';
import type { PoolTx } from '../jobs/pool-durable';
import { PoolOwner } from '../jobs/pool-owner';
import type { PoolService } from '../jobs/pool-service';
import type { Logger } from '../log';
import type { ServiceMetrics } from '../metrics/service-metrics';
import { NO_POOL_EVENTS, type PoolBatchOutbox, type PoolEventsPort } from '../pools/ports';
import type { StopStep } from '../stop-steps';
import type { ChecksBase } from './checks';
import type { ProbeJudge } from './own-judge';
import type { ProbeBackend } from './probe-backend';
import type { Storage } from './storage';

export interface PoolOwnerParts {
  storage: Storage;
  backend: ProbeBackend;
  /** The checks' execution and ledger (checks.ts). */
  base: ChecksBase;
  /** The pools (pool-sources.ts startPools): the owner follows its changes and answers its reads. */
  pools: PoolService;
  judge: ProbeJudge;
  geo: Geo;
  events?: PoolEventsPort;
  /** The webhooks' outbox: pool.proxies_changed written in the flushes' transactions (webhooks/outbox.ts flushWriter). */
  outbox?: { flushWriter(): PoolBatchOutbox<PoolTx> };
  metrics: ServiceMetrics;
  log: Logger;
  undo: StopStep[];
}

/**
 * The tables a flush rewrites, vacuumed on PGlite, and analyzed: PGlite runs no
 * autovacuum, so without it the planner keeps the statistics of empty tables
 * for every query of these (flush-sql.ts inPool is the flushes' own guard
 * until the first of these runs).
 */
const VACUUM = sql.raw('VACUUM (ANALYZE) pool_proxy_state, pool_proxies, pool_leases, pool_rounds, pools');

export async function startPoolOwner(config: Config, p: PoolOwnerParts): Promise<PoolOwner> {
  const database = p.storage.database;
  const db = database.db;
  // the owner's pause and resume (a PATCH) go where the actors' events go: the hub, the webhooks
  p.pools.publishTo(p.events ?? NO_POOL_EVENTS);
  const owner = new PoolOwner({
    db,
    execution: p.base.execution,
    settings: (type, timeoutMs) => p.judge.settings(type, timeoutMs),
    allowPrivateTargets: config.probes.allowPrivateTargets,
    geo: p.geo,
    events: p.events ?? NO_POOL_EVENTS,
    ...(p.outbox !== undefined ? { outbox: p.outbox.flushWriter() } : {}),
    ...(p.backend.regionAvailable !== undefined ? { regionAvailable: p.backend.regionAvailable } : {}),
    pools: p.pools,
    nodeId: p.storage.nodeId,
    embedded: config.cluster.role === 'embedded',
    flushMs: config.probes.poolFlushS * 1000,
    // a lease outlives three flushes and a node's own lease (NODE_LEASE_MS: 30 s by default)
    leaseMs: Math.max(config.storage.nodeLeaseMs, 3 * config.probes.poolFlushS * 1000),
    ...(database.driver === 'pglite' ? { vacuum: async () => void (await db.execute(VACUUM)) } : {}),
    log: p.log,
    onOutcome: (outcome) => {
      if (outcome === 'paused' || outcome === 'resumed') p.metrics.poolRound(outcome);
      else p.metrics.poolRound('checked', outcome);
    },
  });
  p.metrics.watchPoolOwner(owner);
  p.undo.push(() => owner.stop());
  // a cluster: what other nodes own is asked of them, what this one owns answered (a node with POOL_ROUNDS=false too)
  const remote = p.backend.poolReads(owner);
  if (remote !== null) owner.useRemote(remote);
  if (remote !== null || config.probes.poolRounds) p.pools.useOwner(owner);
  if (config.probes.poolRounds) await owner.start();
  return owner;
}
