/**
 * src/metrics/process-metrics.ts in a real, idle process: the event-loop
 * monitor wakes the main thread at EVENT_LOOP_RESOLUTION_MS, not at
 * prom-client's 10 ms. It counts the process's context switches over a
 * second, so it lives here (a process of its own) with bounds far from the
 * two cadences, not among the unit tests.
 */
import { expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { EVENT_LOOP_RESOLUTION_MS } from '../../src/metrics/process-metrics';

test('the event-loop monitor wakes an idle main thread about 1000 / EVENT_LOOP_RESOLUTION_MS times a second', async () => {
  // in a process of its own: the test runner's thread is not idle
  const code = `
    const { processMetricsRegistry } = await import(${JSON.stringify(new URL('../../src/metrics/process-metrics.ts', import.meta.url).pathname)});
    const { readFileSync } = await import('node:fs');
    const wakes = () => Number(/voluntary_ctxt_switches:\\s+(\\d+)/.exec(readFileSync('/proc/self/task/' + process.pid + '/status', 'utf8'))[1]);
    processMetricsRegistry();
    await Bun.sleep(300);
    const a = wakes();
    await Bun.sleep(1000);
    console.log(wakes() - a);
    process.exit(0);`;
  if (!readFileSync('/proc/self/status', 'utf8').includes('voluntary_ctxt_switches')) return; // no /proc: nothing to count with
  const p = Bun.spawn([process.execPath, '-e', code], { stdout: 'pipe', stderr: 'inherit' });
  const out = await new Response(p.stdout).text();
  expect(await p.exited).toBe(0);
  const wakes = Number(out.trim());
  expect(EVENT_LOOP_RESOLUTION_MS).toBe(100);
  // at prom-client's default (10 ms) this counts ~100; at 100 ms ~10 plus a few of the runtime's own
  expect(wakes).toBeGreaterThan(3);
  expect(wakes).toBeLessThan(40);
});
