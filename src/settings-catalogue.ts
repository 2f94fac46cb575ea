/**
 * The catalogue of settings: every environment variable the service reads,
 * with its group, whether it is one of the five a person sets or tuning,
 * its default as a person reads it, a one-line meaning, and how its text is
 * read. One table, used by the parser (src/config.ts reads each variable
 * through its row), by `--help` (src/help.ts renders it), and by a test
 * that the settings tables of docs/OPERATIONS.md list exactly these
 * (test/unit/settings-docs.test.ts).
 *
 * Pure: no I/O. A reader gets the value trimmed and non-empty (blank counts
 * as unset) and throws ConfigError with one line naming the variable, never
 * echoing a secret.
 */
import { isIP } from 'node:net';
import { isAbsolute, resolve } from 'node:path';
import { ServiceError } from './errors';
import { LEAF_ERROR_CODES } from './error-codes';
import { normalizeFingerprint } from './probe/codec/cert-pin';

/** A bad environment value (the process and the admin command branch on it: one line, no stack). */
export class ConfigError extends ServiceError {
  constructor(message: string) {
    super(LEAF_ERROR_CODES.CONFIG_INVALID, message);
    this.name = 'ConfigError';
  }
}

export type SettingGroup = 'http' | 'storage' | 'limits' | 'probes' | 'judge' | 'process' | 'cluster' | 'gateway';

/** The groups in the order `--help` and the docs show them, with their titles. */
export const SETTING_GROUPS: readonly { group: SettingGroup; title: string }[] = Object.freeze([
  { group: 'http', title: 'Listeners and URLs' },
  { group: 'storage', title: 'Data, database and results' },
  { group: 'limits', title: 'Limits per request and per account' },
  { group: 'probes', title: 'Probes' },
  { group: 'judge', title: 'The judge' },
  { group: 'process', title: 'Logging and shutdown' },
  { group: 'cluster', title: 'Cluster (NATS)' },
  { group: 'gateway', title: 'The gateway (off unless GATEWAY_PORT is set)' },
]);

/** `set`: one of the five a person sets to run the service; `tuning`: the rest, each with a default that works. */
export type SettingTier = 'set' | 'tuning';

export interface ReadContext {
  /** Relative paths resolve against it. */
  cwd: string;
}

export interface Setting<T = unknown> {
  group: SettingGroup;
  tier: SettingTier;
  /** The default as a person reads it ("3000", "CPU cores", "BASE_URL"). */
  shown: string;
  /** One line: what it sets. */
  meaning: string;
  /** The value when unset; undefined: unset (or derived in src/config.ts). */
  default?: T;
  /** Reads a trimmed, non-empty value. */
  read: (text: string, name: string, ctx: ReadContext) => T;
  /** Read by another module than src/config.ts (it must still be listed). */
  readBy?: string;
}

// ---- readers (pure) ----

const int =
  (min: number, max: number) =>
  (v: string, name: string): number => {
    if (!/^\d+$/.test(v)) throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${v}"`);
    const n = Number(v);
    if (n < min || n > max) throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got ${n}`);
    return n;
  };

const bool = (v: string, name: string): boolean => {
  const l = v.toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(l)) return true;
  if (['0', 'false', 'no', 'off'].includes(l)) return false;
  throw new ConfigError(`${name} must be true or false, got "${v}"`);
};

const text = (v: string): string => v;

const url =
  (protocols: readonly string[]) =>
  (v: string, name: string): string => {
    let u: URL;
    try {
      u = new URL(v);
    } catch {
      throw new ConfigError(`${name} must be an absolute URL, got "${v}"`);
    }
    if (!protocols.includes(u.protocol)) throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got "${u.protocol}"`);
    return v.replace(/\/+$/, '');
  };

/** At least 16 characters; the message never echoes the value. */
const secret = (v: string, name: string): string => {
  if (v.length < 16) throw new ConfigError(`${name} must be at least 16 characters`);
  return v;
};

const matching =
  (re: RegExp, message: string) =>
  (v: string): string => {
    if (!re.test(v)) throw new ConfigError(message);
    return v;
  };

const oneOf =
  <T extends string>(values: readonly T[]) =>
  (v: string, name: string): T => {
    const l = v.toLowerCase();
    if (!(values as readonly string[]).includes(l)) throw new ConfigError(`${name} must be one of ${values.join(', ')}, got "${v}"`);
    return l as T;
  };

const path = (v: string, _name: string, ctx: ReadContext): string => (isAbsolute(v) ? v : resolve(ctx.cwd, v));

const ipList = (v: string, name: string): string[] => {
  const out: string[] = [];
  for (const part of v.split(',')) {
    const p = part.trim();
    if (p === '') continue;
    // isIP is a pure string check (no I/O)
    if (isIP(p) === 0 || p.includes('%')) throw new ConfigError(`${name} must be a comma-separated list of IP addresses, got "${p}"`);
    out.push(p.toLowerCase());
  }
  return out;
};

/** One or more comma-separated nats:// (or tls://) URLs, returned joined by commas. */
const natsUrls = (v: string): string => {
  const parts = v
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  for (const p of parts) {
    let u: URL;
    try {
      u = new URL(p);
    } catch {
      throw new ConfigError(`NATS_URL must be nats://host:port (comma-separated for several servers), got "${p}"`);
    }
    if (u.protocol !== 'nats:' && u.protocol !== 'tls:') throw new ConfigError(`NATS_URL must use nats: or tls:, got "${u.protocol}"`);
  }
  return parts.join(',');
};

const fingerprint = (v: string, name: string): string => {
  const f = normalizeFingerprint(v);
  if (f === null) throw new ConfigError(`${name} must be a SHA-256 fingerprint (64 hex digits, colons allowed), got "${v}"`);
  return f;
};

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];
export const CLUSTER_ROLES = ['api', 'agent', 'all'] as const;
/** Ids used as NATS subject tokens (NODE_ID, AGENT_ID in a cluster). */
export const SUBJECT_TOKEN = /^[A-Za-z0-9_-]{1,64}$/;

/** RESULT_MAX_BYTES when unset: 10 GiB of result files. */
export const DEFAULT_RESULT_MAX_BYTES = 10 * 1024 ** 3;

const s = <T>(row: Setting<T>): Setting<T> => row;

/** Every setting, in the order the docs and `--help` list them within a group. */
export const SETTINGS = {
  // ---- http ----
  PORT: s({ group: 'http', tier: 'set', shown: '3000', meaning: 'the public listener\'s port (0: a free port)', default: 3000, read: int(0, 65535) }),
  HOST: s({ group: 'http', tier: 'set', shown: '0.0.0.0', meaning: 'the public listener\'s address (127.0.0.1 behind a reverse proxy on this machine)', default: '0.0.0.0', read: text }),
  BASE_URL: s({
    group: 'http',
    tier: 'set',
    shown: 'http://HOST:PORT',
    meaning: 'the public URL of the API; proxies reach the built-in judge at its host, so set it on a real server',
    read: url(['http:', 'https:']),
  }),
  CONTENT_URL: s({ group: 'http', tier: 'tuning', shown: 'BASE_URL', meaning: 'the base URL result links point at', read: url(['http:', 'https:']) }),
  ADMIN_HOST: s({ group: 'http', tier: 'tuning', shown: '127.0.0.1', meaning: 'the admin listener\'s address (/admin/*, GET /metrics); keep it private', default: '127.0.0.1', read: text }),
  ADMIN_PORT: s({ group: 'http', tier: 'tuning', shown: '0 (a free port)', meaning: 'the admin listener\'s port (its URL is in the ready line)', default: 0, read: int(0, 65535) }),
  ADMIN_TOKEN: s({ group: 'http', tier: 'tuning', shown: 'generated into DATA_DIR/admin-token', meaning: 'the admin API\'s bearer token (>= 16 characters); the same on every API node of a cluster', read: secret }),
  WS_REQUIRE_AUTH: s({ group: 'http', tier: 'tuning', shown: 'false', meaning: 'require an API key on /ws', default: false, read: bool }),
  // ---- storage ----
  DATA_DIR: s({ group: 'storage', tier: 'set', shown: './data', meaning: 'the embedded database, result files, generated secrets, the judge\'s certificate', read: path }),
  DATABASE_URL: s({ group: 'storage', tier: 'set', shown: 'embedded PGlite in DATA_DIR', meaning: 'postgres://... to use PostgreSQL (a cluster needs it)', read: url(['postgres:', 'postgresql:']) }),
  PGLITE_THREAD: s({
    group: 'storage',
    tier: 'tuning',
    shown: 'main',
    meaning: 'where the embedded database runs: main (the main thread) or worker (its own thread: its statements never hold up HTTP answers, but on 2 cores it cost more CPU per pool check and slowed a /check beside a pool; see docs/DESIGN.md "The embedded database\'s thread")',
    default: 'main' as 'worker' | 'main',
    read: oneOf(['worker', 'main'] as const),
  }),
  RESULT_SECRET: s({ group: 'storage', tier: 'tuning', shown: 'generated into DATA_DIR/result-secret', meaning: 'the HMAC key of result links (>= 16 characters) and the key webhook secrets are sealed with; the same on every API node of a cluster', read: secret }),
  RESULT_RETENTION_DAYS: s({ group: 'storage', tier: 'tuning', shown: '7', meaning: 'result files are deleted after this many days', default: 7, read: int(1, 3650) }),
  RESULT_MAX_BYTES: s({ group: 'storage', tier: 'tuning', shown: '10737418240 (10 GiB)', meaning: 'disk cap on result files, the oldest deleted first (0: no cap)', default: DEFAULT_RESULT_MAX_BYTES, read: int(0, 2 ** 50) }),
  BOOTSTRAP_CHECKS: s({ group: 'storage', tier: 'tuning', shown: '1000', meaning: 'checks of the demo account made on the first start', default: 1000, read: int(0, 1_000_000_000) }),
  BOOTSTRAP_API_KEY: s({
    group: 'storage',
    tier: 'tuning',
    shown: '(random)',
    meaning: 'the demo account\'s key, fixed (16 to 200 printable characters)',
    read: matching(/^[\x21-\x7e]{16,200}$/, 'BOOTSTRAP_API_KEY must be 16 to 200 printable characters without spaces'),
  }),
  NODE_ID: s({
    group: 'storage',
    tier: 'tuning',
    shown: '(generated per start)',
    meaning: 'this API node\'s id among the nodes of one database, unique per running process',
    read: matching(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/, 'NODE_ID must be 1 to 64 characters: letters, digits, and . _ : - (not first)'),
  }),
  NODE_LEASE_MS: s({
    group: 'storage',
    tier: 'tuning',
    shown: '30000',
    meaning: 'a node\'s lease; once it expired another node refunds its running jobs (swept every half of it)',
    default: 30_000,
    read: int(300, 3_600_000),
  }),
  // ---- limits ----
  MAX_PROXIES: s({ group: 'limits', tier: 'tuning', shown: '100000', meaning: 'unique proxies per request (over: 413); an account\'s running checks hold twice this at most', default: 100_000, read: int(1, 10_000_000) }),
  MAX_BODY_BYTES: s({ group: 'limits', tier: 'tuning', shown: '16777216', meaning: 'request body size (over: 413)', default: 16 * 1024 * 1024, read: int(1024, 1024 * 1024 * 1024) }),
  MAX_CUSTOM_URLS: s({ group: 'limits', tier: 'tuning', shown: '10', meaning: 'custom URLs per request (over: 413)', default: 10, read: int(0, 1000) }),
  MAX_JOBS_PER_ACCOUNT: s({ group: 'limits', tier: 'tuning', shown: '4', meaning: 'checks one account may run at once (over: 429)', default: 4, read: int(1, 10_000) }),
  RATE_LIMIT_PER_S: s({ group: 'limits', tier: 'tuning', shown: '20', meaning: 'requests per second per account on /check, /check-raw, /me, /pools...; twice as many at once after a quiet spell', default: 20, read: int(1, 1_000_000) }),
  WS_MAX_PER_ACCOUNT: s({ group: 'limits', tier: 'tuning', shown: '64', meaning: '/ws subscriptions open at once per account; a quarter of it per address without a key', default: 64, read: int(1, 1_000_000) }),
  MAX_POOLS_PER_ACCOUNT: s({ group: 'limits', tier: 'tuning', shown: '20', meaning: 'pools one account may own (one more: 429)', default: 20, read: int(1, 100_000) }),
  MAX_PROXIES_PER_POOL: s({
    group: 'limits',
    tier: 'tuning',
    shown: '100000',
    meaning: 'proxies in one pool (over: 413); all of an account\'s pools hold twice this at most',
    default: 100_000,
    read: int(1, 10_000_000),
  }),
  POOL_MIN_INTERVAL_S: s({ group: 'limits', tier: 'tuning', shown: '60', meaning: 'the shortest interval_s a pool accepts, in seconds (tests lower it)', default: 60, read: int(1, 86_400) }),
  POOL_SOURCE_MAX_BYTES: s({ group: 'limits', tier: 'tuning', shown: '8388608 (8 MiB)', meaning: 'the largest list a pool source may fetch (larger: the fetch fails with source_too_large)', default: 8 * 1024 * 1024, read: int(1024, 1024 * 1024 * 1024) }),
  POOL_SOURCE_TIMEOUT_MS: s({ group: 'limits', tier: 'tuning', shown: '30000', meaning: 'how long one fetch of a pool source may take, redirects included (longer: source_timeout)', default: 30_000, read: int(100, 600_000) }),
  // ---- probes ----
  PROBE_THREADS: s({ group: 'probes', tier: 'tuning', shown: 'CPU cores', meaning: 'probe worker threads', read: int(1, 256) }),
  SLOTS_PER_ENDPOINT: s({ group: 'probes', tier: 'tuning', shown: '768', meaning: 'probes in flight per region endpoint (16 endpoints: 12 288 per region)', default: 768, read: int(1, 100_000) }),
  MAX_IN_FLIGHT: s({ group: 'probes', tier: 'tuning', shown: 'from the open-file limit', meaning: 'probes in flight in the whole process', read: int(1, 10_000_000) }),
  MAX_JOB_SHARE_PERCENT: s({ group: 'probes', tier: 'tuning', shown: '95', meaning: 'a job holding this share of a region\'s slots leaves the rest to jobs that arrive', default: 95, read: int(1, 100) }),
  POOL_ROUNDS: s({
    group: 'probes',
    tier: 'tuning',
    shown: 'true',
    meaning: 'this node checks the pools\' proxies on their schedule (false: not here; another API node of a cluster may)',
    default: true,
    read: bool,
  }),
  POOL_FLUSH_S: s({ group: 'probes', tier: 'tuning', shown: '10', meaning: 'a pool\'s owner writes its checked proxies (and settles their checks) at most this many seconds behind; a crash loses at most that many seconds of verdicts, never charged', default: 10, read: int(1, 3600) }),
  ALLOW_PRIVATE_TARGETS: s({ group: 'probes', tier: 'tuning', shown: 'false', meaning: 'allow proxies and custom URLs on loopback, private and reserved addresses', default: false, read: bool }),
  TLS_CA_FILE: s({ group: 'probes', tier: 'tuning', shown: '(none)', meaning: 'a PEM file of extra CAs for an https JUDGE_URL and https custom URLs', read: path }),
  PROBE_SOCKET_DRIVER: s({
    group: 'probes',
    tier: 'tuning',
    shown: 'native',
    meaning: '`node` forces node:net / node:tls sockets for probes instead of the Bun-native link',
    default: 'native' as 'native' | 'node',
    read: oneOf(['native', 'node'] as const),
  }),
  ADAPTIVE_LIMIT: s({
    group: 'probes',
    tier: 'tuning',
    shown: 'true',
    meaning: 'probes in flight follow the checker\'s own lag (fewer while its threads run late, back up as they catch up); false: only SLOTS_PER_ENDPOINT and MAX_IN_FLIGHT bound them',
    default: true,
    read: bool,
  }),
  // ---- judge ----
  JUDGE_URL: s({ group: 'judge', tier: 'tuning', shown: 'this server\'s /judge', meaning: 'where probes are sent through the proxy', read: url(['http:', 'https:']) }),
  JUDGE_KEY: s({
    group: 'judge',
    tier: 'tuning',
    shown: '(a random key per start)',
    meaning: 'the key judge answers are signed with (>= 16 characters); needed with JUDGE_URL in a cluster',
    read: secret,
  }),
  JUDGE_TLS: s({
    group: 'judge',
    tier: 'tuning',
    shown: 'true',
    meaning: 'the default of a check that does not say `https`: every working proxy checked for HTTPS (and TLS interception) through the judge\'s TLS listener',
    default: true,
    read: bool,
  }),
  JUDGE_TLS_URL: s({ group: 'judge', tier: 'tuning', shown: '(the built-in judge\'s TLS listener)', meaning: 'an external judge\'s TLS listener (https://), with JUDGE_TLS_FINGERPRINT', read: url(['https:']) }),
  JUDGE_TLS_FINGERPRINT: s({ group: 'judge', tier: 'tuning', shown: '(none)', meaning: 'the SHA-256 fingerprint JUDGE_TLS_URL presents (pinned)', read: fingerprint }),
  JUDGE_TLS_PORT: s({
    group: 'judge',
    tier: 'tuning',
    shown: 'PORT + 443 (3443; PORT - 443 above 65092; a free port when PORT is 0)',
    meaning: 'the built-in judge\'s TLS listener\'s port, on HOST: proxies must reach it as they reach PORT (0: a free port)',
    read: int(0, 65535),
  }),
  JUDGE_TLS_THREAD: s({
    group: 'judge',
    tier: 'tuning',
    shown: 'worker',
    meaning: 'where the built-in judge\'s TLS listener runs: worker (a thread of its own) or main (the main thread: under a pool\'s load its handshakes stalled for seconds and working proxies were reported https false; see docs/DESIGN.md "The judge\'s TLS thread")',
    default: 'worker' as 'worker' | 'main',
    read: oneOf(['worker', 'main'] as const),
  }),
  CHECKER_IPS: s({ group: 'judge', tier: 'tuning', shown: '(none)', meaning: 'extra addresses of this checker (comma-separated) for the transparency test', default: [], read: ipList }),
  // ---- process ----
  LOG_LEVEL: s({ group: 'process', tier: 'tuning', shown: 'info', meaning: 'debug, info, warn, error or silent', default: 'info' as LogLevel, read: oneOf(LOG_LEVELS) }),
  SHUTDOWN_GRACE_MS: s({
    group: 'process',
    tier: 'tuning',
    shown: '30000',
    meaning: 'on SIGTERM running jobs may finish this long, then are failed and refunded; the process exits 10 s later whatever hangs',
    default: 30_000,
    read: int(0, 3_600_000),
  }),
  // ---- cluster ----
  NATS_URL: s({ group: 'cluster', tier: 'tuning', shown: '(none: one embedded process)', meaning: 'the cluster\'s NATS server(s), nats://host:4222, comma-separated', read: natsUrls }),
  ROLE: s({ group: 'cluster', tier: 'tuning', shown: 'all (with NATS_URL)', meaning: 'api, agent or all (both in one process); needs NATS_URL', read: oneOf(CLUSTER_ROLES) }),
  REGION: s({ group: 'cluster', tier: 'tuning', shown: '(none)', meaning: 'agent, all: the region this agent probes from', read: text }),
  AGENT_SLOTS: s({ group: 'cluster', tier: 'tuning', shown: 'from the open-file limit', meaning: 'agent: probes it runs at once', read: int(1, 10_000_000) }),
  AGENT_ID: s({
    group: 'cluster',
    tier: 'tuning',
    shown: '(generated per start)',
    meaning: 'agent: its id in heartbeats (letters, digits, _ -)',
    read: matching(SUBJECT_TOKEN, 'AGENT_ID must be 1 to 64 letters, digits, _ or - (it names a NATS key)'),
  }),
  AGENT_HEARTBEAT_MS: s({
    group: 'cluster',
    tier: 'tuning',
    shown: '2000',
    meaning: 'an agent\'s heartbeat; it is gone after 5 missed, its unacked shards move on after 7.5',
    default: 2_000,
    read: int(200, 600_000),
  }),
  // ---- gateway ----
  GATEWAY_PORT: s({
    group: 'gateway',
    tier: 'tuning',
    shown: '(none: no gateway)',
    meaning: 'the gateway\'s port: an HTTP proxy and SOCKS5 listener over the pools\' working proxies (0: a free port, in the `gateway listening` log line)',
    read: int(0, 65535),
  }),
  GATEWAY_HOST: s({
    group: 'gateway',
    tier: 'tuning',
    shown: '127.0.0.1',
    meaning: 'the gateway\'s address (0.0.0.0 serves other machines: anyone who reaches it may try keys; 5 wrong ones from one address within 60 s block it for 60 s)',
    default: '127.0.0.1',
    read: text,
  }),
  GATEWAY_MAX_CONNECTIONS: s({ group: 'gateway', tier: 'tuning', shown: '256', meaning: 'open gateway connections per API key (one more: 429 `too_many_connections` / SOCKS5 `02`)', default: 256, read: int(1, 1_000_000) }),
  GATEWAY_MAX_CLIENTS: s({
    group: 'gateway',
    tier: 'tuning',
    shown: '4096',
    meaning: 'open gateway client connections altogether, authenticated or not (one more is closed at once); each relayed one holds two descriptors that MAX_IN_FLIGHT does not count: raise `ulimit -n` with it',
    default: 4096,
    read: int(1, 1_000_000),
  }),
  GATEWAY_IDLE_TIMEOUT_S: s({ group: 'gateway', tier: 'tuning', shown: '120', meaning: 'a gateway connection without a byte either way for this long is closed', default: 120, read: int(1, 86_400) }),
  GATEWAY_CONNECT_TIMEOUT_MS: s({ group: 'gateway', tier: 'tuning', shown: '5000', meaning: 'each try of an upstream proxy (connect and its handshake); then the next one, at most 3', default: 5_000, read: int(100, 120_000) }),
} as const;

export type SettingName = keyof typeof SETTINGS;
type ValueOf<N extends SettingName> = ReturnType<(typeof SETTINGS)[N]['read']>;

/** Every setting's name, in catalogue order. */
export const SETTING_NAMES = Object.freeze(Object.keys(SETTINGS) as SettingName[]);

/** The value of `name` in `env`: read through its row (blank counts as unset), else its default. */
export function readSetting<N extends SettingName>(env: Record<string, string | undefined>, name: N, ctx: ReadContext): ValueOf<N> | undefined {
  const row = SETTINGS[name] as Setting<ValueOf<N>>;
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return row.default;
  return row.read(raw, name, ctx);
}
