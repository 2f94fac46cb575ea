/**
 * Where a service's probes run, chosen once per start: `embeddedBackend`
 * (this process's worker threads, src/compose/embedded-backend.ts) or
 * `clusterBackend` (the regions' agents over NATS, src/compose/cluster-
 * backend.ts). Everything that differs between the two is in what they
 * return (ProbeBackend); no later step asks which one it got. A third way of
 * running (the pools' scheduler rides on both) is a third function returning
 * a ProbeBackend, not branches in the steps.
 *
 * A backend is made in two steps: chosen at the very start (choose-backend.ts;
 * the embedded one starts loading its threads then, while the database
 * opens), and opened (the returned OpenBackend) once storage is open.
 */
import type { RemotePoolReads, ServedPools } from '../pools/ports';
import type { RefundedOrphan } from '../accounts/orphans';
import type { Config } from '../config';
import type { RegionsPort } from '../http/context';
import type { ControlledRuns } from '../cluster/job-control';
import type { ProbeExecution, ProgressPort, RemoteJobControl, WorkerPort } from '../jobs/ports';
import type { RegionScheduler, SchedulerOptions } from '../jobs/scheduler';
import type { Logger } from '../log';
import type { MetricSources, ServiceMetrics } from '../metrics/service-metrics';
import type { PoolEventsFeed } from '../pools/events-hub';
import type { ResultStore } from '../results/store';
import type { StopStep } from '../stop-steps';
import type { Storage } from './storage';

export interface ProbeBackend {
  /** Where granted shards run: the worker threads, or the region's work queue on NATS. */
  workers: WorkerPort & MetricSources['workers'];
  /** The scheduler's slots in a region: endpoints x SLOTS_PER_ENDPOINT here, or this node's fair share of the region's live agents. */
  capacity: (region: string) => number;
  /** The scheduler's options that differ: a process-wide cap and the descriptor guard's wake, or the smallest shard worth its messages. */
  schedulerOptions: Pick<SchedulerOptions, 'globalCapacity' | 'minGrant' | 'onBusy' | 'backgroundCapacityFor'>;
  /** Probes this process may hold in flight (MAX_IN_FLIGHT, or from the open-file limit): /metrics and the ready line. */
  maxInFlight: number;
  /** The local execution as jobs see it (a cluster nudges the demand board as a job opens). */
  execution: (local: ProbeExecution) => ProbeExecution;
  /** Once the scheduler exists: what watches it starts (the descriptor guard, or the agents' registry and the demand board). */
  follow: (scheduler: RegionScheduler) => void;
  /** Progress to /ws subscribers (in a cluster, of any node's jobs). */
  hub: ProgressPort & { readonly subscribers: number };
  /** Pool events to /ws?pool= subscribers and the gateway's working sets (in a cluster, of every node's pools). */
  poolEvents: PoolEventsFeed;
  /** Result files: DATA_DIR, or PostgreSQL shared by the API nodes. */
  results: ResultStore;
  /** Who probes from each region: this process (agents 1, its slots), or a cluster's live agents (listed in /health). */
  regions: RegionsPort;
  /** False while no agent serves the region (503 before anything is charged); absent: every region is served. */
  regionAvailable?: (region: string) => boolean;
  /** The regions' work queues for /metrics (a cluster). */
  queue?: MetricSources['queue'];
  /** Another node's job refunded by the orphan sweep: its shards are dropped where they run. */
  orphanRefunded: (o: RefundedOrphan) => void;
  /** Whether probes leave from this process: then it calibrates against its judge (its exit addresses). */
  calibrates: boolean;
  /**
   * Once the CheckService exists: the other API nodes' runs for GET / DELETE /checks/{jobId} (a cluster:
   * this node answers for `runs` on pc.control.<node> and asks the others there); null: one process.
   */
  jobControl: (runs: ControlledRuns) => RemoteJobControl | null;
  /**
   * Once the pools' owner exists: the pools other API nodes own (a cluster: this node answers
   * for `pools` on pc.pools.<node> and asks the others there); null: one process owns them all.
   */
  poolReads: (pools: ServedPools) => RemotePoolReads | null;
}

export interface BackendContext {
  /** The config with its secrets resolved (src/secrets.ts). */
  config: Config;
  storage: Storage;
  /** The counters a cluster's work path bumps. */
  metrics: ServiceMetrics;
  log: Logger;
  undo: StopStep[];
}

export type OpenBackend = (ctx: BackendContext) => Promise<ProbeBackend>;
