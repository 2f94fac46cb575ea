/**
 * Result downloads (issue 6): the `.csv` and `.txt` forms of a result file,
 * converted from its JSON as a stream, plus the JSON itself filtered to the
 * working proxies (the CLI's --only-working). Pure: input is any async
 * iterable of chunks (a file stream, a fetch body), output is strings.
 *
 * The result document is read as a stream of parts (head, records, tail) by
 * src/results/result-json.ts, which owns its layout; memory is one record
 * at a time. The source is any chunk stream of the JSON: a ResultStore
 * reader's stream() (src/results/store.ts), a fetch body (the CLI).
 *
 * ## CSV (RFC 4180)
 *
 * One header row, one row per proxy, CRLF line ends, fields quoted when they
 * hold `"` `,` CR or LF (quotes doubled). Columns: CSV_COLUMNS. Text cells
 * that start with `=` `+` `-` `@`, TAB or CR get a leading `'` so a
 * spreadsheet never evaluates them as formulas (OWASP "CSV injection");
 * numeric columns (port, status code, time, ASN, lat, lon) are numbers we
 * produced and are written as they are (a negative longitude stays a number).
 * null/absent values are empty cells; booleans are `true`/`false`.
 * Files of `type: "auto"` checks (metadata.proxy_type "auto") get two more
 * columns at the end, CSV_AUTO_COLUMNS: `type` and `protocols` (the passed
 * protocols joined by a space, e.g. `socks5 socks4`). Files of sampled checks
 * (`samples` > 1: the summary has `rotating`) get CSV_SAMPLE_COLUMNS after
 * those: the record's `samples` block, `exit_ips` joined by a space. Files
 * whose summary has `https` (a check that ran the https check: the default)
 * get one more at the very end, CSV_HTTPS_COLUMN (`true`/`false` on working
 * rows; empty on failed ones and where the record says `null`, not known).
 * Every other file keeps exactly CSV_COLUMNS.
 *
 * ## TXT
 *
 * Working proxies only, one per line (LF), each in the address form the
 * caller submitted it in (`proxy.format`, see record.ts), re-formatted by
 * src/proxy/format.ts: normalised (lower-case host, no scheme prefix, IPv6 in
 * brackets, url form percent-encoded) and lossless (the parser reads every
 * line back to the same proxy). Records without `format` (files written
 * before it existed) use `user:pass@host:port` when they carry credentials.
 * The file lists working proxies first, so the conversion stops reading at
 * the first failed record.
 *
 * With `scheme` (`?scheme=true`, DECISIONS "Mixed lists") each line carries
 * the protocol the proxy worked as, `<protocol>://[user:pass@]host:port`
 * (src/proxy/format.ts formatProxyUrl): the record's `type` (auto checks,
 * mixed lists), else the check's `metadata.proxy_type`. A record whose
 * protocol is not known either way keeps its plain line.
 */
import { formatProxy, formatProxyUrl } from '../proxy/format';
import { PROXY_TYPES, type AddressFormat, type ProxyType } from '../proxy/types';
import type { ProxyRecord } from './record';
import { DOCUMENT_END, headInfo, readResultParts, recordPrefix, recordsEnd, type Chunks, type ResultPart } from './result-json';

// the CLI reads result files too (src/cli/check-command.ts)
export { readResultParts, type Chunks, type ResultPart };

/** Output strings are batched to about this many characters. */
const BATCH_CHARS = 64 * 1024;

// ---- CSV ---------------------------------------------------------------------

export const CSV_COLUMNS = Object.freeze([
  'proxy_host',
  'proxy_port',
  'proxy_has_auth',
  'proxy_username',
  'proxy_password',
  'status',
  'status_code',
  'response_time_ms',
  'anonymity',
  'origin',
  'country',
  'country_name',
  'location',
  'isp',
  'asn',
  'lat',
  'lon',
  'error_code',
  'error_message',
] as const);

/** The columns after CSV_COLUMNS in the CSV of an auto check. */
export const CSV_AUTO_COLUMNS = Object.freeze(['type', 'protocols'] as const);

/** The columns at the end of the CSV of a sampled check (samples > 1): the record's `samples` block. */
export const CSV_SAMPLE_COLUMNS = Object.freeze([
  'samples',
  'samples_succeeded',
  'samples_success_rate',
  'exit_ips',
  'unique_exit_ips',
  'response_time_min_ms',
  'response_time_p50_ms',
  'response_time_max_ms',
] as const);

/** The last column of the CSV of a check that ran the https check (summary `https`). */
export const CSV_HTTPS_COLUMN = 'https';

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/** One CSV field: a text cell (formula-guarded) or a number/boolean/empty cell. */
export function csvCell(value: string | number | boolean | null | undefined, isText = typeof value === 'string'): string {
  if (value === null || value === undefined) return '';
  let s = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : '') : String(value);
  if (isText && FORMULA_START.test(s)) s = `'${s}`;
  return NEEDS_QUOTES.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** "123.45 ms" -> 123.45; null when not a number. */
export function responseTimeMs(responseTime: unknown): number | null {
  if (typeof responseTime !== 'string') return null;
  const n = Number.parseFloat(responseTime);
  return Number.isFinite(n) ? n : null;
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

export const CSV_HEADER = `${CSV_COLUMNS.join(',')}\r\n`;
export const CSV_HEADER_AUTO = `${[...CSV_COLUMNS, ...CSV_AUTO_COLUMNS].join(',')}\r\n`;

/** Which optional column groups a file's CSV has (the head decides: toCsv). */
export interface CsvShape {
  auto: boolean;
  sampled: boolean;
  /** the check ran the https check: the `https` column at the very end */
  https?: boolean;
}

/** The header row of a CSV of that shape: CSV_COLUMNS, then CSV_AUTO_COLUMNS, CSV_SAMPLE_COLUMNS, CSV_HTTPS_COLUMN. */
export function csvHeader(shape: CsvShape): string {
  return `${[...CSV_COLUMNS, ...(shape.auto ? CSV_AUTO_COLUMNS : []), ...(shape.sampled ? CSV_SAMPLE_COLUMNS : []), ...(shape.https === true ? [CSV_HTTPS_COLUMN] : [])].join(',')}\r\n`;
}

/** The CSV row of one record, CRLF-terminated, columns as CSV_COLUMNS. */
export function csvRow(r: ProxyRecord): string {
  return `${rowCells(r).join(',')}\r\n`;
}

/** The CSV row of one record of an auto check: CSV_COLUMNS, then CSV_AUTO_COLUMNS. */
export function csvRowAuto(r: ProxyRecord): string {
  return csvRowOf(r, { auto: true, sampled: false });
}

/** The CSV row of one record in a file of that shape (csvHeader's columns). */
export function csvRowOf(r: ProxyRecord, shape: CsvShape): string {
  const cells = rowCells(r);
  if (shape.auto) cells.push(...autoCells(r));
  if (shape.sampled) cells.push(...sampleCells(r));
  if (shape.https === true) cells.push(csvCell(typeof r.https === 'boolean' ? r.https : null));
  return `${cells.join(',')}\r\n`;
}

function autoCells(r: ProxyRecord): string[] {
  return [csvCell(str(r.type)), csvCell(Array.isArray(r.protocols) ? r.protocols.filter((p) => typeof p === 'string').join(' ') : null)];
}

function sampleCells(r: ProxyRecord): string[] {
  const s = r.samples;
  const t = s?.response_time_ms;
  return [
    csvCell(num(s?.count)),
    csvCell(num(s?.succeeded)),
    csvCell(str(s?.success_rate)),
    csvCell(Array.isArray(s?.exit_ips) ? s.exit_ips.filter((ip) => typeof ip === 'string').join(' ') : null),
    csvCell(num(s?.unique_exit_ips)),
    csvCell(num(t?.min)),
    csvCell(num(t?.p50)),
    csvCell(num(t?.max)),
  ];
}

function rowCells(r: ProxyRecord): string[] {
  const p = r.proxy;
  return [
    csvCell(str(p.host)),
    csvCell(num(p.port)),
    csvCell(typeof p.hasAuth === 'boolean' ? p.hasAuth : null),
    csvCell(str(p.username)),
    csvCell(str(p.password)),
    csvCell(str(r.status)),
    csvCell(num(r.statusCode)),
    csvCell(responseTimeMs(r.responseTime)),
    csvCell(str(r.anonymity)),
    csvCell(str(r.origin)),
    csvCell(str(r.country)),
    csvCell(str(r.country_name)),
    csvCell(str(r.location)),
    csvCell(str(r.isp)),
    csvCell(num(r.asn)),
    csvCell(num(r.coordinates?.lat)),
    csvCell(num(r.coordinates?.lon)),
    csvCell(str(r.error?.code)),
    csvCell(str(r.error?.message)),
  ];
}

// ---- TXT ---------------------------------------------------------------------

const FORMATS: readonly string[] = ['standard', 'url_auth', 'colon_auth'];

/** The proxy of a record in its submitted form (no line end); with a protocol, `<protocol>://` and the URL form. */
export function txtLine(r: ProxyRecord, protocol: ProxyType | null = null): string {
  const p = r.proxy;
  const hasCreds = p.username !== undefined;
  const address = hasCreds ? { host: p.host, port: p.port, username: p.username, password: p.password ?? '' } : { host: p.host, port: p.port };
  if (protocol !== null) return formatProxyUrl(address, protocol);
  const format: AddressFormat =
    p.format !== undefined && FORMATS.includes(p.format) ? p.format : hasCreds ? 'url_auth' : 'standard';
  return formatProxy(address, format);
}

/** `v` when it names a protocol (http, socks4, socks5), else null. */
export function asProxyType(v: unknown): ProxyType | null {
  return typeof v === 'string' && (PROXY_TYPES as readonly string[]).includes(v) ? (v as ProxyType) : null;
}

/** The protocol a record worked as: its `type`, else the check's type (`metadata.proxy_type`), else null. */
export function recordProtocol(r: ProxyRecord, checkType: string | null): ProxyType | null {
  return asProxyType(r.type) ?? asProxyType(checkType);
}

// ---- streaming converters ----------------------------------------------------

export interface ExportOptions {
  /** Keep working proxies only (they come first, so reading stops at the first failed one). */
  onlyWorking?: boolean;
  /** TXT: each line as `<protocol>://[user:pass@]host:port` (recordProtocol). */
  scheme?: boolean;
}

async function* batched(pieces: AsyncIterable<string>): AsyncGenerator<string> {
  let out = '';
  for await (const p of pieces) {
    out += p;
    if (out.length >= BATCH_CHARS) {
      yield out;
      out = '';
    }
  }
  if (out.length > 0) yield out;
}

async function* workingRecords(parts: AsyncIterable<ResultPart>, onlyWorking: boolean): AsyncGenerator<ProxyRecord> {
  for await (const part of parts) {
    if (part.kind !== 'record') continue;
    if (onlyWorking && part.record.status !== 'working') return;
    yield part.record;
  }
}

/** The CSV text of a result file, in batches (the head decides the columns: auto checks get CSV_AUTO_COLUMNS, sampled ones CSV_SAMPLE_COLUMNS, https ones CSV_HTTPS_COLUMN). */
export function toCsv(source: Chunks, opts: ExportOptions = {}): AsyncGenerator<string> {
  const onlyWorking = opts.onlyWorking ?? false;
  return batched(
    (async function* () {
      let row = csvRow;
      let header = false;
      for await (const part of readResultParts(source)) {
        if (part.kind === 'head') {
          const info = headInfo(part.text);
          const shape: CsvShape = { auto: info.proxyType === 'auto', sampled: info.sampled, https: info.https };
          row = shape.auto || shape.sampled || shape.https ? (r) => csvRowOf(r, shape) : csvRow;
          header = true;
          yield csvHeader(shape);
        } else if (part.kind === 'record') {
          if (onlyWorking && part.record.status !== 'working') break;
          yield row(part.record);
        }
      }
      if (!header) yield CSV_HEADER;
    })(),
  );
}

/** The TXT text of a result file (working proxies, submitted form; with `scheme`, their protocol first), in batches. */
export function toTxt(source: Chunks, opts: ExportOptions = {}): AsyncGenerator<string> {
  if (opts.scheme !== true) {
    return batched(
      (async function* () {
        for await (const r of workingRecords(readResultParts(source), true)) yield `${txtLine(r)}\n`;
      })(),
    );
  }
  return batched(
    (async function* () {
      let checkType: string | null = null;
      for await (const part of readResultParts(source)) {
        if (part.kind === 'head') checkType = headInfo(part.text).proxyType;
        else if (part.kind === 'record') {
          if (part.record.status !== 'working') return;
          yield `${txtLine(part.record, recordProtocol(part.record, checkType))}\n`;
        }
      }
    })(),
  );
}

/**
 * The result file's JSON again, with only the working proxies when asked
 * (same head and tail, records one per line), in batches.
 */
export function toJson(source: Chunks, opts: ExportOptions = {}): AsyncGenerator<string> {
  const onlyWorking = opts.onlyWorking ?? false;
  return batched(
    (async function* () {
      let n = 0;
      let skipping = false;
      for await (const part of readResultParts(source)) {
        if (part.kind === 'head') {
          yield part.text;
        } else if (part.kind === 'record') {
          if (skipping || (onlyWorking && part.record.status !== 'working')) {
            skipping = true;
            continue;
          }
          yield `${recordPrefix(n)}${part.text}`;
          n++;
        } else {
          yield `${recordsEnd(n)}${part.text}${DOCUMENT_END}`;
        }
      }
    })(),
  );
}

export type DownloadFormat = 'json' | 'csv' | 'txt';

/** The converter for a format. */
export function convertResult(format: DownloadFormat, source: Chunks, opts: ExportOptions = {}): AsyncGenerator<string> {
  switch (format) {
    case 'csv':
      return toCsv(source, opts);
    case 'txt':
      return toTxt(source, opts);
    case 'json':
      return toJson(source, opts);
  }
}

/**
 * The three signed download links of a result, from its `.json` link (the
 * token covers the id and expiry, not the extension: src/results/links.ts).
 * null when `jsonUrl` has no `.json` path end (not a result link).
 */
export function resultUrls(jsonUrl: string): { json: string; csv: string; txt: string } | null {
  const q = jsonUrl.indexOf('?');
  const path = q < 0 ? jsonUrl : jsonUrl.slice(0, q);
  const query = q < 0 ? '' : jsonUrl.slice(q);
  if (!path.endsWith('.json')) return null;
  const base = path.slice(0, -'.json'.length);
  return { json: jsonUrl, csv: `${base}.csv${query}`, txt: `${base}.txt${query}` };
}
