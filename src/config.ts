/**
 * Environment -> one typed, validated Config object.
 *
 * `parseConfig(env)` is pure: it never touches the disk or the network, and
 * throws ConfigError with a one-line message naming the variable on the first
 * bad value. Secrets that are generated when absent (RESULT_SECRET,
 * ADMIN_TOKEN) are filled in by `resolveSecrets` in src/secrets.ts, which is
 * the only part that writes into DATA_DIR.
 */
import { isIP } from 'node:net';
import { isAbsolute, resolve } from 'node:path';
import { ServiceError } from './errors';
import { LEAF_ERROR_CODES } from './error-codes';
import { normalizeFingerprint } from './probe/codec/cert-pin';
import { findRegion } from './regions';

/** A bad environment value (the process and the admin command branch on it: one line, no stack). */
export class ConfigError extends ServiceError {
  constructor(message: string) {
    super(LEAF_ERROR_CODES.CONFIG_INVALID, message);
    this.name = 'ConfigError';
  }
}

/**
 * What this process is (README "Running a cluster"): `embedded` (no NATS_URL:
 * the single process of today), or with NATS_URL an API node (`api`), a
 * region agent (`agent`), or both in one process (`all`, the default).
 */
export type Role = 'embedded' | 'api' | 'agent' | 'all';
const CLUSTER_ROLES = ['api', 'agent', 'all'] as const;
/** Ids used as NATS subject tokens (NODE_ID, AGENT_ID, REGION in a cluster). */
const SUBJECT_TOKEN = /^[A-Za-z0-9_-]{1,64}$/;

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];

export interface Config {
  port: number;
  host: string;
  /** The admin API's own listener (never the public one); 0 = a free port. */
  adminPort: number;
  adminHost: string;
  /** Public base URL of the API, no trailing slash. */
  baseUrl: string;
  /** Base URL result links point at, no trailing slash. */
  contentUrl: string;
  /** Absolute path. */
  dataDir: string;
  /** undefined = embedded PGlite in DATA_DIR/pglite. */
  databaseUrl: string | undefined;
  /** undefined until resolveSecrets() fills it from DATA_DIR. */
  resultSecret: string | undefined;
  adminToken: string | undefined;
  allowPrivateTargets: boolean;
  slotsPerEndpoint: number;
  /** undefined = this server's own /judge. */
  judgeUrl: string | undefined;
  /**
   * JUDGE_KEY: the key the judge signs its answers with. With JUDGE_URL, the
   * external judge's key (absent: it does not sign, integrity is not checked);
   * this server's own /judge signs with it too (absent: a random key per process).
   */
  judgeKey: string | undefined;
  /**
   * JUDGE_TLS_URL: an external judge's TLS listener (https), pinned to
   * JUDGE_TLS_FINGERPRINT (both or neither). Absent: the built-in judge's
   * own TLS listener when JUDGE_URL is unset too, else no https check.
   */
  judgeTlsUrl: string | undefined;
  /** JUDGE_TLS_FINGERPRINT, normalised (codec/cert-pin.ts: `AB:CD:...`). */
  judgeTlsFingerprint: string | undefined;
  /** JUDGE_TLS_PORT: the built-in judge's TLS listener port (0 = a free port), bound on HOST. */
  judgeTlsPort: number;
  /** The https check (opt-in): JUDGE_TLS=true, or an external TLS judge configured (JUDGE_TLS_URL); else no TLS judge, no `https` field. */
  judgeTls: boolean;
  checkerIps: string[];
  calibrationIntervalMs: number;
  logLevel: LogLevel;
  bootstrapChecks: number;
  bootstrapApiKey: string | undefined;
  resultRetentionDays: number;
  /** Disk cap on stored result files in bytes (oldest deleted first); 0 = no cap. */
  resultMaxBytes: number;
  wsRequireAuth: boolean;
  maxProxies: number;
  maxBodyBytes: number;
  maxCustomUrls: number;
  /** Checks one account may run at once (more: 429). */
  maxJobsPerAccount: number;
  /** Unique proxies of one account's running checks together (a check that would pass it while others run: 429). */
  maxProxiesInFlightPerAccount: number;
  /** Token bucket per account on /check, /check-raw and /me: requests per second refilled... */
  rateLimitPerS: number;
  /** ...and the bucket's size (requests allowed at once after a quiet spell). */
  rateLimitBurst: number;
  /** WebSocket subscriptions open at once per authenticated account. */
  wsMaxPerAccount: number;
  /** WebSocket subscriptions open at once per client address, anonymous subscribers (no key). */
  wsMaxPerAddress: number;
  /** Request bodies over 1 MiB read and parsed at once; one more is a 503 (src/http/body.ts). */
  maxLargeBodies: number;
  probeThreads: number;
  /** Probes in flight in the whole process at most; undefined = from the open-file limit. */
  maxInFlight: number | undefined;
  /** A job that holds this share (percent) of a region's slots, or of MAX_IN_FLIGHT, leaves the rest to jobs that arrive. */
  maxJobSharePercent: number;
  /** Seconds an HTTP connection may stay idle (a running check lifts it for its request). */
  httpIdleTimeoutS: number;
  shutdownGraceMs: number;
  /** After a stop signal the process exits by then whatever still hangs (grace + 10 s by default). */
  shutdownTimeoutMs: number;
  /** PostgreSQL statement_timeout for every statement of the service. */
  dbStatementTimeoutMs: number;
  /** PEM of extra CAs trusted for https judges and custom URLs (besides the system's). */
  tlsCaFile: string | undefined;
  /** This API node's id among the nodes of one database; undefined = generated per start (src/jobs/node-lease.ts). */
  nodeId: string | undefined;
  /** The node's lease (renewed every third of it); another node refunds its running jobs once it expired. */
  nodeLeaseMs: number;
  /** How often a node refunds the running jobs of nodes whose lease expired. */
  orphanSweepMs: number;
  /** NATS_URL: the cluster's NATS server(s); undefined = embedded (no NATS). */
  natsUrl: string | undefined;
  role: Role;
  /** REGION: the region an agent serves (ROLE=agent|all). */
  region: string | undefined;
  /** AGENT_SLOTS: probes an agent runs at once; undefined = from the open-file limit. */
  agentSlots: number | undefined;
  /** AGENT_ID: the agent's id (subject token); undefined = generated per start (logged). */
  agentId: string | undefined;
  /** A shard not acked within this is delivered again (JetStream ack_wait; agents extend it while a shard runs). */
  clusterAckWaitMs: number;
  /** An API node fails a shard (its job fails, with refunds) that showed no sign of life for this long. */
  clusterShardDeadlineMs: number;
  /** How often an agent puts its heartbeat into the pc_agents bucket. */
  agentHeartbeatMs: number;
  /** An agent whose heartbeat is older than this is gone (the bucket's TTL). */
  agentTtlMs: number;
}

/** RESULT_MAX_BYTES when unset: 10 GiB of result files. */
export const DEFAULT_RESULT_MAX_BYTES = 10 * 1024 ** 3;

type Env = Record<string, string | undefined>;

function str(env: Env, name: string): string | undefined {
  const v = env[name];
  if (v === undefined) return undefined;
  const t = v.trim();
  return t === '' ? undefined : t;
}

function int(env: Env, name: string, def: number, min: number, max: number): number {
  const v = str(env, name);
  if (v === undefined) return def;
  if (!/^\d+$/.test(v)) throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${v}"`);
  const n = Number(v);
  if (n < min || n > max) throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got ${n}`);
  return n;
}

function bool(env: Env, name: string, def: boolean): boolean {
  const v = str(env, name);
  if (v === undefined) return def;
  const l = v.toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(l)) return true;
  if (['0', 'false', 'no', 'off'].includes(l)) return false;
  throw new ConfigError(`${name} must be true or false, got "${v}"`);
}

function url(env: Env, name: string, protocols: readonly string[]): string | undefined {
  const v = str(env, name);
  if (v === undefined) return undefined;
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new ConfigError(`${name} must be an absolute URL, got "${v}"`);
  }
  if (!protocols.includes(u.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got "${u.protocol}"`);
  }
  return v.replace(/\/+$/, '');
}

function ipList(env: Env, name: string): string[] {
  const v = str(env, name);
  if (v === undefined) return [];
  const out: string[] = [];
  for (const part of v.split(',')) {
    const p = part.trim();
    if (p === '') continue;
    // isIP is a pure string check (no I/O); the old hand-rolled IPv6 test let ":" or "1:2" through
    if (isIP(p) === 0 || p.includes('%')) throw new ConfigError(`${name} must be a comma-separated list of IP addresses, got "${p}"`);
    out.push(p.toLowerCase());
  }
  return out;
}

/** NATS_URL: one or more comma-separated nats:// (or tls://) URLs, returned as given (trimmed). */
function natsUrls(env: Env): string | undefined {
  const v = str(env, 'NATS_URL');
  if (v === undefined) return undefined;
  const parts = v.split(',').map((p) => p.trim()).filter((p) => p !== '');
  for (const p of parts) {
    let u: URL;
    try {
      u = new URL(p);
    } catch {
      throw new ConfigError(`NATS_URL must be nats://host:port (comma-separated for several servers), got "${p}"`);
    }
    if (u.protocol !== 'nats:' && u.protocol !== 'tls:') throw new ConfigError(`NATS_URL must use nats: or tls:, got "${u.protocol}"`);
  }
  if (parts.length === 0) return undefined;
  return parts.join(',');
}

/** The host part of a URL that reaches a listener bound to `host` (a wildcard -> loopback, IPv6 in brackets). */
export function reachableHost(host: string): string {
  return host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
}

export function parseConfig(env: Env = process.env, cwd: string = process.cwd()): Config {
  const port = int(env, 'PORT', 3000, 0, 65535);
  const host = str(env, 'HOST') ?? '0.0.0.0';
  const baseUrl = url(env, 'BASE_URL', ['http:', 'https:']) ?? `http://${reachableHost(host)}:${port}`;
  const contentUrl = url(env, 'CONTENT_URL', ['http:', 'https:']) ?? baseUrl;
  const dataDirRaw = str(env, 'DATA_DIR') ?? './data';
  const dataDir = isAbsolute(dataDirRaw) ? dataDirRaw : resolve(cwd, dataDirRaw);
  const databaseUrl = url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']);
  const resultSecret = str(env, 'RESULT_SECRET');
  if (resultSecret !== undefined && resultSecret.length < 16) {
    throw new ConfigError('RESULT_SECRET must be at least 16 characters');
  }
  const judgeKey = str(env, 'JUDGE_KEY');
  if (judgeKey !== undefined && judgeKey.length < 16) {
    throw new ConfigError('JUDGE_KEY must be at least 16 characters');
  }
  const judgeTlsUrl = url(env, 'JUDGE_TLS_URL', ['https:']);
  const fingerprintText = str(env, 'JUDGE_TLS_FINGERPRINT');
  const judgeTlsFingerprint = fingerprintText === undefined ? undefined : normalizeFingerprint(fingerprintText);
  if (judgeTlsFingerprint === null) {
    throw new ConfigError(`JUDGE_TLS_FINGERPRINT must be a SHA-256 fingerprint (64 hex digits, colons allowed), got "${fingerprintText}"`);
  }
  if ((judgeTlsUrl === undefined) !== (judgeTlsFingerprint === undefined)) {
    throw new ConfigError('JUDGE_TLS_URL and JUDGE_TLS_FINGERPRINT go together: set both (an external TLS judge and its certificate) or neither');
  }
  const adminToken = str(env, 'ADMIN_TOKEN');
  if (adminToken !== undefined && adminToken.length < 16) {
    throw new ConfigError('ADMIN_TOKEN must be at least 16 characters');
  }
  const logLevel = (str(env, 'LOG_LEVEL') ?? 'info').toLowerCase();
  if (!LOG_LEVELS.includes(logLevel as LogLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  const nodeId = str(env, 'NODE_ID');
  if (nodeId !== undefined && !/^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/.test(nodeId)) {
    throw new ConfigError('NODE_ID must be 1 to 64 characters: letters, digits, and . _ : - (not first)');
  }
  const bootstrapApiKey = str(env, 'BOOTSTRAP_API_KEY');
  if (bootstrapApiKey !== undefined && !/^[\x21-\x7e]{16,200}$/.test(bootstrapApiKey)) {
    throw new ConfigError('BOOTSTRAP_API_KEY must be 16 to 200 printable characters without spaces');
  }
  const natsUrl = natsUrls(env);
  const roleText = str(env, 'ROLE')?.toLowerCase();
  if (roleText !== undefined && natsUrl === undefined) {
    throw new ConfigError('ROLE needs NATS_URL (a cluster); without NATS_URL the service runs as one embedded process');
  }
  if (roleText !== undefined && !(CLUSTER_ROLES as readonly string[]).includes(roleText)) {
    throw new ConfigError(`ROLE must be one of ${CLUSTER_ROLES.join(', ')}, got "${roleText}"`);
  }
  const role: Role = natsUrl === undefined ? 'embedded' : ((roleText ?? 'all') as Role);
  if ((role === 'api' || role === 'all') && databaseUrl === undefined) {
    throw new ConfigError(`ROLE=${role} with NATS_URL needs DATABASE_URL (PostgreSQL): the embedded database is one process's`);
  }
  const region = str(env, 'REGION');
  if (role === 'agent' || role === 'all') {
    if (region === undefined) throw new ConfigError(`ROLE=${role} needs REGION (the region this agent probes from)`);
    if (findRegion(region) === undefined) throw new ConfigError(`REGION must be an accepted region code or test1, got "${region}"`);
  }
  if (natsUrl !== undefined && nodeId !== undefined && !SUBJECT_TOKEN.test(nodeId)) {
    throw new ConfigError('NODE_ID in a cluster must be 1 to 64 letters, digits, _ or - (it names a NATS subject)');
  }
  const agentId = str(env, 'AGENT_ID');
  if (agentId !== undefined && !SUBJECT_TOKEN.test(agentId)) {
    throw new ConfigError('AGENT_ID must be 1 to 64 letters, digits, _ or - (it names a NATS key)');
  }
  const agentHeartbeatMs = int(env, 'AGENT_HEARTBEAT_MS', 2_000, 100, 600_000);
  const agentTtlMs = int(env, 'AGENT_TTL_MS', 10_000, 500, 3_600_000);
  if (agentTtlMs < agentHeartbeatMs * 2) {
    throw new ConfigError(`AGENT_TTL_MS must be at least twice AGENT_HEARTBEAT_MS (${agentHeartbeatMs * 2}), got ${agentTtlMs}`);
  }
  return {
    natsUrl,
    role,
    region: role === 'agent' || role === 'all' ? region : undefined,
    agentSlots: str(env, 'AGENT_SLOTS') === undefined ? undefined : int(env, 'AGENT_SLOTS', 0, 1, 10_000_000),
    agentId,
    clusterAckWaitMs: int(env, 'CLUSTER_ACK_WAIT_MS', 15_000, 1_000, 3_600_000),
    clusterShardDeadlineMs: int(env, 'CLUSTER_SHARD_DEADLINE_MS', 120_000, 1_000, 3_600_000),
    agentHeartbeatMs,
    agentTtlMs,
    port,
    host,
    adminPort: int(env, 'ADMIN_PORT', 0, 0, 65535),
    adminHost: str(env, 'ADMIN_HOST') ?? '127.0.0.1',
    baseUrl,
    contentUrl,
    dataDir,
    databaseUrl,
    resultSecret,
    adminToken,
    allowPrivateTargets: bool(env, 'ALLOW_PRIVATE_TARGETS', false),
    slotsPerEndpoint: int(env, 'SLOTS_PER_ENDPOINT', 768, 1, 100_000),
    judgeUrl: url(env, 'JUDGE_URL', ['http:', 'https:']),
    judgeKey,
    judgeTlsUrl,
    judgeTlsFingerprint,
    judgeTlsPort: int(env, 'JUDGE_TLS_PORT', 0, 0, 65535),
    // opt-in: with it every working proxy costs a TLS handshake more, and records/CSV gain `https`;
    // configuring an external TLS judge is opting in
    judgeTls: bool(env, 'JUDGE_TLS', str(env, 'JUDGE_TLS_URL') !== undefined),
    checkerIps: ipList(env, 'CHECKER_IPS'),
    calibrationIntervalMs: int(env, 'CALIBRATION_INTERVAL_MS', 300_000, 1_000, 86_400_000),
    logLevel: logLevel as LogLevel,
    bootstrapChecks: int(env, 'BOOTSTRAP_CHECKS', 1000, 0, 1_000_000_000),
    bootstrapApiKey,
    resultRetentionDays: int(env, 'RESULT_RETENTION_DAYS', 7, 1, 3650),
    resultMaxBytes: int(env, 'RESULT_MAX_BYTES', DEFAULT_RESULT_MAX_BYTES, 0, 2 ** 50),
    wsRequireAuth: bool(env, 'WS_REQUIRE_AUTH', false),
    maxProxies: int(env, 'MAX_PROXIES', 100_000, 1, 10_000_000),
    maxBodyBytes: int(env, 'MAX_BODY_BYTES', 16 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    maxCustomUrls: int(env, 'MAX_CUSTOM_URLS', 10, 0, 1000),
    maxJobsPerAccount: int(env, 'MAX_JOBS_PER_ACCOUNT', 4, 1, 10_000),
    maxProxiesInFlightPerAccount: int(env, 'MAX_PROXIES_IN_FLIGHT_PER_ACCOUNT', 200_000, 1, 1_000_000_000),
    rateLimitPerS: int(env, 'RATE_LIMIT_PER_S', 20, 1, 1_000_000),
    rateLimitBurst: int(env, 'RATE_LIMIT_BURST', 40, 1, 1_000_000),
    wsMaxPerAccount: int(env, 'WS_MAX_PER_ACCOUNT', 64, 1, 1_000_000),
    wsMaxPerAddress: int(env, 'WS_MAX_PER_ADDRESS', 16, 1, 1_000_000),
    maxLargeBodies: int(env, 'MAX_LARGE_BODIES', 2, 1, 1000),
    maxInFlight: str(env, 'MAX_IN_FLIGHT') === undefined ? undefined : int(env, 'MAX_IN_FLIGHT', 0, 1, 10_000_000),
    maxJobSharePercent: int(env, 'MAX_JOB_SHARE_PERCENT', 95, 1, 100),
    httpIdleTimeoutS: int(env, 'HTTP_IDLE_TIMEOUT_S', 30, 1, 255),
    probeThreads: int(env, 'PROBE_THREADS', Math.max(1, navigator.hardwareConcurrency ?? 1), 1, 256),
    shutdownGraceMs: int(env, 'SHUTDOWN_GRACE_MS', 30_000, 0, 3_600_000),
    shutdownTimeoutMs: int(env, 'SHUTDOWN_TIMEOUT_MS', int(env, 'SHUTDOWN_GRACE_MS', 30_000, 0, 3_600_000) + 10_000, 1_000, 3_700_000),
    dbStatementTimeoutMs: int(env, 'DB_STATEMENT_TIMEOUT_MS', 30_000, 100, 3_600_000),
    nodeId,
    nodeLeaseMs: int(env, 'NODE_LEASE_MS', 30_000, 300, 3_600_000),
    orphanSweepMs: int(env, 'ORPHAN_SWEEP_MS', 15_000, 100, 3_600_000),
    tlsCaFile: ((f) => (f === undefined || isAbsolute(f) ? f : resolve(cwd, f)))(str(env, 'TLS_CA_FILE')),
  };
}

/** BASE_URL / CONTENT_URL derived from PORT=0 carry port 0: put the port actually bound in. */
export function withBoundPort(config: Config, port: number): Config {
  const fix = (url: string) => {
    const u = new URL(url);
    if (u.port !== '0') return url;
    u.port = String(port);
    return u.toString().replace(/\/+$/, '');
  };
  return { ...config, port, baseUrl: fix(config.baseUrl), contentUrl: fix(config.contentUrl) };
}
