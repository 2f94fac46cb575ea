/**
 * The typed query of `GET /pools/{id}/proxies` (DECISIONS "Pools"): what the
 * HTTP validator (src/http/pool-proxies-query.ts) makes of the query string
 * and what the SQL builder (proxies-sql.ts proxiesPageStatement) reads. Data
 * and defaults only.
 *
 * - status: `working` (default), `failed`, `unchecked` or `all`.
 * - country (ISO alpha-2, upper-cased), anonymity, type, https: equality
 *   filters on the proxy's last passing check (shape.ts); `type` matches a
 *   proxy whose type, or one of whose passing protocols, is that type.
 * - max_latency_ms, min_uptime (0..1): on `latency_p50_ms` and the 24-hour
 *   uptime as stored at the proxy's last check.
 * - sort: `latency` (fastest first, default), `uptime` (highest first),
 *   `checked` (most recently checked first); ties by the row's id, so the
 *   order is total and a page ends at a definite row.
 * - limit: 1..10 000, default 100; cursor: where the previous page ended
 *   (cursor.ts); format: `json` (default), `txt`, `csv` (render.ts).
 * - all (DECISIONS "Mixed lists"): `txt` or `csv` without `limit` lists
 *   every match from `cursor` on: a pool this process's owner holds in one
 *   pass of its memory (store.ts `all`, proxy-listing.ts); any other, the
 *   HTTP route fetches pages of `limit` (then 10 000) one after the other
 *   and streams them (a store reads one page as ever).
 * - scheme: `txt` lines as `<protocol>://[user:pass@]host:port` (render.ts).
 */
import type { Anonymity } from '../probe/types';
import type { ProxyType } from '../proxy/types';
import { DEFAULT_PAGE_LIMIT } from './limits';

export const QUERY_STATUSES = Object.freeze(['working', 'failed', 'unchecked', 'all'] as const);
export type QueryStatus = (typeof QUERY_STATUSES)[number];

export const PROXY_SORTS = Object.freeze(['latency', 'uptime', 'checked'] as const);
export type ProxySort = (typeof PROXY_SORTS)[number];

export const PROXY_FORMATS = Object.freeze(['json', 'txt', 'csv'] as const);
export type ProxyFormat = (typeof PROXY_FORMATS)[number];

export const ANONYMITIES = Object.freeze(['elite', 'anonymous', 'transparent'] as const satisfies readonly Anonymity[]);

/** Where a page ended (cursor.ts gives it its opaque wire form). */
export interface PageCursor {
  sort: ProxySort;
  /** The last row's sort key: an integer (latency), a float (uptime) or a UTC timestamp YYYY-MM-DDTHH:MM:SS.ffffff (checked). */
  key: string;
  id: number;
}

export interface PoolProxiesQuery {
  status: QueryStatus;
  country: string | null;
  anonymity: Anonymity | null;
  type: ProxyType | null;
  https: boolean | null;
  maxLatencyMs: number | null;
  minUptime: number | null;
  sort: ProxySort;
  limit: number;
  cursor: PageCursor | null;
  format: ProxyFormat;
  /** txt/csv without `limit`: every match (one pass of the owner's memory, or page after page); absent: false. */
  all?: boolean;
  /** txt lines carry `<protocol>://`; absent: false. */
  scheme?: boolean;
  /** Only working proxies whose last check of this target passed (a name of the pool's: the route checks). */
  target?: string | null;
}

export const DEFAULT_PROXIES_QUERY: Readonly<PoolProxiesQuery> = Object.freeze({
  status: 'working',
  country: null,
  anonymity: null,
  type: null,
  https: null,
  maxLatencyMs: null,
  minUptime: null,
  sort: 'latency',
  limit: DEFAULT_PAGE_LIMIT,
  cursor: null,
  format: 'json',
});
