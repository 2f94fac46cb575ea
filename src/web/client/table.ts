/**
 * The results table's model, pure: result-file records -> flat rows, filter
 * (free text, status, anonymity, country), stable sort by any column (empty
 * values last whatever the direction) and pagination. The view
 * (src/web/client/results-view.ts) only renders what these return.
 */

/** A proxy result record as the result file holds it (only what the table reads). */
export interface ResultRecord {
  proxy: { host: string; port: number; hasAuth?: boolean; username?: string };
  status: string;
  statusCode?: number | null;
  responseTime?: string | null;
  anonymity?: string | null;
  origin?: string | null;
  country?: string | null;
  country_name?: string | null;
  location?: string | null;
  isp?: string | null;
  asn?: number | null;
  coordinates?: { lat: number; lon: number } | null;
  error?: { code: string; message: string } | null;
}

export interface Row {
  /** host:port, with `user@` in front for authenticated proxies (never the password). */
  address: string;
  status: string;
  statusCode: number | null;
  /** milliseconds, null when unknown */
  ms: number | null;
  anonymity: string;
  country: string;
  countryName: string;
  city: string;
  isp: string;
  asn: number | null;
  origin: string;
  error: string;
  /** lower-case text of every column, for the free-text filter */
  haystack: string;
}

/** "123.45 ms" -> 123.45; anything else -> null. */
export function parseResponseTime(s: unknown): number | null {
  if (typeof s !== 'string') return null;
  const m = /^\s*(\d+(?:\.\d+)?)\s*ms\s*$/.exec(s);
  return m ? Number(m[1]) : null;
}

function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

export function toRow(r: ResultRecord): Row {
  const user = r.proxy.hasAuth && r.proxy.username ? `${r.proxy.username}@` : '';
  const row: Omit<Row, 'haystack'> = {
    address: user + hostPort(r.proxy.host, r.proxy.port),
    status: r.status,
    statusCode: r.statusCode ?? null,
    ms: parseResponseTime(r.responseTime),
    anonymity: r.anonymity ?? '',
    country: r.country ?? '',
    countryName: r.country_name ?? '',
    city: r.location ?? '',
    isp: r.isp ?? '',
    asn: r.asn ?? null,
    origin: r.origin ?? '',
    error: r.error ? r.error.code : '',
  };
  const haystack = [row.address, row.status, row.anonymity, row.country, row.countryName, row.city, row.isp, row.asn ?? '', row.origin, row.error, r.error?.message ?? '']
    .join('\u0000')
    .toLowerCase();
  return { ...row, haystack };
}

export const SORT_KEYS = Object.freeze(['address', 'status', 'ms', 'anonymity', 'countryName', 'city', 'isp', 'asn', 'origin', 'error'] as const);
export type SortKey = (typeof SORT_KEYS)[number];
export type SortDir = 'ascending' | 'descending';

function isEmpty(v: unknown): boolean {
  return v === null || v === undefined || v === '';
}

/**
 * A sort key for an address: IPv4 addresses first, numerically by octets then
 * port (zero-padded so keys compare as text); everything else after, as text.
 */
export function addressKey(address: string): string {
  const m = /^(?:[^@]*@)?(\d+)\.(\d+)\.(\d+)\.(\d+):(\d+)$/.exec(address);
  if (m) return `0 ${m.slice(1, 5).map((o) => o.padStart(3, '0')).join('.')}:${m[5]!.padStart(5, '0')}`;
  return `1 ${address.replace(/^[^@]*@/, '').toLowerCase()}`;
}

/** A new array sorted by `key` (stable; empty values last in both directions). */
export function sortRows(rows: readonly Row[], key: SortKey, dir: SortDir): Row[] {
  const sign = dir === 'descending' ? -1 : 1;
  return rows
    .map((row, i) => ({ row, i }))
    .sort((x, y) => {
      const a = x.row[key];
      const b = y.row[key];
      const ea = isEmpty(a);
      const eb = isEmpty(b);
      if (ea || eb) return ea === eb ? x.i - y.i : ea ? 1 : -1;
      let c: number;
      if (key === 'address') {
        const ka = addressKey(a as string);
        const kb = addressKey(b as string);
        c = ka < kb ? -1 : ka > kb ? 1 : 0;
      } else if (typeof a === 'number' && typeof b === 'number') c = a - b;
      else c = String(a).localeCompare(String(b));
      return c !== 0 ? c * sign : x.i - y.i;
    })
    .map((x) => x.row);
}

export interface RowFilter {
  /** free text, matched case-insensitively against every column */
  text?: string;
  /** '' = any */
  status?: string;
  anonymity?: string;
  /** country code, '' = any, '-' = unknown */
  country?: string;
}

export function filterRows(rows: readonly Row[], f: RowFilter): Row[] {
  const words = (f.text ?? '').toLowerCase().split(/\s+/).filter((w) => w !== '');
  return rows.filter((r) => {
    if (f.status && r.status !== f.status) return false;
    if (f.anonymity && r.anonymity !== f.anonymity) return false;
    if (f.country) {
      if (f.country === '-' ? r.country !== '' : r.country !== f.country) return false;
    }
    return words.every((w) => r.haystack.includes(w));
  });
}

/** Distinct countries of the rows, by name: [{code, name, count}], unknown excluded. */
export function countryOptions(rows: readonly Row[]): { code: string; name: string; count: number }[] {
  const m = new Map<string, { code: string; name: string; count: number }>();
  for (const r of rows) {
    if (r.country === '') continue;
    const e = m.get(r.country);
    if (e) e.count++;
    else m.set(r.country, { code: r.country, name: r.countryName || r.country, count: 1 });
  }
  return [...m.values()].sort((a, b) => a.name.localeCompare(b.name));
}

export interface Page<T> {
  items: T[];
  /** 0-based, clamped to the pages that exist */
  index: number;
  pages: number;
  /** 1-based positions of the first and last item shown (0, 0 when empty) */
  first: number;
  last: number;
  total: number;
}

export function paginate<T>(rows: readonly T[], index: number, size: number): Page<T> {
  const per = Math.max(1, Math.floor(size));
  const pages = Math.max(1, Math.ceil(rows.length / per));
  const i = Math.min(Math.max(0, Math.floor(index)), pages - 1);
  const items = rows.slice(i * per, i * per + per);
  return {
    items,
    index: i,
    pages,
    first: items.length === 0 ? 0 : i * per + 1,
    last: i * per + items.length,
    total: rows.length,
  };
}
