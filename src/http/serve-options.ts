/**
 * The Bun.serve options every listener of the app gets (createApp passes them
 * as Elysia's `serve` config, which app.listen() spreads into Bun.serve).
 *
 * - `development: false`: Elysia turns Bun's development mode on unless
 *   NODE_ENV (or ENV) is "production"; in development mode an error that
 *   escapes Elysia (one raised while Bun sends a response body, e.g. a
 *   Bun.file that cannot be opened) is answered with Bun's HTML error page,
 *   which shows the source and the server's working directory. Never.
 * - `error`: what Bun answers for such an error: the contract's fixed 500
 *   JSON body (Bun's production default is a text/plain page), the detail
 *   only in the log. Bun does not say which request it was, so a new request
 *   id names the failure: in the log line, the body's `request_id` and the
 *   X-Request-Id header.
 */
import type { Logger } from '../log';
import { internalError } from './api-errors';
import { apiErrorResponse } from './errors';
import { requestIdFor } from './request-id';

export function serveOptions(log: Logger) {
  return {
    development: false,
    error(err: Error): Response {
      const requestId = requestIdFor(null);
      log.error('unhandled error outside the app', { requestId, err });
      return apiErrorResponse(internalError(err), requestId);
    },
  };
}
