/**
 * Per-request bookkeeping: the request id (request-id.ts), the logger that
 * puts it on every line logged while the request is handled, and what the
 * access log needs (one JSON line per request with method, path, status, ms,
 * the account id, never the key, and the request id).
 */
import type { Logger } from '../log';
import { REQUEST_ID_HEADER, requestIdFor } from './request-id';

interface RequestState {
  t0: number;
  id: string;
  log: Logger;
  accountId: string | null;
  status: number | null;
}

const started = new WeakMap<Request, RequestState>();

/** Starts the bookkeeping of `request`: returns its request id (the client's when sane, else a new one). */
export function markStart(request: Request, log: Logger): string {
  const id = requestIdFor(request.headers.get(REQUEST_ID_HEADER));
  started.set(request, { t0: performance.now(), id, log: log.child({ requestId: id }), accountId: null, status: null });
  return id;
}

/** The request id markStart gave `request`, or null (a request the app never saw start). */
export function requestIdOf(request: Request): string | null {
  return started.get(request)?.id ?? null;
}

/** The logger for anything logged while `request` is handled: `fallback` with the request id on every line. */
export function requestLog(request: Request, fallback: Logger): Logger {
  return started.get(request)?.log ?? fallback;
}

export function markAccount(request: Request, accountId: string): void {
  const s = started.get(request);
  if (s) s.accountId = accountId;
}

export function markStatus(request: Request, status: number): void {
  const s = started.get(request);
  if (s) s.status = status;
}

export function finish(request: Request): { ms: number; accountId: string | null; status: number | null; log: Logger } | null {
  const s = started.get(request);
  if (!s) return null;
  started.delete(request);
  return { ms: Math.round((performance.now() - s.t0) * 100) / 100, accountId: s.accountId, status: s.status, log: s.log };
}
