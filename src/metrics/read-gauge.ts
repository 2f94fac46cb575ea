/**
 * A gauge that reads its value at scrape time (prom-client's `collect`), for
 * the metrics registries of a service (service-metrics.ts) and an agent
 * (agent-metrics.ts): nothing is counted on the hot path, the source is read
 * when /metrics is asked for.
 */
import { Gauge, type Registry } from 'prom-client';

/** Makes read-at-scrape gauges in `registry`. */
export function readGauges(registry: Registry): (name: string, help: string, read: () => number) => Gauge {
  const registers = [registry];
  return (name, help, read) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(read());
      },
    });
}
