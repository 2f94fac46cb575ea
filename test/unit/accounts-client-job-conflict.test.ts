/**
 * src/accounts/client-job-conflict.ts: which database errors are "this client
 * jobId is already running" (a unique violation on the partial index over
 * running scans), in the shapes both drivers throw through drizzle. The same
 * mapping against real errors of both drivers: test/integration/accounts-client-job.test.ts.
 */
import { describe, expect, test } from 'bun:test';
import {
  clientJobRunning,
  isRunningClientJobConflict,
  reservationError,
  RUNNING_CLIENT_JOB_INDEX,
  UNIQUE_VIOLATION,
} from '../../src/accounts/client-job-conflict';
import { isServiceError } from '../../src/errors';
import { DOMAIN_ERROR_CODES } from '../../src/error-codes';

/** What postgres.js throws (PostgresError): the index as `constraint_name`. */
const postgresJs = (code: string, index?: string) => Object.assign(new Error('duplicate key value'), { code, ...(index !== undefined ? { constraint_name: index } : {}) });
/** What PGlite throws (DatabaseError): the index as `constraint`. */
const pglite = (code: string, index?: string) => Object.assign(new Error('duplicate key value'), { code, ...(index !== undefined ? { constraint: index } : {}) });
/** drizzle's DrizzleQueryError: the driver's error as its cause. */
const drizzle = (cause: unknown) => Object.assign(new Error('Failed query: WITH node AS ...', { cause }), { query: 'WITH ...', params: [] });

describe('isRunningClientJobConflict', () => {
  test('a unique violation on the running-jobId index, from either driver, bare or wrapped by drizzle', () => {
    for (const e of [postgresJs(UNIQUE_VIOLATION, RUNNING_CLIENT_JOB_INDEX), pglite(UNIQUE_VIOLATION, RUNNING_CLIENT_JOB_INDEX)]) {
      expect(isRunningClientJobConflict(e)).toBe(true);
      expect(isRunningClientJobConflict(drizzle(e))).toBe(true);
      expect(isRunningClientJobConflict(drizzle(drizzle(e)))).toBe(true);
    }
  });

  test('anything else is not: another index, another SQLSTATE, no index named, not an error', () => {
    expect(isRunningClientJobConflict(drizzle(postgresJs(UNIQUE_VIOLATION, 'scans_job_id_unique')))).toBe(false);
    expect(isRunningClientJobConflict(drizzle(pglite(UNIQUE_VIOLATION, 'accounts_email_unique')))).toBe(false);
    expect(isRunningClientJobConflict(drizzle(postgresJs('23514', RUNNING_CLIENT_JOB_INDEX)))).toBe(false); // check violation
    expect(isRunningClientJobConflict(drizzle(pglite('40001', RUNNING_CLIENT_JOB_INDEX)))).toBe(false);
    expect(isRunningClientJobConflict(postgresJs(UNIQUE_VIOLATION))).toBe(false);
    expect(isRunningClientJobConflict(new Error(RUNNING_CLIENT_JOB_INDEX))).toBe(false);
    for (const v of [null, undefined, 'x', 23505, { code: 23505, constraint: RUNNING_CLIENT_JOB_INDEX }]) expect(isRunningClientJobConflict(v)).toBe(false);
  });

  test('a cause chain that loops ends', () => {
    const a = new Error('a') as Error & { cause?: unknown };
    const b = new Error('b', { cause: a });
    a.cause = b;
    expect(isRunningClientJobConflict(a)).toBe(false);
  });
});

describe('reservationError', () => {
  test('the conflict becomes job_already_running (the job layer\'s code), the database error its cause', () => {
    const db = drizzle(pglite(UNIQUE_VIOLATION, RUNNING_CLIENT_JOB_INDEX));
    const e = reservationError(db, 'job-x');
    expect(isServiceError(e, DOMAIN_ERROR_CODES.JOB_ALREADY_RUNNING)).toBe(true);
    expect((e as Error).message).toContain('job-x');
    expect((e as Error).cause).toBe(db);
  });

  test('every other error passes unchanged; so does a conflict when the reservation named no jobId', () => {
    const other = drizzle(postgresJs(UNIQUE_VIOLATION, 'scans_job_id_unique'));
    expect(reservationError(other, 'job-x')).toBe(other);
    const conflict = drizzle(postgresJs(UNIQUE_VIOLATION, RUNNING_CLIENT_JOB_INDEX));
    expect(reservationError(conflict, null)).toBe(conflict);
    expect(reservationError(conflict, undefined)).toBe(conflict);
  });

  test('clientJobRunning names the jobId', () => {
    const e = clientJobRunning('abc');
    expect(e.code).toBe(DOMAIN_ERROR_CODES.JOB_ALREADY_RUNNING);
    expect(e.message).toContain('abc');
  });
});
