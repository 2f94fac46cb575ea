/**
 * The admin HTTP API: POST /admin/<command> with a JSON body of the command's
 * options (`{email, checks, temp, unlimitedUntil, label, key}`), answered with
 * the same JSON the CLI prints. Guarded by `Authorization: Bearer
 * <adminToken>` (constant-time comparison), checked before the body is read.
 * This is how the admin command reaches a running server in embedded mode,
 * where PGlite allows only the server's process to open the data dir.
 * Errors are ApiErrors: 400 bad input, 401 bad token, 404 unknown command /
 * account / key, 409 duplicate; mapped to responses locally so the plugin
 * answers the same with or without the app's global error handler.
 */
import { Elysia } from 'elysia';
import type { Database } from '../../db/client';
import { AccountError } from '../accounts/errors';
import { safeEqual } from '../accounts/keys';
import { bearerToken } from '../http/auth';
import { ApiError, invalidRequest, notFound, tooManyRequests } from '../http/api-errors';
import { requestLog } from '../http/request-log';
import type { Logger } from '../log';
import { isAdminCommand, parseAdminBody, UsageError } from './args';
import { runAdminCommand } from './commands';
import { FailureThrottle } from './throttle';
import { DOMAIN_ERROR_CODES } from '../error-codes';

export interface AdminRouteDeps {
  database: Database;
  adminToken: string;
  /** For tests: the clock. */
  now?: () => Date;
  /** Told after every command that ran (e.g. to drop cached key lookups). */
  onChange?: () => void;
  /** Failed tokens per client address (default: a FailureThrottle with ADMIN_THROTTLE). */
  throttle?: FailureThrottle;
  /** The client's address (default: the peer address of the connection; 'unknown' without a socket). */
  clientAddress?: (request: Request, server: ClientServer | null) => string;
  /** Told when an address gets blocked. */
  log?: Logger;
}

/** What the route needs of Bun's server: the peer address. */
export interface ClientServer {
  requestIP(request: Request): { address: string } | null;
}

const peerAddress = (request: Request, server: ClientServer | null) => server?.requestIP(request)?.address ?? 'unknown';

const MAX_BODY = 64 * 1024;

export const adminUnauthorized = () =>
  new ApiError(401, { error: 'Unauthorized', message: 'A valid admin token is required (Authorization: Bearer <ADMIN_TOKEN>)' });

/** AccountError / UsageError -> ApiError; anything else is rethrown. */
export function adminApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof UsageError) return invalidRequest(err.message);
  if (err instanceof AccountError) {
    switch (err.code) {
      case DOMAIN_ERROR_CODES.INVALID_INPUT:
        return invalidRequest(err.message);
      case DOMAIN_ERROR_CODES.ACCOUNT_NOT_FOUND:
      case DOMAIN_ERROR_CODES.KEY_NOT_FOUND:
        return notFound(err.message);
      case DOMAIN_ERROR_CODES.ACCOUNT_EXISTS:
      case DOMAIN_ERROR_CODES.KEY_EXISTS:
        return new ApiError(409, { error: 'Conflict', message: err.message });
    }
  }
  throw err;
}

function errorResponse(err: ApiError): Response {
  return new Response(JSON.stringify(err.body), {
    status: err.status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...err.headers },
  });
}

export function adminRoutes(deps: AdminRouteDeps) {
  const now = deps.now ?? (() => new Date());
  const throttle = deps.throttle ?? new FailureThrottle();
  const clientAddress = deps.clientAddress ?? peerAddress;
  return new Elysia({ name: 'admin-routes' }).post(
    '/admin/:command',
    async ({ params, request, server }) => {
      try {
        const address = clientAddress(request, server as ClientServer | null);
        const wait = throttle.blockedFor(address);
        if (wait !== null) throw tooManyRequests(wait);
        const token = bearerToken(request.headers);
        if (token === null || !safeEqual(token, deps.adminToken)) {
          if (throttle.fail(address) && deps.log !== undefined) requestLog(request, deps.log).warn('admin token failures: address blocked', { address });
          throw adminUnauthorized();
        }
        if (!isAdminCommand(params.command)) throw notFound(`No admin command "${params.command}"`);
        const text = await request.text();
        if (text.length > MAX_BODY) throw invalidRequest('body: too large');
        let body: unknown = {};
        if (text.trim() !== '') {
          try {
            body = JSON.parse(text);
          } catch {
            throw invalidRequest('body: malformed JSON');
          }
        }
        const req = parseAdminBody(params.command, body);
        const result = await runAdminCommand(deps.database.db, req, now());
        deps.onChange?.();
        return new Response(JSON.stringify(result), { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' } });
      } catch (err) {
        return errorResponse(adminApiError(err));
      }
    },
    { parse: 'none' },
  );
}
