/**
 * The orphan sweep (src/accounts/orphans.ts) on the database the environment
 * selects: which running scans are orphans (scope and leases), that each is
 * refunded exactly once (two sweeps at once; a sweep racing the job's own
 * settlement), and the reservation's lease guard (quota-sql.ts).
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test';
import { eq, sql } from 'drizzle-orm';
import { nodes, quotaLedger, scans } from '../../db/schema';
import { createAccount, getAccount } from '../../src/accounts/accounts';
import { ledgerOf } from '../../src/accounts/ledger';
import { registerNode } from '../../src/accounts/nodes';
import { findOrphans, OrphanScope, refundOrphan, sweepOrphans, type OrphanRule } from '../../src/accounts/orphans';
import { refundQuota, reserveQuota } from '../../src/accounts/quota';
import { finishScan, getScanByRunId } from '../../src/accounts/scans';
import { isServiceError } from '../../src/errors';
import { databaseLedger } from '../../src/jobs/ledger';
import { memoryLogger } from '../../src/log';
import { freshDatabase, testDatabaseUrl, type TestDatabase } from '../helpers/db';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await freshDatabase();
}, 60_000);
afterAll(async () => {
  await tdb?.cleanup();
});
// Every test leaves no scan running (a sweep sees the whole table).
afterEach(async () => {
  await tdb.db.update(scans).set({ status: 'completed' }).where(eq(scans.status, 'running'));
});

const scan = { proxyType: 'http', region: 'us1', timeoutMs: 2000, totalSubmitted: 10 };
const now = new Date('2026-06-01T08:00:00Z');
const node = (id: string) => ({ id, version: 'test', host: 'h', pid: 1 });

/** A node whose lease is live (`live`) or expired a second ago. */
async function nodeWithLease(id: string, live: boolean) {
  await registerNode(tdb.db, node(id), 60_000);
  if (!live) await tdb.db.update(nodes).set({ leaseUntil: sql`now() - interval '1 second'` }).where(eq(nodes.id, id));
}

/** A running job of `units` reserved by `nodeId` (null: no node recorded) on a new account holding `checks`. */
async function runningJob(runId: string, nodeId: string | null, units = 10, checks = 100) {
  const acc = await createAccount(tdb.db, { email: `${runId}@example.test`, checks });
  // the reservation records the node; its lease must be live at that moment
  if (nodeId !== null) await tdb.db.update(nodes).set({ leaseUntil: sql`now() + interval '1 minute'` }).where(eq(nodes.id, nodeId));
  const r = await reserveQuota(tdb.db, { accountId: acc.id, runId, units, now, scan, ...(nodeId !== null ? { nodeId } : {}) });
  expect(r.ok).toBe(true);
  return acc;
}

const refundRows = async (runId: string) =>
  (await tdb.db.select().from(quotaLedger).where(eq(quotaLedger.runId, runId))).filter((r) => r.reason === 'refund');

const balance = async (id: string) => {
  const a = await getAccount(tdb.db, id);
  return (a?.rootBalance ?? 0) + (a?.tempBalance ?? 0);
};

describe('which running scans are orphans', () => {
  test('expired: other nodes without a live lease (expired, gone, or none recorded); never live ones, never its own', async () => {
    await nodeWithLease('live-node', true);
    await nodeWithLease('dead-node', true);
    await nodeWithLease('gone-node', true);
    await nodeWithLease('sweeper', true);
    await runningJob('j-live', 'live-node');
    await runningJob('j-dead', 'dead-node');
    await runningJob('j-gone', 'gone-node');
    await runningJob('j-legacy', null);
    await runningJob('j-own', 'sweeper');
    await nodeWithLease('dead-node', false);
    await tdb.db.delete(nodes).where(eq(nodes.id, 'gone-node'));
    // even when the sweeper's own lease has lapsed, its own scans are not its sweep's
    await nodeWithLease('sweeper', false);

    const rule: OrphanRule = { self: 'sweeper', scope: OrphanScope.expired };
    expect((await findOrphans(tdb.db, rule)).map((o) => o.runId).sort()).toEqual(['j-dead', 'j-gone', 'j-legacy']);
    const log = memoryLogger();
    expect(await sweepOrphans(tdb.db, log, rule)).toEqual({ scans: 3, units: 30 });
    for (const j of ['j-dead', 'j-gone', 'j-legacy']) {
      expect(await getScanByRunId(tdb.db, j)).toMatchObject({ status: 'failed', error: 'interrupted' });
      expect((await refundRows(j)).map((r) => r.units)).toEqual([10]);
    }
    for (const j of ['j-live', 'j-own']) {
      expect((await getScanByRunId(tdb.db, j))?.status).toBe('running');
      expect(await refundRows(j)).toEqual([]);
    }
    expect(log.lines.some((l) => l.msg === 'refunded an interrupted job' && l.runId === 'j-dead' && l.node === 'dead-node' && l.units === 10)).toBe(true);
    expect(log.lines.find((l) => l.msg === 'orphaned jobs recovered')).toMatchObject({ scans: 3, units: 30 });
    // nothing left: a second pass takes nothing and says nothing
    expect(await sweepOrphans(tdb.db, log, rule)).toEqual({ scans: 0, units: 0 });
    expect(log.lines.filter((l) => l.msg === 'orphaned jobs recovered').length).toBe(1);
  });

  test('own (a start on PostgreSQL): also the scans of its own id, a previous run that died within its lease; not live others', async () => {
    await nodeWithLease('fixed-id', true);
    await nodeWithLease('other-live', true);
    await runningJob('o-prev', 'fixed-id');
    await runningJob('o-other', 'other-live');
    expect(await sweepOrphans(tdb.db, memoryLogger(), { self: 'fixed-id', scope: OrphanScope.own })).toEqual({ scans: 1, units: 10 });
    expect((await getScanByRunId(tdb.db, 'o-prev'))?.status).toBe('failed');
    expect((await getScanByRunId(tdb.db, 'o-other'))?.status).toBe('running');
  });

  test('all (an embedded start): every running scan, live leases too, with partial refunds and temp units put back as they came', async () => {
    await nodeWithLease('crashed-within-lease', true);
    const a = await createAccount(tdb.db, { email: 'all-a@example.test', checks: 50, temp: 5 });
    const b = await createAccount(tdb.db, { email: 'all-b@example.test', checks: 20 });
    await tdb.db.update(nodes).set({ leaseUntil: sql`now() + interval '1 minute'` }).where(eq(nodes.id, 'crashed-within-lease'));
    // A: reserved 30 (5 temp + 25 root); B: reserved 20, 5 refunded; then the process died
    await reserveQuota(tdb.db, { accountId: a.id, runId: 'all-a', units: 30, now, scan, nodeId: 'crashed-within-lease' });
    await reserveQuota(tdb.db, { accountId: b.id, runId: 'all-b', units: 20, now, scan, nodeId: 'crashed-within-lease' });
    await refundQuota(tdb.db, { accountId: b.id, runId: 'all-b', units: 5 });
    // a finished job is not an orphan
    await reserveQuota(tdb.db, { accountId: b.id, runId: 'all-done', units: 0, now, scan });
    await finishScan(tdb.db, { runId: 'all-done', totalChecked: 0, totalWorking: 0, resultRef: null });

    expect(await sweepOrphans(tdb.db, memoryLogger(), { self: 'new-node', scope: OrphanScope.all })).toEqual({ scans: 2, units: 45 });
    const aa = await getAccount(tdb.db, a.id);
    const bb = await getAccount(tdb.db, b.id);
    expect([aa?.rootBalance, aa?.tempBalance, aa?.checksUsed]).toEqual([50, 5, 0]);
    expect([bb?.rootBalance, bb?.checksUsed]).toEqual([20, 0]);
    expect((await ledgerOf(tdb.db, a.id)).map((r) => r.reason)).toEqual(['signup', 'reserve', 'refund']);
    expect((await getScanByRunId(tdb.db, 'all-done'))?.status).toBe('completed');
  });
});

describe('exactly once', () => {
  test('two sweeps at once (two nodes): each orphan refunded once, the reports add up', async () => {
    await nodeWithLease('crashed', true);
    const accs = [];
    for (let i = 0; i < 12; i++) accs.push(await runningJob(`twice-${i}`, 'crashed', 10));
    await nodeWithLease('crashed', false);
    const [r1, r2] = await Promise.all([
      sweepOrphans(tdb.db, memoryLogger(), { self: 'sweeper-1', scope: OrphanScope.expired }),
      sweepOrphans(tdb.db, memoryLogger(), { self: 'sweeper-2', scope: OrphanScope.expired }),
    ]);
    expect(r1.scans + r2.scans).toBe(12);
    expect(r1.units + r2.units).toBe(120);
    for (let i = 0; i < 12; i++) {
      expect((await refundRows(`twice-${i}`)).map((r) => r.units)).toEqual([10]);
      expect(await balance(accs[i]!.id)).toBe(100);
    }
  });

  test('the job settles after a sweep found it: the sweep refunds nothing (one refund: the settlement\'s)', async () => {
    await nodeWithLease('slow-node', true);
    const acc = await runningJob('settled-first', 'slow-node', 10);
    await nodeWithLease('slow-node', false); // its lease ran out while the job ran (a database outage)
    const rule: OrphanRule = { self: 'sweeper', scope: OrphanScope.expired };
    const [found] = await findOrphans(tdb.db, rule);
    expect(found?.runId).toBe('settled-first');
    // the owner's settlement lands between the sweep's look and its close: 7 checked, 3 back
    await databaseLedger(tdb.db).complete({ accountId: acc.id, runId: 'settled-first', checked: 7, working: 1, resultRef: 'r', refund: 3, now });
    expect(await refundOrphan(tdb.db, found!.id, rule)).toBeNull();
    expect((await refundRows('settled-first')).map((r) => r.units)).toEqual([3]);
    expect(await balance(acc.id)).toBe(93);
    expect((await getScanByRunId(tdb.db, 'settled-first'))?.status).toBe('completed');
  });

  test('a sweep first, the job\'s settlement after: the settlement refunds nothing', async () => {
    await nodeWithLease('late-node', true);
    const acc = await runningJob('swept-first', 'late-node', 10);
    await nodeWithLease('late-node', false);
    expect(await sweepOrphans(tdb.db, memoryLogger(), { self: 'sweeper', scope: OrphanScope.expired })).toEqual({ scans: 1, units: 10 });
    const ledger = databaseLedger(tdb.db);
    await ledger.complete({ accountId: acc.id, runId: 'swept-first', checked: 7, working: 1, resultRef: 'r', refund: 3, now });
    await ledger.fail({ accountId: acc.id, runId: 'swept-first', checked: 7, working: 1, refund: 10, error: 'shutting_down', cancelled: false, now });
    expect((await refundRows('swept-first')).map((r) => r.units)).toEqual([10]);
    expect(await balance(acc.id)).toBe(100);
    expect(await getScanByRunId(tdb.db, 'swept-first')).toMatchObject({ status: 'failed', error: 'interrupted' });
  });

  test('settlements and sweeps racing: every job refunded by one of them only', async () => {
    await nodeWithLease('racing-node', true);
    const n = 16;
    const accs = [];
    for (let i = 0; i < n; i++) accs.push(await runningJob(`race-${i}`, 'racing-node', 10));
    await nodeWithLease('racing-node', false);
    const ledger = databaseLedger(tdb.db);
    await Promise.all([
      ...accs.map((a, i) => ledger.complete({ accountId: a.id, runId: `race-${i}`, checked: 7, working: 0, resultRef: 'r', refund: 3, now })),
      sweepOrphans(tdb.db, memoryLogger(), { self: 'sweeper-a', scope: OrphanScope.expired }),
      sweepOrphans(tdb.db, memoryLogger(), { self: 'sweeper-b', scope: OrphanScope.expired }),
    ]);
    for (let i = 0; i < n; i++) {
      const rows = await refundRows(`race-${i}`);
      expect(rows.length).toBe(1);
      const s = await getScanByRunId(tdb.db, `race-${i}`);
      // whoever closed the scan refunded: the settlement 3, the sweep all 10
      expect(rows[0]!.units).toBe(s?.status === 'completed' ? 3 : 10);
      expect(await balance(accs[i]!.id)).toBe(s?.status === 'completed' ? 93 : 100);
    }
  });
});

describe('the reservation and the lease', () => {
  test('records the node on the scan while its lease is live', async () => {
    await nodeWithLease('res-node', true);
    await runningJob('res-live', 'res-node');
    expect((await getScanByRunId(tdb.db, 'res-live'))?.nodeId).toBe('res-node');
  });

  test('refuses (node_lease_lost) and charges nothing when the lease has expired or the node is unknown', async () => {
    await nodeWithLease('res-expired', false);
    const acc = await createAccount(tdb.db, { email: 'res-expired@example.test', checks: 100 });
    for (const nodeId of ['res-expired', 'res-unknown']) {
      const err = await reserveQuota(tdb.db, { accountId: acc.id, runId: `res-${nodeId}`, units: 10, now, scan, nodeId }).catch((e: unknown) => e);
      expect(isServiceError(err, 'node_lease_lost')).toBe(true);
      expect(await getScanByRunId(tdb.db, `res-${nodeId}`)).toBeNull();
    }
    expect(await balance(acc.id)).toBe(100);
    expect((await ledgerOf(tdb.db, acc.id)).map((r) => r.reason)).toEqual(['signup']);
  });
});

test.if(testDatabaseUrl() !== undefined)('PostgreSQL: the two sweeps really overlapped (separate connections)', async () => {
  // Both sweeps above ran on the pool's connections at once; this only proves the pool has more than one.
  const [a, b] = await Promise.all([
    tdb.db.execute(sql`select pg_backend_pid() as pid, pg_sleep(0.05)`),
    tdb.db.execute(sql`select pg_backend_pid() as pid, pg_sleep(0.05)`),
  ]);
  const pid = (r: unknown) => (r as { pid: number }[])[0]!.pid;
  expect(pid(a)).not.toBe(pid(b));
});
