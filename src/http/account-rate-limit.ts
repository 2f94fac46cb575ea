/**
 * Requests per second per account on the authenticated API routes (/check,
 * /check-raw, /me): the key lookup those routes authenticate with, with the
 * account's token bucket (rate-limit.ts) behind it. A key that resolves to an
 * account takes one token; with none left the lookup throws 429 `Too many
 * requests` with Retry-After, before anything else happens (no body read, no
 * reservation). A missing or unknown key is still 401 (it takes no token: it
 * has no account). Buckets are per account, so all of an account's keys share
 * one. /ws upgrades are not counted here (their caps are the hub's).
 *
 * Every answer past the lookup carries the bucket's RateLimit-Limit,
 * RateLimit-Remaining and RateLimit-Reset (rate-limit.ts rateLimitHeaders):
 * the 429 in its own headers; otherwise the lookup hands them back with the
 * account (`rateLimit`) and the route puts them on its answer
 * (`setRateLimitHeaders`), errors it throws later included.
 */
import { tooManyRequests } from './api-errors';
import type { AuthenticatedAccount } from './auth';
import type { AccountsPort } from './context';
import { rateLimitHeaders, type RateLimiter } from './rate-limit';

/** An account found through the rate-limited lookup: its answer's RateLimit-* headers. */
export type RateLimitedAccount = AuthenticatedAccount & { rateLimit?: Record<string, string> };

export function rateLimitedAccounts(accounts: AccountsPort, limiter: RateLimiter): AccountsPort {
  return {
    overview: (accountId, now) => accounts.overview(accountId, now),
    ...(accounts.balance !== undefined ? { balance: accounts.balance.bind(accounts) } : {}),
    async findByApiKey(key): Promise<RateLimitedAccount | null> {
      const account = await accounts.findByApiKey(key);
      if (account === null) return null;
      const out = limiter.take(account.id);
      const headers = rateLimitHeaders(limiter.burst, out);
      if (!out.ok) {
        const message = `Rate limit: ${limiter.ratePerS} requests per second per account, bursts of ${limiter.burst} (server setting RATE_LIMIT_PER_S; bursts are twice it); retry in ${out.retryAfterS} s`;
        throw tooManyRequests(out.retryAfterS, message, headers);
      }
      return { ...account, rateLimit: headers };
    },
  };
}

/** Puts a rate-limited account's RateLimit-* headers on the answer (`set.headers` of the route's context). */
export function setRateLimitHeaders(set: { headers: Record<string, unknown> }, account: RateLimitedAccount): void {
  if (account.rateLimit !== undefined) Object.assign(set.headers, account.rateLimit);
}
