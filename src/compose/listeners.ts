/**
 * The service's listeners: the gateway's (GATEWAY_PORT, only when set:
 * gateway.ts), over the API's key cache, its per-account counts in /me, its
 * address in /health; the public one (HOST/PORT: the API with its pools (the
 * PoolService of compose/pool-sources.ts), /judge, /ws, the dashboard); and
 * the admin one (ADMIN_HOST/ADMIN_PORT, loopback by default: /admin/* with
 * its token, GET /metrics), never the same.
 *
 * Pool events: the backend's feed serves `GET /ws?pool=` and the gateway's
 * working sets; the owner's pauses, resumes and deletions are told to it
 * (pool-events.ts). `recheck`: where the gateway's failed upstreams go (the
 * rounds).
 */
import { findAccountByApiKey } from '../accounts/accounts';
import { KeyCache } from '../accounts/key-cache';
import { getAccountBalance, getAccountOverview } from '../accounts/overview';
import { createAdminApp } from '../admin/app';
import { reachableHost, type Config } from '../config';
import { createApp } from '../http/app';
import type { CheckJobsPort, ChecksPort } from '../jobs/ports';
import type { PoolService } from '../jobs/pool-service';
import type { JudgeReach } from '../judge/judge-address';
import type { Logger } from '../log';
import type { ServiceMetrics } from '../metrics/service-metrics';
import type { StopStep } from '../stop-steps';
import { VERSION } from '../version';
import { GatewayUsage } from '../gateway/usage';
import { bind } from './bind';
import { serveGateway } from './gateway';
import { closeDeletedPools } from './pool-events';
import type { PoolRecheckPort } from '../pools/ports';
import type { WorkingSetsOptions } from '../gateway/working-sets';
import type { GatewayAddress, WebhooksPort } from '../http/context';
import type { ProbeBackend } from './probe-backend';
import type { PublicUrls } from './public-urls';
import type { Storage } from './storage';

export interface ListenerParts {
  storage: Storage;
  backend: ProbeBackend;
  checks: ChecksPort;
  /** GET / DELETE /checks/{jobId}. */
  jobs: CheckJobsPort;
  /** The pools routes (src/compose/pool-sources.ts startPools). */
  pools: PoolService;
  metrics: ServiceMetrics;
  urls: PublicUrls;
  /** The result-link secret and a signed link for a result id (the /me history). */
  results: { secret: string; signLink: (resultId: string) => string };
  /** The key this service's own /judge signs with. */
  judgeKey: string;
  /** Who can reach the judge (/health). */
  judgeReach: JudgeReach | null;
  /** The pools' owner (compose/pool-owner.ts): where the gateway's failed upstreams go, and the working sets it holds in memory. */
  owner: PoolRecheckPort & { upstreams: NonNullable<WorkingSetsOptions['memory']> };
  /** The webhooks routes (compose/webhooks.ts). */
  webhooks?: WebhooksPort;
  log: Logger;
  undo: StopStep[];
}

export interface Listening {
  port: number;
  adminUrl: string;
  /** The gateway's bound port, null without GATEWAY_PORT. */
  gatewayPort: number | null;
}

/** What the listeners share: the key cache (the API's and the gateway's), the gateway's per-account counts. */
interface Shared {
  findByApiKey: (key: string) => ReturnType<typeof findAccountByApiKey>;
  /** Forgets every cached key (the admin API changed an account). */
  forgetKeys: () => void;
  gatewayUsage: GatewayUsage;
}

/**
 * Listens on each: the gateway first (when set), so the public API is made
 * knowing its address; then the public listener, which binds the public URLs
 * to its port; then the admin listener.
 */
export function startListeners(config: Config, p: ListenerParts): Listening {
  const keys = new KeyCache<Awaited<ReturnType<typeof findAccountByApiKey>>>();
  const shared: Shared = {
    findByApiKey: (key) => keys.get(key, (k) => findAccountByApiKey(p.storage.database.db, k)),
    forgetKeys: () => keys.clear(),
    gatewayUsage: new GatewayUsage(),
  };
  const { pools } = p;
  p.undo.push(pools.onChange(closeDeletedPools(p.backend.poolEvents)));
  const gatewayPort = serveGateway(config, {
    findByApiKey: shared.findByApiKey,
    db: p.storage.database.db,
    poolEvents: p.backend.poolEvents,
    owner: p.owner,
    usage: shared.gatewayUsage,
    metrics: p.metrics,
    log: p.log,
    undo: p.undo,
  });
  const gateway: GatewayAddress | null = gatewayPort === null ? null : { host: isWildcard(config.gateway.host) ? null : config.gateway.host, port: gatewayPort };
  const port = listenPublic(config, p, shared, gateway);
  return { port, adminUrl: listenAdmin(config, p, shared), gatewayPort };
}

/** The public listener (HOST/PORT): the API, /judge, /ws, the dashboard. Its bound port. */
function listenPublic(config: Config, p: ListenerParts, shared: Shared, gateway: GatewayAddress | null): number {
  const { database } = p.storage;
  const { http } = config;
  const retentionMs = config.storage.resultRetentionDays * 86_400_000;
  const app = createApp({
    limits: config.limits,
    http,
    httpsDefault: config.judge.tls,
    log: p.log,
    version: VERSION,
    startedAt: Date.now(),
    now: () => new Date(),
    database,
    accounts: {
      findByApiKey: shared.findByApiKey,
      overview: async (accountId, now) => ({
        ...(await getAccountOverview(database.db, accountId, now, (ref, createdAt) => (now.getTime() - createdAt.getTime() > retentionMs ? null : p.results.signLink(ref)))),
        gateway: shared.gatewayUsage.of(accountId),
      }),
      balance: (accountId, now) => getAccountBalance(database.db, accountId, now),
    },
    checks: p.checks,
    jobs: p.jobs,
    // read per request, after the listener is bound (PORT=0: the bound port)
    publicBase: () => p.urls.base,
    results: { secret: p.results.secret, store: p.backend.results },
    progress: p.backend.hub,
    pools: p.pools,
    ...(p.webhooks !== undefined ? { webhooks: p.webhooks } : {}),
    poolEvents: p.backend.poolEvents,
    gateway,
    judgeKey: p.judgeKey,
    judgeReach: p.judgeReach,
    regions: p.backend.regions,
  });
  const server = bind({ setting: 'PORT', host: http.host, port: http.port }, () =>
    app.listen({
      port: http.port,
      hostname: http.host,
      reusePort: false, // never two services on one port (bind.ts)
      // Our own reader enforces MAX_BODY_BYTES with the JSON 413 (Content-Length
      // first, then counted bytes); Bun's own limit only backs it up.
      maxRequestBodySize: Math.max(config.limits.maxBodyBytes * 4, 1024 * 1024 * 1024),
      // idle and half-open connections go after http.idleTimeoutS; a running check lifts it for its own request
      idleTimeout: http.idleTimeoutS,
    }),
  );
  p.undo.push(async () => {
    await server.stop(true);
  });
  const port = server.server!.port!;
  p.urls.bound(port);
  return port;
}

/** The admin API on its own listener (ADMIN_HOST/ADMIN_PORT, loopback by default), never on the public one. Its URL. */
function listenAdmin(config: Config, p: ListenerParts, shared: Shared): string {
  const { http } = config;
  const adminApp = createAdminApp({ database: p.storage.database, adminToken: http.adminToken!, log: p.log, onChange: shared.forgetKeys, metrics: p.metrics });
  const admin = bind({ setting: 'ADMIN_PORT', host: http.adminHost, port: http.adminPort }, () =>
    adminApp.listen({ port: http.adminPort, hostname: http.adminHost, reusePort: false }),
  );
  p.undo.push(async () => {
    await admin.stop(true);
  });
  return `http://${reachableHost(http.adminHost)}:${admin.server!.port!}`;
}

/** A listen address that is every address of the host: clients reach it by the API's host name. */
function isWildcard(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '' || host === '[::]';
}
