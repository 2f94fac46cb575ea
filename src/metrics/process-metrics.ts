/**
 * prom-client's default metrics (`process_*`: CPU, resident memory, open file
 * descriptors, start time; `nodejs_*`: event-loop lag, heap, GC) in a
 * registry of their own, made once per process on first use.
 *
 * They describe the process, not a service: tests start several services in
 * one process, and collecting them per service would start one event-loop
 * monitor and one GC observer per start, never stopped (prom-client has no
 * way to stop them). So every service's `/metrics` renders this one registry
 * beside its own (service-metrics.ts). Never the global default registry.
 * Their cost is at scrape time (reading /proc), plus prom-client's
 * event-loop-delay histogram.
 */
import { collectDefaultMetrics, Registry } from 'prom-client';

let registry: Registry | null = null;

/** The process's default-metrics registry (made on the first call). */
export function processMetricsRegistry(): Registry {
  if (registry === null) {
    registry = new Registry();
    collectDefaultMetrics({ register: registry });
  }
  return registry;
}
