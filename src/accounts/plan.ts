/**
 * Pure rules about an account's plan and balances: whether UnlimitedPro is
 * active, the seed's `subscription_detail` object and the `metadata.user`
 * block of a check response. No I/O.
 *
 * subscription_detail: `UnlimitedPro` is true while the plan is active (flag
 * set and expiry absent or in the future). `unlimited_expired_at` (ISO) is
 * present whenever the flag is set and an expiry is recorded, also after it
 * passed (then UnlimitedPro is false and the date says when it ended); it is
 * absent when the flag is clear or the plan has no expiry.
 */

export interface PlanFields {
  unlimitedPro: boolean;
  unlimitedUntil: Date | null;
}

export interface BalanceFields extends PlanFields {
  email: string;
  rootBalance: number;
  tempBalance: number;
  checksUsed: number;
}

export interface SubscriptionDetail {
  UnlimitedPro: boolean;
  unlimited_expired_at?: string;
}

export interface CheckUserInfo {
  email: string;
  checks_used: number;
  remaining_checks: number;
  subscription_detail: SubscriptionDetail;
}

export function isUnlimitedActive(account: PlanFields, now: Date): boolean {
  if (!account.unlimitedPro) return false;
  return account.unlimitedUntil === null || account.unlimitedUntil.getTime() > now.getTime();
}

export function subscriptionDetail(account: PlanFields, now: Date): SubscriptionDetail {
  const detail: SubscriptionDetail = { UnlimitedPro: isUnlimitedActive(account, now) };
  if (account.unlimitedPro && account.unlimitedUntil !== null) {
    detail.unlimited_expired_at = account.unlimitedUntil.toISOString();
  }
  return detail;
}

/** `metadata.user` of a check response. remaining_checks = root + temp. */
export function checkUserInfo(account: BalanceFields, now: Date): CheckUserInfo {
  return {
    email: account.email,
    checks_used: account.checksUsed,
    remaining_checks: account.rootBalance + account.tempBalance,
    subscription_detail: subscriptionDetail(account, now),
  };
}
