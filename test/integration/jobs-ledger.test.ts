/**
 * src/jobs/ledger.ts (the LedgerPort over the database): a settlement is
 * safe to repeat. A failed job settled twice (a retry after a lost answer,
 * src/jobs/settlements.ts) refunds once; so does a completion.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { scans } from '../../db/schema';
import { createAccount, getAccount } from '../../src/accounts/accounts';
import { databaseLedger } from '../../src/jobs/ledger';
import { freshDatabase, type TestDatabase } from '../helpers/db';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await freshDatabase();
}, 60_000);
afterAll(async () => {
  await tdb?.cleanup();
});

const now = () => new Date();

async function reserved(jobId: string, units: number) {
  const acc = await createAccount(tdb.db, { email: `${jobId}@example.com`, checks: 100 });
  const ledger = databaseLedger(tdb.db);
  const r = await ledger.reserve({ accountId: acc.id, jobId, clientJobId: null, units, type: 'http', region: 'us1', timeoutMs: 1000, submitted: units, now: now() });
  expect(r.ok).toBe(true);
  return { acc, ledger };
}

const balance = async (id: string) => {
  const a = await getAccount(tdb.db, id);
  return (a?.rootBalance ?? 0) + (a?.tempBalance ?? 0);
};

describe('databaseLedger: settling twice refunds once', () => {
  test('fail, then the same fail again (a retry after a lost answer)', async () => {
    const { acc, ledger } = await reserved('run_fail_twice', 10);
    expect(await balance(acc.id)).toBe(90);
    const settlement = { accountId: acc.id, jobId: 'run_fail_twice', checked: 4, working: 0, refund: 10, error: 'shutting_down', cancelled: false, now: now() };
    await ledger.fail(settlement);
    expect(await balance(acc.id)).toBe(100);
    await ledger.fail(settlement);
    expect(await balance(acc.id)).toBe(100);
    const [scan] = await tdb.db.select().from(scans).where(eq(scans.jobId, 'run_fail_twice'));
    expect(scan).toMatchObject({ status: 'failed', error: 'shutting_down' });
  });

  test('complete with a refund, twice', async () => {
    const { acc, ledger } = await reserved('run_complete_twice', 10);
    const c = { accountId: acc.id, jobId: 'run_complete_twice', checked: 10, working: 3, resultRef: 'r1', refund: 2, now: now() };
    await ledger.complete(c);
    await ledger.complete(c);
    expect(await balance(acc.id)).toBe(92);
  });
});
