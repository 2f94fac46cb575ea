/**
 * Per-request bookkeeping for the access log: one JSON line per request with
 * method, path, status, ms and the account id (never the key).
 */
const started = new WeakMap<Request, { t0: number; accountId: string | null; status: number | null }>();

export function markStart(request: Request): void {
  started.set(request, { t0: performance.now(), accountId: null, status: null });
}

export function markAccount(request: Request, accountId: string): void {
  const s = started.get(request);
  if (s) s.accountId = accountId;
}

export function markStatus(request: Request, status: number): void {
  const s = started.get(request);
  if (s) s.status = status;
}

export function finish(request: Request): { ms: number; accountId: string | null; status: number | null } | null {
  const s = started.get(request);
  if (!s) return null;
  started.delete(request);
  return { ms: Math.round((performance.now() - s.t0) * 100) / 100, accountId: s.accountId, status: s.status };
}
