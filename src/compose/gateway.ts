/**
 * The gateway's start step (src/gateway, issue 24): only with GATEWAY_PORT,
 * after the admin listener. Its keys are checked through the API's key cache
 * (the one the admin API clears on a change), wrong ones throttled as the
 * admin listener's are; its counts go to /me (GatewayUsage, per account) and
 * to /metrics (ServiceMetrics, without the account). Its pools are the real
 * ones: PoolWorkingSets (src/gateway/working-sets.ts) reads a pool's working
 * proxies from the store, caches them, refreshes them on the pool's events
 * (the events feed) and a short TTL, and turns reported failures into
 * re-checks (`recheck`, coalesced).
 *
 * A port in use is the one start error every listener has (bind.ts).
 */
import { FailureThrottle } from '../admin/throttle';
import type { Config } from '../config';
import { startGateway } from '../gateway/gateway';
import type { Db } from '../../db/client';
import type { GatewayCounters, GatewayPools } from '../gateway/ports';
import { PoolWorkingSets, type WorkingSetsOptions } from '../gateway/working-sets';
import type { PoolRecheckPort } from '../pools/ports';
import type { GatewayUsage } from '../gateway/usage';
import type { Logger } from '../log';
import type { ServiceMetrics } from '../metrics/service-metrics';
import type { StopStep } from '../stop-steps';
import { bind } from './bind';

export interface GatewayParts {
  /** The API's key check (its KeyCache over the accounts). */
  findByApiKey: GatewayPools['authenticate'];
  /** Where the pools' working proxies are read. */
  db: Db;
  /** The pool events feed (its watch refreshes the working sets). */
  poolEvents: WorkingSetsOptions['events'];
  /** A failed upstream re-checked by its pool at once, and the working sets the pools' owner holds in memory. */
  owner: PoolRecheckPort & { upstreams: NonNullable<WorkingSetsOptions['memory']> };
  usage: GatewayUsage;
  metrics: ServiceMetrics;
  log: Logger;
  undo: StopStep[];
}

/** Listens when GATEWAY_PORT is set; returns the bound port, or null (no gateway). */
export function serveGateway(config: Pick<Config, 'gateway' | 'probes'>, p: GatewayParts): number | null {
  const g = config.gateway;
  if (g.port === undefined) return null;
  const port = g.port;
  const pools = new PoolWorkingSets({ db: p.db, memory: (a, id) => p.owner.upstreams(a, id), events: p.poolEvents, recheck: p.owner, authenticate: p.findByApiKey, log: p.log });
  p.undo.push(() => pools.stop());
  const gateway = bind({ setting: 'GATEWAY_PORT', host: g.host, port }, () =>
    startGateway({
      host: g.host,
      port,
      pools,
      throttle: new FailureThrottle(),
      counters: gatewayCounters(p.usage, p.metrics),
      log: p.log,
      allowPrivateTargets: config.probes.allowPrivateTargets,
      maxConnectionsPerKey: g.maxConnectionsPerKey,
      maxConnections: g.maxClients,
      idleTimeoutMs: g.idleTimeoutS * 1000,
      connectTimeoutMs: g.connectTimeoutMs,
    }),
  );
  p.undo.push(() => gateway.stop());
  p.metrics.watchGateway(gateway);
  p.log.info('gateway listening', { host: gateway.host, port: gateway.port });
  return gateway.port;
}

/** Per account for /me, and the service's totals for /metrics. */
function gatewayCounters(usage: GatewayUsage, metrics: ServiceMetrics): GatewayCounters {
  return {
    connection: (accountId) => {
      usage.connection(accountId);
      metrics.gatewayConnection();
    },
    bytes: (accountId, n) => {
      usage.bytes(accountId, n);
      metrics.gatewayBytes(n);
    },
    refused: (reason) => metrics.gatewayRefused(reason),
    upstreamFailed: () => metrics.gatewayUpstreamFailed(),
  };
}
