/**
 * Tests for src/metrics/process-metrics.ts: one registry per process with
 * prom-client's default metrics. How often its event-loop monitor wakes a
 * real idle process: test/integration/process-metrics.test.ts.
 */
import { expect, test } from 'bun:test';
import { processMetricsRegistry } from '../../src/metrics/process-metrics';

test('one registry per process, with the process and event-loop metrics', async () => {
  const r = processMetricsRegistry();
  expect(processMetricsRegistry()).toBe(r);
  const text = await r.metrics();
  expect(text).toContain('process_resident_memory_bytes');
  expect(text).toContain('nodejs_eventloop_lag_p99_seconds');
});
