/**
 * src/http/errors.ts: the one place errors become responses. Domain errors of
 * the job layer map to the contract's statuses and bodies; nothing internal
 * (messages, paths, SQL) reaches a body.
 */
import { describe, expect, test } from 'bun:test';
import { ServiceError } from '../../src/errors';
import { DOMAIN_ERROR_CODES, JOB_ERROR_CODES } from '../../src/error-codes';
import { ApiError } from '../../src/http/api-errors';
import { domainToApiError, toApiError } from '../../src/http/errors';
import {
  CALLER_ERROR_CODES,
  clientCancelled,
  clientDisconnected,
  InsufficientQuotaError,
  isCallerError,
  JobAlreadyRunningError,
  RateLimitedError,
  RegionUnavailableError,
  shuttingDown,
  type CallerErrorCode,
} from '../../src/jobs/job-errors';
import { memoryLogger } from '../../src/log';
import { PoolLimitError } from '../../src/pools/errors';

const ctx = { method: 'POST', path: '/check' };

describe('domain errors -> responses', () => {
  test('insufficient_quota -> 402 with required, available, shortfall', () => {
    const e = domainToApiError(new InsufficientQuotaError(10, 4))!;
    expect(e.status).toBe(402);
    expect(e.body).toEqual({ error: 'Insufficient Checks', message: 'You need 10 checks but only have 4 remaining.', required: 10, available: 4, shortfall: 6 });
  });

  test('job_already_running -> 409 naming the jobId', () => {
    const e = domainToApiError(new JobAlreadyRunningError('job-1'))!;
    expect(e.status).toBe(409);
    expect(e.body).toMatchObject({ error: 'Job already running', jobId: 'job-1' });
  });

  test('rate_limited -> 429 Too many requests with Retry-After, naming the limit', () => {
    const jobs = domainToApiError(new RateLimitedError('concurrent_jobs', 4, 5))!;
    expect(jobs.status).toBe(429);
    expect(jobs.body).toEqual({ error: 'Too many requests', message: 'At most 4 checks may run at once per account (server setting MAX_JOBS_PER_ACCOUNT); retry in 5 s' });
    expect(jobs.headers).toEqual({ 'Retry-After': '5', 'RateLimit-Remaining': '0', 'RateLimit-Reset': '5' }); // nothing remains until Retry-After
    const proxies = domainToApiError(new RateLimitedError('proxies_in_flight', 200_000, 5))!;
    expect(proxies.status).toBe(429);
    expect(proxies.body).toEqual({ error: 'Too many requests', message: 'At most 200000 unique proxies may be checked at once per account (twice the server setting MAX_PROXIES); retry in 5 s' });
    expect(proxies.headers).toEqual({ 'Retry-After': '5', 'RateLimit-Remaining': '0', 'RateLimit-Reset': '5' });
  });

  test('pool_limit -> 429 for pools per account (no Retry-After: waiting does not help), 413 for proxies per pool and per account', () => {
    const pools = domainToApiError(new PoolLimitError('pools_per_account', 20))!;
    expect([pools.status, pools.body, pools.headers]).toEqual([429, { error: 'Too many requests', message: 'At most 20 pools per account (server setting MAX_POOLS_PER_ACCOUNT); delete one to create another', limit: 20 }, {}]);
    const perPool = domainToApiError(new PoolLimitError('proxies_per_pool', 100_000))!;
    expect([perPool.status, perPool.body]).toEqual([413, { error: 'Too many proxies', message: 'At most 100000 proxies per pool (server setting MAX_PROXIES_PER_POOL)', max: 100_000 }]);
    const perAccount = domainToApiError(new PoolLimitError('proxies_per_account', 200_000))!;
    expect([perAccount.status, perAccount.body]).toEqual([413, { error: 'Too many proxies', message: "At most 200000 proxies in all of an account's pools together (twice the server setting MAX_PROXIES_PER_POOL)", max: 200_000 }]);
  });

  test('client_cancelled (DELETE /checks/{jobId} of a synchronous check) -> 409 Job cancelled', () => {
    const e = domainToApiError(clientCancelled())!;
    expect(e.status).toBe(409);
    expect(e.body).toEqual({ error: 'Job cancelled', message: 'The job was cancelled (DELETE /checks/{jobId}); the checks not performed were refunded' });
  });

  test('shutting_down -> 503 Service unavailable', () => {
    const e = domainToApiError(shuttingDown())!;
    expect(e.status).toBe(503);
    expect(e.body).toEqual({ error: 'Service unavailable', message: 'The service is shutting down; retry in a moment' });
  });

  test('node_lease_lost -> 503 Service unavailable (nothing was reserved)', () => {
    const e = domainToApiError(new ServiceError('node_lease_lost', 'lease lapsed'))!;
    expect(e.status).toBe(503);
    expect(e.body).toMatchObject({ error: 'Service unavailable' });
  });

  test('job_failed -> the fixed 500 body, cause kept off it and not logged twice', () => {
    const log = memoryLogger('debug');
    const inner = new Error('ENOENT: /var/lib/secret/path/results/x.json');
    const e = toApiError('UNKNOWN', new ServiceError('job_failed', 'check job failed', { cause: inner }), log, ctx);
    expect(e.status).toBe(500);
    expect(e.body).toEqual({ error: 'Internal server error', message: 'An unexpected error occurred' });
    expect(JSON.stringify(e.body)).not.toContain('/var/lib');
    expect(log.lines.filter((l) => l.level === 'error')).toHaveLength(0);
  });

  test('any other error -> the fixed 500 body; the detail goes to the log only', () => {
    const log = memoryLogger('debug');
    const e = toApiError('UNKNOWN', new Error('relation "scans" does not exist'), log, ctx);
    expect(e.status).toBe(500);
    expect(JSON.stringify(e.body)).not.toContain('scans');
    expect(log.lines.some((l) => l.msg === 'unhandled error')).toBe(true);
  });

  test('an ApiError passes through unchanged', () => {
    const a = new ApiError(418, { error: 'Teapot' });
    expect(toApiError('UNKNOWN', a, memoryLogger('debug'), ctx)).toBe(a);
  });
});

/** Each answer the job layer gives its caller, made as the job layer makes it (a new caller code without one does not compile). */
const AS_THROWN: Record<CallerErrorCode, ServiceError> = {
  insufficient_quota: new InsufficientQuotaError(10, 4),
  job_already_running: new JobAlreadyRunningError('job-1'),
  rate_limited: new RateLimitedError('concurrent_jobs', 4, 5),
  region_unavailable: new RegionUnavailableError('eu1'),
  shutting_down: shuttingDown(),
  client_disconnected: clientDisconnected(),
  client_cancelled: clientCancelled(),
  node_lease_lost: new ServiceError(DOMAIN_ERROR_CODES.NODE_LEASE_LOST, 'node n1 holds no live lease: nothing reserved'),
  job_failed: new ServiceError(JOB_ERROR_CODES.JOB_FAILED, 'check job failed', { cause: new Error('x') }),
};

describe('every answer of the job layer has its response', () => {
  test('each caller code, as thrown, maps to a contract response; only job_failed is a 500', () => {
    for (const code of CALLER_ERROR_CODES) {
      const err = AS_THROWN[code];
      expect(err.code).toBe(code);
      expect(isCallerError(err)).toBe(true);
      const answer = domainToApiError(err);
      expect(answer, code).not.toBeNull();
      expect(answer!.status === 500, code).toBe(code === JOB_ERROR_CODES.JOB_FAILED);
    }
  });

  test('a bare ServiceError of a code whose answer needs its facts is no answer (the service wraps it as job_failed)', () => {
    for (const code of [JOB_ERROR_CODES.INSUFFICIENT_QUOTA, DOMAIN_ERROR_CODES.JOB_ALREADY_RUNNING, JOB_ERROR_CODES.RATE_LIMITED, JOB_ERROR_CODES.REGION_UNAVAILABLE]) {
      expect(isCallerError(new ServiceError(code, 'x'))).toBe(false);
      expect(domainToApiError(new ServiceError(code, 'x'))).toBeNull();
    }
  });

  test('no other code is answered: the rest is a 500 via toApiError, logged there', () => {
    expect(domainToApiError(new ServiceError(JOB_ERROR_CODES.SHARD_FAILED, 'x'))).toBeNull();
    expect(domainToApiError(new ServiceError(DOMAIN_ERROR_CODES.RESULT_WRITE_FAILED, 'x'))).toBeNull();
  });
});
