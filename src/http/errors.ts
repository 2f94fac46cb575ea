/**
 * The one place where anything thrown in the HTTP layer becomes a response.
 * ApiError -> its status, headers and exact body. Domain errors of the job
 * layer (src/jobs/job-errors.ts) -> the contract's status and body
 * (domainToApiError). Elysia's own errors are mapped onto the contract
 * (unknown route -> 404, parse/validation -> 400 "Invalid request", never
 * 422). Everything else -> the seed's fixed 500 body, with the detail only in
 * the log: no message, path or SQL of an internal error reaches a user.
 */
import { ApiError, insufficientChecks, internalError, invalidRequest, jobAlreadyRunning, jobCancelled, notFound, regionUnavailable, serviceUnavailable, tooManyRequests } from './api-errors';
import { isServiceError } from '../errors';
import { InsufficientQuotaError, JOB_ERROR_CODES, JobAlreadyRunningError, RateLimitedError, RegionUnavailableError, type AccountLimit } from '../jobs/job-errors';
import type { Logger } from '../log';
import { REQUEST_ID_HEADER } from './request-id';

export const SHUTTING_DOWN_MESSAGE = 'The service is shutting down; retry in a moment';

const LIMIT_MESSAGES: Record<AccountLimit, (max: number) => string> = {
  concurrent_jobs: (max) => `At most ${max} checks may run at once per account (server setting MAX_JOBS_PER_ACCOUNT)`,
  proxies_in_flight: (max) => `At most ${max} unique proxies may be checked at once per account (server setting MAX_PROXIES_IN_FLIGHT_PER_ACCOUNT)`,
};

/** A domain error's contract response, or null when it has none (then it is a 500). */
export function domainToApiError(err: unknown): ApiError | null {
  if (err instanceof ApiError) return err;
  if (err instanceof InsufficientQuotaError) return insufficientChecks(err.required, err.available);
  if (err instanceof JobAlreadyRunningError) return jobAlreadyRunning(err.jobId);
  if (err instanceof RateLimitedError) {
    // a 429 says Remaining 0 and Reset = Retry-After whatever refused it (the route's RateLimit-Limit stays)
    const headers = { 'RateLimit-Remaining': '0', 'RateLimit-Reset': String(err.retryAfterS) };
    return tooManyRequests(err.retryAfterS, `${LIMIT_MESSAGES[err.limit](err.max)}; retry in ${err.retryAfterS} s`, headers);
  }
  if (err instanceof RegionUnavailableError) return regionUnavailable(err.region);
  if (isServiceError(err, JOB_ERROR_CODES.SHUTTING_DOWN)) return serviceUnavailable(SHUTTING_DOWN_MESSAGE);
  // this node lost its lease to the database: nothing was reserved; another node (or this one, soon) takes it
  if (isServiceError(err, JOB_ERROR_CODES.NODE_LEASE_LOST)) return serviceUnavailable('This server cannot take checks right now; retry in a moment');
  // nobody reads it (the client is gone); 499 is what the request log shows
  if (isServiceError(err, JOB_ERROR_CODES.CLIENT_DISCONNECTED)) return new ApiError(499, { error: 'Client closed request', message: 'The client closed the connection; the job was cancelled' });
  // a synchronous check cancelled by DELETE /checks/{jobId} from elsewhere
  if (isServiceError(err, JOB_ERROR_CODES.CLIENT_CANCELLED)) return jobCancelled();
  // already logged with its job's context where it happened (src/jobs/service.ts)
  if (isServiceError(err, JOB_ERROR_CODES.JOB_FAILED)) return internalError(err);
  return null;
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
