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
 * The routes declare their schemas (the contract's, src/contract/checks.ts):
 * POST /check its body (CheckBodyAsRead), query and Prefer header, /check-raw
 * its text body (its query and the Prefer header are declared for the
 * document only: the ordered checks read them, check-request.ts and
 * async-check.ts). Elysia checks them after the parse hook, so the hook does
 * the steps the contract answers first (the key, 503, the `async` 400, 415,
 * the body read: 413 / 503, malformed JSON; the contract's null-is-absent)
 * and registers the ordered checks that give a refused body its exact 400
 * (refusals.ts; app.ts maps Elysia's VALIDATION there). The handler then
 * runs only what a schema cannot say (check-request.ts checkRequestOfBody).
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
import { isJsonContentType, LargeBodyGate, parseJsonBody, readHeldBody, releaseBody } from '../body';
import { checkRequestOfBody, validateCheckJsonOrdered, validateCheckRaw } from '../check-request';
import type { AppDeps } from '../context';
import { jsonResponse } from '../errors';
import { markAccount, requestLog } from '../request-log';
import { acceptedResponse, asyncAsk } from '../async-check';
import { documentedOnly, nullsAsAbsent, open, orderedChecksOf } from '../refusals';
import { CheckBodyAsRead, CheckHeaders, CheckQuery, CheckRawBody, CheckRawQuery } from '../../contract/checks';
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
  /** The parse hook's first steps, before the body is read: 401, 503 (shutting down), the `async` 400. */
  const begin = async (request: Request, set: { headers: Record<string, unknown> }) => {
    const account = await authenticate(request.headers, (k) => deps.accounts.findByApiKey(k));
    markAccount(request, account.id);
    setRateLimitHeaders(set, account); // on every answer from here on, errors included
    deps.checks.assertAccepting(); // shutting_down -> 503, before the body is read
    asyncAsk(request.headers, new URL(request.url).searchParams); // a bad `async` is a 400 before the body is read
    accounts.set(request, account);
  };
  const accounts = new WeakMap<Request, Awaited<ReturnType<typeof authenticate>>>();
  const accountOf = (request: Request) => accounts.get(request)!;
  /** The handler's end: 202 for an asynchronous check, else the check's 200 (the connection's idle timeout lifted). */
  const answer = async (request: Request, server: { timeout(r: Request, s: number): void } | null, req: Parameters<AppDeps['checks']['run']>[1]) => {
    const account = accountOf(request);
    const ask = asyncAsk(request.headers, new URL(request.url).searchParams);
    if (ask !== null) return acceptedResponse(deps.publicBase(), (await deps.checks.submit(account, req, requestLog(request, deps.log))).jobId, ask);
    server?.timeout(request, 0);
    return jsonResponse(200, await deps.checks.run(account, req, request.signal, requestLog(request, deps.log)));
  };
  /** The handler's ordered checks of a body its schema accepted; the large body's slot is given back after them. */
  const validated = <T>(request: Request, check: () => T): T => {
    try {
      return check();
    } finally {
      releaseBody(request);
    }
  };
  return new Elysia({ name: 'check-routes', normalize: false })
    // by name, so the document's request body is a $ref to the contract's CheckBody (src/contract/index.ts; the document's
    // component wins over the model's, and says `proxies` holds strings), while Elysia checks the body as read
    .model({ CheckBody: open(CheckBodyAsRead) })
    .post('/check', async ({ request, server, body: json }) => answer(request, server, validated(request, () => checkRequestOfBody(json, limits))), {
      // the parse hook keeps the contract's order ahead of the schema: 401, 503, 415, 413 (503 for a large body), 400 malformed JSON
      parse: [
        async ({ request, set }) => {
          await begin(request, set);
          if (!isJsonContentType(request.headers.get('content-type'))) throw unsupportedMediaType('application/json');
          const text = await readHeldBody(request, body);
          const json = parseJsonBody(text);
          // the body as read (Elysia merges the schema's defaults into what it checks)
          orderedChecksOf(request, { body: () => validateCheckJsonOrdered(json, limits) });
          return nullsAsAbsent(CheckBodyAsRead, json);
        },
        'json',
      ],
      body: 'CheckBody',
      query: open(CheckQuery),
      // the Prefer header is read by async-check.ts (any value is a string; an unknown preference is ignored)
      headers: documentedOnly(CheckHeaders),
      ...docs.check,
    })
    .post(
      '/check-raw',
      async ({ request, server, body: text }) => {
        // every value of every parameter: a repeated one is a 400, not its last value
        return answer(request, server, validated(request, () => validateCheckRaw(text, new URL(request.url).searchParams, limits)));
      },
      {
        parse: [
          async ({ request, set }) => {
            await begin(request, set);
            const text = await readHeldBody(request, body);
            return text;
          },
          'text',
        ],
        // its query is checked by the ordered checks alone (every value of a repeated parameter: validateCheckRaw), declared for the document
        query: documentedOnly(CheckRawQuery),
        headers: documentedOnly(CheckHeaders),
        body: CheckRawBody,
        ...docs.checkRaw,
      },
    );
}
