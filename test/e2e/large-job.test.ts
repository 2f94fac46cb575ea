/**
 * A 10 000-proxy job through the API (issue 4's acceptance): the result file,
 * the history row and the ledger agree with each other and with the request.
 * The proxies are distinct loopback addresses on a port nothing listens on
 * (refused at once), so the job is fast and its outcome exact.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { and, eq } from 'drizzle-orm';
import { quotaLedger, scans } from '../../db/schema';
import { refusedPort } from '../fixtures/fake-servers';
import { call, startTestService, type TestService } from '../helpers/service';

let t: TestService;

beforeAll(async () => {
  t = await startTestService({ BOOTSTRAP_CHECKS: '20000' });
}, 60_000);

afterAll(async () => {
  await t?.stop();
}, 30_000);

test('10 000 proxies: result file, history row and ledger consistent', async () => {
  const port = await refusedPort();
  const lines = Array.from({ length: 10_000 }, (_, i) => `127.2.${i >> 8}.${i & 255}:${port}`);
  const body = ['# ten thousand', ...lines, lines[0], 'not-a-proxy'].join('\n');
  const r = await call(`${t.url}/check-raw?timeout=2000&jobId=big-10k`, { method: 'POST', headers: { 'X-API-Key': t.key }, body });
  expect(r.status).toBe(200);
  expect(r.body.metadata).toMatchObject({ total_checked: 10_000, total_invalid: 1, total_duplicates: 1, job_id: 'big-10k' });
  expect(r.body.metadata.user).toMatchObject({ checks_used: 10_000, remaining_checks: 10_000 });
  expect(r.body.summary.total_working).toBe(0);

  const file = (await (await fetch(r.body.result_url)).json()) as { proxies: { status: string; error?: { code: string } }[]; metadata: unknown };
  expect(file.proxies).toHaveLength(10_000);
  expect(file.proxies.every((p) => p.status === 'failed' && p.error?.code === 'connect_refused')).toBe(true);
  expect(file.metadata).toEqual(r.body.metadata);

  const me = await call(`${t.url}/me`, { headers: { 'X-API-Key': t.key } });
  expect(me.body.user.checks).toBe(10_000);
  expect(me.body.history[0]).toMatchObject({ total_checked: 10_000, total_working: 0, status: 'completed', error: null });
  expect(me.body.usage_last_30_days.at(-1).total_checked).toBe(10_000);

  const db = t.service.database.db;
  const [scan] = await db.select().from(scans).where(eq(scans.totalChecked, 10_000));
  expect(scan).toMatchObject({ status: 'completed', charged: 10_000, totalSubmitted: 10_002 });
  const rows = await db.select().from(quotaLedger).where(and(eq(quotaLedger.runId, scan!.runId)));
  expect(rows.map((x) => [x.reason, x.delta, x.units, x.balanceAfter])).toEqual([['reserve', -10_000, 10_000, 10_000]]);
}, 60_000);
