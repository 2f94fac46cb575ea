/**
 * Pool reads between API nodes (pure: the subject, the messages and their
 * codec; no I/O). A pool is owned by one node (its lease, src/jobs/pool-owner.ts);
 * another node that is asked about it asks the owner, which answers from
 * its memory (DECISIONS "Pools are actors": reads come from the owner):
 *
 *   API node -> pc.pools.<owner node>   PoolReadRequest  (core NATS request/reply)
 *            <- reply                   PoolReadReply
 *
 *   PoolReadRequest {v, op: "stats", pool}
 *                   {v, op: "page", pool, query}           (the validated proxies query)
 *                   {v, op: "recheck", pool, proxies}      (the gateway's failed upstreams)
 *                   {v, op: "upstreams", pool, account}    (the gateway's working set)
 *                   {v, op: "changed", pool, note}         (a change made on the asker: applied
 *                                                          by the owner before it answers)
 *                   {v, op: "listing", pool, query, pool_type, now_ms}   (an unlimited txt / csv
 *                                                          listing: its replies are the frames of
 *                                                          ./pool-listing-wire.ts, not JSON)
 *                   {v, op: "more", pool, listing, seq}    (its next chunk, number seq)
 *                   {v, op: "close", pool, listing}        (the reader went away: no reply)
 *   PoolReadReply   {v, found: false}                      (the node does not own the pool now)
 *                   {v, found: true, stats: {counts, next_due_ms, checks_per_day}}
 *                   {v, found: true, page: {rows, next_cursor}}   (rows: pool proxy rows, times
 *                                                          in epoch ms, history in base64,
 *                                                          a proxy's own `protocol` and its
 *                                                          `targets` with their hours in base64)
 *                   {v, found: true, upstreams}            (the working proxies, in id order,
 *                                                          each with the targets it passed)
 *                   {v, found: true}                       (recheck, changed)
 *
 * No responder and no reply in time are the asker's "no owner": it answers
 * from the durable copy. Decoders return null for anything the encoders do
 * not produce.
 */
import type { Anonymity } from '../probe/types';
import { CHECK_TYPES, type AddressFormat, type ProxyAddress, type ProxyType } from '../proxy/types';
import { validSortKey } from '../pools/cursor';
import { PROXY_FORMATS, PROXY_SORTS, QUERY_STATUSES, type PoolProxiesQuery } from '../pools/query';
import type { PoolProxyRow, PoolStats } from '../pools/shape';
import type { PoolUpstream } from '../pools/working-set';
import type { PoolCounts, ProxyStatus } from '../pools/types';
import { POOL_CHANGE_NOTES, type ListingText, type PoolChangeNote } from '../pools/ports';
import { TARGET_HOUR_BYTES, type TargetState } from '../pools/target-columns';
import { isSubjectToken } from './protocol';
import { isListingId } from './pool-listing-wire';

export const POOL_READS_WIRE_VERSION = 1;
export const POOL_READS_SUBJECT_PREFIX = 'pc.pools.';
/** A page of 10 000 rows of ~600 bytes each, with room. */
export const MAX_POOL_READ_BYTES = 16 * 1024 * 1024;

export type PoolReadRequest =
  | { v: 1; op: 'stats'; pool: string }
  | { v: 1; op: 'page'; pool: string; query: PoolProxiesQuery }
  | { v: 1; op: 'recheck'; pool: string; proxies: ProxyAddress[] }
  | { v: 1; op: 'upstreams'; pool: string; account: string }
  | { v: 1; op: 'changed'; pool: string; note: PoolChangeNote }
  | { v: 1; op: 'listing'; pool: string; query: PoolProxiesQuery; text: ListingText }
  | { v: 1; op: 'more'; pool: string; listing: string; seq: number }
  | { v: 1; op: 'close'; pool: string; listing: string };

export type PoolReadStats = Omit<PoolStats, 'checksLast24h'>;

export type PoolReadReply =
  | { v: 1; found: false }
  | { v: 1; found: true; stats: PoolReadStats }
  | { v: 1; found: true; page: { rows: PoolProxyRow[]; nextCursor: string | null } }
  | { v: 1; found: true; upstreams: PoolUpstream[] }
  | { v: 1; found: true };

/** `pc.pools.<node>`; throws on a node id that is not one subject token. */
export function poolReadsSubject(node: string): string {
  if (!isSubjectToken(node)) throw new Error(`not a node id: ${JSON.stringify(node)}`);
  return `${POOL_READS_SUBJECT_PREFIX}${node}`;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

type Json = Record<string, unknown>;

const ms = (d: Date | null): number | null => (d === null ? null : d.getTime());

function targetToWire(t: TargetState | null): Json | null {
  if (t === null) return null;
  return { ...t, lastCheckedAt: ms(t.lastCheckedAt), hours: Buffer.from(t.hours.buffer, t.hours.byteOffset, t.hours.byteLength).toString('base64') };
}

function rowToWire(r: PoolProxyRow): Json {
  const { targets, ...rest } = r;
  return {
    ...rest,
    ...(targets === undefined ? {} : { targets: Object.fromEntries(Object.entries(targets).map(([name, t]) => [name, targetToWire(t)])) }),
    history: r.history === null ? null : Buffer.from(r.history.buffer, r.history.byteOffset, r.history.byteLength).toString('base64'),
    firstSeenAt: r.firstSeenAt.getTime(),
    lastCheckedAt: ms(r.lastCheckedAt),
    lastChangeAt: ms(r.lastChangeAt),
    nextCheckAt: r.nextCheckAt.getTime(),
  };
}

export function encodePoolRead(m: PoolReadRequest | PoolReadReply): Uint8Array {
  if ('op' in m && m.op === 'listing') return enc.encode(JSON.stringify({ v: m.v, op: m.op, pool: m.pool, query: m.query, pool_type: m.text.poolType, now_ms: m.text.nowMs }));
  if ('page' in m) return enc.encode(JSON.stringify({ v: m.v, found: true, page: { rows: m.page.rows.map(rowToWire), next_cursor: m.page.nextCursor } }));
  if ('stats' in m) {
    const s = m.stats;
    return enc.encode(JSON.stringify({ v: m.v, found: true, stats: { counts: s.counts, next_due_ms: ms(s.nextDueAt), checks_per_day: s.checksPerDay } }));
  }
  return enc.encode(JSON.stringify(m));
}

function parse(bytes: Uint8Array): Json | null {
  if (bytes.length > MAX_POOL_READ_BYTES) return null;
  try {
    const v: unknown = JSON.parse(dec.decode(bytes));
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : null;
  } catch {
    return null;
  }
}

const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStr = (v: unknown): v is string => typeof v === 'string';
const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isInt = (v: unknown): v is number => Number.isSafeInteger(v);
const strOrNull = (v: unknown): v is string | null => v === null || isStr(v);
const numOrNull = (v: unknown): v is number | null => v === null || isNum(v);
const oneOf = <T extends string>(list: readonly T[], v: unknown): v is T => isStr(v) && (list as readonly string[]).includes(v);
const isPool = (v: unknown): v is string => isStr(v) && v.length > 0 && v.length <= 64;
/** A pool target's name as src/pools/targets.ts makes them (1..32 of [a-z0-9-]). */
const isTargetName = (v: unknown): v is string => isStr(v) && /^[a-z0-9-]{1,32}$/.test(v);

function queryFromWire(q: unknown): PoolProxiesQuery | null {
  if (!isObj(q)) return null;
  if (!oneOf(QUERY_STATUSES, q.status) || !oneOf(PROXY_SORTS, q.sort) || !oneOf(PROXY_FORMATS, q.format)) return null;
  if (!isInt(q.limit) || q.limit < 1 || q.limit > 10_000) return null;
  if (!strOrNull(q.country) || !strOrNull(q.anonymity) || !strOrNull(q.type)) return null;
  if (!(q.https === null || typeof q.https === 'boolean') || !numOrNull(q.maxLatencyMs) || !numOrNull(q.minUptime)) return null;
  if (!(q.target === undefined || q.target === null || isTargetName(q.target))) return null;
  if (!(q.all === undefined || typeof q.all === 'boolean') || !(q.scheme === undefined || typeof q.scheme === 'boolean')) return null;
  let cursor: PoolProxiesQuery['cursor'] = null;
  if (q.cursor !== null) {
    const c = q.cursor;
    if (!isObj(c) || !oneOf(PROXY_SORTS, c.sort) || !isStr(c.key) || !isInt(c.id) || !validSortKey(c.sort, c.key)) return null;
    cursor = { sort: c.sort, key: c.key, id: c.id };
  }
  return {
    status: q.status,
    country: q.country,
    anonymity: q.anonymity as Anonymity | null,
    type: q.type as ProxyType | null,
    https: q.https,
    maxLatencyMs: q.maxLatencyMs,
    minUptime: q.minUptime,
    sort: q.sort,
    limit: q.limit,
    cursor,
    format: q.format,
    ...(q.all === undefined ? {} : { all: q.all }),
    ...(q.scheme === undefined ? {} : { scheme: q.scheme }),
    ...(q.target === undefined ? {} : { target: q.target }),
  };
}

function addressFromWire(a: unknown): ProxyAddress | null {
  if (!isObj(a) || !isStr(a.host) || !isInt(a.port)) return null;
  if (a.username === undefined) return { host: a.host, port: a.port };
  if (!isStr(a.username) || !isStr(a.password)) return null;
  return { host: a.host, port: a.port, username: a.username, password: a.password };
}

export function decodePoolReadRequest(bytes: Uint8Array): PoolReadRequest | null {
  const m = parse(bytes);
  if (m === null || m.v !== POOL_READS_WIRE_VERSION || !isPool(m.pool)) return null;
  if (m.op === 'stats') return { v: 1, op: 'stats', pool: m.pool };
  if (m.op === 'page') {
    const query = queryFromWire(m.query);
    return query === null ? null : { v: 1, op: 'page', pool: m.pool, query };
  }
  if (m.op === 'upstreams') return isPool(m.account) ? { v: 1, op: 'upstreams', pool: m.pool, account: m.account } : null;
  if (m.op === 'changed') return oneOf(POOL_CHANGE_NOTES, m.note) ? { v: 1, op: 'changed', pool: m.pool, note: m.note } : null;
  if (m.op === 'listing') {
    const query = queryFromWire(m.query);
    if (query === null || query.format === 'json' || !oneOf(CHECK_TYPES, m.pool_type) || !isNum(m.now_ms)) return null;
    return { v: 1, op: 'listing', pool: m.pool, query, text: { poolType: m.pool_type, nowMs: m.now_ms } };
  }
  if (m.op === 'more') return isListingId(m.listing) && isInt(m.seq) && m.seq >= 1 ? { v: 1, op: 'more', pool: m.pool, listing: m.listing, seq: m.seq } : null;
  if (m.op === 'close') return isListingId(m.listing) ? { v: 1, op: 'close', pool: m.pool, listing: m.listing } : null;
  if (m.op === 'recheck' && Array.isArray(m.proxies) && m.proxies.length <= 10_000) {
    const proxies = m.proxies.map(addressFromWire);
    return proxies.every((p) => p !== null) ? { v: 1, op: 'recheck', pool: m.pool, proxies: proxies as ProxyAddress[] } : null;
  }
  return null;
}

const date = (v: unknown): Date | null => (isNum(v) ? new Date(v) : null);
const PROXY_TYPES: readonly ProxyType[] = ['http', 'socks4', 'socks5'];

function targetFromWire(t: unknown): TargetState | null | undefined {
  if (t === null) return null;
  if (!isObj(t) || typeof t.ok !== 'boolean' || !numOrNull(t.status) || !numOrNull(t.responseTimeMs) || !numOrNull(t.lastCheckedAt) || !isInt(t.hourAt) || !isStr(t.hours)) return undefined;
  const hours = Uint8Array.from(Buffer.from(t.hours, 'base64'));
  if (hours.length !== TARGET_HOUR_BYTES) return undefined;
  return { ok: t.ok, status: t.status, responseTimeMs: t.responseTimeMs, lastCheckedAt: date(t.lastCheckedAt), hourAt: t.hourAt, hours };
}

/** A row's `targets` (absent stays absent); undefined when it is malformed. */
function targetsFromWire(v: unknown): Record<string, TargetState | null> | null | undefined {
  if (v === undefined) return null;
  if (!isObj(v)) return undefined;
  const out: Record<string, TargetState | null> = {};
  for (const [name, t] of Object.entries(v)) {
    const s = targetFromWire(t);
    if (s === undefined || !isTargetName(name)) return undefined;
    out[name] = s;
  }
  return out;
}

function rowFromWire(r: unknown): PoolProxyRow | null {
  if (!isObj(r) || !isInt(r.id) || !isStr(r.host) || !isInt(r.port) || !isStr(r.username) || !isStr(r.password) || !isStr(r.format) || !isStr(r.status)) return null;
  if (!isInt(r.failures) || !isInt(r.checks) || !isInt(r.protocols) || !strOrNull(r.type) || !strOrNull(r.anonymity) || !(r.https === null || typeof r.https === 'boolean')) return null;
  if (![r.origin, r.country, r.countryName, r.location, r.isp, r.errorCode, r.errorMessage].every(strOrNull)) return null;
  if (![r.asn, r.statusCode, r.responseTimeMs, r.latencyP50Ms, r.uptimeH24Ppm, r.lastCheckedAt, r.lastChangeAt].every(numOrNull)) return null;
  if (!isNum(r.firstSeenAt) || !isNum(r.nextCheckAt) || !strOrNull(r.history)) return null;
  if (!(r.protocol === undefined || r.protocol === null || oneOf(PROXY_TYPES, r.protocol))) return null;
  const targets = targetsFromWire(r.targets);
  if (targets === undefined) return null;
  return {
    id: r.id,
    host: r.host,
    port: r.port,
    username: r.username,
    password: r.password,
    format: r.format as AddressFormat,
    status: r.status as ProxyStatus,
    failures: r.failures,
    checks: r.checks,
    type: r.type as ProxyType | null,
    protocols: r.protocols,
    anonymity: r.anonymity as Anonymity | null,
    https: r.https,
    origin: r.origin as string | null,
    country: r.country as string | null,
    countryName: r.countryName as string | null,
    location: r.location as string | null,
    isp: r.isp as string | null,
    asn: r.asn as number | null,
    statusCode: r.statusCode as number | null,
    responseTimeMs: r.responseTimeMs as number | null,
    errorCode: r.errorCode as string | null,
    errorMessage: r.errorMessage as string | null,
    latencyP50Ms: r.latencyP50Ms as number | null,
    uptimeH24Ppm: r.uptimeH24Ppm as number | null,
    history: r.history === null ? null : Uint8Array.from(Buffer.from(r.history, 'base64')),
    firstSeenAt: new Date(r.firstSeenAt),
    lastCheckedAt: date(r.lastCheckedAt),
    lastChangeAt: date(r.lastChangeAt),
    nextCheckAt: new Date(r.nextCheckAt),
    ...(r.protocol === undefined ? {} : { protocol: r.protocol }),
    ...(targets === null ? {} : { targets }),
  };
}

function upstreamFromWire(u: unknown): PoolUpstream | null {
  if (!isObj(u) || !isStr(u.key) || !isStr(u.host) || !isInt(u.port) || !oneOf(PROXY_TYPES, u.type) || !strOrNull(u.country)) return null;
  if (!Array.isArray(u.protocols) || !u.protocols.every((p) => oneOf(PROXY_TYPES, p))) return null;
  if (!(u.targets === undefined || (Array.isArray(u.targets) && u.targets.every(isTargetName)))) return null;
  const base = {
    key: u.key, host: u.host, port: u.port, type: u.type, protocols: u.protocols as ProxyType[], country: u.country,
    ...(u.targets === undefined ? {} : { targets: u.targets as string[] }),
  };
  if (u.username === undefined) return base;
  return isStr(u.username) && isStr(u.password) ? { ...base, username: u.username, password: u.password } : null;
}

function countsFromWire(c: unknown): PoolCounts | null {
  if (!isObj(c) || !isInt(c.total) || !isInt(c.working) || !isInt(c.failed) || !isInt(c.unchecked)) return null;
  return { total: c.total, working: c.working, failed: c.failed, unchecked: c.unchecked };
}

export function decodePoolReadReply(bytes: Uint8Array): PoolReadReply | null {
  const m = parse(bytes);
  if (m === null || m.v !== POOL_READS_WIRE_VERSION) return null;
  if (m.found === false) return { v: 1, found: false };
  if (m.found !== true) return null;
  if (isObj(m.stats)) {
    const counts = countsFromWire(m.stats.counts);
    if (counts === null || !numOrNull(m.stats.next_due_ms) || !isNum(m.stats.checks_per_day)) return null;
    return { v: 1, found: true, stats: { counts, nextDueAt: date(m.stats.next_due_ms), checksPerDay: m.stats.checks_per_day } };
  }
  if (Array.isArray(m.upstreams)) {
    const ups = m.upstreams.map(upstreamFromWire);
    return ups.every((u) => u !== null) ? { v: 1, found: true, upstreams: ups as PoolUpstream[] } : null;
  }
  if (isObj(m.page)) {
    if (!Array.isArray(m.page.rows) || !strOrNull(m.page.next_cursor)) return null;
    const rows = m.page.rows.map(rowFromWire);
    if (!rows.every((r) => r !== null)) return null;
    return { v: 1, found: true, page: { rows: rows as PoolProxyRow[], nextCursor: m.page.next_cursor } };
  }
  return { v: 1, found: true };
}
