/**
 * Pure helpers of the dashboard's check flow: the pasted/uploaded list ->
 * proxy strings and the count of its valid unique proxies, the samples field, custom-URL rows -> the API's rule objects (with messages for
 * bad rows), job ids, ETA text, the download links of a result and the
 * same-origin form of a result link.
 */
import { parseProxyList as parseAddresses } from '../../proxy/parse';
import type { CheckType } from '../../proxy/types';
import { formatCount } from './svg';

/**
 * What the form says of a pasted list: the valid unique proxies the check
 * will count and charge, read with the service's own parser
 * (src/proxy/parse.ts, pure) for the form's `type` (a line's scheme naming
 * that type adds nothing: `http://h:1` and `h:1` are one proxy of an http
 * check), and the lines it will skip: "5 proxies (1 invalid, 1 duplicate
 * skipped)".
 */
export function proxyCountText(text: string, type?: CheckType): string {
  const list = parseAddresses(text, type !== undefined ? { type } : {});
  const n = list.proxies.length;
  const skipped: string[] = [];
  if (list.invalid > 0) skipped.push(`${formatCount(list.invalid)} invalid`);
  if (list.duplicates > 0) skipped.push(`${formatCount(list.duplicates)} duplicate${list.duplicates === 1 ? '' : 's'}`);
  return `${formatCount(n)} ${n === 1 ? 'proxy' : 'proxies'}${skipped.length > 0 ? ` (${skipped.join(', ')} skipped)` : ''}`;
}

/** The newest check of GET /me's history whose result link has not expired, or null. */
export function latestResultLink(me: unknown): string | null {
  const history = typeof me === 'object' && me !== null ? (me as Record<string, unknown>).history : undefined;
  if (!Array.isArray(history)) return null;
  let best: { at: string; link: string } | null = null;
  for (const h of history) {
    if (typeof h !== 'object' || h === null) continue;
    const { result_url: link, scanned_at: at } = h as Record<string, unknown>;
    if (typeof link !== 'string' || link === '') continue;
    const when = typeof at === 'string' ? at : '';
    if (best === null || when > best.at) best = { at: when, link };
  }
  return best?.link ?? null;
}

/** Lines of a pasted or uploaded list: trimmed, blanks and `#` comments dropped (the server validates the rest). */
export function parseProxyList(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split(/\r\n|\r|\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    out.push(line);
  }
  return out;
}

/** "200, 301 302" -> [200, 301, 302]; '' -> undefined (server default [200]); bad input -> an error text. */
export function parseStatusCodes(text: string): number[] | undefined | { error: string } {
  const parts = text.split(/[\s,;]+/).filter((s) => s !== '');
  if (parts.length === 0) return undefined;
  const codes: number[] = [];
  for (const p of parts) {
    if (!/^\d{3}$/.test(p) || Number(p) < 100 || Number(p) > 599) return { error: `"${p}" is not an HTTP status code (100-599)` };
    codes.push(Number(p));
  }
  return codes;
}

/** The samples field: a whole number 1..10 ('' = 1); anything else an error text. */
export function parseSamples(text: string): number | { error: string } {
  const t = text.trim();
  if (t === '') return 1;
  if (!/^\d+$/.test(t) || Number(t) < 1 || Number(t) > 10) return { error: 'Samples per proxy must be a whole number from 1 to 10.' };
  return Number(t);
}

export interface CustomUrlInput {
  url: string;
  codes: string;
  text: string;
  caseSensitive: boolean;
}

export interface CustomUrlRule {
  url: string;
  requiredStatusCodes?: number[];
  requiredText?: string;
  caseSensitive?: boolean;
}

/** Form rows -> rules. Rows with an empty URL are ignored; the first bad row gives an error naming it (1-based). */
export function buildCustomUrls(rows: readonly CustomUrlInput[]): { rules: CustomUrlRule[] } | { error: string; row: number } {
  const rules: CustomUrlRule[] = [];
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    const url = r.url.trim();
    if (url === '') continue;
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return { error: `Custom URL ${i + 1}: "${url}" is not a valid URL`, row: i };
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      return { error: `Custom URL ${i + 1}: only http and https URLs can be tested`, row: i };
    }
    const codes = parseStatusCodes(r.codes);
    if (codes !== undefined && !Array.isArray(codes)) return { error: `Custom URL ${i + 1}: ${codes.error}`, row: i };
    const rule: CustomUrlRule = { url };
    if (codes !== undefined) rule.requiredStatusCodes = codes;
    if (r.text !== '') rule.requiredText = r.text;
    if (r.caseSensitive && r.text !== '') rule.caseSensitive = true;
    rules.push(rule);
  }
  return { rules };
}

/** A job id the API accepts (3..64 of [A-Za-z0-9_-]) from random bytes: "web-" + hex. */
export function jobIdFrom(bytes: Uint8Array): string {
  let hex = '';
  for (const b of bytes.slice(0, 16)) hex += b.toString(16).padStart(2, '0');
  return `web-${hex || '000'}`;
}

/** Seconds -> "45 s", "3 min 5 s", "2 h 4 min"; null/negative -> "estimating…". */
export function formatEta(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds) || seconds < 0) return 'estimating…';
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) {
    const m = Math.floor(s / 60);
    const r = s % 60;
    return r === 0 ? `${m} min` : `${m} min ${r} s`;
  }
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return m === 0 ? `${h} h` : `${h} h ${m} min`;
}

export interface ResultLinks {
  json: string;
  csv: string;
  txt: string;
}

/**
 * The three download links of a result: `result_urls` when the response has
 * them, else the `.json` link with its extension replaced (same token: the
 * signature covers the result id, not the extension). Null without a link.
 */
export function resultLinks(resultUrl: unknown, resultUrls?: unknown): ResultLinks | null {
  if (resultUrls !== null && typeof resultUrls === 'object') {
    const u = resultUrls as Record<string, unknown>;
    if (typeof u.json === 'string' && typeof u.csv === 'string' && typeof u.txt === 'string') return { json: u.json, csv: u.csv, txt: u.txt };
  }
  if (typeof resultUrl !== 'string' || resultUrl === '') return null;
  const withExt = (ext: string) => resultUrl.replace(/\.json(?=\?|#|$)/, `.${ext}`);
  return { json: resultUrl, csv: withExt('csv'), txt: withExt('txt') };
}

/**
 * A result link re-rooted on the dashboard's own origin (the service serves
 * /result/ itself), so fetching it is never cross-origin even when
 * CONTENT_URL names another host. Null when the link is not a /result/ URL.
 */
export function sameOriginResultUrl(link: string, origin: string): string | null {
  let u: URL;
  try {
    u = new URL(link, origin);
  } catch {
    return null;
  }
  const at = u.pathname.lastIndexOf('/result/');
  if (at === -1) return null;
  return `${origin}${u.pathname.slice(at)}${u.search}`;
}

/** An API error body -> one sentence for the user (status in brackets when the body has nothing). */
export function errorText(status: number, body: unknown): string {
  if (body !== null && typeof body === 'object') {
    const b = body as Record<string, unknown>;
    const msg = typeof b.message === 'string' ? b.message : '';
    const err = typeof b.error === 'string' ? b.error : '';
    if (err && msg) return `${err}: ${msg}`;
    if (err || msg) return err || msg;
  }
  if (status === 0) return 'The service could not be reached. Check that it is running and try again.';
  return `The service answered with status ${status}.`;
}

/** ISO time -> "2026-06-01 14:03 UTC" (stable, locale-free). */
export function formatTime(iso: unknown): string {
  if (typeof iso !== 'string') return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
