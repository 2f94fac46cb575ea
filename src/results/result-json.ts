/**
 * The JSON layout of a result document, both ways. Pure: strings and bytes
 * in, strings and parts out; no I/O.
 *
 * ## The layout (what the writer emits)
 *
 *   line 1      {"summary":…,"metadata":…,"proxies":[
 *   lines 2..n  <record JSON>,      (the last one without the comma)
 *   line n+1    ],"invalid_lines":[
 *   then        one invalid line's JSON per line ({line, text, reason}), then
 *               ],"custom_url_validation":…}   (or just "]}")
 *
 * Without records the first line is `{"summary":…,"metadata":…,"proxies":]…}`
 * (`headText` + `tailPieces(0, …)`). JSON.stringify never emits a raw
 * newline, so no value spans two lines; that is what lets a reader take the
 * document one line at a time.
 *
 * ## Reading it (`readResultParts`)
 *
 * Yields the head, each record and the tail; memory is one line at a time. A
 * document not laid out like that (no proxies: everything is on line 1; or a
 * file from elsewhere) is parsed whole and yields the same parts, so callers
 * never see the difference. Errors are ServiceErrors with the stable codes
 * `export_bad_record`, `export_bad_file` and `export_truncated`.
 */
import { ServiceError } from '../errors';
import { DOMAIN_ERROR_CODES } from '../error-codes';
import type { InvalidLines } from '../proxy/invalid-lines';
import type { ProxyRecord } from './record';

export type ResultPart =
  /** Everything before the first record, up to and including `"proxies":[`. */
  | { kind: 'head'; text: string }
  /** One record; `text` is its JSON (no separator). */
  | { kind: 'record'; record: ProxyRecord; text: string }
  /** Everything after the last record, starting with `]`. */
  | { kind: 'tail'; text: string };

export type Chunks = AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>;

/** A value serialised piecewise: the concatenated chunks are its JSON text. */
export interface JsonChunkSource {
  toJsonChunks(): Iterable<string>;
}

const HEAD_END = '"proxies":[';

/** Put before every record but the first; the first gets only the newline. */
export const RECORD_SEPARATOR = ',\n';

/** What goes before record number `i` (0-based). */
export const recordPrefix = (i: number): string => (i === 0 ? '\n' : RECORD_SEPARATOR);

/** What goes between the last record and the tail's `]`: a newline when there were records. */
export const recordsEnd = (records: number): string => (records > 0 ? '\n' : '');

/** The end of the document after the tail text (which starts with `]`). */
export const DOCUMENT_END = '\n';

// ---- encoding ----------------------------------------------------------------

/** Line 1 up to and including `"proxies":[` (null for an absent summary or metadata). */
export function headText(summary: unknown, metadata: unknown): string {
  return `{"summary":${JSON.stringify(summary ?? null)},"metadata":${JSON.stringify(metadata ?? null)},${HEAD_END}`;
}

/**
 * What a document's head (a `head` part's text) says about its records:
 * `proxyType`, its `metadata.proxy_type` (null when it has none), and
 * `sampled`, whether its summary has `rotating` (only a check with
 * `samples` > 1 has it: src/results/summary.ts); `https`, whether it has
 * `https` (a check with a TLS judge and a working proxy).
 */
export function headInfo(head: string): { proxyType: string | null; sampled: boolean; https: boolean } {
  const none = { proxyType: null, sampled: false, https: false };
  if (!head.endsWith(HEAD_END)) return none;
  try {
    const doc = JSON.parse(`${head}]}`) as { summary?: { rotating?: unknown; https?: unknown } | null; metadata?: { proxy_type?: unknown } | null };
    return {
      proxyType: typeof doc.metadata?.proxy_type === 'string' ? doc.metadata.proxy_type : null,
      sampled: typeof doc.summary?.rotating === 'number',
      https: typeof doc.summary?.https === 'number',
    };
  } catch {
    return none;
  }
}

/** `metadata.proxy_type` of a document's head, or null when it has none. */
export function headProxyType(head: string): string | null {
  return headInfo(head).proxyType;
}

export function isChunkSource(v: unknown): v is JsonChunkSource {
  return typeof v === 'object' && v !== null && typeof (v as JsonChunkSource).toJsonChunks === 'function';
}

/**
 * Everything after the `records` records: `\n]` (`]` when there are none),
 * then each of `fields` present (`invalid_lines`, `custom_url_validation`:
 * plain values or JsonChunkSources, streamed piece by piece), and `}\n`.
 */
export function* tailPieces(records: number, fields: { invalid_lines?: unknown; custom_url_validation?: unknown } = {}): Generator<string> {
  yield `${recordsEnd(records)}]`;
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    yield `,${JSON.stringify(key)}:`;
    if (isChunkSource(value)) yield* value.toJsonChunks();
    else yield JSON.stringify(value);
  }
  yield `}${DOCUMENT_END}`;
}

/**
 * The result file's `invalid_lines`: every invalid line of the request as
 * `{line, text, reason}`, one per line of the file, in pieces of about 64 KiB
 * (a body of junk may have millions; they are read from the packed store,
 * never all held as objects).
 */
export function invalidLinesJson(lines: InvalidLines): JsonChunkSource {
  return {
    *toJsonChunks() {
      let piece = '[';
      let first = true;
      for (const e of lines.all()) {
        piece += `${first ? '\n' : ',\n'}${JSON.stringify(e)}`;
        first = false;
        if (piece.length >= 64 * 1024) {
          yield piece;
          piece = '';
        }
      }
      yield `${piece}${first ? ']' : '\n]'}`;
    },
  };
}

// ---- decoding ----------------------------------------------------------------

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
    throw new ServiceError(DOMAIN_ERROR_CODES.EXPORT_BAD_RECORD, `result file line ${lineNo} is not a JSON record`, { cause: err });
  }
  if (typeof value !== 'object' || value === null || typeof (value as ProxyRecord).proxy !== 'object') {
    throw new ServiceError(DOMAIN_ERROR_CODES.EXPORT_BAD_RECORD, `result file line ${lineNo} is not a proxy record`);
  }
  return value as ProxyRecord;
}

function* wholeDocument(text: string): Generator<ResultPart> {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new ServiceError(DOMAIN_ERROR_CODES.EXPORT_BAD_FILE, 'the result file is not valid JSON', { cause: err });
  }
  if (typeof doc !== 'object' || doc === null || !Array.isArray((doc as { proxies?: unknown }).proxies)) {
    throw new ServiceError(DOMAIN_ERROR_CODES.EXPORT_BAD_FILE, 'the result file has no "proxies" array');
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

/** The head, records and tail of a result document's JSON, read line by line. */
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
    throw new ServiceError(DOMAIN_ERROR_CODES.EXPORT_TRUNCATED, `the result file ends early (after line ${lineNo})`);
  }
}
