/**
 * Result downloads (issue 6): the `.csv` and `.txt` forms of a result file,
 * converted from its JSON as a stream, plus the JSON itself filtered to the
 * working proxies (the CLI's --only-working). Pure: input is any async
 * iterable of chunks (a file stream, a fetch body), output is strings.
 *
 * ## Reading the JSON as a stream
 *
 * src/results/writer.ts lays a result file out one record per line:
 *   line 1      {"summary":…,"metadata":…,"proxies":[
 *   lines 2..n  <record JSON>,      (the last one without the comma)
 *   line n+1    ],"custom_url_validation":…}   (or just "]}")
 * (JSON.stringify never emits a raw newline, so no value spans two lines.)
 * `readResultParts` yields that head, each record, and the tail; memory is
 * one line at a time. A file not laid out like that (no proxies: everything
 * is on line 1; or a file from elsewhere) is parsed whole and yields the same
 * parts, so callers never see the difference.
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
 */
import { formatProxy } from '../proxy/format';
import type { AddressFormat } from '../proxy/types';
import type { ProxyRecord } from './record';

export class ExportError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ExportError';
    this.code = code;
  }
}

export type ResultPart =
  /** Everything before the first record, up to and including `"proxies":[`. */
  | { kind: 'head'; text: string }
  /** One record; `text` is its JSON (no separator). */
  | { kind: 'record'; record: ProxyRecord; text: string }
  /** Everything after the last record, starting with `]`. */
  | { kind: 'tail'; text: string };

export type Chunks = AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>;

const HEAD_END = '"proxies":[';
/** Output strings are batched to about this many characters. */
const BATCH_CHARS = 64 * 1024;

async function* lines(source: Chunks): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let buf = '';
  for await (const chunk of source) {
    buf += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let start = 0;
    let nl: number;
    while ((nl = buf.indexOf('\n', start)) !== -1) {
      yield buf.slice(start, nl);
      start = nl + 1;
    }
    buf = start === 0 ? buf : buf.slice(start);
  }
  buf += decoder.decode();
  if (buf.length > 0) yield buf;
}

function parseRecord(text: string, lineNo: number): ProxyRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ExportError('export_bad_record', `result file line ${lineNo} is not a JSON record`, { cause: err });
  }
  if (typeof value !== 'object' || value === null || typeof (value as ProxyRecord).proxy !== 'object') {
    throw new ExportError('export_bad_record', `result file line ${lineNo} is not a proxy record`);
  }
  return value as ProxyRecord;
}

function* wholeDocument(text: string): Generator<ResultPart> {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new ExportError('export_bad_file', 'the result file is not valid JSON', { cause: err });
  }
  if (typeof doc !== 'object' || doc === null || !Array.isArray((doc as { proxies?: unknown }).proxies)) {
    throw new ExportError('export_bad_file', 'the result file has no "proxies" array');
  }
  const entries = Object.entries(doc as Record<string, unknown>);
  const at = entries.findIndex(([k]) => k === 'proxies');
  const field = ([k, v]: [string, unknown]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`;
  const before = entries.slice(0, at).map(field);
  const after = entries.slice(at + 1).map(field);
  yield { kind: 'head', text: `{${before.map((f) => `${f},`).join('')}${HEAD_END}` };
  let n = 0;
  for (const r of (doc as { proxies: unknown[] }).proxies) {
    n++;
    const t = JSON.stringify(r);
    yield { kind: 'record', record: parseRecord(t, n), text: t };
  }
  yield { kind: 'tail', text: `]${after.map((f) => `,${f}`).join('')}}` };
}

/** The head, records and tail of a result file's JSON, read line by line. */
export async function* readResultParts(source: Chunks): AsyncGenerator<ResultPart> {
  let lineNo = 0;
  let mode: 'head' | 'records' | 'tail' | 'whole' = 'head';
  let rest = '';
  for await (const line of lines(source)) {
    lineNo++;
    if (mode === 'head') {
      if (line.endsWith(HEAD_END)) {
        mode = 'records';
        yield { kind: 'head', text: line };
      } else {
        mode = 'whole';
        rest = line;
      }
    } else if (mode === 'records') {
      if (line.startsWith(']')) {
        mode = 'tail';
        rest = line;
      } else {
        const text = line.endsWith(',') ? line.slice(0, -1) : line;
        yield { kind: 'record', record: parseRecord(text, lineNo), text };
      }
    } else {
      rest += `\n${line}`;
    }
  }
  if (mode === 'whole') {
    yield* wholeDocument(rest);
  } else if (mode === 'tail') {
    yield { kind: 'tail', text: rest.trimEnd() };
  } else {
    throw new ExportError('export_truncated', `the result file ends early (after line ${lineNo})`);
  }
}

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

/** The CSV row of one record, CRLF-terminated, columns as CSV_COLUMNS. */
export function csvRow(r: ProxyRecord): string {
  const p = r.proxy;
  const cells = [
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
  return `${cells.join(',')}\r\n`;
}

// ---- TXT ---------------------------------------------------------------------

const FORMATS: readonly string[] = ['standard', 'url_auth', 'colon_auth'];

/** The proxy of a record in its submitted form (no line end). */
export function txtLine(r: ProxyRecord): string {
  const p = r.proxy;
  const hasCreds = p.username !== undefined;
  const format: AddressFormat =
    p.format !== undefined && FORMATS.includes(p.format) ? p.format : hasCreds ? 'url_auth' : 'standard';
  return formatProxy(
    hasCreds ? { host: p.host, port: p.port, username: p.username, password: p.password ?? '' } : { host: p.host, port: p.port },
    format,
  );
}

// ---- streaming converters ----------------------------------------------------

export interface ExportOptions {
  /** Keep working proxies only (they come first, so reading stops at the first failed one). */
  onlyWorking?: boolean;
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

/** The CSV text of a result file, in batches. */
export function toCsv(source: Chunks, opts: ExportOptions = {}): AsyncGenerator<string> {
  return batched(
    (async function* () {
      yield CSV_HEADER;
      for await (const r of workingRecords(readResultParts(source), opts.onlyWorking ?? false)) yield csvRow(r);
    })(),
  );
}

/** The TXT text of a result file (working proxies, submitted form), in batches. */
export function toTxt(source: Chunks): AsyncGenerator<string> {
  return batched(
    (async function* () {
      for await (const r of workingRecords(readResultParts(source), true)) yield `${txtLine(r)}\n`;
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
          yield `${n === 0 ? '\n' : ',\n'}${part.text}`;
          n++;
        } else {
          yield `${n > 0 ? '\n' : ''}${part.text}\n`;
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
      return toTxt(source);
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
