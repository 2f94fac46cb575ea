/**
 * /me data: the seed's first shape, history newest first (max 30) with
 * freshly signed links, history_count, 30 zero-filled UTC days of usage,
 * and the check response's metadata.user.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createAccount } from '../../src/accounts/accounts';
import { fillUsage, getAccountOverview, getCheckUserInfo, usageDays } from '../../src/accounts/overview';
import { finishScan, getScanByRunId, startScan } from '../../src/accounts/scans';
import { freshDatabase, type TestDatabase } from '../helpers/db';
import { rejection } from '../helpers/rejection';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await freshDatabase();
}, 60_000);
afterAll(async () => {
  await tdb.cleanup();
});

const now = new Date('2026-07-31T10:00:00Z');
const sign = (ref: string, at: Date) => (ref === 'expired' ? null : `http://content.test/result/${ref}.json?t=${at.getTime()}`);

describe('usage days (pure)', () => {
  test('30 UTC days ending today, oldest first, across a month boundary', () => {
    const days = usageDays(new Date('2026-03-01T23:59:59Z'));
    expect(days).toHaveLength(30);
    expect(days[0]).toBe('2026-01-31');
    expect(days[29]).toBe('2026-03-01');
    expect(fillUsage(['2026-01-01', '2026-01-02'], new Map([['2026-01-02', 4]]))).toEqual([
      { day: '2026-01-01', total_checked: 0 },
      { day: '2026-01-02', total_checked: 4 },
    ]);
  });
});

describe('getAccountOverview', () => {
  test('an account with no scans: zero-filled usage, empty history', async () => {
    const acc = await createAccount(tdb.db, { email: 'empty@example.test', checks: 5, temp: 2 });
    const o = await getAccountOverview(tdb.db, acc.id, now, sign);
    expect(o.user).toEqual({
      id: acc.id,
      email: 'empty@example.test',
      checks: 7,
      breakdown: { root_balance: 5, temp_balance: 2 },
      subscription_detail: { UnlimitedPro: false },
    });
    expect(o.history).toEqual([]);
    expect(o.history_count).toBe(0);
    expect(o.usage_last_30_days).toHaveLength(30);
    expect(o.usage_last_30_days.every((u) => u.total_checked === 0)).toBe(true);
    expect(o.usage_last_30_days[29]?.day).toBe('2026-07-31');
    expect(Object.keys(o).sort()).toEqual(['history', 'history_count', 'usage_last_30_days', 'user']);
  });

  test('history newest first, at most 30, signed links, usage per UTC day', async () => {
    const acc = await createAccount(tdb.db, { email: 'busy@example.test', checks: 1, unlimitedUntil: new Date('2026-08-01T00:00:00Z') });
    const other = await createAccount(tdb.db, { email: 'other@example.test' });
    await startScan(tdb.db, { accountId: other.id, runId: 'other-1', proxyType: 'http', region: 'us1', timeoutMs: 1000, totalSubmitted: 1, now });
    // 35 scans, one per 30 h going back from now; the oldest ones fall outside the 30-day window.
    for (let i = 0; i < 35; i++) {
      const at = new Date(now.getTime() - i * 30 * 3600_000 - 60_000);
      const runId = `busy-${i}`;
      await startScan(tdb.db, { accountId: acc.id, runId, proxyType: i % 2 ? 'socks5' : 'http', region: 'us1', timeoutMs: 1000, totalSubmitted: 3, now: at });
      await finishScan(tdb.db, { runId, totalChecked: i + 1, totalWorking: i % 3, resultRef: i === 1 ? 'expired' : `ref-${i}` });
    }
    // A running scan (no result yet) is history too.
    const runningAt = new Date(now.getTime() - 1000);
    await startScan(tdb.db, { accountId: acc.id, runId: 'busy-running', proxyType: 'socks4', region: 'sg1', timeoutMs: 1000, totalSubmitted: 3, now: runningAt });

    const o = await getAccountOverview(tdb.db, acc.id, now, sign);
    expect(o.history_count).toBe(36);
    expect(o.history).toHaveLength(30);
    expect(o.history[0]).toMatchObject({ total_checked: 0, result_url: null, proxy_type: 'socks4', scanned_at: runningAt.toISOString(), status: 'running', error: null });
    expect(o.history[1]).toMatchObject({ total_checked: 1, total_working: 0, proxy_type: 'http', status: 'completed', error: null });
    expect(o.history[1]?.result_url).toBe(`http://content.test/result/ref-0.json?t=${now.getTime() - 60_000}`);
    expect(o.history[2]?.result_url).toBeNull(); // signer says the file is gone
    expect(Object.keys(o.history[1] ?? {}).sort()).toEqual(['error', 'id', 'proxy_type', 'result_url', 'scanned_at', 'status', 'total_checked', 'total_working']);
    const times = o.history.map((h) => Date.parse(h.scanned_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(Number.isInteger(o.history[0]?.id)).toBe(true);

    // Usage: scan i was at now - i*30h - 1min; totals per UTC day, days outside the window ignored.
    const usage = o.usage_last_30_days;
    expect(usage).toHaveLength(30);
    expect(usage[29]).toEqual({ day: '2026-07-31', total_checked: 1 }); // scan 0 (09:59) + the running one (0)
    expect(usage[0]).toEqual({ day: '2026-07-02', total_checked: 24 }); // scan 23 at 15:59; scan 24 (07-01) is outside
    const expected = new Map<string, number>();
    for (let i = 0; i < 35; i++) {
      const day = new Date(now.getTime() - i * 30 * 3600_000 - 60_000).toISOString().slice(0, 10);
      expected.set(day, (expected.get(day) ?? 0) + i + 1);
    }
    for (const u of usage) expect(u.total_checked).toBe(expected.get(u.day) ?? 0);
    expect(o.user.subscription_detail).toEqual({ UnlimitedPro: true, unlimited_expired_at: '2026-08-01T00:00:00.000Z' });
  });

  test('scanned_at of a scan stamped by the database (microseconds) is the millisecond drizzle reads', async () => {
    const acc = await createAccount(tdb.db, { email: 'micro@example.test' });
    for (let i = 0; i < 5; i++) await startScan(tdb.db, { accountId: acc.id, runId: `micro-${i}`, proxyType: 'http', region: 'us1', timeoutMs: 1000, totalSubmitted: 1 });
    const o = await getAccountOverview(tdb.db, acc.id, new Date(), sign);
    expect(o.history).toHaveLength(5);
    for (const h of o.history) {
      const row = await getScanByRunId(tdb.db, `micro-${4 - o.history.indexOf(h)}`);
      expect(h.id).toBe(row!.id);
      expect(h.scanned_at).toBe(row!.createdAt.toISOString());
    }
  });

  test('check metadata.user and unknown account', async () => {
    const acc = await createAccount(tdb.db, { email: 'meta@example.test', checks: 4, temp: 1, unlimitedUntil: new Date('2026-01-01T00:00:00Z') });
    expect(await getCheckUserInfo(tdb.db, acc.id, now)).toEqual({
      email: 'meta@example.test',
      checks_used: 0,
      remaining_checks: 5,
      subscription_detail: { UnlimitedPro: false, unlimited_expired_at: '2026-01-01T00:00:00.000Z' },
    });
    expect(await rejection(getAccountOverview(tdb.db, '00000000-0000-0000-0000-000000000000', now, sign))).toMatchObject({
      code: 'account_not_found',
    });
  });
});
