/**
 * The admin listener's application: the admin routes (routes.ts) and
 * `GET /metrics`, nothing else. src/server.ts serves it on its own listener
 * (ADMIN_HOST, default 127.0.0.1; ADMIN_PORT, default a free port), apart
 * from the public API, which answers 404 for /admin/* and /metrics. Every
 * other path here is the JSON 404, a wrong method on /admin/<command> the
 * JSON 405 with Allow: POST.
 *
 * `/metrics` (Prometheus text format, src/metrics/service-metrics.ts) asks
 * for no token: Prometheus scrapes without one. It is on this listener so
 * that it is loopback-only unless the operator binds ADMIN_HOST elsewhere.
 * Without `metrics` (tests of the routes alone) it is the JSON 404.
 */
import { Elysia } from 'elysia';
import { methodNotAllowed } from '../http/api-errors';
import { apiErrorResponse, toApiError } from '../http/errors';
import { REQUEST_ID_HEADER } from '../http/request-id';
import { markStart, requestIdOf, requestLog } from '../http/request-log';
import type { Logger } from '../log';
import type { ServiceMetrics } from '../metrics/service-metrics';
import { adminRoutes, type AdminRouteDeps } from './routes';

export function createAdminApp(deps: AdminRouteDeps & { log: Logger; metrics?: Pick<ServiceMetrics, 'render' | 'contentType'> }) {
  const { log, metrics } = deps;
  const app = new Elysia({ name: 'admin' })
    // every answer carries X-Request-Id, every line logged while handling it `requestId`, a 500 `request_id` (as the public app)
    .onRequest(({ request, set }) => {
      set.headers[REQUEST_ID_HEADER] = markStart(request, log);
    })
    .onError(({ code, error, request, path }) =>
      apiErrorResponse(toApiError(code, error, requestLog(request, log), { method: request.method, path }), requestIdOf(request)),
    )
    .use(adminRoutes(deps))
    .all('/admin/:command', ({ path }) => {
      throw methodNotAllowed(path, ['POST']);
    });
  if (metrics === undefined) return app;
  return app.get('/metrics', async () => new Response(await metrics.render(), { headers: { 'content-type': metrics.contentType } }));
}
