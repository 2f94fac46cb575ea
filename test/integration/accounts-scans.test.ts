/**
 * Scan rows: start/finish/fail, each closing a scan only while it runs. The
 * orphan sweep (a simulated kill -9) is test/integration/accounts-orphans.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createAccount } from '../../src/accounts/accounts';
import { failScan, finishScan, getScanByRunId, startScan } from '../../src/accounts/scans';
import { freshDatabase, type TestDatabase } from '../helpers/db';
import { rejection } from '../helpers/rejection';

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
    const s = await startScan(tdb.db, { accountId: acc.id, runId: 'job-s1', ...scan, charged: 10, now });
    expect(s).toMatchObject({ status: 'running', charged: 10, totalChecked: 0, resultRef: null, finishedAt: null });
    expect(typeof s.id).toBe('number');
    const done = await finishScan(tdb.db, { runId: 'job-s1', totalChecked: 10, totalWorking: 3, resultRef: 'r-abc' });
    expect(done).toMatchObject({ status: 'completed', totalChecked: 10, totalWorking: 3, resultRef: 'r-abc' });
    expect(done?.finishedAt).toBeInstanceOf(Date);
    // Not running any more: a second finish or a fail changes nothing.
    expect(await finishScan(tdb.db, { runId: 'job-s1', totalChecked: 1, totalWorking: 1, resultRef: null })).toBeNull();
    expect(await failScan(tdb.db, { runId: 'job-s1', error: 'late' })).toBeNull();
    expect((await getScanByRunId(tdb.db, 'job-s1'))?.status).toBe('completed');
  });

  test('fail records the error and partial counts; job ids are unique', async () => {
    const acc = await createAccount(tdb.db, { email: 'scan2@example.test' });
    expect((await startScan(tdb.db, { accountId: acc.id, runId: 'job-s2', ...scan, nodeId: 'node-a' })).nodeId).toBe('node-a');
    const failed = await failScan(tdb.db, { runId: 'job-s2', error: 'shutdown', totalChecked: 4, totalWorking: 1 });
    expect(failed).toMatchObject({ status: 'failed', error: 'shutdown', totalChecked: 4, totalWorking: 1 });
    expect(await rejection(startScan(tdb.db, { accountId: acc.id, runId: 'job-s2', ...scan }))).toBeInstanceOf(Error);
  });
});
