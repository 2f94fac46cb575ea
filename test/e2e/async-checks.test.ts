/**
 * End to end, over real sockets: checks that outlive their connection
 * (docs/API.md "Checks that outlive their connection").
 *
 * - Behind a TCP proxy of the test's own that cuts every connection after
 *   2 s (test/fixtures/cutting-proxy.ts): an asynchronous /check answers 202,
 *   its connection is cut while the job runs, the job completes and GET
 *   /checks/{jobId} returns the full body, charged once; the same request
 *   sent synchronously is cut, cancelled (client_disconnected) and refunded
 *   but for the probes made.
 * - 400 (a bad `async`), 402, 409, 413 and 429 still answer synchronously
 *   with `Prefer: respond-async`; async jobs count against the running-checks
 *   limit.
 * - Another account's job is 404 (GET and DELETE); DELETE refunds exactly
 *   the checks not performed; DELETE of an ended job is 409; DELETE of a
 *   synchronous check answers its waiting request 409 Job cancelled.
 * - /check-raw with ?async=true and a generated jobId; GET of a synchronous
 *   check answers the body it answered.
 * Every response of the service itself is checked against its OpenAPI
 * document (the raw sockets through the cutting proxy excepted).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startHttpProxy } from '../fixtures/fake-proxies';
import { startBlackHoleAnyAddress, type FakeServer } from '../fixtures/fake-servers';
import { rawRequest, startCuttingProxy, type CuttingProxy } from '../fixtures/cutting-proxy';
import { checkedCall as call } from '../helpers/openapi-check';
import { until } from '../helpers/process';
import { call as rawCall, startTestService, type TestService } from '../helpers/service';

let t: TestService;
let elite: FakeServer;
let hole: FakeServer;
let cutter: CuttingProxy;
let otherKey: string;
let limitedKey: string;

const BALANCE = 10_000;

beforeAll(async () => {
  t = await startTestService({ BOOTSTRAP_CHECKS: String(BALANCE), MAX_PROXIES: '60', MAX_JOBS_PER_ACCOUNT: '2' });
  elite = await startHttpProxy();
  hole = await startBlackHoleAnyAddress();
  cutter = await startCuttingProxy(t.service.port, 2000);
  const admin = { Authorization: `Bearer ${t.service.config.http.adminToken}` };
  const made = async (email: string, checks: number) =>
    String((await rawCall(`${t.adminUrl}/admin/create-account`, { method: 'POST', headers: admin, json: { email, checks } })).body.apiKey);
  otherKey = await made('other@example.test', 10);
  limitedKey = await made('limited@example.test', 1000);
}, 60_000);

afterAll(async () => {
  await cutter?.close();
  await t?.stop();
  await elite?.close();
  await hole?.close();
}, 30_000);

/** n working proxies (one fake proxy, distinct users so none is a duplicate). */
const working = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${i}:p@127.0.0.1:${elite.port}`);
/** n black holes: distinct 127.<b>.x.y addresses that hang until the probe's timeout. */
const holes = (n: number, b: number) => Array.from({ length: n }, (_, i) => `127.${b}.3.${1 + i}:${hole.port}`);

const key = (k = t.key) => ({ 'x-api-key': k });
const async_ = (k = t.key) => ({ ...key(k), Prefer: 'respond-async' });
const balance = async (k = t.key) => (await call(`${t.url}/me`, { headers: key(k) })).body.user.checks as number;
const job = (jobId: string, k = t.key) => call(`${t.url}/checks/${jobId}`, { headers: key(k) });

async function ended(jobId: string, ms = 20_000): Promise<any> {
  let last: any;
  await until(`job ${jobId} to end`, async () => {
    last = (await job(jobId)).body;
    return last.status !== 'running';
  }, ms);
  return last;
}

describe('behind a proxy that cuts every connection after 2 s', () => {
  test('async: 202, the connection is cut while the job runs, the job completes, GET returns the full body, charged once', async () => {
    const jobId = 'async-cut';
    const proxies = [...working(5, 'ac'), ...holes(10, 31)];
    const before = await balance();
    const body = JSON.stringify({ proxies, timeout: 3000, jobId });
    const accepted = await rawRequest(cutter.port, 'POST', '/check', { ...async_(), 'Content-Type': 'application/json' }, body);
    expect(accepted.cut).toBe(false);
    expect(accepted.status).toBe(202);
    expect(accepted.headers.location).toBe(`/checks/${jobId}`);
    expect(accepted.headers['preference-applied']).toBe('respond-async');
    expect(accepted.body).toEqual({ jobId, status: 'running', status_url: `${t.url}/checks/${jobId}`, progress_url: `${t.url.replace('http', 'ws')}/ws?jobId=${jobId}` });
    const cutsBefore = cutter.cuts();
    await accepted.closed; // the proxy cuts the (kept-alive) connection at 2 s, the job still running
    expect(cutter.cuts()).toBeGreaterThan(cutsBefore);
    expect((await job(jobId)).body.status).toBe('running');

    const done = await ended(jobId);
    expect(done).toMatchObject({ jobId, status: 'completed', progress: { checked: 15, total: 15, working_so_far: 5 } });
    expect(done.error).toBeUndefined();
    expect(done.result.summary.total_working).toBe(5);
    expect(done.result.metadata).toMatchObject({ total_checked: 15, job_id: jobId, proxy_type: 'http' });
    // its links download the result file
    const file = await fetch(done.result.result_urls.json);
    expect(file.status).toBe(200);
    expect(((await file.json()) as { proxies: unknown[] }).proxies.length).toBe(15);
    expect(before - (await balance())).toBe(15); // charged once, nothing refunded (every probe was made)
  }, 30_000);

  test('the same request synchronously: cut at 2 s, cancelled (client_disconnected), only the probes made are charged', async () => {
    const jobId = 'sync-cut';
    const proxies = [...working(5, 'sc'), ...holes(10, 32)];
    const before = await balance();
    const answer = await rawRequest(cutter.port, 'POST', '/check', { ...key(), 'Content-Type': 'application/json' }, JSON.stringify({ proxies, timeout: 3000, jobId }));
    expect(answer.cut).toBe(true);
    const done = await ended(jobId);
    expect(done).toMatchObject({ status: 'cancelled', error: 'client_disconnected', progress: { checked: 5, total: 15, working_so_far: 5 } });
    expect(done.result).toBeUndefined();
    expect(before - (await balance())).toBe(5); // the 10 black holes were not performed: refunded
  }, 30_000);
});

describe('what answers synchronously, and limits', () => {
  test('400 for a bad async value; 402, 409, 413, 429 come before the 202', async () => {
    const holesJson = (n: number, b: number, extra: Record<string, unknown> = {}) => ({ proxies: holes(n, b), timeout: 10_000, ...extra });
    const bad = await call(`${t.url}/check?async=yes`, { method: 'POST', headers: key(), json: holesJson(1, 40) });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe('async: expected true or false');
    const twice = await call(`${t.url}/check-raw?async=true&async=true`, { method: 'POST', headers: key(), body: '127.0.0.1:1' });
    expect(twice.status).toBe(400);

    // 402: 11 checks on an account of 10
    const poor = await call(`${t.url}/check`, { method: 'POST', headers: async_(otherKey), json: holesJson(11, 41) });
    expect(poor.status).toBe(402);
    expect(poor.body).toMatchObject({ required: 11, available: 10 });
    // 413: over MAX_PROXIES (60)
    const big = await call(`${t.url}/check`, { method: 'POST', headers: async_(), json: holesJson(61, 42) });
    expect(big.status).toBe(413);

    // 409 and 429 on the limited account (MAX_JOBS_PER_ACCOUNT=2): two async jobs run
    const before = await balance(limitedKey);
    for (const jobId of ['lim-1', 'lim-2']) {
      const r = await call(`${t.url}/check?async=true`, { method: 'POST', headers: key(limitedKey), json: holesJson(3, 43, { jobId }) });
      expect(r.status).toBe(202);
      expect(r.headers.get('preference-applied')).toBeNull(); // the query asked, not the header
    }
    const again = await call(`${t.url}/check`, { method: 'POST', headers: async_(limitedKey), json: holesJson(3, 44, { jobId: 'lim-1' }) });
    expect(again.status).toBe(409);
    expect(again.body.jobId).toBe('lim-1');
    const third = await call(`${t.url}/check`, { method: 'POST', headers: async_(limitedKey), json: holesJson(3, 45, { jobId: 'lim-3' }) });
    expect(third.status).toBe(429);
    expect(third.headers.get('retry-after')).toBe('5');
    expect((await job('lim-3', limitedKey)).status).toBe(404); // refused before the reservation: no job
    // cancel both: nothing was probed to its end, everything comes back
    for (const jobId of ['lim-1', 'lim-2']) expect((await call(`${t.url}/checks/${jobId}`, { method: 'DELETE', headers: key(limitedKey) })).status).toBe(204);
    expect(await balance(limitedKey)).toBe(before);
    expect(await balance(otherKey)).toBe(10);
  }, 30_000);
});

describe('GET and DELETE /checks/{jobId}', () => {
  test("another account's job is 404; an unknown one 404; a malformed id 400", async () => {
    const jobId = 'mine-only';
    const r = await call(`${t.url}/check`, { method: 'POST', headers: async_(), json: { proxies: holes(2, 50), timeout: 10_000, jobId } });
    expect(r.status).toBe(202);
    expect((await job(jobId, otherKey)).status).toBe(404);
    expect((await call(`${t.url}/checks/${jobId}`, { method: 'DELETE', headers: key(otherKey) })).status).toBe(404);
    expect((await job(jobId)).body.status).toBe('running'); // untouched by the stranger's DELETE
    expect((await job('no-such-job')).status).toBe(404);
    expect((await job('x')).status).toBe(400);
    expect((await call(`${t.url}/checks/${jobId}`)).status).toBe(401);
    expect((await call(`${t.url}/checks/${jobId}`, { method: 'PUT', headers: key() })).status).toBe(405);
    expect((await call(`${t.url}/checks/${jobId}`, { method: 'DELETE', headers: key() })).status).toBe(204);
  }, 30_000);

  test('DELETE refunds exactly the checks not performed; a second DELETE, and a DELETE of a completed job, are 409', async () => {
    const jobId = 'cancel-me';
    const before = await balance();
    const r = await call(`${t.url}/check`, { method: 'POST', headers: async_(), json: { proxies: [...working(4, 'dl'), ...holes(20, 51)], timeout: 15_000, jobId } });
    expect(r.status).toBe(202);
    // the 4 working proxies are checked; the 20 black holes hang
    await until('the working proxies to be checked', async () => (await job(jobId)).body.progress.checked === 4, 10_000);
    expect(before - (await balance())).toBe(24); // all reserved
    const del = await call(`${t.url}/checks/${jobId}`, { method: 'DELETE', headers: key() });
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect(before - (await balance())).toBe(4); // answered after the refund: the 20 not performed are back
    const after = (await job(jobId)).body;
    expect(after).toMatchObject({ status: 'cancelled', error: 'client_cancelled', progress: { checked: 4, total: 24, working_so_far: 4 } });
    expect(typeof after.finished_at).toBe('string');
    const me = (await call(`${t.url}/me`, { headers: key() })).body;
    expect(me.history[0]).toMatchObject({ status: 'cancelled', error: 'client_cancelled', total_checked: 4 });

    const second = await call(`${t.url}/checks/${jobId}`, { method: 'DELETE', headers: key() });
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ error: 'Job not running', jobId, status: 'cancelled' });
    expect(before - (await balance())).toBe(4);

    // a completed job: 409 too
    const quick = await call(`${t.url}/check`, { method: 'POST', headers: async_(), json: { proxies: working(2, 'dq'), jobId: 'done-job' } });
    expect(quick.status).toBe(202);
    expect((await ended('done-job')).status).toBe('completed');
    const late = await call(`${t.url}/checks/done-job`, { method: 'DELETE', headers: key() });
    expect(late.status).toBe(409);
    expect(late.body.status).toBe('completed');
  }, 30_000);

  test('DELETE of a synchronous check: its waiting request answers 409 Job cancelled, the checks not performed are refunded', async () => {
    const jobId = 'sync-deleted';
    const before = await balance();
    const waiting = call(`${t.url}/check`, { method: 'POST', headers: key(), json: { proxies: [...working(2, 'sd'), ...holes(6, 52)], timeout: 15_000, jobId } });
    await until('the working proxies to be checked', async () => (await job(jobId)).body.progress?.checked === 2, 10_000);
    expect((await call(`${t.url}/checks/${jobId}`, { method: 'DELETE', headers: key() })).status).toBe(204);
    const r = await waiting;
    expect(r.status).toBe(409);
    expect(r.body).toEqual({ error: 'Job cancelled', message: 'The job was cancelled (DELETE /checks/{jobId}); the checks not performed were refunded' });
    expect(before - (await balance())).toBe(2);
    expect(t.logs.some((l) => l.msg === 'unhandled error' || l.msg === 'check job failed')).toBe(false);
  }, 30_000);

  test('/check-raw?async=true with a generated jobId; a reused jobId names its most recent run', async () => {
    const r = await call(`${t.url}/check-raw?async=true`, { method: 'POST', headers: key(), body: working(3, 'raw').join('\n') });
    expect(r.status).toBe(202);
    const jobId = r.body.jobId as string;
    expect(jobId).toMatch(/^job_[A-Za-z0-9_-]{16}$/);
    expect(r.headers.get('location')).toBe(`/checks/${jobId}`);
    const done = await ended(jobId);
    expect(done.result.metadata).toMatchObject({ job_id: jobId, total_checked: 3 });

    // the same jobId again (it ended, so it may be used again): GET names the new run
    const first = await call(`${t.url}/check`, { method: 'POST', headers: async_(), json: { proxies: working(1, 'ru'), jobId: 'reused' } });
    expect(first.status).toBe(202);
    expect((await ended('reused')).result.metadata.total_checked).toBe(1);
    const second = await call(`${t.url}/check`, { method: 'POST', headers: async_(), json: { proxies: working(2, 'ru'), jobId: 'reused' } });
    expect(second.status).toBe(202);
    expect((await ended('reused')).result.metadata.total_checked).toBe(2);
  }, 30_000);

  test('a synchronous check (the SDK flow) answers as before, and GET /checks/{jobId} serves the same body with fresh links', async () => {
    const jobId = 'sync-then-get';
    const sync = await call(`${t.url}/check`, { method: 'POST', headers: { Authorization: `Bearer ${t.key}` }, json: { proxies: working(3, 'sg'), jobId } });
    expect(sync.status).toBe(200);
    const got = (await job(jobId)).body;
    expect(got.status).toBe('completed');
    const { result_url: _u, result_urls: _us, ...rest } = sync.body;
    const { result_url: link, result_urls: links, ...kept } = got.result;
    expect(kept).toEqual(rest);
    // the same result file, a link of its own
    const id = (u: string) => new URL(u).pathname;
    expect(id(link)).toBe(id(sync.body.result_url));
    expect(id(links.csv)).toBe(id(sync.body.result_urls.csv));
    expect((await fetch(link)).status).toBe(200);
  }, 30_000);
});
