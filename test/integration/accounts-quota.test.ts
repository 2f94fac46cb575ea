/**
 * Quota reservation and refund on the driver the environment selects:
 * atomicity under concurrency, temp before root, UnlimitedPro, refunds.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { quotaLedger, scans } from '../../db/schema';
import { createAccount, getAccount, setPlan } from '../../src/accounts/accounts';
import { ledgerOf } from '../../src/accounts/ledger';
import { refundQuota, reserveQuota } from '../../src/accounts/quota';
import { freshDatabase, type TestDatabase } from '../helpers/db';
import { rejection } from '../helpers/rejection';

let tdb: TestDatabase;
let n = 0;
const email = () => `quota${++n}@example.test`;
const now = new Date('2026-03-01T12:00:00Z');

beforeAll(async () => {
  tdb = await freshDatabase();
}, 60_000);
afterAll(async () => {
  await tdb.cleanup();
});

describe('reserveQuota', () => {
  test('20 concurrent reservations of 10 on a balance of 100: exactly 10 succeed, balance 0, 10 ledger rows', async () => {
    const acc = await createAccount(tdb.db, { email: email(), checks: 100 });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => reserveQuota(tdb.db, { accountId: acc.id, runId: `conc-${i}`, units: 10, now })),
    );
    expect(results.filter((r) => r.ok).length).toBe(10);
    for (const r of results.filter((r) => !r.ok)) expect(r).toEqual({ ok: false, required: 10, available: 0 });
    const after = await getAccount(tdb.db, acc.id);
    expect(after?.rootBalance).toBe(0);
    expect(after?.tempBalance).toBe(0);
    expect(after?.checksUsed).toBe(100);
    const rows = (await ledgerOf(tdb.db, acc.id)).filter((r) => r.reason === 'reserve');
    expect(rows.length).toBe(10);
    expect(rows.every((r) => r.delta === -10 && r.balanceAfter >= 0)).toBe(true);
    expect(rows.map((r) => r.balanceAfter).sort((a, b) => a - b)).toEqual([0, 10, 20, 30, 40, 50, 60, 70, 80, 90]);
  });

  test('temp balance is spent before root', async () => {
    const acc = await createAccount(tdb.db, { email: email(), checks: 10, temp: 4 });
    const r1 = await reserveQuota(tdb.db, { accountId: acc.id, runId: 'temp-1', units: 3, now });
    expect(r1).toMatchObject({ ok: true, unlimited: false, tempCharged: 3, rootCharged: 0, remaining: 11 });
    const r2 = await reserveQuota(tdb.db, { accountId: acc.id, runId: 'temp-2', units: 5, now });
    expect(r2).toMatchObject({ ok: true, tempCharged: 1, rootCharged: 4, remaining: 6 });
    const after = await getAccount(tdb.db, acc.id);
    expect([after?.tempBalance, after?.rootBalance, after?.checksUsed]).toEqual([0, 6, 8]);
    const row = (await ledgerOf(tdb.db, acc.id)).find((r) => r.runId === 'temp-2');
    expect(row).toMatchObject({ reason: 'reserve', tempDelta: -1, rootDelta: -4, delta: -5, units: 5, balanceAfter: 6 });
  });

  test('insufficient balance changes nothing and reports required/available', async () => {
    const acc = await createAccount(tdb.db, { email: email(), checks: 3, temp: 2 });
    const r = await reserveQuota(tdb.db, { accountId: acc.id, runId: 'short', units: 6, now });
    expect(r).toEqual({ ok: false, required: 6, available: 5 });
    const after = await getAccount(tdb.db, acc.id);
    expect([after?.tempBalance, after?.rootBalance, after?.checksUsed]).toEqual([2, 3, 0]);
    expect((await ledgerOf(tdb.db, acc.id)).filter((x) => x.reason === 'reserve')).toEqual([]);
  });

  test('active UnlimitedPro charges nothing, never refuses, still counts checks_used', async () => {
    const acc = await createAccount(tdb.db, { email: email(), checks: 1, unlimitedUntil: new Date('2026-04-01T00:00:00Z') });
    const r = await reserveQuota(tdb.db, { accountId: acc.id, runId: 'unl-1', units: 500, now });
    expect(r).toMatchObject({ ok: true, unlimited: true, tempCharged: 0, rootCharged: 0, remaining: 1, checksUsed: 500 });
    const after = await getAccount(tdb.db, acc.id);
    expect([after?.rootBalance, after?.checksUsed]).toEqual([1, 500]);
    const row = (await ledgerOf(tdb.db, acc.id)).find((x) => x.runId === 'unl-1');
    expect(row).toMatchObject({ reason: 'reserve', delta: 0, units: 500 });
    const withScan = await reserveQuota(tdb.db, {
      accountId: acc.id,
      runId: 'unl-scan',
      units: 9,
      now,
      scan: { proxyType: 'http', region: 'us1', timeoutMs: 2000, totalSubmitted: 9 },
    });
    expect(withScan.ok).toBe(true);
    const [scan] = await tdb.db.select().from(scans).where(eq(scans.runId, 'unl-scan'));
    expect(scan?.charged).toBe(0);
  });

  test('UnlimitedPro without expiry is active', async () => {
    const acc = await createAccount(tdb.db, { email: email() });
    await setPlan(tdb.db, { accountId: acc.id, unlimitedUntil: null });
    const r = await reserveQuota(tdb.db, { accountId: acc.id, runId: 'unl-forever', units: 7, now });
    expect(r).toMatchObject({ ok: true, unlimited: true });
  });

  test('an expired plan means normal quota (402 data when short)', async () => {
    const acc = await createAccount(tdb.db, { email: email(), checks: 5, unlimitedUntil: new Date('2026-02-01T00:00:00Z') });
    expect(await reserveQuota(tdb.db, { accountId: acc.id, runId: 'exp-1', units: 6, now })).toEqual({ ok: false, required: 6, available: 5 });
    expect(await reserveQuota(tdb.db, { accountId: acc.id, runId: 'exp-2', units: 5, now })).toMatchObject({ ok: true, unlimited: false, rootCharged: 5 });
  });

  test('the plan boundary: until == now is expired', async () => {
    const acc = await createAccount(tdb.db, { email: email(), checks: 0, unlimitedUntil: now });
    expect((await reserveQuota(tdb.db, { accountId: acc.id, runId: 'edge', units: 1, now })).ok).toBe(false);
  });

  test('with scan, the running scan row is inserted in the same transaction', async () => {
    const acc = await createAccount(tdb.db, { email: email(), checks: 10 });
    const r = await reserveQuota(tdb.db, {
      accountId: acc.id,
      runId: 'with-scan',
      units: 4,
      now,
      scan: { proxyType: 'socks5', region: 'us1', timeoutMs: 3000, totalSubmitted: 6 },
    });
    expect(r.ok).toBe(true);
    const [scan] = await tdb.db.select().from(scans).where(eq(scans.runId, 'with-scan'));
    expect(scan).toMatchObject({ id: r.ok ? (r.scanId ?? -1) : -1, status: 'running', charged: 4, totalSubmitted: 6, proxyType: 'socks5' });
    // A refused reservation inserts no scan.
    const refused = await reserveQuota(tdb.db, {
      accountId: acc.id,
      runId: 'with-scan-refused',
      units: 99,
      now,
      scan: { proxyType: 'http', region: 'us1', timeoutMs: 3000, totalSubmitted: 99 },
    });
    expect(refused.ok).toBe(false);
    expect(await tdb.db.select().from(scans).where(eq(scans.runId, 'with-scan-refused'))).toEqual([]);
  });

  test('unknown account and bad units throw coded errors', async () => {
    expect(await rejection(
      reserveQuota(tdb.db, { accountId: '00000000-0000-0000-0000-000000000000', runId: 'x', units: 1, now }),
    )).toMatchObject({ code: 'account_not_found' });
    const acc = await createAccount(tdb.db, { email: email(), checks: 1 });
    expect(await rejection(reserveQuota(tdb.db, { accountId: acc.id, runId: 'y', units: -1, now }))).toMatchObject({ code: 'invalid_input' });
    expect(await rejection(reserveQuota(tdb.db, { accountId: acc.id, runId: 'y', units: 1.5, now }))).toMatchObject({ code: 'invalid_input' });
  });
});

describe('refundQuota', () => {
  test('refunds root first, then temp; checks_used shrinks; a ledger row', async () => {
    const acc = await createAccount(tdb.db, { email: email(), checks: 10, temp: 4 });
    await reserveQuota(tdb.db, { accountId: acc.id, runId: 'ref-1', units: 10, now }); // temp 4, root 6
    const r1 = await refundQuota(tdb.db, { accountId: acc.id, runId: 'ref-1', units: 7 });
    expect(r1).toEqual({ refunded: 7, rootRefunded: 6, tempRefunded: 1, remaining: 11 });
    let after = await getAccount(tdb.db, acc.id);
    expect([after?.tempBalance, after?.rootBalance, after?.checksUsed]).toEqual([1, 10, 3]);
    const row = (await ledgerOf(tdb.db, acc.id)).filter((x) => x.reason === 'refund');
    expect(row).toHaveLength(1);
    expect(row[0]).toMatchObject({ runId: 'ref-1', tempDelta: 1, rootDelta: 6, delta: 7, units: 7, balanceAfter: 11 });
    // Over-asking is clamped to what is left of the reservation (3 temp units).
    const r2 = await refundQuota(tdb.db, { accountId: acc.id, runId: 'ref-1', units: 100 });
    expect(r2).toEqual({ refunded: 3, rootRefunded: 0, tempRefunded: 3, remaining: 14 });
    after = await getAccount(tdb.db, acc.id);
    expect([after?.tempBalance, after?.rootBalance, after?.checksUsed]).toEqual([4, 10, 0]);
    // Nothing left: a further refund is a no-op without a ledger row.
    expect((await refundQuota(tdb.db, { accountId: acc.id, runId: 'ref-1', units: 'all' })).refunded).toBe(0);
    expect((await ledgerOf(tdb.db, acc.id)).filter((x) => x.reason === 'refund')).toHaveLength(2);
  });

  test('a job with no reservation refunds nothing', async () => {
    const acc = await createAccount(tdb.db, { email: email(), checks: 5 });
    expect(await refundQuota(tdb.db, { accountId: acc.id, runId: 'never', units: 5 })).toEqual({
      refunded: 0,
      rootRefunded: 0,
      tempRefunded: 0,
      remaining: 5,
    });
  });

  test('an UnlimitedPro reservation refunds checks_used only', async () => {
    const acc = await createAccount(tdb.db, { email: email(), checks: 2, unlimitedUntil: new Date('2027-01-01T00:00:00Z') });
    await reserveQuota(tdb.db, { accountId: acc.id, runId: 'unl-ref', units: 50, now });
    const r = await refundQuota(tdb.db, { accountId: acc.id, runId: 'unl-ref', units: 20 });
    expect(r).toEqual({ refunded: 20, rootRefunded: 0, tempRefunded: 0, remaining: 2 });
    const after = await getAccount(tdb.db, acc.id);
    expect([after?.rootBalance, after?.checksUsed]).toEqual([2, 30]);
  });

  test('concurrent refunds of one job never give back more than was reserved', async () => {
    const acc = await createAccount(tdb.db, { email: email(), checks: 30 });
    await reserveQuota(tdb.db, { accountId: acc.id, runId: 'ref-conc', units: 30, now });
    const rs = await Promise.all(Array.from({ length: 8 }, () => refundQuota(tdb.db, { accountId: acc.id, runId: 'ref-conc', units: 10 })));
    expect(rs.reduce((s, r) => s + r.refunded, 0)).toBe(30);
    const after = await getAccount(tdb.db, acc.id);
    expect([after?.rootBalance, after?.checksUsed]).toEqual([30, 0]);
    const sum = (await tdb.db.select().from(quotaLedger).where(eq(quotaLedger.accountId, acc.id))).reduce((s, r) => s + r.delta, 0);
    expect(sum).toBe(30);
  });
});
