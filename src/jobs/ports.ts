/**
 * The job layer's edges (pg-boss style): what a job actor needs from the
 * outside world, and what the layer offers to whoever calls it. Each port has
 * one adapter per way of running the service: the table of ports and their
 * adapters is docs/DESIGN.md "Ports: where a second implementation plugs in".
 *
 * The actor is the only bridge between these; it never sees HTTP.
 */
import type { CheckUserInfo } from '../accounts/plan';
import type { GeoInfo } from '../geo/geo';
import type { Logger } from '../log';
import type { Shard } from '../probe/workers/lane-protocol';
import type { CustomUrlResult, ProbeResult, ProbeSettings } from '../probe/types';
import type { CheckType } from '../proxy/types';
import type { ProgressState } from './progress';
import type { CheckRequest, JobOwner } from './request';
import type { PriorityClass } from './scheduler';
import type { CheckJobBody } from '../contract/jobs';

export type { Shard } from '../probe/workers/lane-protocol';

export type ReserveOutcome =
  /** `user`: `metadata.user` right after the reservation (final when nothing is refunded). */
  | { ok: true; unlimited: boolean; user: CheckUserInfo }
  | { ok: false; required: number; available: number };

/**
 * A settlement that also tells the account's webhooks (an async check:
 * check.completed, DECISIONS "Webhooks"): the outbox row is written in the
 * settlement's transaction, only when it closed the scan (a repeated
 * settlement tells nothing twice).
 */
export interface WebhookNotice {
  /** The result link of a completed check (null when it failed). */
  resultUrl: string | null;
}

/** Quota ledger + history, in the database. */
export interface LedgerPort {
  /**
   * Atomically reserve `units` and open the scan row (status running).
   * Throws JobAlreadyRunningError (nothing reserved) when a running job of
   * any API node carries `clientJobId`.
   */
  reserve(i: {
    accountId: string;
    /** The run id (unique per run): the ledger's and the scan's job reference. */
    runId: string;
    /** The jobId the run answers to (the progress channel's name, GET /checks/{jobId}): the client's, or the generated one; null: none recorded. */
    clientJobId: string | null;
    units: number;
    /** Unique valid proxies (recorded on the scan: the progress `total` of GET /checks/{jobId}). */
    total?: number;
    type: CheckType;
    region: string;
    timeoutMs: number;
    submitted: number;
    now: Date;
  }): Promise<ReserveOutcome>;
  /**
   * Close the scan as completed; refund `refund` units that were reserved but
   * not checked. `response`: the check response, kept with the scan (GET /checks/{jobId}). `resultRef`: the result file (null: none, a pool round).
   */
  complete(i: { accountId: string; runId: string; checked: number; working: number; resultRef: string | null; refund: number; response?: unknown; now: Date; webhook?: WebhookNotice }): Promise<void>;
  /**
   * Close the scan as failed (or cancelled: the client went away) and refund
   * `refund` units. `error` is a stable code (job-errors.ts), never free text.
   */
  fail(i: { accountId: string; runId: string; checked: number; working: number; refund: number; error: string; cancelled: boolean; now: Date; webhook?: WebhookNotice }): Promise<void>;
  /** `metadata.user` of the check response, read after settlement. */
  userInfo(accountId: string, now: Date): Promise<CheckUserInfo>;
  /** Marks a reserved run as submitted async: its end (settlement or orphan sweep) writes check.completed (WebhookNotice). */
  markAsync?(runId: string): Promise<void>;
}

export type ResultBatch = ProbeResult[] | CustomUrlResult[];

/** Whose shard the workers run: the cluster's NatsWorkers route by it (src/cluster/nats-workers.ts); the local ProbeWorkers ignore it. */
export interface ShardContext {
  /** The run's id (ExecutionJob.runId). */
  runId: string;
  region: string;
}

/**
 * The probe workers that run one shard: the piscina threads (src/probe/workers/probe-workers.ts)
 * in one process, the region's work queue in a cluster (src/cluster/nats-workers.ts).
 */
export interface WorkerPort {
  runShard(shard: Shard, onResults: (batch: ResultBatch) => void, signal?: AbortSignal, ctx?: ShardContext): Promise<unknown>;
  /** The job ended (its execution handle was cancelled): whatever of it is still queued may be dropped. */
  endJob?(ctx: ShardContext): void;
}

/**
 * Probe execution: where a job's probes run. A job opens itself with its
 * demand and priority class; the execution grants slots (`onGrant(n)`: n
 * more probes may start now), and the job answers each grant with shards of
 * exactly that many probes through `run`. Slots go back to the execution as
 * results arrive. A `background` job (a pool's round) is granted only what
 * the region's checks leave, below a reserve kept for them (scheduler.ts,
 * "Priority classes"), so a check never waits for it.
 */
export interface ProbeExecution {
  open(job: ExecutionJob): ExecutionHandle;
}

export interface ExecutionJob {
  /**
   * The run's id (scans.job_id), unique per run: a cluster's shards and its
   * cancel (pc.cancel) name it, so ending one run never drops another run of
   * the same client jobId, and the orphan sweep can cancel a dead node's run.
   */
  runId: string;
  region: string;
  /** Probes to run. */
  demand: number;
  /** `check` (the default: a /check job) or `background` (a pool's round: only what checks leave). */
  priority?: PriorityClass;
  /** n more probes may start now: answer with exec.run() (exec is this job's handle; a grant may come before open() returns). If it throws, onError hears of it. */
  onGrant: (n: number, exec: ExecutionHandle) => void;
  /** Granting failed (onGrant threw): the job must fail. */
  onError: (err: unknown) => void;
}

export interface ExecutionHandle {
  /**
   * Runs one shard. Results stream to `onBatch`; resolves when the shard
   * ended with every result reported, rejects (shard_failed /
   * shard_incomplete) otherwise. Aborting `signal` stops it; then it resolves.
   */
  run(shard: Shard, onBatch: (batch: ResultBatch) => void, signal: AbortSignal): Promise<void>;
  /** More probes to run (the custom-URL stage). */
  addDemand(n: number): void;
  /** Gives back `n` granted slots no shard will use (a pool emptied after its grant). */
  release(n: number): void;
  /** Drop what has not started; idempotent. The job's end. */
  cancel(): void;
}

export interface GeoPort {
  lookup(ip: string): GeoInfo;
}

/** Everything a probe needs that the actor does not decide (judge, own addresses, SSRF switch). */
export type SettingsFactory = (type: CheckType, timeoutMs: number) => ProbeSettings;

/** A progress subscriber (a WebSocket, in the HTTP layer). */
export interface Subscriber {
  /** The authenticated account, or null for an anonymous subscriber. */
  readonly accountId: string | null;
  /** The client's address (an anonymous subscriber counts against it); absent: only the global caps apply. */
  readonly address?: string | null;
  send(text: string): void;
  close(code: number, reason: string): void;
  /** Bytes queued and not yet sent to the peer. */
  bufferedAmount(): number;
}

export type SubscribeOutcome = { ok: true; unsubscribe: () => void } | { ok: false; code: number; reason: string };

/** Progress fan-out: jobs publish, subscribers follow a jobId. */
export interface ProgressPort {
  publish(owner: string, state: ProgressState, final: { resultUrl: string | null } | null): void;
  subscribe(jobId: string, sub: Subscriber): SubscribeOutcome;
  closeAll(): void;
}

/**
 * What the job layer counts for `/metrics` (src/metrics/service-metrics.ts
 * implements it). Called once per result batch or per job, never per result.
 */
export interface JobCounters {
  /** `n` probe results folded into a job (one batch of the execution's results). */
  probeResults(n: number): void;
  /** A job reached its final state. */
  jobEnded(state: 'completed' | 'failed'): void;
  /** `n` probes of a job tried again, not judged: they timed out while the checker was late, or a local resource ran out. */
  probesRetried?(reason: 'checker_lag' | 'local_resources', n: number): void;
}

/** What the job layer offers: run a check for an owner (src/jobs/service.ts). */
export interface ChecksPort {
  /** Throws shutting_down when no new check is accepted. */
  assertAccepting(): void;
  /**
   * Runs a validated check; resolves with the check response body. `signal`:
   * the client went away (cancel the job). `log`: the logger of the request
   * that asked for it (its lines carry the request id); the job logs with it.
   */
  run(owner: JobOwner, request: CheckRequest, signal?: AbortSignal, log?: Logger): Promise<unknown>;
  /**
   * Starts a validated check that outlives its connection; resolves with its
   * jobId once the reservation succeeded, rejects as `run` does before that.
   */
  submit(owner: JobOwner, request: CheckRequest, log?: Logger): Promise<{ jobId: string }>;
}

/** The live numbers of a running job, as its node knows them. */
export interface LocalRun {
  checked: number;
  total: number;
  working: number;
}

/**
 * Another API node's running jobs, reached through NATS (src/cluster/job-control.ts):
 * its live numbers, and a cancel through its own cancel path.
 * `unreachable`: the node did not answer (gone, or NATS down).
 */
export interface RemoteJobControl {
  progress(node: string, runId: string): Promise<LocalRun | 'not_running' | 'unreachable'>;
  /** Resolves once the job settled there: its final state, or not_running / unreachable. */
  cancel(node: string, runId: string): Promise<'completed' | 'failed' | 'not_running' | 'unreachable'>;
}

/** GET /checks/{jobId}: a job as its owner sees it (docs/API.md "Checks that outlive their connection"). */
export type CheckJobView = Omit<CheckJobBody, 'result'> & {
  /** A completed job's check response (as stored), its links signed afresh. */
  result?: unknown;
};

export type CancelOutcome =
  | { ok: true }
  | { ok: false; reason: 'not_found' }
  | { ok: false; reason: 'ended'; status: CheckJobView['status'] }
  | { ok: false; reason: 'unreachable' };

/** Jobs as resources (src/jobs/check-jobs.ts): any API node answers for any job of the account. */
export interface CheckJobsPort {
  /** The account's most recent run of `jobId`, or null (none, another account's, or past retention). */
  status(accountId: string, jobId: string, now: Date): Promise<CheckJobView | null>;
  /** Cancels that run when it is running; resolves once it settled. */
  cancel(accountId: string, jobId: string, now: Date): Promise<CancelOutcome>;
}
