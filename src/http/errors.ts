/**
 * The one place where anything thrown in the HTTP layer becomes a response.
 * ApiError -> its status, headers and exact body. The errors the job layer
 * passes to its caller (CALLER_ERROR_CODES, src/jobs/job-errors.ts) -> the
 * contract's status and body (domainToApiError: one answer per code); the
 * pools' PoolLimitError (src/pools/errors.ts) -> 429 / 413.
 * Elysia's own errors are mapped onto the contract (unknown route -> 404,
 * parse/validation -> 400 "Invalid request", never 422). Everything else -> the seed's fixed 500 body, with the detail only in
 * the log: no message, path or SQL of an internal error reaches a user.
 */
import {
  ApiError,
  insufficientChecks,
  internalError,
  invalidRequest,
  jobAlreadyRunning,
  jobCancelled,
  notFound,
  regionUnavailable,
  serviceUnavailable,
  tooManyPoolProxies,
  tooManyPools,
  tooManyRequests,
} from './api-errors';
import type { ServiceError } from '../errors';
import { DOMAIN_ERROR_CODES, JOB_ERROR_CODES } from '../error-codes';
import { InsufficientQuotaError, isCallerError, JobAlreadyRunningError, RateLimitedError, RegionUnavailableError, type AccountLimit, type CallerErrorCode } from '../jobs/job-errors';
import type { Logger } from '../log';
import { PoolLimitError } from '../pools/errors';
import { REQUEST_ID_HEADER } from './request-id';

export const SHUTTING_DOWN_MESSAGE = 'The service is shutting down; retry in a moment';

const LIMIT_MESSAGES: Record<AccountLimit, (max: number) => string> = {
  concurrent_jobs: (max) => `At most ${max} checks may run at once per account (server setting MAX_JOBS_PER_ACCOUNT)`,
  proxies_in_flight: (max) => `At most ${max} unique proxies may be checked at once per account (twice the server setting MAX_PROXIES)`,
};

/**
 * The answer to each error the job layer passes to its caller as it is
 * (CALLER_ERROR_CODES): one entry per code, so a caller code without an
 * answer does not compile. null: the error is not the one that code promises
 * (then it is a 500, logged by toApiError).
 */
const CALLER_ANSWERS: { readonly [C in CallerErrorCode]: (err: ServiceError) => ApiError | null } = {
  [JOB_ERROR_CODES.INSUFFICIENT_QUOTA]: (err) => (err instanceof InsufficientQuotaError ? insufficientChecks(err.required, err.available) : null),
  [DOMAIN_ERROR_CODES.JOB_ALREADY_RUNNING]: (err) => (err instanceof JobAlreadyRunningError ? jobAlreadyRunning(err.jobId) : null),
  // a 429 says Remaining 0 and Reset = Retry-After whatever refused it (the route's RateLimit-Limit stays)
  [JOB_ERROR_CODES.RATE_LIMITED]: (err) =>
    err instanceof RateLimitedError
      ? tooManyRequests(err.retryAfterS, `${LIMIT_MESSAGES[err.limit](err.max)}; retry in ${err.retryAfterS} s`, {
          'RateLimit-Remaining': '0',
          'RateLimit-Reset': String(err.retryAfterS),
        })
      : null,
  [JOB_ERROR_CODES.REGION_UNAVAILABLE]: (err) => (err instanceof RegionUnavailableError ? regionUnavailable(err.region) : null),
  [JOB_ERROR_CODES.SHUTTING_DOWN]: () => serviceUnavailable(SHUTTING_DOWN_MESSAGE),
  // this node lost its lease to the database: nothing was reserved; another node (or this one, soon) takes it
  [DOMAIN_ERROR_CODES.NODE_LEASE_LOST]: () => serviceUnavailable('This server cannot take checks right now; retry in a moment'),
  // nobody reads it (the client is gone); 499 is what the request log shows
  [JOB_ERROR_CODES.CLIENT_DISCONNECTED]: () => new ApiError(499, { error: 'Client closed request', message: 'The client closed the connection; the job was cancelled' }),
  // a synchronous check cancelled by DELETE /checks/{jobId} from elsewhere
  [JOB_ERROR_CODES.CLIENT_CANCELLED]: () => jobCancelled(),
  // already logged with its job's context where it happened (src/jobs/service.ts)
  [JOB_ERROR_CODES.JOB_FAILED]: (err) => internalError(err),
};

/** A domain error's contract response, or null when it has none (then it is a 500). */
export function domainToApiError(err: unknown): ApiError | null {
  if (err instanceof ApiError) return err;
  // a pool change that would pass a limit (nothing written): pools per account 429, proxies 413
  if (err instanceof PoolLimitError) return err.limit === 'pools_per_account' ? tooManyPools(err.max) : tooManyPoolProxies(err.max, err.limit === 'proxies_per_pool' ? 'pool' : 'account');
  return isCallerError(err) ? CALLER_ANSWERS[err.code](err) : null;
}

export const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' } as const;

export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...JSON_HEADERS, ...headers } });
}

/**
 * The response of `err`. With the request's id (request-id.ts) the response
 * carries it in X-Request-Id, and a 500 body adds it as `request_id` (the one
 * field the contract's fixed 500 body gains): what the user quotes to find the
 * log lines of the failure.
 */
export function apiErrorResponse(err: ApiError, requestId: string | null = null): Response {
  if (requestId === null) return jsonResponse(err.status, err.body, err.headers);
  const body = err.status === 500 ? { ...err.body, request_id: requestId } : err.body;
  return jsonResponse(err.status, body, { ...err.headers, [REQUEST_ID_HEADER]: requestId });
}

/** Maps an Elysia error code + error to an ApiError. */
export function toApiError(code: string | number, error: unknown, log: Logger, ctx: { method: string; path: string }): ApiError {
  const mapped = domainToApiError(error);
  if (mapped !== null) return mapped;
  switch (code) {
    case 'NOT_FOUND':
      return notFound(`No route ${ctx.method} ${ctx.path}`);
    case 'PARSE': {
      // a route's own parse hook (the key and the 415 / 413 gates before its schema: refusals.ts) threw: Elysia wraps it
      const cause = error instanceof Error ? error.cause : undefined;
      if (cause instanceof Error && !(cause instanceof SyntaxError)) return toApiError('UNKNOWN', cause, log, ctx);
      return invalidRequest('body: malformed request body');
    }
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
