/**
 * What the HTTP layer needs from the rest of the service, injected so the app
 * can be built in tests with real or fake collaborators. The HTTP layer never
 * opens a probe socket and never runs SQL itself: it goes through these ports.
 */
import type { HttpConfig, LimitsConfig } from '../config';
import type { CheckJobsPort, ChecksPort, ProgressPort } from '../jobs/ports';
import type { JudgeReach } from '../judge/judge-address';
import type { Logger } from '../log';
import type { AuthenticatedAccount } from './auth';
import type { ResultStore } from '../results/store';
import type { PoolLimits } from '../pools/limits';
import type { PoolProxiesQuery } from '../pools/query';
import type { PoolObject } from '../pools/shape';
import type { PoolCreated, PoolProxiesListing, PoolUpdated } from '../pools/store';
import type { PoolCreate, PoolPatch } from '../pools/types';
import type { PoolEventsFeed } from '../pools/events-hub';
import type { DeliveryObject, WebhookCreate, WebhookObject, WebhookPatch } from '../webhooks/types';

export type { ChecksPort } from '../jobs/ports';

export interface AccountsPort {
  findByApiKey(key: string): Promise<AuthenticatedAccount | null>;
  /** The GET /me body (DECISIONS' first shape). */
  overview(accountId: string, now: Date): Promise<unknown>;
  /** The account's checks left and whether its plan is unlimited (the pool answers' balance_runs_out); absent: no such warning. */
  balance?(accountId: string, now: Date): Promise<{ checks: number; unlimited: boolean } | null>;
}

export interface ResultsPort {
  /** The result-link HMAC key; never empty (the composition root refuses to start without one). */
  secret: string;
  /** Where finished results are read from (src/results/store.ts). */
  store: Pick<ResultStore, 'open'>;
}

/**
 * Pools of proxies kept checked (src/jobs/pool-service.ts): every call takes
 * the owner's account id, and another account's pool is absent (null/false).
 */
export interface PoolsPort {
  /** This deployment's limits (the validators read POOL_MIN_INTERVAL_S and proxies per pool here). */
  readonly limits: PoolLimits;
  create(accountId: string, req: PoolCreate): Promise<PoolCreated>;
  list(accountId: string): Promise<PoolObject[]>;
  get(accountId: string, poolId: string): Promise<PoolObject | null>;
  update(accountId: string, poolId: string, patch: PoolPatch): Promise<PoolUpdated | null>;
  delete(accountId: string, poolId: string): Promise<boolean>;
  /** One page of the pool's proxies and the time it was read at (uptime and latency are read from the history then). */
  proxies(accountId: string, poolId: string, query: PoolProxiesQuery): Promise<(PoolProxiesListing & { nowMs: number }) | null>;
}

/**
 * Webhook endpoints (src/webhooks/service.ts): every call takes the owner's
 * account id, and another account's endpoint is absent (null/false).
 */
export interface WebhooksPort {
  readonly maxPerAccount: number;
  /** ALLOW_PRIVATE_TARGETS: the URL rule's guard is off. */
  readonly allowPrivateTargets: boolean;
  create(accountId: string, req: WebhookCreate): Promise<{ webhook: WebhookObject; secret: string } | 'limit'>;
  list(accountId: string): Promise<WebhookObject[]>;
  get(accountId: string, id: string): Promise<WebhookObject | null>;
  update(accountId: string, id: string, patch: WebhookPatch): Promise<WebhookObject | null>;
  delete(accountId: string, id: string): Promise<boolean>;
  test(accountId: string, id: string): Promise<boolean>;
  rotateSecret(accountId: string, id: string): Promise<string | null>;
  deliveries(accountId: string, id: string): Promise<DeliveryObject[] | null>;
  /** The ids among `ids` that are not pools of the account. */
  foreignPools(accountId: string, ids: readonly string[]): Promise<string[]>;
  /** Why the URL may not be sent to (the SSRF guard, its name resolved now); null when it may. */
  refusedTarget(url: string): Promise<string | null>;
}

/** Who probes from each region now: this process (embedded), or a cluster's live agents (src/cluster/registry.ts). */
export interface RegionsPort {
  region(code: string): { agents: number; capacity: number };
  /** A cluster's live agents, for /health; absent: one process serves every region. */
  agents?(): { region: string; agent: string; slots: number; inFlight: number; exitIps: string[]; version: string; lastSeenMs: number }[];
}

/** The gateway's listener as clients reach it: `host` null when it listens on every address (clients use the API's host). */
export interface GatewayAddress {
  host: string | null;
  port: number;
}

export interface AppDeps {
  /** The HTTP layer's settings: its limits and the public listener's. */
  limits: LimitsConfig;
  http: Pick<HttpConfig, 'wsRequireAuth'>;
  log: Logger;
  version: string;
  /** ms since epoch when the process started (for /health uptime). */
  startedAt: number;
  now: () => Date;
  database: { ping(): Promise<boolean> };
  accounts: AccountsPort;
  checks: ChecksPort;
  /** Jobs as resources: GET / DELETE /checks/{jobId} (src/jobs/check-jobs.ts). */
  jobs: CheckJobsPort;
  /** BASE_URL as clients reach it (the bound port when PORT=0): the URLs of an asynchronous check's 202. */
  publicBase: () => string;
  /** Signed result downloads. */
  results: ResultsPort;
  /** WebSocket progress fan-out. */
  progress: ProgressPort;
  /** Pools (POST/GET /pools, /pools/{id}, /pools/{id}/proxies). */
  pools: PoolsPort;
  /** A pool's events to its owner's `GET /ws?pool={id}` (src/pools/events-hub.ts; in a cluster, of every node). */
  poolEvents: Pick<PoolEventsFeed, 'subscribe'>;
  /** Webhooks (/webhooks...); absent: the routes answer 503 (an app built without them, tests). */
  webhooks?: WebhooksPort;
  /** Where the gateway listens (/health `gateway`; bound before the app is made); absent or null: no gateway. */
  gateway?: GatewayAddress | null;
  /** Who probes from each region: one embedded process (agents 1, capacity endpoints x SLOTS_PER_ENDPOINT), or a cluster's live agents. */
  regions: RegionsPort;
  /** The key this service's own GET /judge signs its answers with (src/probe/codec/integrity.ts). */
  judgeKey: string;
  /** Whether a check that does not say `https` gets the https check (JUDGE_TLS); absent: true. */
  httpsDefault?: boolean;
  /** Who can reach the judge (/health `judge_reachable`, decided at start); absent or null: not known. */
  judgeReach?: JudgeReach | null;
}
