/**
 * The results table's model, pure: result-file records -> flat rows, filter
 * (free text, status, anonymity, country; protocol, https, lying only,
 * rotating only), stable sort by any column (empty values last whatever the
 * direction) and pagination. The view (src/web/client/results-view.ts) only
 * renders what these return.
 *
 * The optional columns (extraColumns) exist only when the job's records have
 * them: protocols (type auto), https, integrity (a proxy that lied:
 * `tampered`, `tls_intercepted`) and rotation (samples > 1: distinct exits of
 * the samples), so a plain check's table is as before.
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
  /** type auto: the protocol named and every protocol that passed */
  type?: string | null;
  protocols?: string[];
  /** whether the proxy carried https (working records of a check that ran the https check; null: not known) */
  https?: boolean | null;
  /** samples > 1 */
  samples?: { count: number; succeeded: number; unique_exit_ips: number; exit_ips?: string[] } | null;
  error?: { code: string; message: string } | null;
}

/** Error codes that mean the proxy lied about what it relayed (docs/API.md "Integrity"). */
export const LYING_CODES: readonly string[] = Object.freeze(['tampered', 'tls_intercepted']);
export const isLying = (code: unknown): boolean => typeof code === 'string' && LYING_CODES.includes(code);

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
  /** the error's message ('' without one) */
  errorMessage: string;
  /** type auto: the protocols that passed, "socks5 socks4"; "none" when none did; '' for other checks */
  protocols: string;
  /** 'yes' | 'no', '' when the record does not say */
  https: string;
  /** the error code when the proxy lied (LYING_CODES), else '' */
  integrity: string;
  /** samples > 1: samples probed, passed, distinct exits; null otherwise */
  samples: number | null;
  succeeded: number | null;
  exits: number | null;
  /** more than one exit across the samples */
  rotating: boolean;
  /** lower-case text of every column, for the free-text filter */
  haystack: string;
}

/** "123.45 ms" -> 123.45; anything else -> null. */
export function parseResponseTime(s: unknown): number | null {
  if (typeof s !== 'string') return null;
  const m = /^\s*(\d+(?:\.\d+)?)\s*ms\s*$/.exec(s);
  return m ? Number(m[1]) : null;
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

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
    errorMessage: r.error?.message ?? '',
    protocols: Array.isArray(r.protocols) ? (r.protocols.length === 0 ? 'none' : r.protocols.join(' ')) : '',
    https: r.https === true ? 'yes' : r.https === false ? 'no' : r.https === null ? 'unknown' : '',
    integrity: isLying(r.error?.code) ? r.error!.code : '',
    samples: num(r.samples?.count),
    succeeded: num(r.samples?.succeeded),
    exits: num(r.samples?.unique_exit_ips),
    rotating: (num(r.samples?.unique_exit_ips) ?? 0) > 1,
  };
  const haystack = [row.address, row.status, row.anonymity, row.country, row.countryName, row.city, row.isp, row.asn ?? '', row.origin, row.error, row.errorMessage, row.protocols, row.rotating ? 'rotating' : '']
    .join('\u0000')
    .toLowerCase();
  return { ...row, haystack };
}

export const SORT_KEYS = Object.freeze(['address', 'status', 'protocols', 'https', 'ms', 'anonymity', 'countryName', 'city', 'isp', 'asn', 'origin', 'exits', 'integrity', 'error'] as const);
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
  /** a protocol that passed (http, socks4, socks5), or 'none'; '' = any */
  protocol?: string;
  /** 'yes' | 'no'; '' = any */
  https?: string;
  /** only the proxies that lied (tampered, tls_intercepted) */
  lying?: boolean;
  /** only the proxies with more than one exit across their samples */
  rotating?: boolean;
}

export function filterRows(rows: readonly Row[], f: RowFilter): Row[] {
  const words = (f.text ?? '').toLowerCase().split(/\s+/).filter((w) => w !== '');
  return rows.filter((r) => {
    if (f.status && r.status !== f.status) return false;
    if (f.anonymity && r.anonymity !== f.anonymity) return false;
    if (f.country) {
      if (f.country === '-' ? r.country !== '' : r.country !== f.country) return false;
    }
    if (f.protocol && !r.protocols.split(' ').includes(f.protocol)) return false;
    if (f.https && r.https !== f.https) return false;
    if (f.lying && r.integrity === '') return false;
    if (f.rotating && !r.rotating) return false;
    return words.every((w) => r.haystack.includes(w));
  });
}

/** The optional columns a job's table has: each only when some row carries its data. */
export interface ExtraColumns {
  protocols: boolean;
  https: boolean;
  integrity: boolean;
  rotation: boolean;
}

export function extraColumns(rows: readonly Row[]): ExtraColumns {
  const c: ExtraColumns = { protocols: false, https: false, integrity: false, rotation: false };
  for (const r of rows) {
    if (r.protocols !== '') c.protocols = true;
    if (r.https !== '') c.https = true;
    if (r.integrity !== '') c.integrity = true;
    if (r.samples !== null) c.rotation = true;
  }
  return c;
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
