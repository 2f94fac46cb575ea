/**
 * The one place where anything thrown in the HTTP layer becomes a response.
 * ApiError -> its status, headers and exact body. Elysia's own errors are
 * mapped onto the contract (unknown route -> 404, parse/validation -> 400
 * "Invalid request", never 422). Everything else -> the seed's 500 body, with
 * the stack only in the log.
 */
import { ApiError, internalError, invalidRequest, notFound } from './api-errors';
import type { Logger } from '../log';

export const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' } as const;

export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...JSON_HEADERS, ...headers } });
}

export function apiErrorResponse(err: ApiError): Response {
  return jsonResponse(err.status, err.body, err.headers);
}

/** Maps an Elysia error code + error to an ApiError. */
export function toApiError(code: string | number, error: unknown, log: Logger, ctx: { method: string; path: string }): ApiError {
  if (error instanceof ApiError) return error;
  switch (code) {
    case 'NOT_FOUND':
      return notFound(`No route ${ctx.method} ${ctx.path}`);
    case 'PARSE':
      return invalidRequest('body: malformed request body');
    case 'VALIDATION':
      // Schemas are not used for validation (pure validators are), but never leak one if it happens.
      return invalidRequest('request: invalid input');
    case 'INVALID_COOKIE_SIGNATURE':
      return invalidRequest('cookie: invalid signature');
    default: {
      log.error('unhandled error', { method: ctx.method, path: ctx.path, code: String(code), err: error });
      return internalError(error);
    }
  }
}
