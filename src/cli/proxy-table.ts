/**
 * The CLI's per-proxy view of a result file, pure (records in, string out):
 * a fold over the records as they stream by (ProxyDigest: the first rows,
 * the lying proxies, which optional fields the file has) and its rendering.
 *
 * What it shows is only what the records carry beyond a plain check, so a
 * plain check prints nothing here and looks exactly as before:
 * - the proxy table, when any record has `protocols` (type auto), `https`
 *   or `samples` (samples > 1): proxy, status, time, then a column each for
 *   protocols, https, samples passed and exits (rotating when more than one);
 * - "Lying proxies", when any record failed with `tampered` or
 *   `tls_intercepted` (the proxy changed what it relayed, or presented its
 *   own certificate): the count by code and the first few with what they did.
 */
import { isSocksAnswer } from './check-hints';
import { fmtInt } from './progress-bar';
import { table, type Align } from './tables';

/** Error codes that mean the proxy lied about what it relayed (docs/API.md "Integrity"). */
export const LYING_CODES: readonly string[] = Object.freeze(['tampered', 'tls_intercepted']);

export const isLying = (code: unknown): boolean => typeof code === 'string' && LYING_CODES.includes(code);

/** A result record as far as this view reads it (the file may hold more). */
export interface RecordView {
  proxy: { host: string; port: number; hasAuth?: boolean; username?: string; password?: string };
  status: string;
  /** the protocol it was checked (auto: passed) as, when the record says */
  type?: unknown;
  responseTime?: string | null;
  protocols?: unknown;
  https?: unknown;
  samples?: { count?: unknown; succeeded?: unknown; unique_exit_ips?: unknown } | null;
  error?: ({ code?: unknown; message?: unknown } & Record<string, unknown>) | null;
}

export interface DigestColumns {
  protocols: boolean;
  https: boolean;
  samples: boolean;
}

/** The fold: memory is the first `rows` records and the first `lyingRows` lying ones, whatever the file's size. */
export class ProxyDigest {
  readonly rows: RecordView[] = [];
  readonly lying: RecordView[] = [];
  /** lying records by error code */
  readonly lyingByCode: Record<string, number> = {};
  readonly columns: DigestColumns = { protocols: false, https: false, samples: false };
  total = 0;
  lyingCount = 0;
  /** failed `bad_response` records whose message says the proxy answered like a SOCKS server (check-hints.ts) */
  socksLike = 0;

  constructor(
    readonly rowLimit = 20,
    readonly lyingLimit = 10,
  ) {}

  add(r: RecordView): void {
    this.total++;
    if (this.rows.length < this.rowLimit) this.rows.push(r);
    if (Array.isArray(r.protocols)) this.columns.protocols = true;
    if (typeof r.https === 'boolean' || r.https === null) this.columns.https = true;
    if (r.samples !== undefined && r.samples !== null && typeof r.samples === 'object') this.columns.samples = true;
    const code = r.error?.code;
    if (isSocksAnswer(code, r.error?.message)) this.socksLike++;
    if (isLying(code)) {
      this.lyingCount++;
      this.lyingByCode[code as string] = (this.lyingByCode[code as string] ?? 0) + 1;
      if (this.lying.length < this.lyingLimit) this.lying.push(r);
    }
  }

  /** Whether the proxy table has anything a plain check would not show. */
  get extended(): boolean {
    return this.columns.protocols || this.columns.https || this.columns.samples;
  }
}

const paint = (on: boolean, code: string, s: string) => (on ? `\x1b[${code}m${s}\x1b[0m` : s);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** user@host:port (never the password), IPv6 in brackets. */
export function proxyLabel(p: RecordView['proxy']): string {
  const user = p.hasAuth && p.username ? `${p.username}@` : '';
  return `${user}${p.host.includes(':') ? `[${p.host}]` : p.host}:${p.port}`;
}

/** "123.45 ms" -> "123 ms"; "-" when unknown. */
export function msCell(responseTime: unknown): string {
  const n = typeof responseTime === 'string' ? Number.parseFloat(responseTime) : Number.NaN;
  return Number.isFinite(n) ? `${Math.round(n)} ms` : '-';
}

/** The protocols that passed, "socks5 socks4"; "none" for an auto record where none did; "-" without the field. */
export function protocolsCell(protocols: unknown): string {
  if (!Array.isArray(protocols)) return '-';
  const names = protocols.filter((p): p is string => typeof p === 'string');
  return names.length === 0 ? 'none' : names.join(' ');
}

/** yes / no; "unknown" for null (the TLS check could not run: no time left, or the service ran out of descriptors); "-" without the field (failed, or no https check). */
export const httpsCell = (https: unknown): string => (https === true ? 'yes' : https === false ? 'no' : https === null ? 'unknown' : '-');

/** Samples passed of samples probed, "2/3"; "-" without the block. */
export function samplesCell(s: RecordView['samples']): string {
  const count = num(s?.count);
  const ok = num(s?.succeeded);
  return count === null || ok === null ? '-' : `${ok}/${count}`;
}

/** Distinct exit addresses, "3 rotating" when more than one; "-" without the block or exits. */
export function exitsCell(s: RecordView['samples']): string {
  const n = num(s?.unique_exit_ips);
  if (n === null || n === 0) return '-';
  return n > 1 ? `${n} rotating` : String(n);
}

export interface ProxyTableOptions {
  color: boolean;
  /** longest error text in the lying list; default 100 */
  width?: number;
}

/**
 * The extra text for a check: the proxy table (when the records have
 * protocols, https or samples) and the lying proxies (when any). '' when the
 * records hold nothing beyond a plain check's, so nothing is printed.
 */
export function renderProxyDetails(d: ProxyDigest, o: ProxyTableOptions): string {
  const out: string[] = [];
  if (d.extended) {
    const head = ['proxy', 'status', 'time'];
    const align: Align[] = ['l', 'l', 'r'];
    if (d.columns.protocols) head.push('protocols'), align.push('l');
    if (d.columns.https) head.push('https'), align.push('l');
    if (d.columns.samples) head.push('samples', 'exits'), align.push('r', 'l');
    head.push('error');
    align.push('l');
    const rows = d.rows.map((r) => {
      const cells = [proxyLabel(r.proxy), paint(o.color, r.status === 'working' ? '32' : '31', r.status), msCell(r.responseTime)];
      if (d.columns.protocols) cells.push(protocolsCell(r.protocols));
      if (d.columns.https) cells.push(httpsCell(r.https));
      if (d.columns.samples) cells.push(samplesCell(r.samples), exitsCell(r.samples));
      const code = typeof r.error?.code === 'string' ? r.error.code : '';
      cells.push(isLying(code) ? paint(o.color, '1;31', code) : code);
      return cells;
    });
    const shown = d.rows.length < d.total ? `first ${fmtInt(d.rows.length)} of ${fmtInt(d.total)}, working first; all of them in the result file` : `${fmtInt(d.total)}`;
    out.push(`Proxies (${shown})`);
    out.push(table([head, ...rows], align, { header: true }));
  }
  if (d.lyingCount > 0) {
    if (out.length > 0) out.push('');
    const byCode = Object.entries(d.lyingByCode)
      .sort((a, b) => LYING_CODES.indexOf(a[0]) - LYING_CODES.indexOf(b[0]))
      .map(([k, v]) => `${k} ${fmtInt(v)}`)
      .join(', ');
    out.push(`${paint(o.color, '1;31', `Lying proxies: ${fmtInt(d.lyingCount)}`)} of ${fmtInt(d.total)} (${byCode}): they changed what they relayed or presented their own certificate`);
    const width = o.width ?? 100;
    out.push(
      table(
        d.lying.map((r) => [proxyLabel(r.proxy), String(r.error?.code ?? ''), clip(errorDetail(r.error), width)]),
        ['l', 'l', 'l'],
      ),
    );
    if (d.lyingCount > d.lying.length) out.push(`  … and ${fmtInt(d.lyingCount - d.lying.length)} more`);
  }
  return out.join('\n');
}

/**
 * The error's message, then any other text the error carries (a
 * tls_intercepted error's certificate subject and fingerprint, whatever
 * their field names), one level of nesting deep.
 */
export function errorDetail(e: RecordView['error']): string {
  if (e === null || e === undefined) return '';
  const parts: string[] = typeof e.message === 'string' && e.message !== '' ? [e.message] : [];
  const seen = new Set(parts);
  const add = (key: string, v: unknown) => {
    if ((typeof v === 'string' && v !== '') || typeof v === 'number') {
      const text = `${key}: ${v}`;
      if (![...seen].some((s) => s.includes(String(v)))) {
        parts.push(text);
        seen.add(text);
      }
    }
  };
  for (const [k, v] of Object.entries(e)) {
    if (k === 'code' || k === 'message') continue;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) for (const [k2, v2] of Object.entries(v)) add(k2, v2);
    else add(k, v);
  }
  return parts.join('; ');
}

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, Math.max(1, n - 1))}…` : s);
