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
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { ApiError, invalidRequest } from './api-errors';

/**
 * A query or header the route checks itself (its handler's ordered checks,
 * which answer a bad one with its exact 400): declared for the OpenAPI
 * document, not checked by Elysia (its `noValidate`).
 */
export const documentedOnly = <T extends TSchema>(schema: T): T => ({ ...schema, noValidate: true });

/**
 * A schema as a route declares it (a body, a query): Elysia refuses an
 * object member its schema does not name (it takes an object schema that
 * says nothing of `additionalProperties` as closed), where the contract
 * ignores one, so every such object of the copy says it is open.
 */
export function open<T extends TSchema>(schema: T): T {
  const walk = (s: unknown): unknown => {
    if (Array.isArray(s)) return s.map(walk);
    if (typeof s !== 'object' || s === null) return s;
    const out: Record<string | symbol, unknown> = {};
    for (const k of Reflect.ownKeys(s)) out[k] = walk((s as Record<string | symbol, unknown>)[k]);
    if (out.type === 'object' && out.additionalProperties === undefined) out.additionalProperties = true;
    return out;
  };
  return walk(schema) as T;
}

/**
 * The contract's "null is absent" for a parsed JSON body, before its schema
 * (which says absent) sees it: a member that is null is dropped unless its
 * schema takes null (webhooks' `pools: null`, "all pools"), at the top and
 * in the objects the schema nests (a custom URL rule, a pool's source).
 * The value is copied only where something is dropped; anything that is not
 * the object (or array of objects) its schema says is returned as it is.
 */
export function nullsAsAbsent(schema: TSchema, value: unknown): unknown {
  if (schema.type === 'object' && schema.properties !== undefined && typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const properties = schema.properties as Record<string, TSchema>;
    let out = value as Record<string, unknown>;
    for (const [k, v] of Object.entries(out)) {
      if (!Object.hasOwn(properties, k)) continue;
      const inner = v === null ? (Value.Check(properties[k]!, null) ? null : undefined) : nullsAsAbsent(properties[k]!, v);
      if (inner === v) continue;
      if (out === value) out = { ...out };
      if (inner === undefined) delete out[k];
      else out[k] = inner;
    }
    return out;
  }
  if (schema.type === 'array' && (schema.items as TSchema | undefined)?.type === 'object' && Array.isArray(value)) {
    const items = value.map((v) => nullsAsAbsent(schema.items as TSchema, v));
    return items.some((v, i) => v !== value[i]) ? items : value;
  }
  return value;
}

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

/** Called once the route's schemas have accepted the request (app.ts, beforeHandle): its errors from now on are the handler's. */
export function settled(request: Request): void {
  byRequest.delete(request);
}

/**
 * Whether `request` is between its parse hook and its handler: the time
 * Elysia checks its schemas. Elysia's validation error can fail to be built
 * for a hostile value (in development mode it formats the value as text: a
 * JSON member named `toString` makes that a TypeError), which reaches
 * onError as an unknown error; app.ts answers it as a refusal too.
 */
export function checking(request: Request): boolean {
  return byRequest.has(request);
}

/**
 * The contract's 400 for a part the route's schema refused (app.ts onError,
 * code VALIDATION; a part not known: each part's checks in turn).
 */
export function refusal(request: Request, error: RefusedPart): ApiError {
  const checks = byRequest.get(request) ?? {};
  const parts = error.type in checks ? [checks[error.type as keyof OrderedChecks]] : Object.values(checks);
  for (const check of parts) {
    try {
      check?.(error.value);
    } catch (e) {
      if (e instanceof ApiError) return e;
      throw e;
    }
  }
  const path = (error.valueError?.path ?? '').replace(/^\//, '').replaceAll('/', '.');
  return invalidRequest(`${path === '' ? error.type : path}: ${error.valueError?.message ?? 'invalid'}`);
}
