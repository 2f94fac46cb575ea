/**
 * Environment -> one typed, validated Config object, in groups: each layer
 * is handed only its group (the HTTP layer `http` and `limits`, the job
 * layer `limits`, storage `storage`, the judge `judge`, the gateway
 * `gateway`, ...).
 *
 * `parseConfig(env)` is pure: it never touches the disk or the network, and
 * throws ConfigError with a one-line message naming the variable on the first
 * bad value. Every variable is read through its row of the catalogue
 * (src/settings-catalogue.ts: name, group, default, meaning). What is a
 * multiple of a sibling is derived, not read (the rate limit's burst, the
 * agents' TTL and ack wait, the orphan sweep, the shutdown deadline, ...),
 * and what no operator has a reason to change is a constant here (TUNING);
 * both are fields of Config, so tests pass small values in the Config they
 * start with, not in the environment. Secrets that are generated when absent
 * (RESULT_SECRET, ADMIN_TOKEN) are filled in by `resolveSecrets` in
 * src/secrets.ts, which is the only part that writes into DATA_DIR.
 */
import { resolve } from 'node:path';
import { findRegion } from './regions';
import {
  ConfigError,
  readSetting,
  SUBJECT_TOKEN,
  type LogLevel,
  type ReadContext,
  type SettingName,
} from './settings-catalogue';

export { ConfigError, DEFAULT_RESULT_MAX_BYTES, type LogLevel } from './settings-catalogue';

/**
 * What this process is (docs/OPERATIONS.md "Running a cluster"): `embedded`
 * (no NATS_URL: the single process of today), or with NATS_URL an API node
 * (`api`), a region agent (`agent`), or both in one process (`all`, the default).
 */
export type Role = 'embedded' | 'api' | 'agent' | 'all';

/** Constants no operator has a reason to change; Config carries them so a test can start with smaller ones. */
export const TUNING = Object.freeze({
  /** Request bodies over 1 MiB read and parsed at once; one more is a 503 (src/http/body.ts). */
  maxLargeBodies: 2,
  /** Seconds an HTTP connection may stay idle (a running check lifts it for its request). */
  httpIdleTimeoutS: 30,
  /** PostgreSQL statement_timeout for every statement of the service. */
  dbStatementTimeoutMs: 30_000,
  /** How often the checker learns its own addresses from the judge again. */
  calibrationIntervalMs: 300_000,
  /** An API node fails a shard (its job fails, with refunds) that showed no sign of life for this long. */
  clusterShardDeadlineMs: 120_000,
  /** After a stop signal the process exits this long after the grace, whatever still hangs. */
  shutdownExtraMs: 10_000,
});

export interface HttpConfig {
  port: number;
  host: string;
  /** Public base URL of the API, no trailing slash (derived from HOST and PORT unless BASE_URL is set). */
  baseUrl: string;
  /** Whether BASE_URL was set (else baseUrl is derived and, on a real server, reachable from this machine only). */
  baseUrlSet: boolean;
  /** Base URL result links point at, no trailing slash. */
  contentUrl: string;
  /** The admin API's own listener (never the public one); 0 = a free port. */
  adminPort: number;
  adminHost: string;
  /** undefined until resolveSecrets() fills it from DATA_DIR. */
  adminToken: string | undefined;
  wsRequireAuth: boolean;
  /** Seconds an HTTP connection may stay idle (TUNING). */
  idleTimeoutS: number;
}

export interface LimitsConfig {
  maxProxies: number;
  maxBodyBytes: number;
  maxCustomUrls: number;
  /** Request bodies over 1 MiB read and parsed at once (TUNING). */
  maxLargeBodies: number;
  /** Checks one account may run at once (more: 429). */
  maxJobsPerAccount: number;
  /** Unique proxies of one account's running checks together: twice MAX_PROXIES. */
  maxProxiesInFlightPerAccount: number;
  /** Token bucket per account on /check, /check-raw and /me: requests per second refilled... */
  rateLimitPerS: number;
  /** ...and the bucket's size: twice the rate. */
  rateLimitBurst: number;
  /** WebSocket subscriptions open at once per authenticated account... */
  wsMaxPerAccount: number;
  /** ...and per client address of anonymous subscribers: a quarter of it. */
  wsMaxPerAddress: number;
  /** POOL_MIN_INTERVAL_S: the shortest `interval_s` a pool accepts (tests lower it). */
  poolMinIntervalS: number;
  /** Pools one account may own (one more: 429). */
  maxPoolsPerAccount: number;
  /** Proxies in one pool (more: 413)... */
  maxProxiesPerPool: number;
  /** ...and in all of one account's pools together: twice it (more: 413). */
  maxPoolProxiesPerAccount: number;
  /** POOL_SOURCE_MAX_BYTES: the largest list a pool source may fetch. */
  poolSourceMaxBytes: number;
  /** POOL_SOURCE_TIMEOUT_MS: one fetch of a pool source, redirects included. */
  poolSourceTimeoutMs: number;
}

export interface ProbesConfig {
  threads: number;
  slotsPerEndpoint: number;
  /** Probes in flight in the whole process at most; undefined = from the open-file limit. */
  maxInFlight: number | undefined;
  /** A job that holds this share (percent) of a region's slots, or of MAX_IN_FLIGHT, leaves the rest to jobs that arrive. */
  maxJobSharePercent: number;
  allowPrivateTargets: boolean;
  /** PEM of extra CAs trusted for https judges and custom URLs (besides the system's). */
  tlsCaFile: string | undefined;
  /**
   * PROBE_SOCKET_DRIVER: the probes' socket link, `native` (Bun's own handle,
   * src/probe/net/bun-socket.ts, where the runtime offers it) or `node`
   * (node:net / node:tls), handed to every probe thread.
   */
  socketDriver: 'native' | 'node';
  /** POOL_ROUNDS: this node owns and checks pools (src/jobs/pool-owner.ts); false: its pools are not checked here. */
  poolRounds: boolean;
  /** POOL_FLUSH_S: a pool owner's flush period in seconds (src/jobs/pool-actor.ts). */
  poolFlushS: number;
  /** ADAPTIVE_LIMIT: probes in flight follow the checker's own lag (src/jobs/lag-limiter.ts); false: only the static caps. */
  adaptiveLimit: boolean;
}

export interface JudgeConfig {
  /** JUDGE_URL; undefined = this process's own /judge. */
  url: string | undefined;
  /**
   * JUDGE_KEY: the key the judge signs its answers with. With JUDGE_URL, the
   * external judge's key (absent: it does not sign, integrity is not checked;
   * refused in a cluster); this process's own /judge signs with it too
   * (absent: a random key per process).
   */
  key: string | undefined;
  /**
   * JUDGE_TLS (default true): whether a check that does not say `https` gets
   * the https check (tunnel + TLS to the judge's TLS listener, pinned); a
   * request opts out or in itself (`"https": false` / `https=false`).
   */
  tls: boolean;
  /** JUDGE_TLS_URL: an external judge's TLS listener, pinned to tlsFingerprint (both or neither). */
  tlsUrl: string | undefined;
  /** JUDGE_TLS_FINGERPRINT, normalised (codec/cert-pin.ts: `AB:CD:...`). */
  tlsFingerprint: string | undefined;
  /** The built-in judge's TLS listener port (0 = a free port), bound on HOST: JUDGE_TLS_PORT, else PORT + 443 (judgeTlsPortOf). */
  tlsPort: number;
  /** JUDGE_TLS_THREAD: the built-in judge's TLS listener in a thread of its own (worker, the default) or on the main thread. */
  tlsThread: 'worker' | 'main';
  checkerIps: string[];
  calibrationIntervalMs: number;
}

export interface StorageConfig {
  /** Absolute path. */
  dataDir: string;
  /** undefined = embedded PGlite in DATA_DIR/pglite. */
  databaseUrl: string | undefined;
  /** Embedded mode: PGlite in its own thread (worker) or on the main thread (main). */
  pgliteThread: 'worker' | 'main';
  /** undefined until resolveSecrets() fills it from DATA_DIR. */
  resultSecret: string | undefined;
  resultRetentionDays: number;
  /** Disk cap on stored result files in bytes (oldest deleted first); 0 = no cap. */
  resultMaxBytes: number;
  /** PostgreSQL statement_timeout for every statement of the service (TUNING). */
  statementTimeoutMs: number;
  bootstrapChecks: number;
  bootstrapApiKey: string | undefined;
  /** This API node's id among the nodes of one database; undefined = generated per start (src/jobs/node-lease.ts). */
  nodeId: string | undefined;
  /** The node's lease (renewed every third of it); another node refunds its running jobs once it expired. */
  nodeLeaseMs: number;
  /** How often a node refunds the running jobs of nodes whose lease expired: half the lease. */
  orphanSweepMs: number;
}

export interface ProcessConfig {
  logLevel: LogLevel;
  shutdownGraceMs: number;
  /** After a stop signal the process exits by then whatever still hangs: the grace + 10 s. */
  shutdownTimeoutMs: number;
}

export interface ClusterConfig {
  /** NATS_URL: the cluster's NATS server(s); undefined = embedded (no NATS). */
  natsUrl: string | undefined;
  role: Role;
  /** REGION: the region an agent serves (ROLE=agent|all). */
  region: string | undefined;
  /** AGENT_SLOTS: probes an agent runs at once; undefined = from the open-file limit. */
  agentSlots: number | undefined;
  /** AGENT_ID: the agent's id (subject token); undefined = generated per start (logged). */
  agentId: string | undefined;
  /** How often an agent puts its heartbeat into the pc_agents bucket. */
  heartbeatMs: number;
  /** An agent whose heartbeat is older than this is gone (the bucket's TTL): 5 heartbeats. */
  agentTtlMs: number;
  /** A shard not acked within this is delivered again (JetStream ack_wait; agents extend it while a shard runs): 1.5 TTL. */
  ackWaitMs: number;
  /** An API node fails a shard that showed no sign of life for this long (TUNING). */
  shardDeadlineMs: number;
}

/** The gateway (src/gateway): a keyed proxy address over the pools' working proxies, off unless GATEWAY_PORT is set. */
export interface GatewayConfig {
  /** GATEWAY_PORT: its listener (HTTP proxy and SOCKS5 on one port); undefined = no gateway; 0 = a free port. */
  port: number | undefined;
  host: string;
  /** Open gateway connections per API key. */
  maxConnectionsPerKey: number;
  /** Open client connections altogether (each relayed one holds two descriptors). */
  maxClients: number;
  /** A relayed connection without a byte either way for this long is closed. */
  idleTimeoutS: number;
  /** Each try of an upstream (connect and its handshake); then the next one. */
  connectTimeoutMs: number;
}

export interface Config {
  http: HttpConfig;
  limits: LimitsConfig;
  probes: ProbesConfig;
  judge: JudgeConfig;
  storage: StorageConfig;
  process: ProcessConfig;
  cluster: ClusterConfig;
  gateway: GatewayConfig;
}

type Env = Record<string, string | undefined>;

/** The host part of a URL that reaches a listener bound to `host` (a wildcard -> loopback, IPv6 in brackets). */
export function reachableHost(host: string): string {
  return host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
}

/**
 * Who can reach a listener bound to `host`, in words for the ready line:
 * "all interfaces" for the wildcards (HOST's default, 0.0.0.0: other
 * machines too, firewall permitting), "this machine only" for loopback, else
 * "<host> only".
 */
export function listenScope(host: string): string {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === '0.0.0.0' || h === '::' || h === '') return 'all interfaces';
  if (h === 'localhost' || h === '::1' || /^127\./.test(h)) return 'this machine only';
  return `${host} only`;
}

export function parseConfig(env: Env = process.env, cwd: string = process.cwd()): Config {
  const ctx: ReadContext = { cwd };
  const read = <N extends SettingName>(name: N) => readSetting(env, name, ctx);
  const cluster = readCluster(read);
  const judgeUrl = read('JUDGE_URL');
  const judgeKey = read('JUDGE_KEY');
  if (cluster.role !== 'embedded' && judgeUrl !== undefined && judgeKey === undefined) {
    // like RESULT_SECRET, a shared cluster secret: without it a proxy that rewrites the judge's answer passes
    throw new ConfigError("JUDGE_URL names a judge that is not this node's own: set JUDGE_KEY, its signing key (the same on every node of the cluster)");
  }
  if (cluster.natsUrl !== undefined && read('NODE_ID') !== undefined && !SUBJECT_TOKEN.test(read('NODE_ID')!)) {
    throw new ConfigError('NODE_ID in a cluster must be 1 to 64 letters, digits, _ or - (it names a NATS subject)');
  }
  const storage = readStorage(read, ctx);
  if ((cluster.role === 'api' || cluster.role === 'all') && storage.databaseUrl === undefined) {
    throw new ConfigError(`ROLE=${cluster.role} with NATS_URL needs DATABASE_URL (PostgreSQL): the embedded database is one process's`);
  }
  const grace = read('SHUTDOWN_GRACE_MS')!;
  return {
    http: readHttp(read),
    limits: readLimits(read),
    probes: {
      threads: read('PROBE_THREADS') ?? Math.max(1, navigator.hardwareConcurrency ?? 1),
      slotsPerEndpoint: read('SLOTS_PER_ENDPOINT')!,
      maxInFlight: read('MAX_IN_FLIGHT'),
      maxJobSharePercent: read('MAX_JOB_SHARE_PERCENT')!,
      allowPrivateTargets: read('ALLOW_PRIVATE_TARGETS')!,
      tlsCaFile: read('TLS_CA_FILE'),
      socketDriver: read('PROBE_SOCKET_DRIVER')!,
      adaptiveLimit: read('ADAPTIVE_LIMIT')!,
      poolRounds: read('POOL_ROUNDS')!,
      poolFlushS: read('POOL_FLUSH_S')!,
    },
    judge: readJudge(read, judgeUrl, judgeKey),
    storage,
    process: { logLevel: read('LOG_LEVEL')!, shutdownGraceMs: grace, shutdownTimeoutMs: grace + TUNING.shutdownExtraMs },
    cluster,
    gateway: readGateway(read),
  };
}

type Read = <N extends SettingName>(name: N) => ReturnType<typeof readSetting<N>>;

function readHttp(read: Read): HttpConfig {
  const port = read('PORT')!;
  const host = read('HOST')!;
  const baseUrlSet = read('BASE_URL');
  const baseUrl = baseUrlSet ?? `http://${reachableHost(host)}:${port}`;
  return {
    port,
    host,
    baseUrl,
    baseUrlSet: baseUrlSet !== undefined,
    contentUrl: read('CONTENT_URL') ?? baseUrl,
    adminPort: read('ADMIN_PORT')!,
    adminHost: read('ADMIN_HOST')!,
    adminToken: read('ADMIN_TOKEN'),
    wsRequireAuth: read('WS_REQUIRE_AUTH')!,
    idleTimeoutS: TUNING.httpIdleTimeoutS,
  };
}

function readLimits(read: Read): LimitsConfig {
  const maxProxies = read('MAX_PROXIES')!;
  const rate = read('RATE_LIMIT_PER_S')!;
  const ws = read('WS_MAX_PER_ACCOUNT')!;
  const perPool = read('MAX_PROXIES_PER_POOL')!;
  return {
    maxProxies,
    maxBodyBytes: read('MAX_BODY_BYTES')!,
    maxCustomUrls: read('MAX_CUSTOM_URLS')!,
    maxLargeBodies: TUNING.maxLargeBodies,
    maxJobsPerAccount: read('MAX_JOBS_PER_ACCOUNT')!,
    maxProxiesInFlightPerAccount: 2 * maxProxies,
    rateLimitPerS: rate,
    rateLimitBurst: 2 * rate,
    wsMaxPerAccount: ws,
    wsMaxPerAddress: Math.max(1, Math.floor(ws / 4)),
    poolMinIntervalS: read('POOL_MIN_INTERVAL_S')!,
    maxPoolsPerAccount: read('MAX_POOLS_PER_ACCOUNT')!,
    maxProxiesPerPool: perPool,
    maxPoolProxiesPerAccount: 2 * perPool,
    poolSourceMaxBytes: read('POOL_SOURCE_MAX_BYTES')!,
    poolSourceTimeoutMs: read('POOL_SOURCE_TIMEOUT_MS')!,
  };
}

/**
 * JUDGE_TLS_PORT's default, stable from one start to the next: PORT + 443
 * (3443 by default; PORT - 443 where that would pass 65535); PORT 0 (a free
 * port): a free port too.
 */
export const JUDGE_TLS_PORT_OFFSET = 443;

export function judgeTlsPortOf(port: number): number {
  if (port === 0) return 0;
  return port + JUDGE_TLS_PORT_OFFSET <= 65535 ? port + JUDGE_TLS_PORT_OFFSET : port - JUDGE_TLS_PORT_OFFSET;
}

function readJudge(read: Read, url: string | undefined, key: string | undefined): JudgeConfig {
  const tlsUrl = read('JUDGE_TLS_URL');
  const tlsFingerprint = read('JUDGE_TLS_FINGERPRINT');
  if ((tlsUrl === undefined) !== (tlsFingerprint === undefined)) {
    throw new ConfigError('JUDGE_TLS_URL and JUDGE_TLS_FINGERPRINT go together: set both (an external TLS judge and its certificate) or neither');
  }
  return {
    url,
    key,
    // on by default (DECISIONS "HTTPS capability and TLS interception: on by default"): a lying proxy is never working
    tls: read('JUDGE_TLS')!,
    tlsUrl,
    tlsFingerprint,
    tlsPort: read('JUDGE_TLS_PORT') ?? judgeTlsPortOf(read('PORT')!),
    tlsThread: read('JUDGE_TLS_THREAD')!,
    checkerIps: read('CHECKER_IPS')!,
    calibrationIntervalMs: TUNING.calibrationIntervalMs,
  };
}

function readStorage(read: Read, ctx: ReadContext): StorageConfig {
  const lease = read('NODE_LEASE_MS')!;
  return {
    dataDir: read('DATA_DIR') ?? resolve(ctx.cwd, 'data'),
    databaseUrl: read('DATABASE_URL'),
    pgliteThread: read('PGLITE_THREAD')!,
    resultSecret: read('RESULT_SECRET'),
    resultRetentionDays: read('RESULT_RETENTION_DAYS')!,
    resultMaxBytes: read('RESULT_MAX_BYTES')!,
    statementTimeoutMs: TUNING.dbStatementTimeoutMs,
    bootstrapChecks: read('BOOTSTRAP_CHECKS')!,
    bootstrapApiKey: read('BOOTSTRAP_API_KEY'),
    nodeId: read('NODE_ID'),
    nodeLeaseMs: lease,
    orphanSweepMs: Math.max(100, Math.floor(lease / 2)),
  };
}

function readCluster(read: Read): ClusterConfig {
  const natsUrl = read('NATS_URL') || undefined;
  const roleText = read('ROLE');
  if (roleText !== undefined && natsUrl === undefined) {
    throw new ConfigError('ROLE needs NATS_URL (a cluster); without NATS_URL the service runs as one embedded process');
  }
  const role: Role = natsUrl === undefined ? 'embedded' : (roleText ?? 'all');
  const region = read('REGION');
  if (role === 'agent' || role === 'all') {
    if (region === undefined) throw new ConfigError(`ROLE=${role} needs REGION (the region this agent probes from)`);
    if (findRegion(region) === undefined) throw new ConfigError(`REGION must be an accepted region code or test1, got "${region}"`);
  }
  const heartbeatMs = read('AGENT_HEARTBEAT_MS')!;
  return {
    natsUrl,
    role,
    region: role === 'agent' || role === 'all' ? region : undefined,
    agentSlots: read('AGENT_SLOTS'),
    agentId: read('AGENT_ID'),
    heartbeatMs,
    agentTtlMs: 5 * heartbeatMs,
    ackWaitMs: Math.round(7.5 * heartbeatMs),
    shardDeadlineMs: TUNING.clusterShardDeadlineMs,
  };
}

function readGateway(read: Read): GatewayConfig {
  return {
    port: read('GATEWAY_PORT'),
    host: read('GATEWAY_HOST')!,
    maxConnectionsPerKey: read('GATEWAY_MAX_CONNECTIONS')!,
    maxClients: read('GATEWAY_MAX_CLIENTS')!,
    idleTimeoutS: read('GATEWAY_IDLE_TIMEOUT_S')!,
    connectTimeoutMs: read('GATEWAY_CONNECT_TIMEOUT_MS')!,
  };
}

/** BASE_URL / CONTENT_URL derived from PORT=0 carry port 0: put the port actually bound in. */
export function withBoundPort<C extends Pick<HttpConfig, 'port' | 'baseUrl' | 'contentUrl'>>(http: C, port: number): C {
  const fix = (url: string) => {
    const u = new URL(url);
    if (u.port !== '0') return url;
    u.port = String(port);
    return u.toString().replace(/\/+$/, '');
  };
  return { ...http, port, baseUrl: fix(http.baseUrl), contentUrl: fix(http.contentUrl) };
}
