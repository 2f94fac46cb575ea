/**
 * A region agent's metrics (`GET /metrics` on its listener, Prometheus text
 * format, its own prom-client Registry like service-metrics.ts; the process's
 * default metrics rendered beside them).
 *
 *   proxycheck_agent_probe_slots                gauge    AGENT_SLOTS
 *   proxycheck_agent_probes_in_flight           gauge    probes of pulled shards not yet answered
 *   proxycheck_agent_shards_running             gauge    shards running on this agent
 *   proxycheck_agent_shards_total{delivery}     counter  shards started: delivery first | again (a redelivery)
 *   proxycheck_agent_shards_ended_total{outcome} counter acked | nakked | termed | dropped (a cancelled job's)
 *   proxycheck_agent_probe_results_total        counter  results sent to owners (rate() = results per second)
 *   proxycheck_shards_redelivered_total         counter  the shards of `delivery="again"` (the name the API nodes use too)
 */
import { Counter, Registry } from 'prom-client';
import { processMetricsRegistry } from './process-metrics';
import { readGauges } from './read-gauge';

/** What the gauges read at scrape time: the agent's runner, once it exists (watch()). */
export interface AgentMetricSources {
  readonly inFlight: number;
  readonly shardsRunning: number;
}

export class AgentMetrics {
  readonly registry = new Registry();
  readonly contentType: string = Registry.PROMETHEUS_CONTENT_TYPE;
  readonly #started: Counter<'delivery'>;
  readonly #ended: Counter<'outcome'>;
  readonly #results: Counter;
  readonly #redelivered: Counter;

  /** The counters and the slots; the runner's gauges come with watch() (the runner counts into this first). */
  constructor(slots: number) {
    processMetricsRegistry();
    const registers = [this.registry];
    readGauges(this.registry)('proxycheck_agent_probe_slots', 'Probes this agent runs at once at most (AGENT_SLOTS).', () => slots);
    this.#started = new Counter({ name: 'proxycheck_agent_shards_total', help: 'Shards started, by delivery (first, again).', labelNames: ['delivery'], registers });
    this.#ended = new Counter({ name: 'proxycheck_agent_shards_ended_total', help: 'Shards ended, by outcome.', labelNames: ['outcome'], registers });
    this.#results = new Counter({ name: 'proxycheck_agent_probe_results_total', help: 'Probe results sent to their owners.', registers });
    this.#redelivered = new Counter({ name: 'proxycheck_shards_redelivered_total', help: 'Shards this agent received again after another delivery was not acked.', registers });
    for (const delivery of ['first', 'again']) this.#started.inc({ delivery }, 0);
    for (const outcome of ['acked', 'nakked', 'termed', 'dropped']) this.#ended.inc({ outcome }, 0);
  }

  /** The runner's gauges, read at scrape time. */
  watch(s: AgentMetricSources): this {
    const gauge = readGauges(this.registry);
    gauge('proxycheck_agent_probes_in_flight', 'Probes of pulled shards not yet answered.', () => s.inFlight);
    gauge('proxycheck_agent_shards_running', 'Shards running on this agent.', () => s.shardsRunning);
    return this;
  }

  shardStarted(redelivered: boolean): void {
    this.#started.inc({ delivery: redelivered ? 'again' : 'first' });
    if (redelivered) this.#redelivered.inc();
  }

  shardEnded(outcome: 'acked' | 'nakked' | 'termed' | 'dropped'): void {
    this.#ended.inc({ outcome });
  }

  results(n: number): void {
    if (n > 0) this.#results.inc(n);
  }

  async render(): Promise<string> {
    return (await processMetricsRegistry().metrics()) + '\n' + (await this.registry.metrics());
  }
}
