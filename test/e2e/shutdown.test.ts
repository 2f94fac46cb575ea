/**
 * End to end: graceful shutdown and crash recovery of the real process
 * (`bun src/main.ts`), on the database the environment selects.
 *   - SIGTERM mid-job: the running check and any new check answer 503, the
 *     process exits 0 soon after the grace; after a restart the unchecked
 *     units are back and the failed scan is in the history and the ledger.
 *   - SIGTERM while a short job runs: the job finishes inside the grace (200)
 *     and the process then exits 0 without waiting for the rest of the grace.
 *   - kill -9 mid-job: the next start refunds the orphaned reservation and
 *     marks the scan failed with error 'interrupted'.
 * Black holes (one server on 0.0.0.0, distinct 127.x.y.z addresses) keep
 * probes in flight as long as the test needs.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { accounts, quotaLedger, scans } from '../../db/schema';
import { startBlackHoleAnyAddress, type FakeServer } from '../fixtures/fake-servers';
import { openStore, serviceStore, spawnService, type ServiceProcess, type ServiceStore } from '../helpers/process';
import { call } from '../helpers/service';

const BALANCE = 5000;

let hole: FakeServer;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  hole = await startBlackHoleAnyAddress();
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) {
    try {
      await c();
    } catch {
      // best effort: the test's own assertions already reported what went wrong
    }
  }
});
afterAll(async () => {
  await hole?.close();
});

async function store(): Promise<ServiceStore> {
  const s = await serviceStore();
  cleanups.push(() => s.cleanup());
  return s;
}

async function spawn(s: ServiceStore, env: Record<string, string> = {}): Promise<ServiceProcess> {
  const p = await spawnService(s, { env: { BOOTSTRAP_CHECKS: String(BALANCE), ...env } });
  cleanups.push(async () => {
    p.kill('SIGKILL');
    await p.exited;
  });
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
async function inspect(s: ServiceStore) {
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
    const s = await store();
    const p = await spawn(s, { SHUTDOWN_GRACE_MS: '300' });
    const before = hole.accepted();
    const running = check(p, { proxies: holes(2000, 10), timeout: 5000, jobId: 'sigterm-mid-job' });
    await waitFor(() => hole.accepted() - before >= 2000, 8000, 'all 2000 probes in flight');

    const { ms, code, signal } = await (async () => {
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
      const e = await p.exited;
      return { ...e, ms: performance.now() - t0 };
    })();
    console.log(`shutdown: SIGTERM mid-job (grace 300 ms, 2000 probes in flight) -> exit ${code} after ${ms.toFixed(0)} ms`);
    expect(signal).toBeNull();
    expect(code).toBe(0);
    expect(ms).toBeLessThan(3000);
    expect(p.logs.some((l) => l.msg === 'shutdown grace over: cancelling running jobs')).toBe(true);
    expect(p.logs.some((l) => l.msg === 'stopped')).toBe(true);

    // Restart on the same store: the whole reservation is back, the scan is in the history.
    const q = await spawn(s);
    const m = await me(q);
    expect(m.user.checks).toBe(BALANCE);
    expect(m.history_count).toBe(1);
    expect(m.history[0]).toMatchObject({ total_checked: 0, total_working: 0, result_url: null, proxy_type: 'http' });
    // Not an orphan: the shutdown settled it, the restart had nothing to recover.
    expect(q.logs.some((l) => l.msg === 'orphaned jobs recovered')).toBe(false);
    expect((await terminate(q)).code).toBe(0);

    const { acc, ledger, scans: rows } = await inspect(s);
    expect(acc.rootBalance + acc.tempBalance).toBe(BALANCE);
    expect(acc.checksUsed).toBe(0);
    const reserve = ledger.filter((l) => l.reason === 'reserve');
    const refund = ledger.filter((l) => l.reason === 'refund');
    expect(reserve.length).toBe(1);
    expect(reserve[0]).toMatchObject({ units: 2000, delta: -2000, balanceAfter: BALANCE - 2000 });
    expect(refund.length).toBe(1);
    expect(refund[0]).toMatchObject({ units: 2000, delta: 2000, balanceAfter: BALANCE, jobId: reserve[0]!.jobId });
    expect(ledger.reduce((sum, l) => sum + l.delta, 0)).toBe(BALANCE);
    expect(rows.length).toBe(1);
    expect(rows[0]).toMatchObject({ status: 'failed', charged: 2000, totalChecked: 0, resultRef: null, jobId: reserve[0]!.jobId });
    expect(rows[0]!.error).not.toBe('interrupted');
    expect(rows[0]!.finishedAt).not.toBeNull();
  }, 20_000);

  test('a short job running at SIGTERM finishes inside the grace (200), then the process exits 0', async () => {
    const s = await store();
    const p = await spawn(s, { SHUTDOWN_GRACE_MS: '5000' });
    const before = hole.accepted();
    const t0 = performance.now();
    // 5 refused (done at once) + 5 black holes (held for the 1000 ms timeout).
    const running = check(p, { proxies: [...refused(5), ...holes(5, 11)], timeout: 1000, jobId: 'sigterm-short-job' });
    await waitFor(() => hole.accepted() - before >= 5, 5000, 'the black-hole probes in flight');
    const e = await terminate(p);
    const r = await running;
    const jobMs = performance.now() - t0;
    console.log(`shutdown: SIGTERM during a 1000 ms job (grace 5000 ms) -> job ${jobMs.toFixed(0)} ms, exit ${e.code} after ${e.ms.toFixed(0)} ms`);
    expect(r.status).toBe(200);
    expect(r.body.metadata.total_checked).toBe(10);
    expect(r.body.summary.total_working).toBe(0);
    expect(r.body.metadata.user.remaining_checks).toBe(BALANCE - 10);
    expect(e.signal).toBeNull();
    expect(e.code).toBe(0);
    // Drained as soon as the job ended, not at the end of the 5 s grace.
    expect(e.ms).toBeLessThan(3000);
    expect(p.logs.some((l) => l.msg === 'shutdown grace over: cancelling running jobs')).toBe(false);

    const { acc, ledger, scans: rows } = await inspect(s);
    expect(acc.rootBalance + acc.tempBalance).toBe(BALANCE - 10);
    expect(ledger.filter((l) => l.reason === 'refund').length).toBe(0);
    expect(rows.length).toBe(1);
    expect(rows[0]).toMatchObject({ status: 'completed', totalChecked: 10, charged: 10 });
    expect(rows[0]!.resultRef).not.toBeNull();
  }, 20_000);
});

describe('crash recovery (kill -9)', () => {
  test('the next start refunds the orphaned reservation and marks the scan failed (interrupted)', async () => {
    const s = await store();
    const p = await spawn(s);
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

    const q = await spawn(s);
    const m = await me(q);
    expect(m.user.checks).toBe(BALANCE);
    expect(m.history_count).toBe(1);
    expect(m.history[0]).toMatchObject({ total_checked: 0, result_url: null });
    const recovered = await q.waitForLog((l) => l.msg === 'orphaned jobs recovered', 1000);
    expect(recovered).toMatchObject({ scans: 1, units: 303 });
    expect((await terminate(q)).code).toBe(0);

    const { acc, ledger, scans: rows } = await inspect(s);
    expect(acc.rootBalance + acc.tempBalance).toBe(BALANCE);
    expect(acc.checksUsed).toBe(0);
    const reserve = ledger.filter((l) => l.reason === 'reserve');
    const refund = ledger.filter((l) => l.reason === 'refund');
    expect(reserve.length).toBe(1);
    expect(refund.length).toBe(1);
    expect(refund[0]).toMatchObject({ units: 303, delta: 303, balanceAfter: BALANCE, jobId: reserve[0]!.jobId });
    expect(ledger.reduce((sum, l) => sum + l.delta, 0)).toBe(BALANCE);
    expect(rows.length).toBe(1);
    expect(rows[0]).toMatchObject({ status: 'failed', error: 'interrupted', charged: 303, jobId: reserve[0]!.jobId });
  }, 20_000);
});
