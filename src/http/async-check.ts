/**
 * Asynchronous submission of a check (pure): whether POST /check or
 * /check-raw asks for it, and the 202 that answers it.
 *
 * Asked by `Prefer: respond-async` (RFC 7240: a comma-separated list of
 * preferences, names case-insensitive, each with an optional `=value` and
 * `;parameters`; several Prefer headers read as one list) or by the query
 * parameter `async=true`. `async=false` asks for the synchronous answer
 * whatever Prefer says; any other value, or `async` given twice, is a 400
 * `Invalid request` naming it. Nothing else changes: without either, the
 * request is the synchronous one it always was.
 *
 * The 202: `Location: /checks/{jobId}` (relative, as RFC 9110 allows),
 * `Preference-Applied: respond-async` when the preference was what asked,
 * and `{jobId, status: "running", status_url, progress_url}` with absolute
 * URLs from BASE_URL (progress_url: the /ws?jobId= WebSocket).
 */
import type { CheckAcceptedBody } from '../contract/jobs';
import { invalidRequest } from './api-errors';
import { jsonResponse } from './errors';

export type AsyncAsk = 'prefer' | 'query' | null;

/** Whether `respond-async` is among the preferences of a Prefer header value (null: no header). */
export function prefersRespondAsync(prefer: string | null): boolean {
  if (prefer === null) return false;
  for (const item of splitOutsideQuotes(prefer, ',')) {
    const name = splitOutsideQuotes(item, ';')[0]!.split('=')[0]!.trim().toLowerCase();
    if (name === 'respond-async') return true;
  }
  return false;
}

/** How the request asks for an asynchronous answer, or null when it does not. Throws a 400 for a bad `async`. */
export function asyncAsk(headers: Headers, query: URLSearchParams): AsyncAsk {
  const values = query.getAll('async');
  if (values.length > 1) throw invalidRequest('async: given more than once');
  const q = values[0];
  if (q !== undefined) {
    if (q === 'true') return 'query';
    if (q === 'false') return null;
    throw invalidRequest('async: expected true or false');
  }
  return prefersRespondAsync(headers.get('prefer')) ? 'prefer' : null;
}

/** The 202's body: the contract's CheckAccepted (src/contract/jobs.ts). */
export type AcceptedBody = CheckAcceptedBody;

/** Where a job's resource and its progress live, from BASE_URL (no trailing slash needed). */
export function jobUrls(baseUrl: string, jobId: string): { location: string; statusUrl: string; progressUrl: string } {
  const base = baseUrl.replace(/\/+$/, '');
  const location = `/checks/${encodeURIComponent(jobId)}`;
  return {
    location,
    statusUrl: `${base}${location}`,
    progressUrl: `${base.replace(/^http/i, 'ws')}/ws?jobId=${encodeURIComponent(jobId)}`,
  };
}

export function acceptedResponse(baseUrl: string, jobId: string, ask: Exclude<AsyncAsk, null>): Response {
  const u = jobUrls(baseUrl, jobId);
  const body: AcceptedBody = { jobId, status: 'running', status_url: u.statusUrl, progress_url: u.progressUrl };
  return jsonResponse(202, body, { Location: u.location, ...(ask === 'prefer' ? { 'Preference-Applied': 'respond-async' } : {}) });
}

/** `text` split on `sep` where it is not inside a double-quoted string (backslash escapes honoured). */
function splitOutsideQuotes(text: string, sep: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted && c === '\\' && i + 1 < text.length) {
      cur += c + text[++i];
      continue;
    }
    if (c === '"') quoted = !quoted;
    if (c === sep && !quoted) {
      out.push(cur);
      cur = '';
    } else {
      cur += c;
    }
  }
  out.push(cur);
  return out;
}
