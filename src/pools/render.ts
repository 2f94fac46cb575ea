/**
 * The `txt` and `csv` forms of `GET /pools/{id}/proxies` (DECISIONS "Pools"),
 * one line per proxy, so a page is streamed as it is read. Pure.
 *
 * txt: the address as the proxy was given (credentials kept), one per line
 * (LF), nothing else: the form it was submitted in (`format`), re-formatted
 * by src/proxy/format.ts like the result downloads' .txt (normalised and
 * lossless: the list parser reads every line back to the same proxy).
 *
 * txt with `scheme=true` (DECISIONS "Mixed lists"): each line carries the
 * protocol the proxy works as, `<protocol>://[user:pass@]host:port`
 * (formatProxyUrl): its own protocol (its line's scheme), else the pool's type, or for an auto pool the protocol its
 * last passing check found (rowProtocol); a proxy of an auto pool never yet
 * found working keeps its plain line.
 *
 * csv: RFC 4180 like the result downloads (src/results/export.ts: its
 * csvCell quotes, guards formula-looking text cells and writes numbers as
 * they are), CRLF line ends, a header row (poolCsvHeader) and then one row
 * per pool proxy object (poolCsvRow), columns POOL_CSV_COLUMNS; `protocols`
 * joined by a space; null values are empty cells.
 */
import { formatProxy, formatProxyUrl } from '../proxy/format';
import type { CheckType, ProxyType } from '../proxy/types';
import { asProxyType, csvCell, responseTimeMs } from '../results/export';
import { addressOf, poolProxyObject, type PoolProxyObject, type PoolProxyRow } from './shape';

/** A row's address in its submitted form, with its line end; with a protocol, `<protocol>://` and the URL form. */
export function txtLine(row: Pick<PoolProxyRow, 'host' | 'port' | 'username' | 'password' | 'format'>, protocol: ProxyType | null = null): string {
  return `${protocol === null ? formatProxy(addressOf(row), row.format) : formatProxyUrl(addressOf(row), protocol)}\n`;
}

/** The protocol a row's proxy works as: the pool's type, or (auto) the one its last passing check found; null: not known. */
export function rowProtocol(row: Pick<PoolProxyRow, 'type' | 'protocol'>, poolType: CheckType): ProxyType | null {
  if (row.protocol != null) return row.protocol;
  return poolType === 'auto' ? asProxyType(row.type) : poolType;
}

/** How a listing's rows are written as text: the query's format and `scheme`, the pool's type, the listing's clock. */
export interface TextPageOptions {
  format: 'txt' | 'csv';
  scheme: boolean;
  poolType: CheckType;
  nowMs: number;
}

/** The text of a page of rows (no csv header: poolCsvHeader goes once before the first). */
export function textRows(rows: readonly PoolProxyRow[], o: TextPageOptions): string {
  let out = '';
  if (o.format === 'txt') for (const r of rows) out += txtLine(r, o.scheme ? rowProtocol(r, o.poolType) : null);
  else for (const r of rows) out += poolCsvRow(poolProxyObject(r, o.poolType, o.nowMs));
  return out;
}

export const POOL_CSV_COLUMNS = Object.freeze([
  'proxy_host',
  'proxy_port',
  'proxy_has_auth',
  'proxy_username',
  'proxy_password',
  'status',
  'type',
  'protocols',
  'anonymity',
  'https',
  'origin',
  'country',
  'country_name',
  'location',
  'isp',
  'asn',
  'response_time_ms',
  'latency_p50_ms',
  'uptime_h1',
  'uptime_h24',
  'uptime_d7',
  'checks',
  'first_seen_at',
  'last_checked_at',
  'last_change_at',
  'next_check_at',
  'error_code',
  'error_message',
] as const);

export function poolCsvHeader(): string {
  return `${POOL_CSV_COLUMNS.join(',')}\r\n`;
}

export function poolCsvRow(o: PoolProxyObject): string {
  const p = o.proxy;
  return `${[
    csvCell(p.host),
    csvCell(p.port),
    csvCell(p.hasAuth),
    csvCell(p.username),
    csvCell(p.password),
    csvCell(o.status),
    csvCell(o.type),
    csvCell(o.protocols === undefined ? null : o.protocols.join(' ')),
    csvCell(o.anonymity),
    csvCell(o.https),
    csvCell(o.origin),
    csvCell(o.country),
    csvCell(o.country_name),
    csvCell(o.location),
    csvCell(o.isp),
    csvCell(o.asn),
    csvCell(responseTimeMs(o.responseTime)),
    csvCell(o.latency_p50_ms),
    csvCell(o.uptime.h1),
    csvCell(o.uptime.h24),
    csvCell(o.uptime.d7),
    csvCell(o.checks),
    csvCell(o.first_seen_at),
    csvCell(o.last_checked_at),
    csvCell(o.last_change_at),
    csvCell(o.next_check_at),
    csvCell(o.error?.code),
    csvCell(o.error?.message),
  ].join(',')}\r\n`;
}
