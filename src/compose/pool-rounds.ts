/**
 * The pools' rounds: the PoolRounds that keep the proxies of the pools
 * (the PoolService of pool-sources.ts) checked (src/jobs/pool-rounds.ts), on the checks' own
 * probe execution (priority `background`), judge settings, geo and ledger.
 *
 * Started after the checks and before the listeners; stopped before the
 * checks (its undo, pushed after theirs, runs first): running rounds are cut
 * short and settled while the ledger, the scheduler and the database are
 * still there. Every API node of a cluster runs its rounds (the claim makes
 * that safe); each round's reservation carries the node (its scan row), so a
 * dead node's round is refunded by the orphan sweep of the live ones.
 *
 * POOL_ROUNDS=false: no rounds on this node.
 *
 * Each round's outcome is counted in /metrics (proxycheck_pool_rounds_total,
 * proxycheck_pool_checks_total) and the rounds running are a gauge.
 *
 * `events`: where pool events go (the events hub plugs in here); none given:
 * nowhere (NO_POOL_EVENTS). The rounds are the PoolRecheckPort the gateway takes.
 */
import type { Config } from '../config';
import type { Geo } from '../geo/geo';
import { PoolRounds } from '../jobs/pool-rounds';
import type { PoolService } from '../jobs/pool-service';
import type { Logger } from '../log';
import type { ServiceMetrics } from '../metrics/service-metrics';
import { NO_POOL_EVENTS, type PoolEventsPort, type PoolRecheckPort } from '../pools/ports';
import type { StopStep } from '../stop-steps';
import type { ChecksBase } from './checks';
import type { ProbeJudge } from './own-judge';
import type { ProbeBackend } from './probe-backend';
import type { Storage } from './storage';

export interface PoolRoundsParts {
  storage: Storage;
  backend: ProbeBackend;
  /** The checks' execution, ledger and settlement retries (checks.ts). */
  base: ChecksBase;
  /** The pools (pool-sources.ts startPools): the rounds wake on its changes. */
  pools: PoolService;
  judge: ProbeJudge;
  geo: Geo;
  events?: PoolEventsPort;
  metrics: ServiceMetrics;
  log: Logger;
  undo: StopStep[];
}

export interface PoolsRunning {
  rounds: PoolRounds;
  /** Make proxies of a pool due now (the gateway's upstream failures). */
  recheck: PoolRecheckPort;
}

export async function startPoolRounds(config: Config, p: PoolRoundsParts): Promise<PoolsRunning> {
  const db = p.storage.database.db;
  const { pools } = p;
  const rounds = new PoolRounds({
    db,
    ...p.base,
    settings: (type, timeoutMs) => p.judge.settings(type, timeoutMs),
    geo: p.geo,
    events: p.events ?? NO_POOL_EVENTS,
    ...(p.backend.regionAvailable !== undefined ? { regionAvailable: p.backend.regionAvailable } : {}),
    pools,
    log: p.log,
    onRound: (_pool, outcome) => {
      if (outcome === 'pause') p.metrics.poolRound('paused');
      else if (outcome === 'resumed') p.metrics.poolRound('resumed');
      else if (typeof outcome === 'object') p.metrics.poolRound('checked', outcome.tally);
    },
  });
  p.metrics.watchPoolRounds(rounds);
  p.undo.push(() => rounds.stop());
  if (config.probes.poolRounds) await rounds.start();
  return { rounds, recheck: rounds };
}
