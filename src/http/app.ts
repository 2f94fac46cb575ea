/**
 * The Elysia application: route groups, the error mapping, 404/405 handling
 * and the access log. Built from injected ports (src/http/context.ts) so tests
 * drive it with `app.handle(new Request(...))` and no sockets.
 *
 * Every route that exists answers a wrong method with 405 + Allow; every path
 * that does not exist answers 404; every error body is JSON (src/errors.ts),
 * also for an error Bun catches itself (serve-options.ts: never Bun's HTML page).
 * Every response carries X-Request-Id (request-id.ts); every line logged while
 * a request is handled carries it as `requestId` (request-log.ts requestLog),
 * and a 500 body adds it as `request_id`, so a user can quote it.
 */
import { Elysia } from 'elysia';
import { rateLimitedAccounts } from './account-rate-limit';
import { methodNotAllowed } from './api-errors';
import type { AppDeps } from './context';
import { apiErrorResponse, toApiError } from './errors';
import { RateLimiter } from './rate-limit';
import { REQUEST_ID_HEADER } from './request-id';
import { finish, markStart, markStatus, requestIdOf, requestLog } from './request-log';
import { serveOptions } from './serve-options';
import { publicRoutes } from './routes/public';
import { meRoutes } from './routes/me';
import { checkRoutes } from './routes/check';
import { poolRoutes } from './routes/pools';
import { webhookRoutes } from './routes/webhooks';
import { LargeBodyGate, releaseBody } from './body';
import { checking, refusal, settled } from './refusals';
import { checkJobRoutes } from './routes/checks';
import { docsRoutes } from './routes/docs';
import { resultRoutes } from './routes/results';
import { wsRoutes } from './routes/ws';
import { webRoutes } from '../web/routes';

/** Known paths and the methods they accept: everything else on them is 405. */
export const ROUTE_METHODS: ReadonlyArray<readonly [string, readonly string[]]> = Object.freeze([
  ['/check', ['POST']],
  ['/check-raw', ['POST']],
  ['/checks/:jobId', ['GET', 'DELETE']],
  ['/me', ['GET']],
  ['/regions', ['GET']],
  ['/health', ['GET']],
  ['/judge', ['GET']],
  ['/result/:name', ['GET']],
  ['/pools', ['GET', 'POST']],
  ['/pools/:id', ['GET', 'PATCH', 'DELETE']],
  ['/pools/:id/proxies', ['GET']],
  ['/webhooks', ['GET', 'POST']],
  ['/webhooks/:id', ['GET', 'PATCH', 'DELETE']],
  ['/webhooks/:id/test', ['POST']],
  ['/webhooks/:id/rotate-secret', ['POST']],
  ['/webhooks/:id/deliveries', ['GET']],
  ['/', ['GET']],
  ['/app', ['GET']],
] as const);

export type ExtraRoutes = (app: Elysia) => Elysia;

export function createApp(deps: AppDeps, extra: ExtraRoutes[] = []) {
  const { log } = deps;
  // The authenticated API routes (/check, /check-raw, /checks/{jobId}, /me, /pools...) look keys up through
  // the per-account token bucket (429 past RATE_LIMIT_PER_S, twice that at once).
  const limiter = new RateLimiter({ ratePerS: deps.limits.rateLimitPerS, burst: deps.limits.rateLimitBurst, now: () => deps.now().getTime() });
  const api: AppDeps = { ...deps, accounts: rateLimitedAccounts(deps.accounts, limiter) };
  // one gate for every body over 1 MiB (limits.maxLargeBodies at once), whichever route reads it
  const bodies = new LargeBodyGate(deps.limits.maxLargeBodies);
  // production mode and a JSON 500 for errors Bun itself catches (serve-options.ts)
  let app = new Elysia({ name: 'proxycheck', serve: serveOptions(log), normalize: false })
    .onRequest(({ request, set }) => {
      // every response carries the request id (Elysia merges `set.headers` into returned Responses and the 101 upgrade)
      set.headers[REQUEST_ID_HEADER] = markStart(request, log);
    })
    .onError(({ code, error, request, path }) => {
      releaseBody(request); // a body's slot held past the parse hook (body.ts readHeldBody)
      // the one mapping of a route's schema refusing a request onto the contract's fixed 400 bodies (refusals.ts)
      const refused = code === 'VALIDATION' ? error : checking(request) && error instanceof TypeError ? { type: 'request', value: undefined } : null;
      const err = refused !== null ? refusal(request, refused) : toApiError(code, error, requestLog(request, log), { method: request.method, path });
      markStatus(request, err.status);
      return apiErrorResponse(err, requestIdOf(request));
    })
    // past the routes' schemas (refusals.ts): an error from here on is the handler's
    .onBeforeHandle({ as: 'global' }, ({ request }) => {
      settled(request);
    })
    // a route that returns a Response object: its own status is the one answered (`set.status` never sees it)
    .onAfterHandle({ as: 'global' }, ({ request, responseValue }) => {
      if (responseValue instanceof Response) markStatus(request, responseValue.status);
    })
    .onAfterResponse(({ request, path, set }) => {
      const done = finish(request);
      if (!done) return;
      const status = done.status ?? (typeof set.status === 'number' ? set.status : 200);
      // the built-in judge's answers are the probes' own traffic (one per working proxy): not access-logged
      if (path === '/judge' && status === 200) return;
      done.log.info('request', { method: request.method, path, status, ms: done.ms, account: done.accountId });
    })
    .use(publicRoutes(deps))
    .use(meRoutes(api))
    .use(checkRoutes(api, bodies))
    .use(checkJobRoutes(api))
    .use(poolRoutes(api, bodies))
    .use(webhookRoutes(api, bodies))
    .use(resultRoutes(deps))
    .use(wsRoutes(deps))
    .use(docsRoutes(deps))
    .use(webRoutes({ version: deps.version, log })) as unknown as Elysia;
  for (const add of extra) app = add(app);
  for (const [path, methods] of ROUTE_METHODS) {
    app = app.all(path, ({ path: actual }) => {
      throw methodNotAllowed(actual, methods);
    }, { detail: { hide: true } }) as unknown as Elysia;
  }
  return app;
}
