/**
 * End to end, real processes: several API nodes on one PostgreSQL database
 * (each its own DATA_DIR), leases and the orphan sweep (src/jobs/node-lease.ts,
 * src/accounts/orphans.ts).
 *   - Node A runs a long job (10 black holes, timeout 10 s); node B starts,
 *     runs its sweeps, restarts: A's job is untouched (scan running, no
 *     refund). Then A is killed (-9): within lease + sweep interval B refunds
 *     A's job, exactly once (more sweeps and another restart add nothing).
 *   - A restart within the lease: a new node id does not touch the dead
 *     node's job while its lease runs; the same NODE_ID takes it at its start.
 * PostgreSQL only (embedded mode is one process per data dir: its kill -9 and
 * restart is test/e2e/shutdown.test.ts, which refunds at the next start).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { accounts, nodes, quotaLedger, scans } from '../../db/schema';
import { startBlackHoleAnyAddress, type FakeServer } from '../fixtures/fake-servers';
import { testDatabaseUrl } from '../helpers/db';
import { openStore, ProcessBed, serviceStore, spawnService, type ServiceProcess, type ServiceStore } from '../helpers/process';
import { call } from '../helpers/service';

const PG = testDatabaseUrl() !== undefined;
const BALANCE = 1000;
const LEASE_MS = 1500;
/** Half the lease (derived, src/config.ts). */
const SWEEP_MS = LEASE_MS / 2;

let hole: FakeServer;
const bed = new ProcessBed();

beforeAll(async () => {
  hole = await startBlackHoleAnyAddress();
});
afterAll(async () => {
  await bed.cleanup();
  await hole?.close();
});

/** A second node's store: the same database, its own data dir. */
function sameDatabase(store: ServiceStore): ServiceStore {
  const dataDir = mkdtempSync(join(tmpdir(), 'pc-node-'));
  const s: ServiceStore = { dataDir, databaseUrl: store.databaseUrl, cleanup: async () => rmSync(dataDir, { recursive: true, force: true }) };
  bed.stores.push(s);
  return s;
}

async function spawn(store: ServiceStore, env: Record<string, string> = {}): Promise<ServiceProcess> {
  const p = await spawnService(store, {
    env: { BOOTSTRAP_CHECKS: String(BALANCE), NODE_LEASE_MS: String(LEASE_MS), SHUTDOWN_GRACE_MS: '0', ...env },
  });
  bed.spawned.push(p);
  return p;
}

const nodeOf = (p: ServiceProcess) => String(p.logs.find((l) => l.msg === 'ready')?.node);
const holes = (n: number, b: number) => Array.from({ length: n }, (_, i) => `127.${b}.7.${1 + i}:${hole.port}`);

async function waitFor(cond: () => boolean, ms: number, what: string) {
  const end = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

/** Starts a 10-black-hole job with a 10 s timeout on `p`; resolves once its probes are in flight. */
async function longJob(p: ServiceProcess, b: number) {
  const before = hole.accepted();
  let answered = false;
  const response = call(`${p.url}/check`, { method: 'POST', headers: { 'x-api-key': p.key }, json: { proxies: holes(10, b), timeout: 10_000 } }).then(
    (r) => ((answered = true), r),
    (err: unknown) => ((answered = true), err),
  );
  await waitFor(() => hole.accepted() - before >= 10, 8000, 'the job to probe');
  return { response, answered: () => answered };
}

/** The store's demo account, its scans and ledger (PostgreSQL: read while the nodes run). */
async function inspect(store: ServiceStore) {
  const d = await openStore(store);
  try {
    const [acc] = await d.db.select().from(accounts).where(eq(accounts.email, 'demo@localhost'));
    return {
      acc: acc!,
      scans: await d.db.select().from(scans).where(eq(scans.accountId, acc!.id)),
      ledger: await d.db.select().from(quotaLedger).where(eq(quotaLedger.accountId, acc!.id)),
    };
  } finally {
    await d.close();
  }
}

async function terminate(p: ServiceProcess, signal: NodeJS.Signals) {
  p.kill(signal);
  return p.exited;
}

test.if(PG)(
  'two nodes: B starting and restarting never refunds A\'s running job; A killed -9 -> B refunds it once, within lease + sweep',
  async () => {
    const storeA = await serviceStore();
    bed.stores.push(storeA);
    const storeB = sameDatabase(storeA);
    const a = await spawn(storeA);
    const job = await longJob(a, 30);

    const b1 = await spawn(storeB);
    expect(nodeOf(b1)).not.toBe(nodeOf(a));
    await Bun.sleep(LEASE_MS + 2 * SWEEP_MS); // B sweeps several times; A renews its lease meanwhile
    expect((await terminate(b1, 'SIGTERM')).code).toBe(0);
    const b2 = await spawn(storeB); // a restart: its sweep at start, then more passes
    await Bun.sleep(3 * SWEEP_MS);

    expect(job.answered()).toBe(false); // A's job really is still running
    let seen = await inspect(storeA);
    expect(seen.scans.map((s) => [s.status, s.nodeId])).toEqual([['running', nodeOf(a)]]);
    expect(seen.ledger.filter((l) => l.reason === 'refund')).toEqual([]);
    expect(seen.acc.rootBalance).toBe(BALANCE - 10);
    for (const p of [b1, b2]) expect(p.logs.some((l) => l.msg === 'refunded an interrupted job')).toBe(false);

    const t0 = performance.now();
    expect((await terminate(a, 'SIGKILL')).signal).toBe('SIGKILL');
    const runId = seen.scans[0]!.runId;
    await b2.waitForLog((l) => l.msg === 'refunded an interrupted job' && l.runId === runId, LEASE_MS + SWEEP_MS + 3000);
    const ms = performance.now() - t0;
    console.log(`node leases: A killed -> B refunded its job after ${ms.toFixed(0)} ms (lease ${LEASE_MS} ms, sweep every ${SWEEP_MS} ms)`);
    expect(ms).toBeLessThan(LEASE_MS + SWEEP_MS + 1500);
    expect(await job.response).toBeInstanceOf(Error); // A's client saw its connection die

    // More passes and another restart of B add nothing.
    await Bun.sleep(3 * SWEEP_MS);
    expect((await terminate(b2, 'SIGTERM')).code).toBe(0);
    const b3 = await spawn(storeB);
    const m = (await call(`${b3.url}/me`, { headers: { 'x-api-key': b3.key } })).body;
    expect(m.user.checks).toBe(BALANCE);
    expect(m.history[0]).toMatchObject({ status: 'failed', error: 'interrupted', total_checked: 0 });
    await Bun.sleep(2 * SWEEP_MS);
    seen = await inspect(storeA);
    const refunds = seen.ledger.filter((l) => l.reason === 'refund');
    expect(refunds.length).toBe(1);
    expect(refunds[0]).toMatchObject({ runId, units: 10, delta: 10, balanceAfter: BALANCE });
    expect(seen.scans[0]).toMatchObject({ status: 'failed', error: 'interrupted', charged: 10 });
    expect(seen.acc.rootBalance + seen.acc.tempBalance).toBe(BALANCE);
    expect([...b3.logs, ...b1.logs].some((l) => l.msg === 'refunded an interrupted job')).toBe(false);
    expect((await terminate(b3, 'SIGTERM')).code).toBe(0);
  },
  60_000,
);

test.if(PG)(
  'a restart within the lease: a new node id waits for the dead lease; the same NODE_ID takes its previous run\'s job at start',
  async () => {
    const store = await serviceStore();
    bed.stores.push(store);
    const other = sameDatabase(store);
    const long = { NODE_LEASE_MS: '60000' };
    const a = await spawn(store, { ...long, NODE_ID: 'api-fixed' });
    expect(nodeOf(a)).toBe('api-fixed');
    await longJob(a, 31);
    expect((await terminate(a, 'SIGKILL')).signal).toBe('SIGKILL');

    // another node (a new random id): A's lease still runs for ~60 s, so A's job is not its to take
    const c = await spawn(other, long);
    await Bun.sleep(4 * SWEEP_MS);
    expect(c.logs.some((l) => l.msg === 'refunded an interrupted job')).toBe(false);
    expect((await inspect(store)).scans.map((s) => s.status)).toEqual(['running']);

    // A again, same NODE_ID: the only process with that id, it takes its previous run's job before it is ready
    const a2 = await spawn(store, { ...long, NODE_ID: 'api-fixed' });
    expect(a2.logs.find((l) => l.msg === 'orphaned jobs recovered')).toMatchObject({ scans: 1, units: 10, by: 'api-fixed', scope: 'own' });
    const readyAt = a2.logs.findIndex((l) => l.msg === 'ready');
    expect(a2.logs.findIndex((l) => l.msg === 'orphaned jobs recovered')).toBeLessThan(readyAt);
    const seen = await inspect(store);
    expect(seen.scans[0]).toMatchObject({ status: 'failed', error: 'interrupted' });
    expect(seen.ledger.filter((l) => l.reason === 'refund').length).toBe(1);
    expect(seen.acc.rootBalance + seen.acc.tempBalance).toBe(BALANCE);
    for (const p of [a2, c]) expect((await terminate(p, 'SIGTERM')).code).toBe(0);
  },
  60_000,
);

test.if(PG)('a clean stop deletes the node\'s row; a crashed node\'s row stays until pruned', async () => {
  const store = await serviceStore();
  bed.stores.push(store);
  const a = await spawn(store, { NODE_ID: 'api-clean' });
  const d = await openStore(store);
  try {
    const ids = async () => (await d.db.select({ id: nodes.id }).from(nodes).orderBy(nodes.id)).map((r) => r.id);
    expect(await ids()).toEqual(['api-clean']);
    expect((await terminate(a, 'SIGTERM')).code).toBe(0);
    expect(await ids()).toEqual([]);
    const b = await spawn(store, { NODE_ID: 'api-crash' });
    await terminate(b, 'SIGKILL');
    expect(await ids()).toEqual(['api-crash']);
  } finally {
    await d.close();
  }
}, 30_000);
