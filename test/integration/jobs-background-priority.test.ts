/**
 * Priority classes through the real check path (in the style of the fairness
 * e2e test, test/e2e/fairness.test.ts): a region of 512 slots (16 x 32) with
 * MAX_JOB_SHARE_PERCENT's default headroom (95 %: H = 25), real probe workers,
 * one black hole bound to 0.0.0.0 (every 127.x.y.z address reaches it). A
 * 20 000-proxy background job (what a pool's round will be: opened on the
 * ProbeExecution port with priority `background`) with a 5 s timeout fills
 * what background may hold, capacity - reserve = 512 - 52 = 460, and never
 * more; a 50-proxy check (a JobActor, as /check runs it) with a 1 s timeout
 * submitted behind it starts at once, in the reserve, and finishes in about
 * its own timeout, whatever the round's timeout or size. 50 is more than the
 * headroom lent to newcomers (25): without the classes (the round a check
 * job holding all 512) it would start 25 probes and wait for the round's
 * first timeouts for the rest (about 6 s).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JobActor, type JobDeps } from '../../src/jobs/actor';
import { localExecution } from '../../src/jobs/local-execution';
import type { LedgerPort, ProbeExecution, Shard } from '../../src/jobs/ports';
import type { CheckRequest } from '../../src/jobs/request';
import { RegionScheduler } from '../../src/jobs/scheduler';
import { memoryLogger } from '../../src/log';
import type { ProbeSettings, ProbeTask } from '../../src/probe/types';
import { ProbeWorkers } from '../../src/probe/workers/probe-workers';
import { parseProxyList } from '../../src/proxy/parse';
import { resultFilePath } from '../../src/results/dir-store';
import { newResultId } from '../../src/results/links';
import { openResultWriter } from '../../src/results/writer';
import { startBlackHoleAnyAddress, type FakeServer } from '../fixtures/fake-servers';

const CAPACITY = 16 * 32;
const JOB_SHARE = 0.95;
const TIMEOUT_MS = 1000;
const ROUND_TIMEOUT_MS = 5000;
const ROUND = 20_000;
const SMALL = 50;

const dir = mkdtempSync(join(tmpdir(), 'pc-priority-'));
let hole: FakeServer;
let workers: ProbeWorkers;
let scheduler: RegionScheduler;
let execution: ProbeExecution;

const settings = (type: ProbeSettings['type'], timeoutMs: number): ProbeSettings => ({
  type,
  timeoutMs,
  judge: { url: 'http://127.0.0.1:9/judge', protocol: 'http:', host: '127.0.0.1', port: 9, path: '/judge' },
  checkerIps: [],
  baselineHeaders: [],
  allowPrivateTargets: true,
});

/** n distinct black-hole addresses 127.<b>.x.y (x, y from 1). */
const holes = (n: number, b: number) => Array.from({ length: n }, (_, i) => `127.${b}.${1 + Math.floor(i / 250)}.${1 + (i % 250)}:${hole.port}`);

const ledger: LedgerPort = {
  reserve: async (i) => ({ ok: true, unlimited: false, user: { email: 'a@b.c', checks_used: i.units, remaining_checks: 1_000_000, subscription_detail: { UnlimitedPro: false } } }),
  complete: async () => {},
  fail: async () => {},
  userInfo: async () => ({ email: 'a@b.c', checks_used: 0, remaining_checks: 0, subscription_detail: { UnlimitedPro: false } }),
};

const deps = (): JobDeps => ({
  ledger,
  execution,
  geo: { lookup: () => ({ country: null, country_name: null, location: null, isp: null, asn: null, coordinates: null }) } as unknown as JobDeps['geo'],
  settings,
  openWriter: (id) => openResultWriter(resultFilePath(dir, id)),
  newResultId,
  signLink: (id) => `http://x/result/${id}.json`,
  publish: () => {},
  log: memoryLogger(),
  retrySettlement: () => {},
  now: () => new Date(),
});

/** A check of `proxies` as /check runs it; resolves with its wall time. */
async function check(jobId: string, proxies: string[]): Promise<{ ms: number; checked: number }> {
  const list = parseProxyList(proxies);
  const req: CheckRequest = { route: 'check', proxies: list.proxies, totalInvalid: 0, invalidLines: list.invalidLines, totalDuplicates: 0, region: 'us1', type: 'http', timeoutMs: TIMEOUT_MS, samples: 1, jobId, customUrls: [] };
  const t0 = performance.now();
  const res = await new JobActor(jobId, 'acc', req, deps()).run();
  return { ms: performance.now() - t0, checked: res.metadata.total_checked };
}

async function waitFor(cond: () => boolean, ms: number, what: string): Promise<void> {
  const end = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

beforeAll(async () => {
  hole = await startBlackHoleAnyAddress();
  workers = await ProbeWorkers.start({ threads: 1 });
  scheduler = new RegionScheduler(() => CAPACITY, { jobShare: JOB_SHARE });
  execution = localExecution(scheduler, workers);
});
afterAll(async () => {
  await workers?.close();
  await hole?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a 50-proxy check behind a 20 000-proxy background job starts at once and finishes in about its own timeout', async () => {
  const idle = await check('idle', holes(SMALL, 4));
  expect(idle.checked).toBe(SMALL);

  // The background job: shards of black holes at a 5 s timeout, as many as it is granted.
  const reserve = scheduler.checkReserve(CAPACITY);
  expect(reserve).toBe(52);
  const roundTasks: ProbeTask[] = parseProxyList(holes(ROUND, 1)).proxies.map((proxy, index) => ({ index, proxy: { host: proxy.host, port: proxy.port } }));
  const ac = new AbortController();
  const runs: Promise<void>[] = [];
  let next = 0;
  const round = execution.open({
    runId: 'round',
    region: 'us1',
    demand: ROUND,
    priority: 'background',
    onGrant: (n, h) => {
      const shard: Shard = { kind: 'probe', tasks: roundTasks.slice(next, next + n), settings: settings('http', ROUND_TIMEOUT_MS) };
      next += n;
      runs.push(h.run(shard, () => {}, ac.signal).catch(() => {}));
    },
    onError: (err) => {
      throw err;
    },
  });
  const t0 = performance.now();
  expect(scheduler.inFlight('us1')).toBe(CAPACITY - reserve); // granted at once, never into the reserve
  await waitFor(() => hole.open() >= CAPACITY - reserve, 4000, 'the round to reach the black hole');
  expect(hole.open()).toBeLessThanOrEqual(CAPACITY - reserve);

  const small = await check('small', holes(SMALL, 2));
  console.log(`priority: idle check ${idle.ms.toFixed(0)} ms; behind a ${ROUND}-proxy background job: ${small.ms.toFixed(0)} ms (timeout ${TIMEOUT_MS} ms)`);
  expect(small.checked).toBe(SMALL);
  // It started at once: its own timeout, not the round's 5 s, and not behind its ~19 500 waiting probes.
  expect(small.ms).toBeLessThan(2 * TIMEOUT_MS);
  expect(small.ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
  expect(performance.now() - t0).toBeLessThan(ROUND_TIMEOUT_MS); // all of it before the round's first probes ended
  expect(scheduler.inFlight('us1')).toBe(CAPACITY - reserve); // the check's slots were the reserve's: the round got none back

  ac.abort();
  round.cancel();
  await Promise.all(runs);
  await waitFor(() => scheduler.inFlight('us1') === 0, 5000, 'the round\'s slots to come back');
}, 30_000);
