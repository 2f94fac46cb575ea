/**
 * src/accounts/client-job-conflict.ts against the real errors of the driver in
 * use (PGlite, or PostgreSQL with DATABASE_URL): the partial unique index
 * over running scans' client jobIds (migration 0002) refuses a second running
 * scan with a jobId, isRunningClientJobConflict recognises exactly that
 * error, and the index lets the jobId go once the scan is no longer running.
 * PostgreSQL also: a reservation that loses the race at the index (the busy
 * check saw nothing) is job_already_running with nothing charged.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { scans } from '../../db/schema';
import { createAccount, getAccount } from '../../src/accounts/accounts';
import { isRunningClientJobConflict, RUNNING_CLIENT_JOB_INDEX } from '../../src/accounts/client-job-conflict';
import { reserveQuota } from '../../src/accounts/quota';
import { failScan, finishScan, startScan } from '../../src/accounts/scans';
import { isServiceError } from '../../src/errors';
import { freshDatabase, testDatabaseUrl, type TestDatabase } from '../helpers/db';
import { DOMAIN_ERROR_CODES } from '../../src/error-codes';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await freshDatabase();
}, 60_000);
afterAll(async () => {
  await tdb?.cleanup();
});

const scan = { proxyType: 'http', region: 'us1', timeoutMs: 1000, totalSubmitted: 1 };
const caught = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e);

test('a second running scan with a client jobId is the index\'s unique violation, and only that is the conflict', async () => {
  const a = await createAccount(tdb.db, { email: 'cjc-a@example.com', checks: 0 });
  const b = await createAccount(tdb.db, { email: 'cjc-b@example.com', checks: 0 });
  await startScan(tdb.db, { ...scan, accountId: a.id, runId: 'run_cjc_1', clientJobId: 'cjc' });
  const dup = await caught(startScan(tdb.db, { ...scan, accountId: b.id, runId: 'run_cjc_2', clientJobId: 'cjc' }));
  expect(dup).toBeInstanceOf(Error);
  expect(String((dup as Error).cause)).toContain(RUNNING_CLIENT_JOB_INDEX);
  expect(isRunningClientJobConflict(dup)).toBe(true);
  // another unique violation (the run id) is not the conflict
  const sameRun = await caught(startScan(tdb.db, { ...scan, accountId: b.id, runId: 'run_cjc_1', clientJobId: 'other' }));
  expect(sameRun).toBeInstanceOf(Error);
  expect(isRunningClientJobConflict(sameRun)).toBe(false);
});

test('the index holds running scans only: completed, failed and cancelled scans free the jobId; null jobIds never collide', async () => {
  const a = await createAccount(tdb.db, { email: 'cjc-free@example.com', checks: 0 });
  const start = (runId: string) => startScan(tdb.db, { ...scan, accountId: a.id, runId: runId, clientJobId: 'cjc-free' });
  await start('run_free_1');
  await finishScan(tdb.db, { runId: 'run_free_1', totalChecked: 1, totalWorking: 0, resultRef: null });
  await start('run_free_2');
  await failScan(tdb.db, { runId: 'run_free_2', error: 'shard_failed' });
  await start('run_free_3');
  await failScan(tdb.db, { runId: 'run_free_3', error: 'client_disconnected', status: 'cancelled' });
  await start('run_free_4');
  expect(isRunningClientJobConflict(await caught(start('run_free_5')))).toBe(true);
  const rows = await tdb.db.select().from(scans).where(eq(scans.clientJobId, 'cjc-free'));
  expect(rows.map((r) => r.status).sort()).toEqual(['cancelled', 'completed', 'failed', 'running']);
  for (const runId of ['run_null_1', 'run_null_2']) await startScan(tdb.db, { ...scan, accountId: a.id, runId: runId });
});

test.if(testDatabaseUrl() !== undefined)(
  'PostgreSQL: a reservation that loses the race at the index (the other scan not yet committed) is job_already_running, nothing charged',
  async () => {
    const holder = await createAccount(tdb.db, { email: 'cjc-holder@example.com', checks: 0 });
    const acc = await createAccount(tdb.db, { email: 'cjc-race@example.com', checks: 100 });
    let reservation: Promise<unknown> | undefined;
    await tdb.db.transaction(async (tx) => {
      // uncommitted: the reservation's busy check cannot see it; its INSERT waits on the index
      await startScan(tx, { ...scan, accountId: holder.id, runId: 'run_race_holder', clientJobId: 'cjc-race' });
      reservation = caught(reserveQuota(tdb.db, { accountId: acc.id, runId: 'run_race', clientJobId: 'cjc-race', units: 10, now: new Date(), scan }));
      await Bun.sleep(300);
    });
    const err = await reservation;
    expect(isServiceError(err, DOMAIN_ERROR_CODES.JOB_ALREADY_RUNNING)).toBe(true);
    expect(isRunningClientJobConflict((err as Error).cause)).toBe(true);
    const after = await getAccount(tdb.db, acc.id);
    expect((after?.rootBalance ?? 0) + (after?.tempBalance ?? 0)).toBe(100);
    expect(await tdb.db.select().from(scans).where(eq(scans.runId, 'run_race'))).toEqual([]);
  },
);
