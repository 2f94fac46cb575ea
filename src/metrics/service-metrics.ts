/**
 * One service's metrics for `GET /metrics` on the admin listener (Prometheus
 * text format, prom-client). Each service has its own Registry (never
 * prom-client's global one): tests start several services in one process and
 * their counters must not mix. The process's default metrics come from
 * process-metrics.ts and are rendered beside them.
 *
 * Gauges are read at scrape time (collect callbacks) from the running parts,
 * so a probe costs nothing here; the counters are bumped once per result
 * batch or per job (the job layer's JobCounters port, src/jobs/ports.ts).
 *
 *   proxycheck_probes_in_flight                   gauge    scheduler: probes granted and not yet released, all regions
 *   proxycheck_probes_in_flight_max               gauge    MAX_IN_FLIGHT: the process-wide cap on probes in flight
 *   proxycheck_region_probes_in_flight{region}    gauge    scheduler: probes in flight in the region
 *   proxycheck_region_probe_slots{region}         gauge    scheduler: the region's capacity (endpoints x SLOTS_PER_ENDPOINT)
 *   proxycheck_region_probes_waiting{region}      gauge    scheduler: probes of running jobs waiting for a slot
 *   proxycheck_probe_worker_threads               gauge    probe workers: threads (lanes)
 *   proxycheck_probe_shards_queued                gauge    probe workers: shards waiting for a lane
 *   proxycheck_probe_shards_running               gauge    probe workers: shards sent to lanes and not yet ended
 *   proxycheck_probe_results_total                counter  probe results folded into jobs (rate() = results per second)
 *   proxycheck_probes_load_limit                  gauge    the adaptive in-flight limit from the checker's own lag
 *                                                          (src/jobs/lag-limiter.ts); MAX_IN_FLIGHT when off or unset
 *   proxycheck_probes_retried_total{reason}       counter  probes of jobs tried again instead of judged: reason checker_lag (timed
 *                                                          out while the checker was late) | local_resources (descriptors, ports)
 *   proxycheck_probes_checker_lag_total           counter  probes the lanes found timed out while they were late (jobs and pools)
 *   proxycheck_tls_handshakes_total{side,kind}    counter  pinned TLS handshakes of the https check: side client (the probe
 *                                                          lanes) | judge (this process's TLS judge), kind full | resumed
 *   proxycheck_jobs_running                       gauge    check jobs running now
 *   proxycheck_jobs_finished_total{state}         counter  jobs that ended: state completed | failed
 *   proxycheck_ws_subscribers                     gauge    progress hub: open /ws subscriptions
 *   proxycheck_pool_ws_subscribers                gauge    pool events: open /ws?pool= subscriptions
 *   proxycheck_node_lease_live                    gauge    1 while this node's lease is live, 0 once lapsed or released
 *   proxycheck_shards_redelivered_total           counter  shards a cluster work queue delivered again; 0 embedded (no queue)
 *   proxycheck_results_duplicate_total            counter  probe results a cluster node received again and dropped; 0 embedded
 *   proxycheck_region_queue_shards{region,state}  gauge    cluster: shards in the region's work queue, state waiting | delivered
 *                                                          (JetStream consumer info, cached: cluster/queue-depth.ts); no samples embedded
 *   proxycheck_gateway_connections_open           gauge    gateway: client connections open now (0 without a gateway)
 *   proxycheck_gateway_connections_total          counter  gateway: connections authenticated with a target accepted
 *   proxycheck_gateway_bytes_total                counter  gateway: bytes relayed, both directions (in batches of 1 MiB and at close)
 *   proxycheck_gateway_refused_total{reason}      counter  gateway: clients answered with an error: auth (407 / SOCKS5 auth failure)
 *                                                          or an X-Gateway-Error code
 *   proxycheck_gateway_upstream_failures_total    counter  gateway: upstream tries that failed and were reported to their pool
 *   proxycheck_pool_rounds_running                gauge    pools: pools with probes out on this node now (0 with POOL_ROUNDS=false;
 *                                                          the names are from when pools checked in rounds)
 *   proxycheck_pool_rounds_total{outcome}         counter  pools: durable batches (checked), pauses (the balance could not
 *                                                          pay) and resumes (it could again)
 *   proxycheck_pool_checks_total{result}          counter  pools: proxies checked in durable batches, result working | failed
 *   proxycheck_webhook_attempts_in_flight         gauge    webhooks: delivery attempts this node has in flight now
 *   proxycheck_webhook_attempts_total{outcome}    counter  webhooks: attempts recorded, outcome delivered | retry (a retry
 *                                                          is due) | failed (the schedule ran out)
 * (The gateway's counts per account are /me `gateway`, src/gateway/usage.ts; they have no label here.)
 */
import { Counter, Gauge, Registry } from 'prom-client';
import { processMetricsRegistry } from './process-metrics';
import { readGauges } from './read-gauge';
import { judgeTlsHandshakes } from '../judge/server';

/** What the gauges read at scrape time (structural: the scheduler, probe workers, service, hub and lease as they are). */
export interface MetricSources {
  /** The region codes to report (the accepted regions). */
  regions: readonly string[];
  scheduler: {
    readonly totalInFlight: number;
    /** The adaptive load limit (Infinity when none is set). */
    readonly loadLimit?: number;
    snapshot(region: string): { capacity: number; inFlight: number; jobs: readonly { pending: number }[] };
  };
  /** MAX_IN_FLIGHT (the scheduler's global capacity). */
  maxInFlight: number;
  /** The probe workers (ProbeWorkers, or a cluster's NatsWorkers: no threads). */
  workers: {
    readonly threads: number;
    readonly stats: { queued: number; running: number };
    /** The lanes' counts (ProbeWorkers; absent for a cluster's NatsWorkers: 0). */
    readonly laneCounts?: { readonly lagRetries: number; readonly tlsFull: number; readonly tlsResumed: number };
  };
  /** Check jobs running now (CheckService.runningJobs). */
  runningJobs: () => number;
  hub: { readonly subscribers: number };
  /** The pools' events feed (its /ws?pool= subscriptions). */
  poolEvents: { readonly subscribers: number };
  lease: { readonly live: boolean };
  /** A cluster's work queues (absent embedded: the gauge has no samples). Asked at scrape time; it caches. */
  queue?: { depth(): Promise<ReadonlyMap<string, { waiting: number; delivered: number }>> };
}

/** The gateway's listener, for its open-connections gauge (watchGateway). */
export interface GatewaySource {
  readonly open: number;
}

export const METRIC_NAMES = Object.freeze({
  probesInFlight: 'proxycheck_probes_in_flight',
  probesInFlightMax: 'proxycheck_probes_in_flight_max',
  regionProbesInFlight: 'proxycheck_region_probes_in_flight',
  regionProbeSlots: 'proxycheck_region_probe_slots',
  regionProbesWaiting: 'proxycheck_region_probes_waiting',
  probeWorkerThreads: 'proxycheck_probe_worker_threads',
  probeShardsQueued: 'proxycheck_probe_shards_queued',
  probeShardsRunning: 'proxycheck_probe_shards_running',
  probeResults: 'proxycheck_probe_results_total',
  probesLoadLimit: 'proxycheck_probes_load_limit',
  probesRetried: 'proxycheck_probes_retried_total',
  probesCheckerLag: 'proxycheck_probes_checker_lag_total',
  tlsHandshakes: 'proxycheck_tls_handshakes_total',
  jobsRunning: 'proxycheck_jobs_running',
  jobsFinished: 'proxycheck_jobs_finished_total',
  wsSubscribers: 'proxycheck_ws_subscribers',
  poolWsSubscribers: 'proxycheck_pool_ws_subscribers',
  nodeLeaseLive: 'proxycheck_node_lease_live',
  shardsRedelivered: 'proxycheck_shards_redelivered_total',
  duplicateResults: 'proxycheck_results_duplicate_total',
  regionQueueShards: 'proxycheck_region_queue_shards',
  gatewayConnectionsOpen: 'proxycheck_gateway_connections_open',
  gatewayConnections: 'proxycheck_gateway_connections_total',
  gatewayBytes: 'proxycheck_gateway_bytes_total',
  gatewayRefused: 'proxycheck_gateway_refused_total',
  gatewayUpstreamFailures: 'proxycheck_gateway_upstream_failures_total',
  poolRoundsRunning: 'proxycheck_pool_rounds_running',
  poolRounds: 'proxycheck_pool_rounds_total',
  poolChecks: 'proxycheck_pool_checks_total',
  webhookAttemptsInFlight: 'proxycheck_webhook_attempts_in_flight',
  webhookAttempts: 'proxycheck_webhook_attempts_total',
} as const);

export interface ServiceMetricsOptions {
  /** Render prom-client's default process metrics too (default true). */
  processMetrics?: boolean;
}

export class ServiceMetrics {
  /** This service's registry (its own metrics only). */
  readonly registry = new Registry();
  readonly contentType: string = Registry.PROMETHEUS_CONTENT_TYPE;
  readonly #withProcess: boolean;
  readonly #probeResults: Counter;
  readonly #probesRetried: Counter<'reason'>;
  readonly #jobsFinished: Counter<'state'>;
  readonly #shardsRedelivered: Counter;
  readonly #duplicateResults: Counter;
  readonly #gatewayConnections: Counter;
  readonly #gatewayBytes: Counter;
  readonly #gatewayRefused: Counter<'reason'>;
  readonly #gatewayUpstreamFailures: Counter;
  readonly #poolRounds: Counter<'outcome'>;
  readonly #webhookAttempts: Counter<'outcome'>;
  #webhooks: { readonly inFlight: number } | null = null;
  readonly #poolChecks: Counter<'result'>;
  /** The gateway once it listens (watchGateway); until then (or without one) 0 connections are open. */
  #gateway: GatewaySource | null = null;
  /** The pools' owner once it exists (watchPoolOwner). */
  #poolOwner: { readonly probingPools: number } | null = null;

  constructor(opts: ServiceMetricsOptions = {}) {
    this.#withProcess = opts.processMetrics ?? true;
    if (this.#withProcess) processMetricsRegistry(); // its event-loop monitor runs from the start, not the first scrape
    const registers = [this.registry];
    const N = METRIC_NAMES;
    this.#probeResults = new Counter({ name: N.probeResults, help: 'Probe results folded into jobs.', registers });
    this.#probesRetried = new Counter({
      name: N.probesRetried,
      help: 'Probes of jobs tried again instead of judged: checker_lag (timed out while the checker was late), local_resources (descriptors, ports).',
      labelNames: ['reason'],
      registers,
    });
    for (const reason of ['checker_lag', 'local_resources']) this.#probesRetried.inc({ reason }, 0);
    this.#jobsFinished = new Counter({ name: N.jobsFinished, help: 'Check jobs that ended, by final state.', labelNames: ['state'], registers });
    for (const state of ['completed', 'failed']) this.#jobsFinished.inc({ state }, 0);
    this.#shardsRedelivered = new Counter({
      name: N.shardsRedelivered,
      help: 'Shards a cluster work queue delivered again after a node missed them; 0 in embedded mode (no queue).',
      registers,
    });
    this.#duplicateResults = new Counter({
      name: N.duplicateResults,
      help: 'Probe results a cluster node received again (a redelivered shard, a lost done) and dropped; 0 in embedded mode.',
      registers,
    });
    readGauges(this.registry)(N.gatewayConnectionsOpen, 'Gateway client connections open now.', () => this.#gateway?.open ?? 0);
    this.#gatewayConnections = new Counter({ name: N.gatewayConnections, help: 'Gateway connections authenticated with a target accepted.', registers });
    this.#gatewayBytes = new Counter({ name: N.gatewayBytes, help: 'Bytes the gateway relayed, both directions together.', registers });
    this.#gatewayRefused = new Counter({
      name: N.gatewayRefused,
      help: 'Gateway clients answered with an error instead of a connection, by reason (auth, or the X-Gateway-Error code).',
      labelNames: ['reason'],
      registers,
    });
    this.#gatewayUpstreamFailures = new Counter({ name: N.gatewayUpstreamFailures, help: 'Gateway upstream tries that failed and were reported to their pool.', registers });
    readGauges(this.registry)(N.poolRoundsRunning, 'Pools with probes out on this node now.', () => this.#poolOwner?.probingPools ?? 0);
    this.#poolRounds = new Counter({ name: N.poolRounds, help: 'Pool batches made durable (checked), and pools paused (the balance could not pay) or resumed.', labelNames: ['outcome'], registers });
    for (const outcome of ['checked', 'paused', 'resumed']) this.#poolRounds.inc({ outcome }, 0);
    readGauges(this.registry)(N.webhookAttemptsInFlight, 'Webhook delivery attempts this node has in flight now.', () => this.#webhooks?.inFlight ?? 0);
    this.#webhookAttempts = new Counter({ name: N.webhookAttempts, help: 'Webhook delivery attempts recorded: delivered, retry (another is due) or failed (the schedule ran out).', labelNames: ['outcome'], registers });
    for (const outcome of ['delivered', 'retry', 'failed']) this.#webhookAttempts.inc({ outcome }, 0);
    this.#poolChecks = new Counter({ name: N.poolChecks, help: 'Proxies the pools checked, by result (counted when made durable).', labelNames: ['result'], registers });
    for (const result of ['working', 'failed']) this.#poolChecks.inc({ result }, 0);
  }

  /**
   * The gauges, read from `sources` at scrape time. A second step because the
   * counters exist first: the parts that count into them (the job service,
   * a cluster's work path) are also what the gauges read.
   */
  watch(sources: MetricSources): this {
    const registers = [this.registry];
    const gauge = readGauges(this.registry);
    const perRegion = (name: string, help: string, read: (s: ReturnType<MetricSources['scheduler']['snapshot']>) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['region'],
        registers,
        collect() {
          for (const region of sources.regions) this.set({ region }, read(sources.scheduler.snapshot(region)));
        },
      });
    const N = METRIC_NAMES;
    gauge(N.probesInFlight, 'Probes granted a slot and not yet finished, all regions together.', () => sources.scheduler.totalInFlight);
    gauge(N.probesInFlightMax, 'The process-wide cap on probes in flight (MAX_IN_FLIGHT).', () => sources.maxInFlight);
    gauge(N.probesLoadLimit, "The adaptive in-flight limit from the checker's own lag (MAX_IN_FLIGHT when off).", () => {
      const l = sources.scheduler.loadLimit;
      return l !== undefined && Number.isFinite(l) ? Math.min(l, sources.maxInFlight) : sources.maxInFlight;
    });
    const lanes = () => sources.workers.laneCounts;
    new Counter({
      name: N.probesCheckerLag,
      help: 'Probes the lanes found timed out while they were late: not judged (checker_overloaded), tried again by jobs, not tried by pools.',
      registers,
      collect() {
        this.reset();
        this.inc(lanes()?.lagRetries ?? 0);
      },
    });
    new Counter({
      name: N.tlsHandshakes,
      help: 'Pinned TLS handshakes of the https check, by side (client: the probe lanes; judge: this process\'s TLS judge) and kind (full, resumed).',
      labelNames: ['side', 'kind'],
      registers,
      collect() {
        this.reset();
        const c = lanes();
        this.inc({ side: 'client', kind: 'full' }, c?.tlsFull ?? 0);
        this.inc({ side: 'client', kind: 'resumed' }, c?.tlsResumed ?? 0);
        this.inc({ side: 'judge', kind: 'full' }, judgeTlsHandshakes.full);
        this.inc({ side: 'judge', kind: 'resumed' }, judgeTlsHandshakes.resumed);
      },
    });
    perRegion(N.regionProbesInFlight, 'Probes in flight in the region.', (s) => s.inFlight);
    perRegion(N.regionProbeSlots, "The region's probe slots (endpoints x SLOTS_PER_ENDPOINT).", (s) => s.capacity);
    perRegion(N.regionProbesWaiting, 'Probes of running jobs waiting for a slot in the region.', (s) =>
      s.jobs.reduce((sum, j) => sum + j.pending, 0),
    );
    gauge(N.probeWorkerThreads, 'Probe worker threads (lanes).', () => sources.workers.threads);
    gauge(N.probeShardsQueued, 'Shards waiting for a probe lane.', () => sources.workers.stats.queued);
    gauge(N.probeShardsRunning, 'Shards sent to probe lanes and not yet ended.', () => sources.workers.stats.running);
    gauge(N.jobsRunning, 'Check jobs running now.', sources.runningJobs);
    gauge(N.wsSubscribers, 'Open progress subscriptions (/ws).', () => sources.hub.subscribers);
    gauge(N.poolWsSubscribers, "Open pool events subscriptions (/ws?pool=).", () => sources.poolEvents.subscribers);
    gauge(N.nodeLeaseLive, "1 while this node's lease is live, 0 once it lapsed or was released.", () => (sources.lease.live ? 1 : 0));
    const queue = sources.queue;
    new Gauge({
      name: N.regionQueueShards,
      help: "Shards in the region's cluster work queue: waiting for an agent, or delivered and not yet acked (read at most every 5 s).",
      labelNames: ['region', 'state'],
      registers,
      async collect() {
        if (queue === undefined) return;
        for (const [region, r] of await queue.depth()) {
          this.set({ region, state: 'waiting' }, r.waiting);
          this.set({ region, state: 'delivered' }, r.delivered);
        }
      },
    });
    return this;
  }

  /**
   * The gateway's open connections, read at scrape time. A step of its own:
   * the gateway starts after the listeners (and only with GATEWAY_PORT).
   */
  watchGateway(gateway: GatewaySource): void {
    this.#gateway = gateway;
  }

  /** The pools' owner (its pools with probes out, read at scrape time): a step of its own, it starts after the checks. */
  watchPoolOwner(owner: { readonly probingPools: number }): void {
    this.#poolOwner = owner;
  }

  /** The webhooks' delivery loop (its attempts in flight, read at scrape time). */
  watchWebhooks(loop: { readonly inFlight: number }): void {
    this.#webhooks = loop;
  }

  /** A webhook attempt recorded: delivered, a retry due, or the delivery failed for good. */
  webhookAttempt(outcome: 'delivered' | 'retry' | 'failed'): void {
    this.#webhookAttempts.inc({ outcome });
  }

  /** A pool's batch made durable: `checked` with what it found; or a pause / resume of its pool. */
  poolRound(outcome: 'checked' | 'paused' | 'resumed', found: { working: number; failed: number } = { working: 0, failed: 0 }): void {
    this.#poolRounds.inc({ outcome });
    if (found.working > 0) this.#poolChecks.inc({ result: 'working' }, found.working);
    if (found.failed > 0) this.#poolChecks.inc({ result: 'failed' }, found.failed);
  }

  /** JobCounters (src/jobs/ports.ts): once per batch. */
  probeResults(n: number): void {
    if (n > 0) this.#probeResults.inc(n);
  }

  /** JobCounters: probes of a job tried again instead of judged. */
  probesRetried(reason: 'checker_lag' | 'local_resources', n: number): void {
    if (n > 0) this.#probesRetried.inc({ reason }, n);
  }

  /** JobCounters: once per job. */
  jobEnded(state: 'completed' | 'failed'): void {
    this.#jobsFinished.inc({ state });
  }

  /** For a cluster execution adapter: shards its work queue redelivered. */
  shardsRedelivered(n: number): void {
    if (n > 0) this.#shardsRedelivered.inc(n);
  }

  /** For a cluster execution adapter: results dropped as duplicates. */
  duplicateResults(n: number): void {
    if (n > 0) this.#duplicateResults.inc(n);
  }

  /** The gateway's counters (src/gateway/ports.ts GatewayCounters, without the account). */
  gatewayConnection(): void {
    this.#gatewayConnections.inc();
  }

  gatewayBytes(n: number): void {
    if (n > 0) this.#gatewayBytes.inc(n);
  }

  gatewayRefused(reason: string): void {
    this.#gatewayRefused.inc({ reason });
  }

  gatewayUpstreamFailed(): void {
    this.#gatewayUpstreamFailures.inc();
  }

  /** The Prometheus text exposition: the process's default metrics, then this service's. */
  async render(): Promise<string> {
    const own = await this.registry.metrics();
    if (!this.#withProcess) return own;
    return (await processMetricsRegistry().metrics()) + '\n' + own;
  }
}
