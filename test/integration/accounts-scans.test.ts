/**
 * Scan rows and the restart path: start/finish/fail, and refundOrphans after
 * a simulated kill -9 (scans left 'running' with their reservation).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createAccount, getAccount } from '../../src/accounts/accounts';
import { ledgerOf } from '../../src/accounts/ledger';
import { refundQuota, reserveQuota } from '../../src/accounts/quota';
import { failScan, findOrphanScans, finishScan, getScanByJobId, refundOrphans, startScan } from '../../src/accounts/scans';
import { memoryLogger } from '../../src/log';
import { freshDatabase, type TestDatabase } from '../helpers/db';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await freshDatabase();
}, 60_000);
afterAll(async () => {
  await tdb.cleanup();
});

const scan = { proxyType: 'http', region: 'us1', timeoutMs: 2000, totalSubmitted: 10 };
const now = new Date('2026-06-01T08:00:00Z');

describe('scans', () => {
  test('start -> finish records counts and the result reference once', async () => {
    const acc = await createAccount(tdb.db, { email: 'scan1@example.test', checks: 10 });
    const s = await startScan(tdb.db, { accountId: acc.id, jobId: 'job-s1', ...scan, charged: 10, now });
    expect(s).toMatchObject({ status: 'running', charged: 10, totalChecked: 0, resultRef: null, finishedAt: null });
    expect(typeof s.id).toBe('number');
    const done = await finishScan(tdb.db, { jobId: 'job-s1', totalChecked: 10, totalWorking: 3, resultRef: 'r-abc' });
    expect(done).toMatchObject({ status: 'completed', totalChecked: 10, totalWorking: 3, resultRef: 'r-abc' });
    expect(done?.finishedAt).toBeInstanceOf(Date);
    // Not running any more: a second finish or a fail changes nothing.
    expect(await finishScan(tdb.db, { jobId: 'job-s1', totalChecked: 1, totalWorking: 1, resultRef: null })).toBeNull();
    expect(await failScan(tdb.db, { jobId: 'job-s1', error: 'late' })).toBeNull();
    expect((await getScanByJobId(tdb.db, 'job-s1'))?.status).toBe('completed');
  });

  test('fail records the error and partial counts; job ids are unique', async () => {
    const acc = await createAccount(tdb.db, { email: 'scan2@example.test' });
    await startScan(tdb.db, { accountId: acc.id, jobId: 'job-s2', ...scan });
    const failed = await failScan(tdb.db, { jobId: 'job-s2', error: 'shutdown', totalChecked: 4, totalWorking: 1 });
    expect(failed).toMatchObject({ status: 'failed', error: 'shutdown', totalChecked: 4, totalWorking: 1 });
    await expect(startScan(tdb.db, { accountId: acc.id, jobId: 'job-s2', ...scan })).rejects.toThrow();
  });

  test('refundOrphans refunds every interrupted reservation and fails its scan', async () => {
    const a = await createAccount(tdb.db, { email: 'orphan-a@example.test', checks: 50, temp: 5 });
    const b = await createAccount(tdb.db, { email: 'orphan-b@example.test', checks: 20 });
    // Job A: reserved 30 (5 temp + 25 root), then the process died.
    await reserveQuota(tdb.db, { accountId: a.id, jobId: 'orph-a', units: 30, now, scan });
    // Job B: reserved 20, a partial refund of 5 happened, then the process died.
    await reserveQuota(tdb.db, { accountId: b.id, jobId: 'orph-b', units: 20, now, scan });
    await refundQuota(tdb.db, { accountId: b.id, jobId: 'orph-b', units: 5 });
    // A finished job is not an orphan.
    await reserveQuota(tdb.db, { accountId: b.id, jobId: 'done-b', units: 0, now, scan });
    await finishScan(tdb.db, { jobId: 'done-b', totalChecked: 0, totalWorking: 0, resultRef: null });

    const orphans = await findOrphanScans(tdb.db);
    expect(orphans.map((o) => o.jobId).sort()).toEqual(['orph-a', 'orph-b']);
    const log = memoryLogger();
    const report = await refundOrphans(tdb.db, log);
    expect(report).toEqual({ scans: 2, units: 45 });
    const aa = await getAccount(tdb.db, a.id);
    const bb = await getAccount(tdb.db, b.id);
    expect([aa?.rootBalance, aa?.tempBalance, aa?.checksUsed]).toEqual([50, 5, 0]);
    expect([bb?.rootBalance, bb?.checksUsed]).toEqual([20, 0]);
    expect(await getScanByJobId(tdb.db, 'orph-a')).toMatchObject({ status: 'failed', error: 'interrupted' });
    expect((await ledgerOf(tdb.db, a.id)).map((r) => r.reason)).toEqual(['signup', 'reserve', 'refund']);
    expect(log.lines.some((l) => l.msg === 'refunded an interrupted job' && l.jobId === 'orph-a' && l.units === 30)).toBe(true);
    // Running it again finds nothing.
    expect(await refundOrphans(tdb.db, log)).toEqual({ scans: 0, units: 0 });
  });
});
