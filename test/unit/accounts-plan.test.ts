/** Plan rules and the subscription_detail / metadata.user shapes (src/accounts/plan.ts). */
import { describe, expect, test } from 'bun:test';
import { checkUserInfo, isUnlimitedActive, subscriptionDetail } from '../../src/accounts/plan';

const now = new Date('2026-05-05T12:00:00Z');
const later = new Date('2026-06-01T00:00:00Z');
const earlier = new Date('2026-05-01T00:00:00Z');

describe('plan', () => {
  test('active only when the flag is set and the expiry is absent or in the future', () => {
    expect(isUnlimitedActive({ unlimitedPro: false, unlimitedUntil: later }, now)).toBe(false);
    expect(isUnlimitedActive({ unlimitedPro: true, unlimitedUntil: later }, now)).toBe(true);
    expect(isUnlimitedActive({ unlimitedPro: true, unlimitedUntil: null }, now)).toBe(true);
    expect(isUnlimitedActive({ unlimitedPro: true, unlimitedUntil: earlier }, now)).toBe(false);
    expect(isUnlimitedActive({ unlimitedPro: true, unlimitedUntil: now }, now)).toBe(false);
  });

  test('subscription_detail carries unlimited_expired_at only when the flag is set with an expiry', () => {
    expect(subscriptionDetail({ unlimitedPro: false, unlimitedUntil: null }, now)).toEqual({ UnlimitedPro: false });
    expect(subscriptionDetail({ unlimitedPro: false, unlimitedUntil: later }, now)).toEqual({ UnlimitedPro: false });
    expect(subscriptionDetail({ unlimitedPro: true, unlimitedUntil: later }, now)).toEqual({
      UnlimitedPro: true,
      unlimited_expired_at: '2026-06-01T00:00:00.000Z',
    });
    expect(subscriptionDetail({ unlimitedPro: true, unlimitedUntil: earlier }, now)).toEqual({
      UnlimitedPro: false,
      unlimited_expired_at: '2026-05-01T00:00:00.000Z',
    });
    expect(subscriptionDetail({ unlimitedPro: true, unlimitedUntil: null }, now)).toEqual({ UnlimitedPro: true });
  });

  test('checkUserInfo: remaining = root + temp', () => {
    expect(
      checkUserInfo({ email: 'a@b.c', rootBalance: 3, tempBalance: 4, checksUsed: 9, unlimitedPro: false, unlimitedUntil: null }, now),
    ).toEqual({ email: 'a@b.c', checks_used: 9, remaining_checks: 7, subscription_detail: { UnlimitedPro: false } });
  });
});
