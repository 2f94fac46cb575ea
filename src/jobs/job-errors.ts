/**
 * The job layer's domain errors. The job layer does not know HTTP exists:
 * these carry a stable code (src/error-codes.ts: JOB_ERROR_CODES, and the
 * domain's NODE_LEASE_LOST and JOB_ALREADY_RUNNING) and the facts a caller
 * needs; src/http/errors.ts alone turns them into status codes and the
 * contract's bodies.
 *
 * CALLER_ERROR_CODES are the answers: CheckService.run rejects with these as
 * they are; anything else that ends a job becomes job_failed. The HTTP layer
 * has one answer per caller code (a table keyed by CallerErrorCode: a code
 * added here without one does not compile), and test/unit/http-errors.test.ts
 * checks each answer against the errors this layer really throws.
 */
import { isServiceError, ServiceError } from '../errors';
import { DOMAIN_ERROR_CODES, JOB_ERROR_CODES } from '../error-codes';

/** What CheckService.run rejects with as it is (each has an HTTP answer); everything else becomes job_failed. */
export const CALLER_ERROR_CODES = Object.freeze([
  JOB_ERROR_CODES.INSUFFICIENT_QUOTA,
  DOMAIN_ERROR_CODES.JOB_ALREADY_RUNNING,
  JOB_ERROR_CODES.RATE_LIMITED,
  JOB_ERROR_CODES.REGION_UNAVAILABLE,
  JOB_ERROR_CODES.SHUTTING_DOWN,
  JOB_ERROR_CODES.CLIENT_DISCONNECTED,
  JOB_ERROR_CODES.CLIENT_CANCELLED,
  DOMAIN_ERROR_CODES.NODE_LEASE_LOST,
  JOB_ERROR_CODES.JOB_FAILED,
] as const);
export type CallerErrorCode = (typeof CALLER_ERROR_CODES)[number];

/** The reservation was refused: `required` units, `available` in the account. */
export class InsufficientQuotaError extends ServiceError {
  constructor(
    readonly required: number,
    readonly available: number,
  ) {
    super(JOB_ERROR_CODES.INSUFFICIENT_QUOTA, `needs ${required} checks, ${available} available`);
    this.name = 'InsufficientQuotaError';
  }
}

/** The client's jobId names a job that is still running. */
export class JobAlreadyRunningError extends ServiceError {
  constructor(readonly jobId: string) {
    super(DOMAIN_ERROR_CODES.JOB_ALREADY_RUNNING, `job ${jobId} is running`);
    this.name = 'JobAlreadyRunningError';
  }
}

/** Which per-account limit refused a check. */
export type AccountLimit = 'concurrent_jobs' | 'proxies_in_flight';

/**
 * The account is at a per-account limit: `limit` names it, `max` is its value,
 * `retryAfterS` a hint in whole seconds. Thrown before anything is reserved.
 */
export class RateLimitedError extends ServiceError {
  constructor(
    readonly limit: AccountLimit,
    readonly max: number,
    readonly retryAfterS: number,
  ) {
    super(JOB_ERROR_CODES.RATE_LIMITED, `account at its ${limit} limit (${max})`);
    this.name = 'RateLimitedError';
  }
}

/** No live agent serves the region (a cluster): thrown before anything is reserved. */
export class RegionUnavailableError extends ServiceError {
  constructor(readonly region: string) {
    super(JOB_ERROR_CODES.REGION_UNAVAILABLE, `no live agent in region ${region}`);
    this.name = 'RegionUnavailableError';
  }
}

export const shuttingDown = () => new ServiceError(JOB_ERROR_CODES.SHUTTING_DOWN, 'the service is shutting down');
export const clientDisconnected = () => new ServiceError(JOB_ERROR_CODES.CLIENT_DISCONNECTED, 'the client closed the connection');
export const clientCancelled = () => new ServiceError(JOB_ERROR_CODES.CLIENT_CANCELLED, 'the client cancelled the job');

/** Stopped by its client (a closed connection, or DELETE /checks/{jobId}): pays for the probes made, the rest is refunded. */
export function isStoppedByClient(err: unknown): boolean {
  return isServiceError(err, JOB_ERROR_CODES.CLIENT_DISCONNECTED) || isServiceError(err, JOB_ERROR_CODES.CLIENT_CANCELLED);
}

const CALLER_CODES: ReadonlySet<string> = new Set(CALLER_ERROR_CODES);

/** The caller codes whose answer needs the facts of their class: a bare ServiceError of such a code is no answer. */
const CALLER_CLASSES: Partial<Record<CallerErrorCode, abstract new (...args: never[]) => ServiceError>> = {
  [JOB_ERROR_CODES.INSUFFICIENT_QUOTA]: InsufficientQuotaError,
  [DOMAIN_ERROR_CODES.JOB_ALREADY_RUNNING]: JobAlreadyRunningError,
  [JOB_ERROR_CODES.RATE_LIMITED]: RateLimitedError,
  [JOB_ERROR_CODES.REGION_UNAVAILABLE]: RegionUnavailableError,
};

/** An answer for the caller: a ServiceError with a code of CALLER_ERROR_CODES (of its class, where the code has one). */
export function isCallerError(err: unknown): err is ServiceError & { code: CallerErrorCode } {
  if (!isServiceError(err) || !CALLER_CODES.has(err.code)) return false;
  const cls = CALLER_CLASSES[err.code as CallerErrorCode];
  return cls === undefined || err instanceof cls;
}
