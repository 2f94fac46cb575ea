/**
 * GET /me data in the seed's FIRST shape (DECISIONS "Accounts and quota"):
 * user {id, email, checks, breakdown, subscription_detail}, history (newest
 * first, at most 30, each with a freshly signed result_url or null),
 * history_count, usage_last_30_days (exactly 30 UTC days, oldest first,
 * ending today, zero-filled). Also the check response's `metadata.user`.
 * The overview is one statement (overview-sql.ts).
 */
import { rowsOf, type Db } from '../../db/client';
import { getAccount } from './accounts';
import { decodeOverviewRow, overviewStatement, type OverviewRow } from './overview-sql';
import { AccountError } from './errors';
import { DOMAIN_ERROR_CODES } from '../error-codes';
import { checkUserInfo, isUnlimitedActive, subscriptionDetail, type CheckUserInfo, type SubscriptionDetail } from './plan';

export const HISTORY_LIMIT = 30;
export const USAGE_DAYS = 30;
const DAY_MS = 86_400_000;

export interface HistoryEntry {
  id: number;
  total_checked: number;
  total_working: number;
  result_url: string | null;
  proxy_type: string;
  scanned_at: string;
  /** Beyond the seed: 'running' | 'completed' | 'failed', and why a failed scan failed. */
  status: string;
  error: string | null;
}

export interface UsageEntry {
  day: string;
  total_checked: number;
}

export interface AccountOverview {
  user: {
    id: string;
    email: string;
    checks: number;
    breakdown: { root_balance: number; temp_balance: number };
    subscription_detail: SubscriptionDetail;
  };
  history: HistoryEntry[];
  history_count: number;
  usage_last_30_days: UsageEntry[];
}

/** Signs a result reference into a URL, or null when the file is gone (retention). */
export type SignResult = (resultRef: string, createdAt: Date) => string | null;

/** The 30 UTC day strings ending with `now`'s day, oldest first (pure). */
export function usageDays(now: Date, days: number = USAGE_DAYS): string[] {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const out: string[] = [];
  for (let i = days - 1; i >= 0; i--) out.push(new Date(today - i * DAY_MS).toISOString().slice(0, 10));
  return out;
}

/** Zero-fills per-day totals over `days` (pure). */
export function fillUsage(days: readonly string[], totals: ReadonlyMap<string, number>): UsageEntry[] {
  return days.map((day) => ({ day, total_checked: totals.get(day) ?? 0 }));
}

export async function getAccountOverview(db: Db, accountId: string, now: Date, signResult: SignResult): Promise<AccountOverview> {
  const days = usageDays(now);
  const windowStart = new Date(`${days[0]}T00:00:00.000Z`);
  const [row] = rowsOf<OverviewRow>(await db.execute(overviewStatement({ accountId, windowStart, limit: HISTORY_LIMIT })));
  if (row === undefined) throw new AccountError(DOMAIN_ERROR_CODES.ACCOUNT_NOT_FOUND, `no account ${accountId}`);
  const o = decodeOverviewRow(row);
  const a = o.account;
  return {
    user: {
      id: accountId,
      email: a.email,
      checks: a.rootBalance + a.tempBalance,
      breakdown: { root_balance: a.rootBalance, temp_balance: a.tempBalance },
      subscription_detail: subscriptionDetail(a, now),
    },
    history: o.recent.map((s) => ({
      id: s.id,
      total_checked: s.totalChecked,
      total_working: s.totalWorking,
      result_url: s.resultRef === null ? null : signResult(s.resultRef, s.createdAt),
      proxy_type: s.proxyType,
      scanned_at: s.createdAt.toISOString(),
      status: s.status,
      error: s.error,
    })),
    history_count: o.historyCount,
    usage_last_30_days: fillUsage(days, o.usage),
  };
}

/** What an account has to spend: its checks left (root + temporary) and whether its plan is unlimited now; null: no such account. */
export interface AccountBalance {
  checks: number;
  unlimited: boolean;
}

export async function getAccountBalance(db: Db, accountId: string, now: Date): Promise<AccountBalance | null> {
  const account = await getAccount(db, accountId);
  if (account === null) return null;
  return { checks: account.rootBalance + account.tempBalance, unlimited: isUnlimitedActive(account, now) };
}

/** `metadata.user` of a check response, read fresh (after the reservation). */
export async function getCheckUserInfo(db: Db, accountId: string, now: Date): Promise<CheckUserInfo> {
  const account = await getAccount(db, accountId);
  if (account === null) throw new AccountError(DOMAIN_ERROR_CODES.ACCOUNT_NOT_FOUND, `no account ${accountId}`);
  return checkUserInfo(account, now);
}
