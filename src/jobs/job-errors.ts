/**
 * The job layer's domain errors. The job layer does not know HTTP exists:
 * these carry a stable code and the facts a caller needs; src/http/errors.ts
 * alone turns them into status codes and the contract's bodies.
 *
 * Codes (stable; history rows keep the code, never the message):
 * - insufficient_quota   the reservation was refused (nothing charged)
 * - job_already_running  the client's jobId is running
 * - rate_limited         the account is at a per-account limit (running checks,
 *                        proxies in flight); nothing was reserved; retry later
 * - shutting_down        the service stops: no new checks; running ones are cancelled
 * - client_disconnected  the client closed the connection: its job is cancelled
 * - client_cancelled     the client cancelled its job (DELETE /checks/{jobId})
 * - node_lease_lost      this API node's lease lapsed: it takes no new check (nothing reserved)
 * - region_unavailable   a cluster region has no live agent: refused before anything is reserved
 * - job_failed           anything else that failed a job (logged with its cause where it happened)
 * - shard_failed         a probe shard failed (its cause says why)
 * - shard_incomplete     a shard ended without reporting every probe
 * - dispatch_failed      starting a granted shard threw
 * - illegal_transition   a bug: the actor refused a transition (job-states.ts)
 */
import { isServiceError, ServiceError } from '../errors';

export const JOB_ERROR_CODES = Object.freeze({
  INSUFFICIENT_QUOTA: 'insufficient_quota',
  JOB_ALREADY_RUNNING: 'job_already_running',
  RATE_LIMITED: 'rate_limited',
  SHUTTING_DOWN: 'shutting_down',
  CLIENT_DISCONNECTED: 'client_disconnected',
  CLIENT_CANCELLED: 'client_cancelled',
  NODE_LEASE_LOST: 'node_lease_lost',
  REGION_UNAVAILABLE: 'region_unavailable',
  SHARD_FAILED: 'shard_failed',
  SHARD_INCOMPLETE: 'shard_incomplete',
  DISPATCH_FAILED: 'dispatch_failed',
  JOB_FAILED: 'job_failed',
} as const);

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
    super(JOB_ERROR_CODES.JOB_ALREADY_RUNNING, `job ${jobId} is running`);
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
