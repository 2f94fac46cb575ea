/**
 * First start with an empty database: create the demo account
 * (demo@localhost, BOOTSTRAP_CHECKS checks) with one key, BOOTSTRAP_API_KEY
 * when set (deterministic) or a fresh one, and log it once with how to use it,
 * whatever LOG_LEVEL (a newcomer with LOG_LEVEL=warn must still see it).
 * Does nothing when any account exists. Safe against a concurrent bootstrap on
 * a shared PostgreSQL (the unique e-mail makes the loser a no-op).
 */
import { count } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { accounts } from '../../db/schema';
import type { Logger } from '../log';
import { createAccount, issueKey } from './accounts';
import { AccountError } from './errors';
import { DOMAIN_ERROR_CODES } from '../error-codes';

export const DEMO_EMAIL = 'demo@localhost';

export interface BootstrapResult {
  accountId: string;
  email: string;
  apiKey: string;
}

export async function ensureBootstrapAccount(
  db: Db,
  opts: { checks: number; apiKey?: string | undefined; baseUrl?: string },
  log: Logger,
): Promise<BootstrapResult | null> {
  const [row] = await db.select({ n: count() }).from(accounts);
  if (Number(row?.n ?? 0) > 0) return null;
  // Account and key in one transaction: a crash in between must not leave a
  // demo account without a key (the next start would not bootstrap again).
  let created: { accountId: string; apiKey: string } | null;
  try {
    created = await db.transaction(async (tx) => {
      const account = await createAccount(tx, { email: DEMO_EMAIL, checks: opts.checks });
      const { apiKey } = await issueKey(tx, { accountId: account.id, label: 'bootstrap', ...(opts.apiKey !== undefined ? { apiKey: opts.apiKey } : {}) });
      return { accountId: account.id, apiKey };
    });
  } catch (err) {
    if (err instanceof AccountError && err.code === DOMAIN_ERROR_CODES.ACCOUNT_EXISTS) return null;
    throw err;
  }
  const account = { id: created.accountId };
  const apiKey = created.apiKey;
  const base = opts.baseUrl ?? 'http://127.0.0.1:3000';
  log.always(
    `Created the demo account ${DEMO_EMAIL} with ${opts.checks} checks. Its API key is shown only now: ${apiKey} -- ` +
      `try: curl -H 'X-API-Key: ${apiKey}' ${base}/me`,
    { accountId: account.id, email: DEMO_EMAIL, checks: opts.checks },
  );
  return { accountId: account.id, email: DEMO_EMAIL, apiKey };
}
