/**
 * The API's pool object and pool proxy object (DECISIONS "Pools"), shaped
 * from rows (the tables of db/schema.ts, read through
 * proxies-sql.ts and normalised by rowFromSql). Pure: the clock is a
 * parameter, because uptime and latency are read from the history at `now`.
 *
 * Pool proxy choices:
 * - `type`: the pool's type, or for an `auto` pool the first of socks5,
 *   socks4, http that passed; `protocols` (every protocol that passed) only
 *   in `auto` pools, as in /check records.
 * - `type`, `protocols`, `anonymity`, `https`, `origin` and the geo fields
 *   are those of the proxy's last passing check, kept while it fails (so
 *   `country` or `type` still filter a failed proxy); null (protocols [])
 *   until it has passed once. `error` is there while it is failed.
 * - `responseTime`: the last check's ("<ms with 2 decimals> ms"), null while
 *   unchecked. `uptime` and `latency_p50_ms` are read from the history at
 *   `now`; the filters and sorts of the proxies query use the values stored
 *   at the proxy's last check (`latency_p50_ms`, `uptime_h24_ppm` columns).
 * - Times are ISO 8601 strings (UTC), null when there is none.
 *
 * Pool object additions to the contract's fields: `customUrls` and
 * `sources` (what POST /pools set), so a client can read back its pool;
 * each source also shows `next_fetch_at` and `last_fetch` (SourceFetchOutcome).
 */
import type { Anonymity, CustomUrlRule } from '../probe/types';
import type { AddressFormat, CheckType, ProxyAddress, ProxyType } from '../proxy/types';
import { formatResponseTime } from '../results/format';
import { latencyP50, uptime } from './history';
import { hourlyUptime, type TargetState } from './target-columns';
import { nameTargets } from './targets';
import type { PausedReason, PoolCounts, PoolSettings, PoolState, ProxyStatus } from './types';
import type { PoolBody, PoolProxyBody, PoolSourceBody } from '../contract/pools';

// ---- protocols as a bit mask (the `protocols` column) ----------------------------------------

const PROTOCOL_BITS: Readonly<Record<ProxyType, number>> = Object.freeze({ http: 1, socks4: 2, socks5: 4 });
/** The order records list protocols in (src/probe/codec/auto-verdict.ts). */
const PROTOCOL_ORDER: readonly ProxyType[] = Object.freeze(['socks5', 'socks4', 'http']);

export function protocolBit(type: ProxyType): number {
  return PROTOCOL_BITS[type];
}

export function protocolsMask(protocols: readonly ProxyType[]): number {
  let mask = 0;
  for (const p of protocols) mask |= PROTOCOL_BITS[p] ?? 0;
  return mask;
}

export function protocolsOfMask(mask: number): ProxyType[] {
  return PROTOCOL_ORDER.filter((p) => (mask & PROTOCOL_BITS[p]) !== 0);
}

// ---- rows ---------------------------------------------------------------------------------

/** One whole pooled proxy: a `pool_proxy_rows` row (pool_proxies + pool_proxy_state; rowFromSql makes it from either driver's raw row). */
export interface PoolProxyRow {
  id: number;
  host: string;
  port: number;
  /** '' when the proxy has no credentials (a username is never empty). */
  username: string;
  password: string;
  format: AddressFormat;
  status: ProxyStatus;
  failures: number;
  checks: number;
  type: ProxyType | null;
  protocols: number;
  anonymity: Anonymity | null;
  https: boolean | null;
  origin: string | null;
  country: string | null;
  countryName: string | null;
  location: string | null;
  isp: string | null;
  asn: number | null;
  statusCode: number | null;
  responseTimeMs: number | null;
  errorCode: string | null;
  errorMessage: string | null;
  latencyP50Ms: number | null;
  /** The 24-hour uptime at the last check in parts per million (exact integers for the keyset). */
  uptimeH24Ppm: number | null;
  history: Uint8Array | null;
  firstSeenAt: Date;
  lastCheckedAt: Date | null;
  lastChangeAt: Date | null;
  nextCheckAt: Date;
  /** Its own protocol from its line's scheme (DECISIONS "Mixed lists": checked as that); null/absent: the pool's type. */
  protocol?: ProxyType | null;
  /** Per target of the pool (by name; null: not checked yet); absent when the pool has none. */
  targets?: Record<string, TargetState | null>;
}

/** One `pools` row: its settings and its state. */
export interface PoolRow extends PoolSettings {
  id: string;
  accountId: string;
  state: PoolState;
  pausedReason: PausedReason | null;
  createdAt: Date;
  lastRoundAt: Date | null;
  /** The state of each of `sources` (same index; sources-sql.ts). */
  sourceStates: SourceState[];
}

/**
 * The last fetch of a pool's list URL (the pool object's `sources[].last_fetch`,
 * stored as it is shown): when it ended, its error code (null: the list was
 * read; error-codes.ts SOURCE_*), the unique valid addresses found, the
 * invalid lines skipped, the new addresses added, and those left out because
 * the pool or the account was full (`limit` names which; null when none was).
 */
export interface SourceFetchOutcome {
  at: string;
  error: string | null;
  found: number;
  invalid: number;
  added: number;
  not_added: number;
  limit: 'proxies_per_pool' | 'proxies_per_account' | null;
}

export interface SourceState {
  /** ISO time the source is next fetched; null: at once (never fetched). */
  nextFetchAt: string | null;
  lastFetch: SourceFetchOutcome | null;
}

/** What the pool object adds from its proxies and rounds (proxies-sql.ts poolStatsStatement). */
export interface PoolStats {
  counts: PoolCounts;
  nextDueAt: Date | null;
  checksLast24h: number;
  checksPerDay: number;
  /** Working proxies passing each target (by name); absent: none known (the durable copy's count is not kept). */
  targetCounts?: Record<string, number>;
}

// ---- from a driver's raw row ---------------------------------------------------------------

const toDate = (v: unknown): Date | null => (v === null || v === undefined ? null : v instanceof Date ? v : new Date(String(v)));
const toNum = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const toStr = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

function toBytes(v: unknown): Uint8Array | null {
  if (v === null || v === undefined) return null;
  if (v instanceof Uint8Array) return v;
  // a driver that hands bytea over as its text form: \x followed by hex
  if (typeof v === 'string' && v.startsWith('\\x')) return Uint8Array.from(Buffer.from(v.slice(2), 'hex'));
  return null;
}

/** A raw `pool_proxies` row (snake_case, as db.execute gives it on PGlite or postgres.js) -> PoolProxyRow. */
export function rowFromSql(r: Record<string, unknown>): PoolProxyRow {
  return {
    id: Number(r.id),
    host: String(r.host),
    port: Number(r.port),
    username: String(r.username ?? ''),
    password: String(r.password ?? ''),
    format: (toStr(r.format) ?? 'standard') as AddressFormat,
    status: (toStr(r.status) ?? 'unchecked') as ProxyStatus,
    failures: Number(r.failures ?? 0),
    checks: Number(r.checks ?? 0),
    type: toStr(r.type) as ProxyType | null,
    protocols: Number(r.protocols ?? 0),
    anonymity: toStr(r.anonymity) as Anonymity | null,
    https: r.https === null || r.https === undefined ? null : r.https === true || r.https === 't',
    origin: toStr(r.origin),
    country: toStr(r.country),
    countryName: toStr(r.country_name),
    location: toStr(r.location),
    isp: toStr(r.isp),
    asn: toNum(r.asn),
    statusCode: toNum(r.status_code),
    // a `real` column: as a float4 (the owner's memory holds the same float32)
    responseTimeMs: r.response_time_ms === null || r.response_time_ms === undefined ? null : Math.fround(Number(r.response_time_ms)),
    errorCode: toStr(r.error_code),
    errorMessage: toStr(r.error_message),
    latencyP50Ms: toNum(r.latency_p50_ms),
    uptimeH24Ppm: toNum(r.uptime_h24_ppm),
    history: toBytes(r.history),
    firstSeenAt: toDate(r.first_seen_at) ?? new Date(0),
    lastCheckedAt: toDate(r.last_checked_at),
    lastChangeAt: toDate(r.last_change_at),
    nextCheckAt: toDate(r.next_check_at) ?? new Date(0),
    ...(r.protocol === null || r.protocol === undefined || r.protocol === '' ? {} : { protocol: String(r.protocol) as ProxyType }),
  };
}

const json = (v: unknown): unknown => (typeof v === 'string' ? JSON.parse(v) : v);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A raw `pools` row (snake_case, either driver; jsonb parsed or as text) -> PoolRow. */
export function poolRowFromSql(r: Record<string, unknown>): PoolRow {
  const rules = json(r.custom_urls);
  const sources = json(r.sources);
  const sourceList = Array.isArray(sources) ? (sources as Record<string, unknown>[]) : [];
  return {
    id: String(r.id),
    accountId: String(r.account_id),
    name: String(r.name),
    type: String(r.type) as CheckType,
    region: String(r.region),
    intervalS: Number(r.interval_s),
    timeoutMs: Number(r.timeout_ms),
    https: r.https === true || r.https === 't',
    customUrls: Array.isArray(rules) ? nameTargets(rules as (CustomUrlRule & { name?: string })[]) : [],
    sources: sourceList.map((x) => ({ url: String(x.url), everyS: Number(x.every_s) })),
    sourceStates: sourceList.map((x) => ({ nextFetchAt: toStr(x.next_fetch_at), lastFetch: isObject(x.last_fetch) ? (x.last_fetch as unknown as SourceFetchOutcome) : null })),
    state: (toStr(r.state) ?? 'active') as PoolState,
    pausedReason: toStr(r.paused_reason) as PausedReason | null,
    createdAt: toDate(r.created_at) ?? new Date(0),
    lastRoundAt: toDate(r.last_round_at),
  };
}

// ---- API objects ---------------------------------------------------------------------------

/** The API objects are the contract's (src/contract/pools.ts): these build them. */
export type ProxyAddressObject = PoolProxyBody['proxy'];
export type PoolProxyObject = PoolProxyBody;
export type PoolObject = PoolBody;
/** A pool proxy's state of one target (the contract's PoolProxyTarget). */
export type PoolProxyTargetObject = NonNullable<PoolProxyBody['targets']>[string];
/** A followed list URL as the pool object shows it: as given, when it is next fetched, and how its last fetch went. */
export type PoolSourceObject = PoolSourceBody;

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());

/** A row's address as the parser gives it (no credentials: no username/password keys). */
export function addressOf(row: Pick<PoolProxyRow, 'host' | 'port' | 'username' | 'password'>): ProxyAddress {
  return row.username === '' ? { host: row.host, port: row.port } : { host: row.host, port: row.port, username: row.username, password: row.password };
}

/** `proxy` of a pool proxy object and of an event: credentials only for a proxy that has them. */
export function addressObject(a: ProxyAddress): ProxyAddressObject {
  if (a.username === undefined) return { host: a.host, port: a.port, hasAuth: false };
  return { host: a.host, port: a.port, hasAuth: true, username: a.username, password: a.password ?? '' };
}

/** The pool proxy object of a row at `nowMs`; `poolType` decides whether `protocols` is there. */
export function poolProxyObject(row: PoolProxyRow, pool: CheckType, nowMs: number): PoolProxyObject {
  // a proxy with its own protocol is checked as that, whatever the pool's type
  const poolType: CheckType = row.protocol ?? pool;
  const auto = poolType === 'auto';
  const o: PoolProxyObject = {
    proxy: addressObject(addressOf(row)),
    status: row.status,
    type: auto ? row.type : poolType,
    anonymity: row.anonymity,
    https: row.https,
    origin: row.origin,
    country: row.country,
    country_name: row.countryName,
    location: row.location,
    isp: row.isp,
    asn: row.asn,
    responseTime: row.responseTimeMs === null ? null : formatResponseTime(row.responseTimeMs),
    latency_p50_ms: latencyP50(row.history, nowMs),
    uptime: uptime(row.history, nowMs),
    checks: row.checks,
    first_seen_at: row.firstSeenAt.toISOString(),
    last_checked_at: iso(row.lastCheckedAt),
    last_change_at: iso(row.lastChangeAt),
    next_check_at: row.nextCheckAt.toISOString(),
  };
  if (row.status === 'failed') o.error = { code: row.errorCode ?? 'bad_response', message: row.errorMessage ?? '' };
  if (auto) o.protocols = protocolsOfMask(row.protocols);
  if (row.targets !== undefined) {
    o.targets = {};
    for (const [name, t] of Object.entries(row.targets)) o.targets[name] = targetObject(t, nowMs);
  }
  return o;
}

/** One target's state as the pool proxy object shows it at `nowMs`. */
export function targetObject(t: TargetState | null, nowMs: number): PoolProxyTargetObject {
  if (t === null) return { ok: false, status: null, responseTime: null, last_checked_at: null, uptime_h24: null };
  return {
    ok: t.ok,
    status: t.status,
    responseTime: t.responseTimeMs === null ? null : formatResponseTime(t.responseTimeMs),
    last_checked_at: iso(t.lastCheckedAt),
    uptime_h24: hourlyUptime(t.hours, t.hourAt, nowMs),
  };
}

/** The pool object of a row and its stats. */
export function poolObject(row: PoolRow, stats: PoolStats): PoolObject {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    region: row.region,
    interval_s: row.intervalS,
    timeout: row.timeoutMs,
    https: row.https,
    state: row.state,
    paused_reason: row.state === 'paused' ? row.pausedReason : null,
    created_at: row.createdAt.toISOString(),
    counts: row.customUrls.length === 0 ? { ...stats.counts } : { ...stats.counts, targets: Object.fromEntries(row.customUrls.map((t) => [t.name, stats.targetCounts?.[t.name] ?? 0])) },
    last_round_at: iso(row.lastRoundAt),
    next_due_at: row.state === 'active' ? iso(stats.nextDueAt) : null,
    checks_last_24h: stats.checksLast24h,
    checks_per_day: Math.round(stats.checksPerDay),
    customUrls: row.customUrls.map((r) => ({ ...r, requiredStatusCodes: [...r.requiredStatusCodes] })),
    sources: row.sources.map((s, i) => ({
      url: s.url,
      every_s: s.everyS,
      next_fetch_at: row.sourceStates[i]?.nextFetchAt ?? null,
      last_fetch: row.sourceStates[i]?.lastFetch ?? null,
    })),
  };
}
