/**
 * End to end: graceful shutdown and crash recovery of the real process
 * (`bun src/main.ts`), on the database the environment selects.
 *   - SIGTERM mid-job: the running check and any new check answer 503, the
 *     process exits 0 soon after the grace; after a restart the unchecked
 *     units are back and the failed scan is in the history and the ledger.
 *   - SIGTERM while a short job runs: the job finishes inside the grace (200)
 *     and the process then exits 0 without waiting for the rest of the grace.
 *   - kill -9 mid-job: the next start refunds the orphaned reservation and
 *     marks the scan failed with error 'interrupted' (embedded: every running
 *     scan; PostgreSQL: the same NODE_ID's, test/e2e/node-leases.test.ts has
 *     several nodes).
 * Black holes (one server on 0.0.0.0, distinct 127.x.y.z addresses) keep
 * probes in flight as long as the test needs.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { accounts, quotaLedger, scans } from '../../db/schema';
import { startBlackHoleAnyAddress, type FakeServer } from '../fixtures/fake-servers';
import { openStore, serviceStore, spawnService, type ServiceProcess, type ServiceStore } from '../helpers/process';
import { call } from '../helpers/service';

const BALANCE = 5000;

// One store (data dir + database) for the whole file: the tests run in order
// on it, each starting and stopping processes (a PGlite start costs ~2 s, so
// sharing keeps the file's wall time down). `balance` tracks what the demo
// account should hold between tests.
let hole: FakeServer;
let s: ServiceStore;
let balance = BALANCE;
/** A process started by one test and used by the next (the restart after SIGTERM). */
let carried: ServiceProcess | null = null;
const spawned: ServiceProcess[] = [];

beforeAll(async () => {
  hole = await startBlackHoleAnyAddress();
  s = await serviceStore();
});
afterAll(async () => {
  for (const p of spawned) {
    p.kill('SIGKILL');
    await p.exited;
  }
  await s?.cleanup();
  await hole?.close();
});

// One node restarted again and again: with a fixed NODE_ID a restart takes its previous run's running
// jobs at once on PostgreSQL too (a new random id would wait for the dead run's lease; embedded takes them anyway).
async function spawn(env: Record<string, string> = {}): Promise<ServiceProcess> {
  const p = await spawnService(s, { env: { BOOTSTRAP_CHECKS: String(BALANCE), NODE_ID: 'shutdown-node', ...env } });
  spawned.push(p);
  return p;
}

/** n distinct black-hole proxies 127.<b>.x.y:port. */
function holes(n: number, b: number): string[] {
  return Array.from({ length: n }, (_, i) => `127.${b}.${1 + Math.floor(i / 250)}.${1 + (i % 250)}:${hole.port}`);
}
const refused = (n: number) => Array.from({ length: n }, (_, i) => `127.0.0.1:${i + 1}`);

const check = (p: ServiceProcess, json: Record<string, unknown>) =>
  call(`${p.url}/check`, { method: 'POST', headers: { 'x-api-key': p.key }, json });

async function me(p: ServiceProcess) {
  const r = await call(`${p.url}/me`, { headers: { 'x-api-key': p.key } });
  expect(r.status).toBe(200);
  return r.body;
}

async function waitFor(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!cond()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(5);
  }
}

/** SIGTERM, then wait for exit: resolves with the exit and the ms it took. */
async function terminate(p: ServiceProcess, signal: NodeJS.Signals = 'SIGTERM') {
  const t0 = performance.now();
  p.kill(signal);
  const e = await p.exited;
  return { ...e, ms: performance.now() - t0 };
}

/** Ledger and scans of the demo account, read with the store opened in this process (no service running). */
async function inspect() {
  const db: Database = await openStore(s);
  try {
    const [acc] = await db.db.select().from(accounts).where(eq(accounts.email, 'demo@localhost'));
    const ledger = await db.db.select().from(quotaLedger).where(eq(quotaLedger.accountId, acc!.id));
    const scanRows = await db.db.select().from(scans).where(eq(scans.accountId, acc!.id));
    return { acc: acc!, ledger, scans: scanRows };
  } finally {
    await db.close();
  }
}

describe('graceful shutdown (SIGTERM)', () => {
  test('mid-job: 503 for the running and for new checks, exit 0, units refunded after restart', async () => {
    const p = await spawn({ SHUTDOWN_GRACE_MS: '300' });
    const before = hole.accepted();
    const running = check(p, { proxies: holes(2000, 10), timeout: 5000, jobId: 'sigterm-mid-job' });
    await waitFor(() => hole.accepted() - before >= 2000, 8000, 'all 2000 probes in flight');

    const t0 = performance.now();
    p.kill('SIGTERM');
    await p.waitForLog((l) => l.msg === 'stopping', 3000);
    // Draining (inside the 300 ms grace): a new check is refused.
    const late = await check(p, { proxies: refused(1), timeout: 1000 });
    expect(late.status).toBe(503);
    expect(late.body).toEqual({ error: 'Service unavailable', message: expect.any(String) });
    const r = await running;
    expect(r.status).toBe(503);
    expect(r.body).toEqual({ error: 'Service unavailable', message: expect.any(String) });
    const { code, signal } = await p.exited;
    const ms = performance.now() - t0;
    console.log(`shutdown: SIGTERM mid-job (grace 300 ms, 2000 probes in flight) -> exit ${code} after ${ms.toFixed(0)} ms`);
    expect(signal).toBeNull();
    expect(code).toBe(0);
    expect(ms).toBeLessThan(3000);
    expect(p.logs.some((l) => l.msg === 'shutdown grace over (SHUTDOWN_GRACE_MS): cancelling running jobs')).toBe(true);
    expect(p.logs.some((l) => l.msg === 'stopped')).toBe(true);

    // Restart on the same store: the whole reservation is back, the failed scan is in the history.
    const q = await spawn({ SHUTDOWN_GRACE_MS: '5000' });
    carried = q;
    const m = await me(q);
    expect(m.user.checks).toBe(balance);
    expect(m.history_count).toBe(1);
    expect(m.history[0]).toMatchObject({ total_checked: 0, total_working: 0, result_url: null, proxy_type: 'http', status: 'failed', error: 'shutting_down' }); // a stable code, never a message
    // Not an orphan: the shutdown settled it, the restart had nothing to recover.
    expect(q.logs.some((l) => l.msg === 'orphaned jobs recovered')).toBe(false);
  }, 20_000);

  test('a short job running at SIGTERM finishes inside the grace (200), then the process exits 0', async () => {
    const p = carried; // started by the previous test with SHUTDOWN_GRACE_MS=5000
    expect(p).not.toBeNull();
    const before = hole.accepted();
    const t0 = performance.now();
    // 5 refused (done at once) + 5 black holes (held for the 1000 ms timeout).
    const running = check(p!, { proxies: [...refused(5), ...holes(5, 11)], timeout: 1000, jobId: 'sigterm-short-job' });
    await waitFor(() => hole.accepted() - before >= 5, 5000, 'the black-hole probes in flight');
    const e = await terminate(p!);
    const r = await running;
    const jobMs = performance.now() - t0;
    console.log(`shutdown: SIGTERM during a 1000 ms job (grace 5000 ms) -> job ${jobMs.toFixed(0)} ms, exit ${e.code} after ${e.ms.toFixed(0)} ms`);
    expect(r.status).toBe(200);
    expect(r.body.metadata.total_checked).toBe(10);
    expect(r.body.summary.total_working).toBe(0);
    balance -= 10;
    expect(r.body.metadata.user.remaining_checks).toBe(balance);
    expect(e.signal).toBeNull();
    expect(e.code).toBe(0);
    // Drained as soon as the job ended, not at the end of the 5 s grace.
    expect(e.ms).toBeLessThan(3000);
    expect(p!.logs.some((l) => l.msg === 'shutdown grace over (SHUTDOWN_GRACE_MS): cancelling running jobs')).toBe(false);

    // Ledger of both jobs so far: the SIGTERM'd one reserved 2000 and got 2000 back; this one kept 10.
    const { acc, ledger, scans: rows } = await inspect();
    expect(acc.rootBalance + acc.tempBalance).toBe(balance);
    expect(acc.checksUsed).toBe(10);
    expect(ledger.reduce((sum, l) => sum + l.delta, 0)).toBe(balance);
    const reserve = ledger.filter((l) => l.reason === 'reserve').sort((a, b) => a.id - b.id);
    const refund = ledger.filter((l) => l.reason === 'refund');
    expect(reserve.map((l) => l.units)).toEqual([2000, 10]);
    expect(refund.length).toBe(1);
    expect(refund[0]).toMatchObject({ units: 2000, delta: 2000, balanceAfter: BALANCE, runId: reserve[0]!.runId });
    const failed = rows.find((x) => x.runId === reserve[0]!.runId);
    expect(failed).toMatchObject({ status: 'failed', charged: 2000, totalChecked: 0, resultRef: null });
    expect(failed!.error).not.toBe('interrupted');
    expect(failed!.finishedAt).not.toBeNull();
    const done = rows.find((x) => x.runId === reserve[1]!.runId);
    expect(done).toMatchObject({ status: 'completed', totalChecked: 10, charged: 10 });
    expect(done!.resultRef).not.toBeNull();
  }, 20_000);
});

describe('crash recovery (kill -9)', () => {
  test('the next start refunds the orphaned reservation and marks the scan failed (interrupted)', async () => {
    const p = await spawn();
    const before = hole.accepted();
    const running = check(p, { proxies: [...refused(3), ...holes(300, 12)], timeout: 5000, jobId: 'kill-9-job' }).then(
      (r) => r,
      (err: unknown) => err,
    );
    await waitFor(() => hole.accepted() - before >= 300, 8000, 'the probes in flight');
    const e = await terminate(p, 'SIGKILL');
    expect(e.signal).toBe('SIGKILL');
    // The client sees the connection die (no answer at all).
    expect(await running).toBeInstanceOf(Error);

    const q = await spawn();
    const m = await me(q);
    expect(m.user.checks).toBe(balance);
    expect(m.history_count).toBe(3);
    expect(m.history[0]).toMatchObject({ total_checked: 0, result_url: null, status: 'failed', error: 'interrupted' });
    const recovered = await q.waitForLog((l) => l.msg === 'orphaned jobs recovered', 1000);
    expect(recovered).toMatchObject({ scans: 1, units: 303 });
    expect((await terminate(q)).code).toBe(0);

    const { acc, ledger, scans: rows } = await inspect();
    expect(acc.rootBalance + acc.tempBalance).toBe(balance);
    expect(acc.checksUsed).toBe(10);
    expect(ledger.reduce((sum, l) => sum + l.delta, 0)).toBe(balance);
    const reserve = ledger.filter((l) => l.reason === 'reserve' && l.units === 303);
    expect(reserve.length).toBe(1);
    const refund = ledger.filter((l) => l.reason === 'refund' && l.runId === reserve[0]!.runId);
    expect(refund.length).toBe(1);
    expect(refund[0]).toMatchObject({ units: 303, delta: 303, balanceAfter: balance });
    const scan = rows.find((x) => x.runId === reserve[0]!.runId);
    expect(scan).toMatchObject({ status: 'failed', error: 'interrupted', charged: 303 });
    expect(scan!.finishedAt).not.toBeNull();
    expect(rows.filter((x) => x.status === 'running').length).toBe(0);
  }, 20_000);
});
