/**
 * The judge's answer body (pure): what the judge renders and what a probe
 * reads back. JSON of the form
 *
 *   {"judge":"proxycheck/1","nonce":"<n or null>","remoteAddress":"1.2.3.4",
 *    "requestLine":"GET /judge?n=... HTTP/1.1","headers":[["Host","..."],...]}
 *
 * `readJudgeBody` never throws: anything that is not exactly this shape with
 * the expected nonce is `{ok: false}` (a captive page, a cache, a truncated
 * body, a replay of another probe's answer).
 *
 * The rendered body is ASCII only (JSON escapes for anything else), so a
 * proxy that converts between ASCII-compatible charsets leaves its bytes
 * as they were; a judge with a key signs them (integrity.ts appends a
 * last member, `sig`, which readJudgeBody ignores).
 */

export const JUDGE_MARK = 'proxycheck/1';

export interface JudgeEcho {
  requestLine: string;
  headers: [string, string][];
  remoteAddress: string;
  nonce: string | null;
}

export type JudgeRead =
  | { ok: true; headers: [string, string][]; remoteAddress: string; requestLine: string }
  | { ok: false };

const NOT_OK: JudgeRead = Object.freeze({ ok: false }) as JudgeRead;

const NOT_ASCII = /[^\x00-\x7e]/;
const NOT_ASCII_ALL = /[^\x00-\x7e]/g;
const escapeChar = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

export function renderJudgeBody(j: JudgeEcho): string {
  const json = JSON.stringify({
    judge: JUDGE_MARK,
    nonce: j.nonce,
    remoteAddress: j.remoteAddress,
    requestLine: j.requestLine,
    headers: j.headers,
  });
  // outside strings JSON.stringify writes ASCII only, so every such char is inside one: \uXXXX is the same string
  return NOT_ASCII.test(json) ? json.replace(NOT_ASCII_ALL, escapeChar) : json;
}

/** Reads a judge body; ok only when it is well-formed and carries `expectedNonce` exactly. */
export function readJudgeBody(body: Buffer | string, expectedNonce: string): JudgeRead {
  if (expectedNonce.length === 0) return NOT_OK;
  // cheap reject before parsing: the nonce must appear verbatim
  if (typeof body === 'string' ? body.indexOf(expectedNonce) === -1 : body.indexOf(expectedNonce) === -1) return NOT_OK;
  let v: unknown;
  try {
    v = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch {
    return NOT_OK;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return NOT_OK;
  const o = v as Record<string, unknown>;
  if (o.judge !== JUDGE_MARK || o.nonce !== expectedNonce) return NOT_OK;
  if (typeof o.remoteAddress !== 'string' || typeof o.requestLine !== 'string' || !Array.isArray(o.headers)) return NOT_OK;
  const headers = o.headers as unknown[];
  for (const h of headers) {
    if (!Array.isArray(h) || h.length !== 2 || typeof h[0] !== 'string' || typeof h[1] !== 'string') return NOT_OK;
  }
  return { ok: true, headers: headers as [string, string][], remoteAddress: o.remoteAddress, requestLine: o.requestLine };
}

/**
 * The nonce (query parameter `n`) of a request target: origin-form
 * (`/judge?n=abc`) or absolute-form (`http://h/judge?a=1&n=abc`). Null when absent
 * or not decodable. The first `n` wins.
 */
export function extractNonce(pathWithQuery: string): string | null {
  const q = pathWithQuery.indexOf('?');
  if (q === -1) return null;
  const hash = pathWithQuery.indexOf('#', q);
  const query = hash === -1 ? pathWithQuery.slice(q + 1) : pathWithQuery.slice(q + 1, hash);
  for (const pair of query.split('&')) {
    const eq = pair.indexOf('=');
    const key = eq === -1 ? pair : pair.slice(0, eq);
    if (key !== 'n') continue;
    if (eq === -1) return null;
    try {
      return decodeURIComponent(pair.slice(eq + 1).replace(/\+/g, ' '));
    } catch {
      return null;
    }
  }
  return null;
}
