/**
 * End to end: quota through the real HTTP API of the real service (sockets on
 * 127.0.0.1, the database the environment selects). Accounts are created over
 * the admin HTTP API. Covers: 20 concurrent reservations racing for one
 * balance (exactly 10 win, never negative, one ledger row each), the exact
 * 402 body, temp balance spent before root, UnlimitedPro active vs expired,
 * and the refund of unchecked units when a job is failed by the shutdown
 * path after reserving.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { and, eq } from 'drizzle-orm';
import { quotaLedger, scans } from '../../db/schema';
import { startBlackHoleAnyAddress, type FakeServer } from '../fixtures/fake-servers';
import { call as rawCall, startTestService, type TestService } from '../helpers/service'; // the admin listener serves no OpenAPI document
// Every response is checked against the OpenAPI document the service serves (test/helpers/openapi-check.ts).
import { checkedCall as call } from '../helpers/openapi-check';

interface Created {
  id: string;
  email: string;
  apiKey: string;
}

let t: TestService;
let seq = 0;

beforeAll(async () => {
  // 20 checks of one account race for its balance: the per-account limit of
  // running checks (MAX_JOBS_PER_ACCOUNT, default 4; test/e2e/limits.test.ts) is lifted here
  t = await startTestService({ MAX_JOBS_PER_ACCOUNT: '100' });
});
afterAll(async () => {
  await t?.stop();
});

async function createAccount(svc: TestService, body: Record<string, unknown>): Promise<Created> {
  const r = await rawCall(`${svc.adminUrl}/admin/create-account`, {
    method: 'POST',
    headers: { authorization: `Bearer ${svc.service.config.http.adminToken}` },
    json: { email: `quota-${Date.now()}-${seq++}@example.test`, ...body },
  });
  expect(r.status).toBe(200);
  return r.body as Created;
}

/** n distinct proxies on refused loopback ports 1..n (nothing listens there): they fail fast. */
const refused = (n: number) => Array.from({ length: n }, (_, i) => `127.0.0.1:${i + 1}`);

const check = (svc: TestService, key: string, json: Record<string, unknown>) =>
  call(`${svc.url}/check`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, json: { timeout: 1000, ...json } });

const me = async (svc: TestService, key: string) => {
  const r = await call(`${svc.url}/me`, { headers: { 'x-api-key': key } });
  expect(r.status).toBe(200);
  return r.body;
};

const ledgerRows = (svc: TestService, accountId: string) =>
  svc.service.database.db.select().from(quotaLedger).where(eq(quotaLedger.accountId, accountId));

describe('concurrent reservations', () => {
  test('20 concurrent checks of 10 proxies on a balance of 100: exactly 10 succeed, balance 0, 10 reserve rows', async () => {
    const acc = await createAccount(t, { checks: 100 });
    const proxies = refused(10);
    const results = await Promise.all(Array.from({ length: 20 }, () => check(t, acc.apiKey, { proxies })));
    const ok = results.filter((r) => r.status === 200);
    const short = results.filter((r) => r.status === 402);
    expect(ok.length).toBe(10);
    expect(short.length).toBe(10);
    for (const r of ok) {
      expect(r.body.metadata.total_checked).toBe(10);
      expect(r.body.summary.total_working).toBe(0);
      expect(r.body.metadata.user.remaining_checks).toBeGreaterThanOrEqual(0);
    }
    for (const r of short) {
      // Units are taken in steps of 10 under a row lock: a loser always sees 0 left.
      expect(r.body).toEqual({
        error: 'Insufficient Checks',
        message: 'You need 10 checks but only have 0 remaining.',
        required: 10,
        available: 0,
        shortfall: 10,
      });
    }
    const m = await me(t, acc.apiKey);
    expect(m.user.checks).toBe(0);
    expect(m.user.breakdown).toEqual({ root_balance: 0, temp_balance: 0 });
    expect(m.history_count).toBe(10);
    expect(m.history.every((h: { total_checked: number }) => h.total_checked === 10)).toBe(true);

    const rows = await ledgerRows(t, acc.id);
    const reserves = rows.filter((r) => r.reason === 'reserve');
    expect(reserves.length).toBe(10);
    expect(reserves.every((r) => r.units === 10 && r.delta === -10 && r.balanceAfter >= 0)).toBe(true);
    expect(rows.filter((r) => r.reason === 'refund').length).toBe(0);
    // balance_after walks 90, 80, ... 0: every reservation saw the previous one's result.
    expect(reserves.map((r) => r.balanceAfter).sort((a, b) => b - a)).toEqual([90, 80, 70, 60, 50, 40, 30, 20, 10, 0]);
    expect(rows.reduce((s, r) => s + r.delta, 0)).toBe(0);
  });

  test('402 body reports what is left and the shortfall', async () => {
    const acc = await createAccount(t, { checks: 7 });
    const r = await check(t, acc.apiKey, { proxies: refused(10) });
    expect(r.status).toBe(402);
    expect(r.body).toEqual({
      error: 'Insufficient Checks',
      message: 'You need 10 checks but only have 7 remaining.',
      required: 10,
      available: 7,
      shortfall: 3,
    });
    const m = await me(t, acc.apiKey);
    expect(m.user.checks).toBe(7);
    expect(m.history_count).toBe(0);
    expect((await ledgerRows(t, acc.id)).filter((r) => r.reason === 'reserve').length).toBe(0);
  });

  test('required counts unique valid proxies only (duplicates and invalid lines are free)', async () => {
    const acc = await createAccount(t, { checks: 3 });
    const r = await check(t, acc.apiKey, { proxies: [...refused(3), '127.0.0.1:1', 'not a proxy', '127.0.0.1:99999'] });
    expect(r.status).toBe(200);
    expect(r.body.metadata.total_checked).toBe(3);
    expect(r.body.metadata.total_duplicates).toBe(1);
    expect(r.body.metadata.total_invalid).toBe(2);
    expect((await me(t, acc.apiKey)).user.checks).toBe(0);
  });
});

describe('balances and plans', () => {
  test('temp balance is spent before root', async () => {
    const acc = await createAccount(t, { checks: 50, temp: 10 });
    let m = await me(t, acc.apiKey);
    expect(m.user.checks).toBe(60);
    expect(m.user.breakdown).toEqual({ root_balance: 50, temp_balance: 10 });

    const r = await check(t, acc.apiKey, { proxies: refused(15) });
    expect(r.status).toBe(200);
    expect(r.body.metadata.user.remaining_checks).toBe(45);
    m = await me(t, acc.apiKey);
    expect(m.user.checks).toBe(45);
    expect(m.user.breakdown).toEqual({ root_balance: 45, temp_balance: 0 });

    const reserves = (await ledgerRows(t, acc.id)).filter((x) => x.reason === 'reserve');
    expect(reserves.length).toBe(1);
    expect(reserves[0]).toMatchObject({ units: 15, tempDelta: -10, rootDelta: -5, delta: -15, balanceAfter: 45 });

    // A second job smaller than temp would have been: all root now.
    const r2 = await check(t, acc.apiKey, { proxies: refused(5) });
    expect(r2.status).toBe(200);
    expect((await me(t, acc.apiKey)).user.breakdown).toEqual({ root_balance: 40, temp_balance: 0 });
  });

  test('only temp: a job within the temp balance leaves root untouched', async () => {
    const acc = await createAccount(t, { checks: 20, temp: 8 });
    const r = await check(t, acc.apiKey, { proxies: refused(6) });
    expect(r.status).toBe(200);
    expect((await me(t, acc.apiKey)).user.breakdown).toEqual({ root_balance: 20, temp_balance: 2 });
  });

  test('UnlimitedPro active: no charge, no 402 on a zero balance, checks_used still counted', async () => {
    const until = new Date(Date.now() + 86_400_000).toISOString();
    const acc = await createAccount(t, { checks: 0, unlimitedUntil: until });
    const r1 = await check(t, acc.apiKey, { proxies: refused(10) });
    expect(r1.status).toBe(200);
    expect(r1.body.metadata.user.checks_used).toBe(10);
    expect(r1.body.metadata.user.remaining_checks).toBe(0);
    expect(r1.body.metadata.user.subscription_detail.UnlimitedPro).toBe(true);
    const r2 = await check(t, acc.apiKey, { proxies: refused(12) });
    expect(r2.status).toBe(200);
    expect(r2.body.metadata.user.checks_used).toBe(22);

    const m = await me(t, acc.apiKey);
    expect(m.user.checks).toBe(0);
    expect(m.user.subscription_detail).toEqual({ UnlimitedPro: true, unlimited_expired_at: until });
    expect(m.history_count).toBe(2);

    const rows = await ledgerRows(t, acc.id);
    const reserves = rows.filter((x) => x.reason === 'reserve');
    expect(reserves.map((x) => x.units).sort((a, b) => a - b)).toEqual([10, 12]);
    expect(reserves.every((x) => x.delta === 0 && x.balanceAfter === 0)).toBe(true);
  });

  test('expired UnlimitedPro: normal quota, charged, then 402', async () => {
    const until = new Date(Date.now() - 60_000).toISOString();
    const acc = await createAccount(t, { checks: 15, unlimitedUntil: until });
    const m0 = await me(t, acc.apiKey);
    expect(m0.user.subscription_detail).toEqual({ UnlimitedPro: false, unlimited_expired_at: until });

    const r1 = await check(t, acc.apiKey, { proxies: refused(10) });
    expect(r1.status).toBe(200);
    expect(r1.body.metadata.user.remaining_checks).toBe(5);
    expect(r1.body.metadata.user.subscription_detail.UnlimitedPro).toBe(false);

    const r2 = await check(t, acc.apiKey, { proxies: refused(10) });
    expect(r2.status).toBe(402);
    expect(r2.body).toEqual({
      error: 'Insufficient Checks',
      message: 'You need 10 checks but only have 5 remaining.',
      required: 10,
      available: 5,
      shortfall: 5,
    });
    expect((await me(t, acc.apiKey)).user.checks).toBe(5);
  });
});

describe('refund of a job failed after reserving', () => {
  let u: TestService | undefined;
  let hole: FakeServer | undefined;
  afterAll(async () => {
    await u?.stop();
    await hole?.close();
  });

  test('shutdown cancels a running job: the caller gets 503 and every reserved unit comes back (no results, no charge)', async () => {
    hole = await startBlackHoleAnyAddress();
    u = await startTestService({ SHUTDOWN_GRACE_MS: '0' });
    const acc = await createAccount(u, { checks: 100, temp: 3 });
    // 4 refused (checked at once) + 6 black holes (would take the whole 5 s timeout).
    const proxies = [...refused(4), ...Array.from({ length: 6 }, (_, i) => `127.0.2.${i + 1}:${hole!.port}`)];
    const progress = await watchProgress(u.url, 'refund-job');
    const pending = check(u, acc.apiKey, { proxies, timeout: 5000, jobId: 'refund-job' });

    // Wait until the 4 refused probes are folded (WebSocket progress) and the black holes are held.
    try {
      await progress.until((m) => (m.details?.checked ?? 0) >= 4, 4000);
    } finally {
      progress.close();
    }
    expect(hole.open()).toBe(6);

    const t0 = performance.now();
    await u.service.checks.stop(0); // the shutdown path: grace over, running jobs cancelled
    const r = await pending;
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(r.status).toBe(503);
    expect(r.body.error).toBe('Service unavailable');

    // The database and the HTTP server are still up: only checks are refused now.
    const again = await check(u, acc.apiKey, { proxies: refused(1) });
    expect(again.status).toBe(503);
    expect(again.body.error).toBe('Service unavailable');

    const m = await me(u, acc.apiKey);
    expect(m.user.checks).toBe(103); // the 4 probes made are not charged either: the caller got no results
    // The reservation spent 3 temp + 7 root; the refund puts back what each gave.
    expect(m.user.breakdown).toEqual({ root_balance: 100, temp_balance: 3 });
    expect(m.history_count).toBe(1);
    expect(m.history[0]).toMatchObject({ total_checked: 4, total_working: 0, result_url: null });

    const rows = await ledgerRows(u, acc.id);
    const reserve = rows.filter((x) => x.reason === 'reserve');
    const refund = rows.filter((x) => x.reason === 'refund');
    expect(reserve.length).toBe(1);
    expect(reserve[0]!.units).toBe(10);
    expect(refund.length).toBe(1);
    expect(refund[0]).toMatchObject({ units: 10, delta: 10, balanceAfter: 103, runId: reserve[0]!.runId });
    expect(rows.reduce((s, x) => s + x.delta, 0)).toBe(103);

    const [scan] = await u.service.database.db
      .select()
      .from(scans)
      .where(and(eq(scans.accountId, acc.id), eq(scans.runId, reserve[0]!.runId!)));
    expect(scan).toMatchObject({ status: 'failed', totalChecked: 4, charged: 10, resultRef: null });
    expect(scan!.error).toBe('shutting_down'); // the history keeps the stable code
  });
});

/** A WebSocket progress subscriber, connected (open) before the job is submitted. */
async function watchProgress(base: string, jobId: string) {
  const ws = new WebSocket(`${base.replace('http', 'ws')}/ws?jobId=${jobId}`);
  const seen: any[] = [];
  let waiter: { pred: (m: any) => boolean; resolve: (m: any) => void } | null = null;
  ws.onmessage = (ev) => {
    const m = JSON.parse(String(ev.data));
    seen.push(m);
    if (waiter !== null && waiter.pred(m)) {
      waiter.resolve(m);
      waiter = null;
    }
  };
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error('websocket error'));
  });
  return {
    until(pred: (m: any) => boolean, timeoutMs: number): Promise<any> {
      const hit = seen.find(pred);
      if (hit !== undefined) return Promise.resolve(hit);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiter = null;
          reject(new Error(`no matching progress for ${jobId} within ${timeoutMs} ms`));
        }, timeoutMs);
        waiter = {
          pred,
          resolve: (m) => {
            clearTimeout(timer);
            resolve(m);
          },
        };
      });
    },
    close: () => ws.close(),
  };
}
