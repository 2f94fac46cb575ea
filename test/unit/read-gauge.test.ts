import { describe, expect, test } from 'bun:test';
import { Registry } from 'prom-client';
import { readGauges } from '../../src/metrics/read-gauge';

describe('readGauges: gauges read at scrape time', () => {
  test('each scrape reads the source anew, in the given registry only', async () => {
    const registry = new Registry();
    let inFlight = 3;
    readGauges(registry)('x_in_flight', 'probes in flight', () => inFlight);
    expect(await registry.metrics()).toContain('x_in_flight 3');
    inFlight = 7;
    expect(await registry.metrics()).toContain('x_in_flight 7');
    expect(await new Registry().metrics()).not.toContain('x_in_flight');
  });
});
