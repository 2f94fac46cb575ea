/**
 * The main thread's lag at a probe's deadline (issue 30): the built-in judge
 * answers on the main thread, so a deadline that fires in a probe thread
 * while the main thread is late is the checker's, not the proxy's. Real
 * probe threads (ProbeWorkers) and the main thread's lag meter as the
 * service runs it (LagLimiter, sharing through ProbeWorkers.mainLag); the
 * lag is injected by blocking this (the main) thread across the deadline.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { LagLimiter } from '../../src/jobs/lag-limiter';
import type { ProbeResult, ProbeSettings } from '../../src/probe/types';
import { ProbeWorkers } from '../../src/probe/workers/probe-workers';
import { startBlackHole, type FakeServer } from '../fixtures/fake-servers';

let workers: ProbeWorkers;
let hole: FakeServer;

beforeAll(async () => {
  [workers, hole] = await Promise.all([ProbeWorkers.start({ threads: 1 }), startBlackHole()]);
});
afterAll(async () => {
  await workers.close();
  await hole.close();
});

const settings: ProbeSettings = {
  type: 'http',
  timeoutMs: 1_000,
  judge: { url: 'http://127.0.0.1:9/judge', protocol: 'http:', host: '127.0.0.1', port: 9, path: '/judge' },
  checkerIps: [],
  baselineHeaders: [],
  allowPrivateTargets: true,
};

/** One probe to the black hole while this thread is blocked from ~100 ms to ~1 800 ms (its deadline at 1 000 ms falls inside). */
async function probeWhileBlocked(): Promise<ProbeResult> {
  const got: ProbeResult[] = [];
  const done = workers.runShard({ kind: 'probe', tasks: [{ index: 0, proxy: { host: '127.0.0.1', port: hole.port } }], settings }, (b) => got.push(...b));
  await Bun.sleep(100);
  const until = performance.now() + 1_700;
  while (performance.now() < until) {
    // busy: this thread's timers (its lag meter) wait
  }
  await done;
  return got[0]!;
}

// The probe thread's own lateness counts as well: on a loaded machine it may be late by itself (then
// checker_overloaded with its own, smaller lateness); what the main thread's meter adds is the ~700+ ms
// the main thread was away when the deadline fired.
const OWN_AT_MOST = 400;

test('without the main thread\'s meter: its block does not count (the black hole is the proxy\'s timeout, unless the probe thread was late itself)', async () => {
  const r = await probeWhileBlocked();
  expect(r.status).toBe('failed');
  if (r.error!.code !== 'timeout') expect(r.error!.checkerLagMs!).toBeLessThan(OWN_AT_MOST);
  else expect(r.error!.code).toBe('timeout');
}, 10_000);

test('with it (the service\'s LagLimiter): the deadline fired while the main thread was late: checker_overloaded, with the lateness', async () => {
  const limiter = new LagLimiter({ max: 100 }).start({ totalInFlight: 1, setLoadLimit: () => {} }, workers);
  try {
    const before = workers.laneCounts.lagRetries;
    const r = await probeWhileBlocked();
    expect(r).toMatchObject({ status: 'failed', error: { code: 'checker_overloaded' } });
    expect(r.error!.checkerLagMs!).toBeGreaterThanOrEqual(OWN_AT_MOST + 100);
    expect(workers.laneCounts.lagRetries - before).toBe(1);
  } finally {
    limiter.stop();
  }
}, 10_000);
