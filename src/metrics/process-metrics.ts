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
 * event-loop-delay histogram, sampled every EVENT_LOOP_RESOLUTION_MS.
 *
 * Why 100 ms and not prom-client's 10: the histogram is a timer
 * (monitorEventLoopDelay) that wakes the main thread at its resolution, and
 * at 10 ms those 100 wake-ups a second are the largest part of an idle
 * service's main-thread CPU, and a cost per check while a job waits on its
 * probes (bench/RESULTS.md "Session 6", finding 1). The lag it reports is
 * measured just as exactly; a stall shorter than 100 ms that falls between
 * two samples is not seen.
 */
import { collectDefaultMetrics, Registry } from 'prom-client';

/** The event-loop-delay histogram's sampling interval (nodejs_eventloop_lag_*). */
export const EVENT_LOOP_RESOLUTION_MS = 100;

let registry: Registry | null = null;

/** The process's default-metrics registry (made on the first call). */
export function processMetricsRegistry(): Registry {
  if (registry === null) {
    registry = new Registry();
    collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_RESOLUTION_MS });
  }
  return registry;
}
