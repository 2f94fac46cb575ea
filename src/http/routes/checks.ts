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
import { orderedChecksOf } from '../refusals';
import { JobIdParams } from '../../contract/jobs';

type Account = Awaited<ReturnType<typeof authenticate>>;

/** The routes declare their path parameter (the contract's JobIdParams); the key is looked up first (the transform hook), a jobId the schema refuses is 400 Invalid jobId (refusals.ts). */
export function checkJobRoutes(deps: AppDeps) {
  const accounts = new WeakMap<Request, Account>();
  const keyed = async ({ request, set, params }: { request: Request; set: { headers: Record<string, unknown> }; params: Record<string, string | undefined> }) => {
    const account = await authenticate(request.headers, (k) => deps.accounts.findByApiKey(k));
    markAccount(request, account.id);
    setRateLimitHeaders(set, account);
    accounts.set(request, account);
    orderedChecksOf(request, {
      params: () => {
        if (!isJobId(params.jobId ?? '')) throw invalidJobId();
      },
    });
  };
  const owner = (request: Request): Account => accounts.get(request)!;
  return new Elysia({ name: 'check-job-routes', normalize: false })
    .get(
      '/checks/:jobId',
      async ({ request, params }) => {
        const view = await deps.jobs.status(owner(request).id, params.jobId, deps.now());
        if (view === null) throw jobNotFound(params.jobId);
        return jsonResponse(200, view);
      },
      { transform: keyed, params: JobIdParams, ...docs.checkJob },
    )
    .delete(
      '/checks/:jobId',
      async ({ request, params }) => {
        const out = await deps.jobs.cancel(owner(request).id, params.jobId, deps.now());
        if (out.ok) {
          return new Response(null, { status: 204 });
        }
        if (out.reason === 'not_found') throw jobNotFound(params.jobId);
        if (out.reason === 'ended') throw jobNotRunning(params.jobId, out.status);
        throw jobNodeUnreachable();
      },
      { transform: keyed, params: JobIdParams, ...docs.cancelCheckJob },
    );
}
