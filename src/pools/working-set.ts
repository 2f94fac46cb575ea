/**
 * A pool's working proxies as the gateway chains through them (pure: the
 * statement and the mapping; src/gateway/working-sets.ts runs and caches it).
 *
 *   workingUpstreamsStatement  the owned pool and its working proxies in ONE
 *                              statement: no row at all when the pool is not
 *                              the account's; one row with null proxy columns
 *                              when it has no working proxy
 *   upstreamsOf                those rows -> the gateway's Upstreams (null: no
 *                              such pool of the account), in the pool's order
 *   sameUpstreams              whether two lists are the same (a refresh that
 *                              changed nothing keeps the cached WorkingSet
 *                              object: the gateway caches matches per object)
 *
 * An upstream's `key` is the pool's identity of the address (host, port and
 * credentials: src/proxy/dedupe.ts proxyKey); `type` the protocol it passed
 * with (an auto pool's: the first of socks5, socks4, http), `protocols` every
 * protocol it passed with (an auto pool's mask; [type] otherwise).
 */
import { sql, type SQL } from 'drizzle-orm';
import { proxyKey } from '../proxy/dedupe';
import type { ProxyType } from '../proxy/types';
import { addressOf, protocolsOfMask } from './shape';

/** One working proxy as the gateway chains through it (src/gateway/upstream-choice.ts calls it Upstream). */
export interface PoolUpstream {
  /** Unique in its pool: host, port and credentials (proxyKey of src/proxy/dedupe.ts). */
  key: string;
  host: string;
  port: number;
  username?: string;
  password?: string;
  /** The protocol the gateway speaks to it. */
  type: ProxyType;
  /** Every protocol it passed with (auto pools); [type] otherwise. */
  protocols: readonly ProxyType[];
  country: string | null;
  /** The pool's targets its last fetch of passed (DECISIONS "Targets in pools": `-target-<name>`); absent: none. */
  targets?: readonly string[];
}

export function workingUpstreamsStatement(accountId: string, poolId: string): SQL {
  return sql`SELECT p.id AS pool_id, pp.id, pp.host, pp.port, pp.username, pp.password, pp.type, pp.protocols, pp.country,
      (SELECT array_agg(t.name ORDER BY t.name) FROM pool_proxy_targets t WHERE t.proxy_id = pp.id AND t.ok) AS targets
    FROM pools p LEFT JOIN pool_proxy_rows pp ON pp.pool_id = p.id AND pp.status = 'working'
    WHERE p.id = ${poolId} AND p.account_id = ${accountId}::uuid
    ORDER BY pp.id`;
}

const PROXY_TYPE_SET = new Set<string>(['http', 'socks4', 'socks5']);

/** One working proxy's fields -> its upstream; null without a protocol (never passed). */
export function upstreamOfRow(r: { host: string; port: number; username: string; password: string; type: string | null; protocols: number; country: string | null; targets?: readonly string[] | null }): PoolUpstream | null {
  const type = r.type ?? '';
  if (!PROXY_TYPE_SET.has(type)) return null;
  const address = addressOf(r);
  const mask = protocolsOfMask(r.protocols);
  return {
    key: proxyKey(address),
    host: address.host,
    port: address.port,
    ...(address.username === undefined ? {} : { username: address.username, password: address.password ?? '' }),
    type: type as ProxyType,
    protocols: mask.length > 0 ? mask : [type as ProxyType],
    country: r.country,
    ...(r.targets !== undefined && r.targets !== null && r.targets.length > 0 ? { targets: r.targets } : {}),
  };
}

/** A text[] as either driver gives it (an array, or PostgreSQL's text form {a,b}). */
function targetNames(v: unknown): string[] | null {
  if (Array.isArray(v)) return v.map(String);
  if (typeof v === 'string' && v.startsWith('{') && v.endsWith('}')) return v.length === 2 ? [] : v.slice(1, -1).split(',');
  return null;
}

/** The statement's raw rows -> upstreams; null when the pool is not the account's. A row without a type is skipped. */
export function upstreamsOf(raw: readonly Record<string, unknown>[]): PoolUpstream[] | null {
  if (raw.length === 0) return null;
  const out: PoolUpstream[] = [];
  for (const r of raw) {
    if (r.id === null || r.id === undefined || r.host === null || r.host === undefined) continue;
    const u = upstreamOfRow({
      host: String(r.host),
      port: Number(r.port),
      username: String(r.username ?? ''),
      password: String(r.password ?? ''),
      type: r.type === null || r.type === undefined ? null : String(r.type),
      protocols: Number(r.protocols ?? 0),
      country: r.country === null || r.country === undefined ? null : String(r.country),
      targets: targetNames(r.targets),
    });
    if (u !== null) out.push(u);
  }
  return out;
}

/** Same upstreams, same order, same fields. */
export function sameUpstreams(a: readonly PoolUpstream[], b: readonly PoolUpstream[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as PoolUpstream;
    const y = b[i] as PoolUpstream;
    if (x.key !== y.key || x.type !== y.type || x.country !== y.country || x.protocols.join() !== y.protocols.join() || (x.targets ?? []).join() !== (y.targets ?? []).join()) return false;
  }
  return true;
}
