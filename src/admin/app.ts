/**
 * The admin listener's application: the admin routes (routes.ts) and nothing
 * else. src/server.ts serves it on its own listener (ADMIN_HOST, default
 * 127.0.0.1; ADMIN_PORT, default a free port), apart from the public API,
 * which answers 404 for /admin/*. Every other path here is the JSON 404, a
 * wrong method on /admin/<command> the JSON 405 with Allow: POST.
 */
import { Elysia } from 'elysia';
import { methodNotAllowed } from '../http/api-errors';
import { apiErrorResponse, toApiError } from '../http/errors';
import type { Logger } from '../log';
import { adminRoutes, type AdminRouteDeps } from './routes';

export function createAdminApp(deps: AdminRouteDeps & { log: Logger }) {
  const { log } = deps;
  return new Elysia({ name: 'admin' })
    .onError(({ code, error, request, path }) => apiErrorResponse(toApiError(code, error, log, { method: request.method, path })))
    .use(adminRoutes(deps))
    .all('/admin/:command', ({ path }) => {
      throw methodNotAllowed(path, ['POST']);
    });
}
