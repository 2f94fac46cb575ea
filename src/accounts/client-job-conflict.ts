/**
 * A reservation that names a client jobId which is already running, on this
 * API node or any other: the database refuses it (src/accounts/quota-sql.ts:
 * the `busy` check, fenced by the partial unique index
 * scans_running_client_job_id_uq of db/schema.ts). Nothing was charged: the
 * statement that failed is the whole reservation.
 *
 * Pure: no I/O. The job layer turns the error (code DOMAIN_ERROR_CODES.JOB_ALREADY_RUNNING) into its domain
 * error JobAlreadyRunningError (src/jobs/ledger.ts), which the HTTP layer
 * answers with 409 `Job already running`.
 */
import { ServiceError } from '../errors';
import { DOMAIN_ERROR_CODES } from '../error-codes';

/** The partial unique index over running scans' client jobIds (db/schema.ts, migration 0002). */
export const RUNNING_CLIENT_JOB_INDEX = 'scans_running_client_job_id_uq';

/** PostgreSQL's SQLSTATE for a unique violation. */
export const UNIQUE_VIOLATION = '23505';

/** A running scan already carries `clientJobId`: nothing was reserved (code DOMAIN_ERROR_CODES.JOB_ALREADY_RUNNING). */
export function clientJobRunning(clientJobId: string, options?: { cause?: unknown }): ServiceError {
  return new ServiceError(DOMAIN_ERROR_CODES.JOB_ALREADY_RUNNING, `a job with id ${clientJobId} is running: nothing reserved`, options);
}

function field(o: object, name: string): unknown {
  return (o as Record<string, unknown>)[name];
}

/**
 * Whether `err`, or an error in its `cause` chain, is a unique violation
 * (23505) on RUNNING_CLIENT_JOB_INDEX. drizzle wraps a driver's error
 * (DrizzleQueryError, the driver's error as `cause`); postgres.js names the
 * index `constraint_name`, PGlite `constraint`. Another unique violation
 * (e.g. scans.job_id) is not this conflict.
 */
export function isRunningClientJobConflict(err: unknown): boolean {
  const seen = new Set<unknown>();
  for (let e = err; typeof e === 'object' && e !== null && !seen.has(e); e = field(e, 'cause')) {
    seen.add(e);
    if (field(e, 'code') !== UNIQUE_VIOLATION) continue;
    const index = field(e, 'constraint_name') ?? field(e, 'constraint');
    if (index === RUNNING_CLIENT_JOB_INDEX) return true;
  }
  return false;
}

/**
 * What a failed reservation throws: clientJobRunning (the database error
 * as its cause) for a conflict on RUNNING_CLIENT_JOB_INDEX when the
 * reservation named a client jobId, else `err` unchanged.
 */
export function reservationError(err: unknown, clientJobId: string | null | undefined): unknown {
  if (clientJobId === null || clientJobId === undefined || !isRunningClientJobConflict(err)) return err;
  return clientJobRunning(clientJobId, { cause: err });
}
