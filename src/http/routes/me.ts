/**
 * GET /me: the account's balance, plan, last 30 scans and 30-day usage.
 */
import { Elysia } from 'elysia';
import { setRateLimitHeaders } from '../account-rate-limit';
import { authenticate } from '../auth';
import type { AppDeps } from '../context';
import { jsonResponse } from '../errors';
import { markAccount } from '../request-log';
import { docs } from '../openapi';

export function meRoutes(deps: AppDeps) {
  return new Elysia({ name: 'me-routes' }).get(
    '/me',
    async ({ request, set }) => {
      const account = await authenticate(request.headers, (k) => deps.accounts.findByApiKey(k));
      markAccount(request, account.id);
      setRateLimitHeaders(set, account);
      return jsonResponse(200, await deps.accounts.overview(account.id, deps.now()));
    },
    { ...docs.me },
  );
}
