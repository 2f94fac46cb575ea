/**
 * End to end: the per-region fair scheduler through the real HTTP API.
 * SLOTS_PER_ENDPOINT=32, so us1 has 16 x 32 = 512 probe slots. A
 * 20 000-proxy job of black holes (distinct 127.1.x.y addresses, all
 * reaching one black hole bound to 0.0.0.0) with a 5 s timeout fills all of
 * us1 (a job alone uses the whole region); a 10-proxy job with a 1 s timeout
 * submitted behind it in us1 starts at once, in the headroom lent above the
 * region's capacity to jobs that hold little (MAX_JOB_SHARE_PERCENT, default
 * 95 %: up to 25 slots), and finishes in under 2 x its own timeout,
 * whatever the big job's timeout (without the headroom it waited for the big
 * job's first probes to time out: 5.4 s), and a 10-proxy job in sg1 in about
 * its own timeout (regions are independent).
 * Then the service stops with no grace: the big request is answered 503.
 * File descriptors: 512 in flight x 2 ends (client + black hole in this
 * process) stays far below the 20 000 limit.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { startBlackHoleAnyAddress, type FakeServer } from '../fixtures/fake-servers';
import { call, startTestService, type TestService } from '../helpers/service';

const TIMEOUT_MS = 1000;
const BIG_TIMEOUT_MS = 5000;
const SLOTS_PER_ENDPOINT = 32;
const REGION_CAPACITY = 16 * SLOTS_PER_ENDPOINT;

let t: TestService;
let hole: FakeServer;

beforeAll(async () => {
  hole = await startBlackHoleAnyAddress();
  t = await startTestService({
    SLOTS_PER_ENDPOINT: String(SLOTS_PER_ENDPOINT),
    SHUTDOWN_GRACE_MS: '0',
    BOOTSTRAP_CHECKS: '100000',
  });
});
afterAll(async () => {
  await t?.stop();
  await hole?.close();
});

/** n distinct black-hole proxies 127.<b>.x.y:port (x, y from 1, never .0 / .255). */
function holes(n: number, b: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(`127.${b}.${1 + Math.floor(i / 250)}.${1 + (i % 250)}:${hole.port}`);
  return out;
}

const check = (json: Record<string, unknown>) =>
  call(`${t.url}/check`, { method: 'POST', headers: { 'x-api-key': t.key }, json: { timeout: TIMEOUT_MS, ...json } });

async function timed(json: Record<string, unknown>) {
  const t0 = performance.now();
  const r = await check(json);
  return { ...r, ms: performance.now() - t0 };
}

async function waitFor(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!cond()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

test('a small job behind a 20 000-proxy job in the same region finishes in about its own time; another region is not slowed; shutdown answers the big one 503', async () => {
  // Baseline: the same small job on an idle service.
  const idle = await timed({ proxies: holes(10, 4), region: 'sg1', jobId: 'fair-idle' });
  expect(idle.status).toBe(200);
  expect(idle.ms).toBeLessThan(1.5 * TIMEOUT_MS);

  const big = check({ proxies: holes(20_000, 1), region: 'us1', jobId: 'fair-big', timeout: BIG_TIMEOUT_MS });

  // The big job is probing once its first round fills the region; alone, it never holds more.
  await waitFor(() => hole.open() >= REGION_CAPACITY, 8000, 'the big job to fill us1');
  expect(hole.open()).toBeLessThanOrEqual(REGION_CAPACITY);
  await Bun.sleep(500);
  expect(hole.open()).toBeLessThanOrEqual(REGION_CAPACITY);

  const [small, other] = await Promise.all([
    timed({ proxies: holes(10, 2), region: 'us1', jobId: 'fair-small-us1' }),
    timed({ proxies: holes(10, 3), region: 'sg1', jobId: 'fair-small-sg1' }),
  ]);
  console.log(
    `fairness: idle sg1 job ${idle.ms.toFixed(0)} ms; behind the big job: us1 small job ${small.ms.toFixed(0)} ms, ` +
      `sg1 job ${other.ms.toFixed(0)} ms (timeout ${TIMEOUT_MS} ms)`,
  );

  expect(small.status).toBe(200);
  expect(small.body.metadata.total_checked).toBe(10);
  expect(small.body.metadata.region_used).toBe('us1');
  expect(small.body.summary.total_working).toBe(0);
  // It started at once: its own timeout, not the big job's (5 s), and not behind its queue (~19 000 more).
  expect(small.ms).toBeLessThan(2 * TIMEOUT_MS);
  expect(small.ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);

  expect(other.status).toBe(200);
  expect(other.body.metadata.total_checked).toBe(10);
  expect(other.body.metadata.region_used).toBe('sg1');
  expect(other.ms).toBeLessThan(1.5 * TIMEOUT_MS);
  expect(other.ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);

  // The big job is still far from done; stopping with no grace fails it with 503.
  let bigSettled = false;
  void big.then(() => (bigSettled = true));
  await Bun.sleep(0);
  expect(bigSettled).toBe(false);
  const s0 = performance.now();
  await t.stop();
  const r = await big;
  console.log(`fairness: stop with SHUTDOWN_GRACE_MS=0 took ${(performance.now() - s0).toFixed(0)} ms`);
  expect(r.status).toBe(503);
  expect(r.body).toMatchObject({ error: 'Service unavailable' });
  expect(typeof r.body.message).toBe('string');
}, 20_000);
