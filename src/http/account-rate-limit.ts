/**
 * Requests per second per account on the authenticated API routes (/check,
 * /check-raw, /me): the key lookup those routes authenticate with, with the
 * account's token bucket (rate-limit.ts) behind it. A key that resolves to an
 * account takes one token; with none left the lookup throws 429 `Too many
 * requests` with Retry-After, before anything else happens (no body read, no
 * reservation). A missing or unknown key is still 401 (it takes no token: it
 * has no account). Buckets are per account, so all of an account's keys share
 * one. /ws upgrades are not counted here (their caps are the hub's).
 */
import { tooManyRequests } from './api-errors';
import type { AccountsPort } from './context';
import type { RateLimiter } from './rate-limit';

export function rateLimitedAccounts(accounts: AccountsPort, limiter: RateLimiter): AccountsPort {
  return {
    overview: (accountId, now) => accounts.overview(accountId, now),
    async findByApiKey(key) {
      const account = await accounts.findByApiKey(key);
      if (account === null) return null;
      const out = limiter.take(account.id);
      if (!out.ok) throw tooManyRequests(out.retryAfterS, `Rate limit: ${limiter.ratePerS} requests per second per account, bursts of ${limiter.burst} (server settings RATE_LIMIT_PER_S, RATE_LIMIT_BURST); retry in ${out.retryAfterS} s`);
      return account;
    },
  };
}
