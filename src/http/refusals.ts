/**
 * Routes that declare their schemas (Elysia's `body` / `query` / `params`):
 * what the contract answers when one of them refuses a request.
 *
 * Elysia checks a request against the route's compiled schemas after its
 * parse and transform hooks and before the handler, so the routes do their
 * key lookup and the 415 / 413 gates in the parse hook (the contract's
 * order: 401, 503, 415, 413, then 400) and register here, per request, the
 * ordered checks of each part (check-request.ts, ...). The app's one onError
 * mapping (app.ts, code VALIDATION) asks them for the contract's exact 400
 * of the value the schema refused (`Invalid timeout` with min/max, `Invalid
 * proxy type`, `Invalid request` with the field path...). Should they accept
 * it (they never should: the schemas are the contract's), the answer is the
 * generic `Invalid request` naming the field Elysia reports.
 */
import { ApiError, invalidRequest } from './api-errors';

/**
 * The parts a route's schema covers; each function throws the contract's
 * ApiError for a value its schema refused. It is given the value Elysia
 * checked, which has the schema's top-level defaults merged in (an array or
 * a string body becomes an object): a parse hook that has the value as read
 * checks that one instead.
 */
export type OrderedChecks = Partial<Record<'body' | 'query' | 'params', (value: unknown) => unknown>>;

const byRequest = new WeakMap<Request, OrderedChecks>();

/** Called by a route's parse hook: the ordered checks of this request's parts. */
export function orderedChecksOf(request: Request, checks: OrderedChecks): void {
  byRequest.set(request, checks);
}

/** Elysia's validation error: the part (`type`), the refused value, and the first failure's path. */
interface RefusedPart {
  type: string;
  value: unknown;
  valueError?: { path?: string; message?: string };
}

/** The contract's 400 for a part the route's schema refused (app.ts onError, code VALIDATION). */
export function refusal(request: Request, error: RefusedPart): ApiError {
  const check = byRequest.get(request)?.[error.type as keyof OrderedChecks];
  if (check !== undefined) {
    try {
      check(error.value);
    } catch (e) {
      if (e instanceof ApiError) return e;
      throw e;
    }
  }
  const path = (error.valueError?.path ?? '').replace(/^\//, '').replaceAll('/', '.');
  return invalidRequest(`${path === '' ? error.type : path}: ${error.valueError?.message ?? 'invalid'}`);
}
