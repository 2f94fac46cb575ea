/**
 * src/jobs/orphan-sweep.ts: the periodic pass of a live node refunds the
 * running scans of nodes whose lease expired (never its own), prunes node
 * rows long expired, survives a failing pass, and stops cleanly.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { eq, sql } from 'drizzle-orm';
import { nodes } from '../../db/schema';
import { createAccount, getAccount } from '../../src/accounts/accounts';
import { registerNode } from '../../src/accounts/nodes';
import { reserveQuota } from '../../src/accounts/quota';
import { getScanByRunId } from '../../src/accounts/scans';
import { startOrphanSweep } from '../../src/jobs/orphan-sweep';
import { memoryLogger } from '../../src/log';
import { freshDatabase, type TestDatabase } from '../helpers/db';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await freshDatabase();
}, 60_000);
afterAll(async () => {
  await tdb?.cleanup();
});

const scan = { proxyType: 'http', region: 'us1', timeoutMs: 1000, totalSubmitted: 5 };
const identity = (id: string) => ({ id, version: 't', host: null, pid: null });

test('every interval: other nodes\' expired leases are swept, its own scans and live nodes are not; old rows pruned', async () => {
  for (const id of ['me', 'live', 'dead', 'ancient']) await registerNode(tdb.db, identity(id), 60_000);
  const acc = await createAccount(tdb.db, { email: 'sweep@example.test', checks: 100 });
  for (const [runId, nodeId] of [['s-me', 'me'], ['s-live', 'live'], ['s-dead', 'dead']] as const) {
    await reserveQuota(tdb.db, { accountId: acc.id, runId, units: 5, now: new Date(), scan, nodeId });
  }
  await tdb.db.update(nodes).set({ leaseUntil: sql`now() - interval '1 second'` }).where(eq(nodes.id, 'dead'));
  await tdb.db.update(nodes).set({ leaseUntil: sql`now() - interval '2 hours'` }).where(eq(nodes.id, 'ancient'));
  await tdb.db.update(nodes).set({ leaseUntil: sql`now() - interval '1 second'` }).where(eq(nodes.id, 'me')); // its own, lapsed: still not swept by itself

  const log = memoryLogger();
  const sweep = startOrphanSweep({ db: tdb.db, self: 'me', intervalMs: 30, log });
  const end = Date.now() + 5000;
  while ((await getScanByRunId(tdb.db, 's-dead'))?.status === 'running' && Date.now() < end) await Bun.sleep(10);
  await Bun.sleep(100); // a few more passes
  await sweep.stop();
  await sweep.stop();
  expect(await getScanByRunId(tdb.db, 's-dead')).toMatchObject({ status: 'failed', error: 'interrupted' });
  expect((await getScanByRunId(tdb.db, 's-live'))?.status).toBe('running');
  expect((await getScanByRunId(tdb.db, 's-me'))?.status).toBe('running');
  expect((await getAccount(tdb.db, acc.id))?.rootBalance).toBe(90);
  expect(log.lines.filter((l) => l.msg === 'refunded an interrupted job').map((l) => l.runId)).toEqual(['s-dead']);
  const left = (await tdb.db.select({ id: nodes.id }).from(nodes)).map((r) => r.id).sort();
  expect(left).toEqual(['dead', 'live', 'me']);
  // stopped: no more passes
  await tdb.db.update(nodes).set({ leaseUntil: sql`now() - interval '1 second'` }).where(eq(nodes.id, 'live'));
  await Bun.sleep(100);
  expect((await getScanByRunId(tdb.db, 's-live'))?.status).toBe('running');
});

test('a failing pass is logged and reports nothing; runOnce shares a pass under way', async () => {
  const log = memoryLogger();
  const broken = new Proxy(tdb.db, {
    get: (t, p, r) => (p === 'execute' ? () => Promise.reject(new Error('down')) : Reflect.get(t, p, r)),
  });
  const sweep = startOrphanSweep({ db: broken, self: 'x', intervalMs: 3_600_000, log });
  const a = sweep.runOnce();
  expect(sweep.runOnce()).toBe(a);
  expect(await a).toEqual({ scans: 0, units: 0 });
  expect(log.lines.some((l) => l.msg === 'orphan sweep failed; tried again at the next pass')).toBe(true);
  await sweep.stop();
});

test('onRefunded hears each orphan it refunded, once, with its run id and node (a cluster cancels its shards)', async () => {
  for (const id of ['me2', 'gone2']) await registerNode(tdb.db, identity(id), 60_000);
  const acc = await createAccount(tdb.db, { email: 'sweep-told@example.test', checks: 100 });
  for (const [runId, nodeId] of [['t-gone-1', 'gone2'], ['t-gone-2', 'gone2'], ['t-me', 'me2']] as const) {
    await reserveQuota(tdb.db, { accountId: acc.id, runId, units: 5, now: new Date(), scan, nodeId });
  }
  await tdb.db.update(nodes).set({ leaseUntil: sql`now() - interval '1 second'` }).where(eq(nodes.id, 'gone2'));
  const told: { runId: string; nodeId: string | null }[] = [];
  const sweep = startOrphanSweep({ db: tdb.db, self: 'me2', intervalMs: 3_600_000, log: memoryLogger(), onRefunded: (o) => told.push(o) });
  const first = await sweep.runOnce(); // the earlier test's lapsed nodes are orphans for 'me2' too
  expect(told).toHaveLength(first.scans);
  expect(await sweep.runOnce()).toEqual({ scans: 0, units: 0 });
  expect(told).toHaveLength(first.scans);
  await sweep.stop();
  expect(told.map((o) => o.runId)).not.toContain('t-me');
  expect(told.filter((o) => o.nodeId === 'gone2').sort((x, y) => x.runId.localeCompare(y.runId))).toEqual([
    { runId: 't-gone-1', nodeId: 'gone2' },
    { runId: 't-gone-2', nodeId: 'gone2' },
  ]);
});
