/**
 * The `cursor` of `GET /pools/{id}/proxies`: where a page ended, as an
 * opaque string (keyset pagination). Pure.
 *
 * A cursor holds the sort it belongs to, the last row's sort key (as the
 * database printed it, proxies-sql.ts `sort_key`) and its id. The next page
 * is every row after that (key, id) pair in the sort's order, so rows
 * inserted meanwhile never shift a page (no offsets): a row is listed once,
 * unless its own sort key changes between two pages (a re-check moved it).
 *
 * Wire form: base64url of the JSON array [1, sort, id, key]. decodeCursor
 * answers null for anything that is not exactly such an array with a key of
 * the sort's own form (the SQL casts it, so nothing else may reach it).
 */
import { PROXY_SORTS, type PageCursor, type ProxySort } from './query';

export type { PageCursor } from './query';

const VERSION = 1;
/** Longer cursors are refused before any decoding. */
export const CURSOR_MAX_LENGTH = 200;

const KEY_FORMS: Readonly<Record<ProxySort, RegExp>> = Object.freeze({
  latency: /^-?[0-9]{1,10}$/,
  uptime: /^-?[0-9]+(\.[0-9]+)?(e[+-]?[0-9]+)?$/,
  checked: /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}$/,
});

/** Whether `key` has the form of `sort`'s keys (and, for latency, fits an int4). */
export function validSortKey(sort: ProxySort, key: string): boolean {
  if (!KEY_FORMS[sort].test(key)) return false;
  if (sort === 'latency') return Math.abs(Number(key)) <= 2_147_483_647;
  if (sort === 'uptime') return Number.isFinite(Number(key));
  return !Number.isNaN(Date.parse(`${key}Z`));
}

export function encodeCursor(c: PageCursor): string {
  return Buffer.from(JSON.stringify([VERSION, c.sort, c.id, c.key])).toString('base64url');
}

export function decodeCursor(text: string): PageCursor | null {
  if (text.length === 0 || text.length > CURSOR_MAX_LENGTH || !/^[A-Za-z0-9_-]+$/.test(text)) return null;
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!Array.isArray(v) || v.length !== 4 || v[0] !== VERSION) return null;
  const [, sort, id, key] = v as unknown[];
  if (typeof sort !== 'string' || !(PROXY_SORTS as readonly string[]).includes(sort)) return null;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) return null;
  if (typeof key !== 'string' || !validSortKey(sort as ProxySort, key)) return null;
  return { sort: sort as ProxySort, key, id };
}
