/**
 * POST /check (JSON) and POST /check-raw (plain text). Order of answers:
 * 401 (key) -> 503 (shutting down) -> 415 (JSON expected on /check) -> 413
 * (body size) -> 503 (every slot for bodies over 1 MiB taken: body.ts) -> 400
 * (malformed JSON) -> the validator's 400/413 -> the check itself (402 when
 * the quota is short, 409 when the jobId is running).
 *
 * Once the body is read, the connection's idle timeout (http.idleTimeoutS, 30 s)
 * is lifted for this request: a job may take longer than it and still
 * answers. A client that closes the connection cancels its job
 * (request.signal): what was not probed is refunded, history says
 * cancelled / client_disconnected.
 *
 * Asynchronous (`Prefer: respond-async` or `?async=true`, async-check.ts;
 * a bad `async` value is a 400 before the body is read): every answer up to
 * the reservation is the same (400, 401, 402, 409, 413, 429, 503), then 202
 * with the job's URLs; the job runs on with no connection attached (GET
 * /checks/{jobId}, routes/checks.ts).
 */
import { Elysia } from 'elysia';
import { unsupportedMediaType } from '../api-errors';
import { ACCEPTED_REGIONS } from '../../regions';
import { setRateLimitHeaders } from '../account-rate-limit';
import { authenticate } from '../auth';
import { isJsonContentType, LargeBodyGate, parseJsonBody, withBodyText } from '../body';
import { validateCheckJson, validateCheckRaw } from '../check-request';
import type { AppDeps } from '../context';
import { jsonResponse } from '../errors';
import { markAccount, requestLog } from '../request-log';
import { acceptedResponse, asyncAsk } from '../async-check';
import { docs } from '../openapi';

/** `bodies`: the app's one gate for bodies over 1 MiB (shared with the other routes that read bodies). */
export function checkRoutes(deps: AppDeps, bodies: LargeBodyGate = new LargeBodyGate(deps.limits.maxLargeBodies)) {
  const limits = {
    maxProxies: deps.limits.maxProxies,
    maxCustomUrls: deps.limits.maxCustomUrls,
    acceptedRegions: ACCEPTED_REGIONS,
    defaultHttps: deps.httpsDefault ?? true,
  };
  // limits.maxLargeBodies bodies over 1 MiB read and parsed at once, for both routes (and the pools')
  const body = { maxBytes: deps.limits.maxBodyBytes, gate: bodies };
  const begin = async (request: Request, set: { headers: Record<string, unknown> }) => {
    const account = await authenticate(request.headers, (k) => deps.accounts.findByApiKey(k));
    markAccount(request, account.id);
    setRateLimitHeaders(set, account); // on every answer from here on, errors included
    deps.checks.assertAccepting(); // shutting_down -> 503, before the body is read
    return account;
  };
  const accepted = (request: Request, jobId: string, ask: 'prefer' | 'query') => {
    return acceptedResponse(deps.publicBase(), jobId, ask);
  };
  return new Elysia({ name: 'check-routes' })
    .post(
      '/check',
      async ({ request, server, set }) => {
        const account = await begin(request, set);
        const ask = asyncAsk(request.headers, new URL(request.url).searchParams);
        if (!isJsonContentType(request.headers.get('content-type'))) throw unsupportedMediaType('application/json');
        const req = await withBodyText(request, body, (text) => validateCheckJson(parseJsonBody(text), limits));
        if (ask !== null) return accepted(request, (await deps.checks.submit(account, req, requestLog(request, deps.log))).jobId, ask);
        server?.timeout(request, 0);
        return jsonResponse(200, await deps.checks.run(account, req, request.signal, requestLog(request, deps.log)));
      },
      { parse: 'none', detail: docs.check },
    )
    .post(
      '/check-raw',
      async ({ request, server, set }) => {
        const account = await begin(request, set);
        // every value of every parameter: a repeated one is a 400, not its last value
        const query = new URL(request.url).searchParams;
        const ask = asyncAsk(request.headers, query);
        const req = await withBodyText(request, body, (text) => validateCheckRaw(text, query, limits));
        if (ask !== null) return accepted(request, (await deps.checks.submit(account, req, requestLog(request, deps.log))).jobId, ask);
        server?.timeout(request, 0);
        return jsonResponse(200, await deps.checks.run(account, req, request.signal, requestLog(request, deps.log)));
      },
      { parse: 'none', detail: docs.checkRaw },
    );
}
