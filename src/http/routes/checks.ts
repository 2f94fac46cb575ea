/**
 * GET and DELETE /checks/{jobId}: a check as a resource (asynchronous
 * submission, routes/check.ts; any check is found by the jobId it answered
 * to). Order: 401 (key; the per-account rate limit, 429) -> 400 (a jobId
 * that is not one: src/job-id.ts) -> 404 (none of this account's, or past
 * retention) -> the answer. DELETE: 204 once the job is cancelled and its
 * unchecked units refunded; 409 when it has already ended; 503 when the API
 * node running it does not answer (a cluster). The rules are the job
 * layer's (src/jobs/check-jobs.ts).
 */
import { Elysia } from 'elysia';
import { setRateLimitHeaders } from '../account-rate-limit';
import { isJobId } from '../../job-id';
import { invalidJobId, jobNodeUnreachable, jobNotFound, jobNotRunning } from '../api-errors';
import { authenticate } from '../auth';
import type { AppDeps } from '../context';
import { jsonResponse } from '../errors';
import { docs } from '../openapi';
import { markAccount } from '../request-log';

export function checkJobRoutes(deps: AppDeps) {
  const begin = async (request: Request, set: { headers: Record<string, unknown> }, jobId: string) => {
    const account = await authenticate(request.headers, (k) => deps.accounts.findByApiKey(k));
    markAccount(request, account.id);
    setRateLimitHeaders(set, account);
    if (!isJobId(jobId)) throw invalidJobId();
    return account;
  };
  return new Elysia({ name: 'check-job-routes' })
    .get(
      '/checks/:jobId',
      async ({ request, params, set }) => {
        const account = await begin(request, set, params.jobId);
        const view = await deps.jobs.status(account.id, params.jobId, deps.now());
        if (view === null) throw jobNotFound(params.jobId);
        return jsonResponse(200, view);
      },
      { detail: docs.checkJob },
    )
    .delete(
      '/checks/:jobId',
      async ({ request, params, set }) => {
        const account = await begin(request, set, params.jobId);
        const out = await deps.jobs.cancel(account.id, params.jobId, deps.now());
        if (out.ok) {
          return new Response(null, { status: 204 });
        }
        if (out.reason === 'not_found') throw jobNotFound(params.jobId);
        if (out.reason === 'ended') throw jobNotRunning(params.jobId, out.status);
        throw jobNodeUnreachable();
      },
      { detail: docs.cancelCheckJob },
    );
}
