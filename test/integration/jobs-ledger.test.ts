/**
 * src/jobs/ledger.ts (the LedgerPort over the database): a settlement is
 * safe to repeat. A failed job settled twice (a retry after a lost answer,
 * src/jobs/settlements.ts) refunds once; so does a completion.
 * A client jobId runs once at a time in the whole database (every account,
 * every API node): a second reservation of it is JobAlreadyRunningError with
 * nothing charged, and the jobId is free again once its scan has ended,
 * however it ended. An async check's settlement that writes check.completed
 * tells the webhooks' delivery loop (onWebhookWritten: embedded it does not
 * poll), once, and only when a delivery was written.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { quotaLedger, scans } from '../../db/schema';
import { createAccount, getAccount } from '../../src/accounts/accounts';
import { sweepOrphans } from '../../src/accounts/orphans';
import { JobAlreadyRunningError } from '../../src/jobs/job-errors';
import { databaseLedger } from '../../src/jobs/ledger';
import { memoryLogger } from '../../src/log';
import { sealingKey } from '../../src/webhooks/seal';
import { WebhookService } from '../../src/webhooks/service';
import { freshDatabase, testDatabaseUrl, type TestDatabase } from '../helpers/db';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await freshDatabase();
}, 60_000);
afterAll(async () => {
  await tdb?.cleanup();
});

const now = () => new Date();

async function reserved(runId: string, units: number) {
  const acc = await createAccount(tdb.db, { email: `${runId}@example.com`, checks: 100 });
  const ledger = databaseLedger(tdb.db);
  const r = await ledger.reserve({ accountId: acc.id, runId, clientJobId: null, units, type: 'http', region: 'us1', timeoutMs: 1000, submitted: units, now: now() });
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
    const settlement = { accountId: acc.id, runId: 'run_fail_twice', checked: 4, working: 0, refund: 10, error: 'shutting_down', cancelled: false, now: now() };
    await ledger.fail(settlement);
    expect(await balance(acc.id)).toBe(100);
    await ledger.fail(settlement);
    expect(await balance(acc.id)).toBe(100);
    const [scan] = await tdb.db.select().from(scans).where(eq(scans.runId, 'run_fail_twice'));
    expect(scan).toMatchObject({ status: 'failed', error: 'shutting_down' });
  });

  test('complete with a refund, twice', async () => {
    const { acc, ledger } = await reserved('run_complete_twice', 10);
    const c = { accountId: acc.id, runId: 'run_complete_twice', checked: 10, working: 3, resultRef: 'r1', refund: 2, now: now() };
    await ledger.complete(c);
    await ledger.complete(c);
    expect(await balance(acc.id)).toBe(92);
  });
});

describe('databaseLedger: one running job per client jobId, across accounts and nodes', () => {
  const ledger = () => databaseLedger(tdb.db);
  let n = 0;
  const account = (checks = 100) => createAccount(tdb.db, { email: `cj-${++n}@example.com`, checks });
  const reserve = (accountId: string, runId: string, clientJobId: string | null, units = 10) =>
    ledger().reserve({ accountId, runId: runId, clientJobId, units, type: 'http', region: 'us1', timeoutMs: 1000, submitted: units, now: now() });
  const refusal = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e);
  /** What the database holds for an account: balance, ledger rows, scans. */
  const held = async (id: string) => ({
    balance: await balance(id),
    ledger: (await tdb.db.select().from(quotaLedger).where(eq(quotaLedger.accountId, id))).filter((r) => r.reason !== 'grant').length,
    scans: (await tdb.db.select().from(scans).where(eq(scans.accountId, id))).length,
  });

  test('a second reservation of a running jobId (another account: another node\'s client) is refused, nothing charged; after the first completes it is accepted', async () => {
    const a = await account();
    const b = await account();
    expect((await reserve(a.id, 'run_cj_a', 'cj-dup')).ok).toBe(true);
    const before = await held(b.id);
    const err = await refusal(reserve(b.id, 'run_cj_b', 'cj-dup'));
    expect(err).toBeInstanceOf(JobAlreadyRunningError);
    expect(err).toMatchObject({ code: 'job_already_running', jobId: 'cj-dup' });
    expect(await held(b.id)).toEqual(before);
    // the same account again: refused too (a jobId is not per account)
    expect(await refusal(reserve(a.id, 'run_cj_a2', 'cj-dup'))).toBeInstanceOf(JobAlreadyRunningError);
    expect(await balance(a.id)).toBe(90);

    await ledger().complete({ accountId: a.id, runId: 'run_cj_a', checked: 10, working: 0, resultRef: 'r', refund: 0, now: now() });
    expect((await reserve(b.id, 'run_cj_b', 'cj-dup')).ok).toBe(true);
    expect(await balance(b.id)).toBe(90);
    const [scan] = await tdb.db.select().from(scans).where(eq(scans.runId, 'run_cj_b'));
    expect(scan).toMatchObject({ clientJobId: 'cj-dup', status: 'running' });
  });

  test('409 before 402: a running jobId is refused even when the balance is short', async () => {
    const a = await account();
    const broke = await account(0);
    expect((await reserve(a.id, 'run_cj_order', 'cj-order')).ok).toBe(true);
    expect(await refusal(reserve(broke.id, 'run_cj_broke', 'cj-order'))).toBeInstanceOf(JobAlreadyRunningError);
    expect(await held(broke.id)).toMatchObject({ balance: 0, scans: 0 });
  });

  test('the jobId is free again once its scan failed, was cancelled, or was swept as an orphan', async () => {
    const a = await account(1000);
    const ends: [string, (runId: string) => Promise<unknown>][] = [
      ['failed', (runId) => ledger().fail({ accountId: a.id, runId: runId, checked: 0, working: 0, refund: 10, error: 'shutting_down', cancelled: false, now: now() })],
      ['cancelled', (runId) => ledger().fail({ accountId: a.id, runId: runId, checked: 0, working: 0, refund: 10, error: 'client_disconnected', cancelled: true, now: now() })],
      // no node recorded: an orphan for any sweep (the node that ran it is gone)
      ['failed', () => sweepOrphans(tdb.db, memoryLogger(), { self: 'sweeper', scope: 'expired' })],
    ];
    let i = 0;
    for (const [status, end] of ends) {
      const runId = `run_cj_end_${i++}`;
      expect((await reserve(a.id, runId, 'cj-end')).ok).toBe(true);
      expect(await refusal(reserve(a.id, `${runId}_dup`, 'cj-end'))).toBeInstanceOf(JobAlreadyRunningError);
      await end(runId);
      const [scan] = await tdb.db.select().from(scans).where(eq(scans.runId, runId));
      expect(scan?.status).toBe(status);
    }
    expect((await reserve(a.id, 'run_cj_end_last', 'cj-end')).ok).toBe(true);
    expect(await balance(a.id)).toBe(990);
    await ledger().complete({ accountId: a.id, runId: 'run_cj_end_last', checked: 10, working: 0, resultRef: 'r', refund: 0, now: now() });
  });

  test('jobs without a client jobId never conflict', async () => {
    const a = await account();
    for (const runId of ['run_cj_none_1', 'run_cj_none_2']) expect((await reserve(a.id, runId, null)).ok).toBe(true);
    const rows = await tdb.db.select().from(scans).where(eq(scans.accountId, a.id));
    expect(rows.map((r) => r.clientJobId)).toEqual([null, null]);
  });

  // PGlite is one connection: two reservations never overlap there
  test.if(testDatabaseUrl() !== undefined)('PostgreSQL: 8 reservations of one jobId at the same moment, 8 accounts: exactly one runs, the rest are refused with nothing charged', async () => {
    const accs = await Promise.all(Array.from({ length: 8 }, () => account()));
    const outcomes = await Promise.all(accs.map((acc, k) => reserve(acc.id, `run_cj_race_${k}`, 'cj-race').then((r) => r.ok, (e: unknown) => e)));
    expect(outcomes.filter((o) => o === true)).toHaveLength(1);
    const refused = outcomes.filter((o) => o !== true);
    expect(refused).toHaveLength(7);
    for (const e of refused) expect(e).toBeInstanceOf(JobAlreadyRunningError);
    const balances = await Promise.all(accs.map((acc) => balance(acc.id)));
    expect(balances.reduce((x, y) => x + y, 0)).toBe(8 * 100 - 10);
    expect(await tdb.db.select().from(scans).where(eq(scans.clientJobId, 'cj-race'))).toHaveLength(1);
  });
});

describe('databaseLedger: check.completed tells the delivery loop', () => {
  test('an async run with an endpoint that wants it: told once (a repeated settlement writes nothing); without one: not told', async () => {
    let told = 0;
    const ledger = databaseLedger(tdb.db, { onWebhookWritten: () => told++ });
    const hooks = new WebhookService({ db: tdb.db, key: sealingKey('ledger-secret-0123456789abcdef'), allowPrivateTargets: true });
    const settle = async (runId: string, endpoint: boolean) => {
      const acc = await createAccount(tdb.db, { email: `${runId}@example.com`, checks: 100 });
      if (endpoint) expect(await hooks.create(acc.id, { url: 'http://127.0.0.1:9/hook', events: ['check.completed'], pools: null })).not.toBe('limit');
      expect((await ledger.reserve({ accountId: acc.id, runId, clientJobId: null, units: 5, type: 'http', region: 'us1', timeoutMs: 1000, submitted: 5, now: now() })).ok).toBe(true);
      await ledger.markAsync?.(runId);
      const c = { accountId: acc.id, runId, checked: 5, working: 1, resultRef: 'r', refund: 0, now: now(), webhook: { resultUrl: null } };
      await ledger.complete(c);
      await ledger.complete(c);
    };
    await settle('run_told_once', true);
    expect(told).toBe(1);
    await settle('run_no_endpoint', false);
    expect(told).toBe(1);
  });
});
