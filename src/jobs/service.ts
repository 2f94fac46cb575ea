/**
 * CheckService: the HTTP layer's entry into check jobs (ChecksPort). It keeps
 * the registry of running jobIds (409 on a duplicate: the fast path; across
 * API nodes the reservation refuses a jobId that runs anywhere, and its
 * JobAlreadyRunningError passes through), spawns one JobActor per
 * request, and stops gracefully.
 *
 * ## Synchronous and asynchronous checks
 *
 * `run` answers with the check response; a closed connection (its signal)
 * cancels the job (`client_disconnected`: the probes made are paid, the rest
 * refunded). `submit` answers once the reservation is answered (402, 409 and
 * 503 come from it as for `run`) and lets the job run on with no connection
 * attached; its end is read from its scan (GET /checks/{jobId},
 * check-jobs.ts), and its settlement writes check.completed for the
 * account's webhooks (LedgerPort WebhookNotice). Both count against the per-account limits the same way
 * and both are cancelled by stop(). `cancelRun` stops a run of this node for
 * its client (DELETE /checks/{jobId}: `client_cancelled`, the same refund as
 * a closed connection) and resolves once the job has settled.
 *
 * ## States (SERVICE_STATES, moved through src/state-machine.ts)
 *
 *   running ──stop()──> draining ──(all jobs done | grace over: cancel rest)──> stopped
 *
 * running accepts checks; stop() is the only way out, once (a second call
 * returns the first's promise). While draining, new checks are refused (`shutting_down`, assertAccepting:
 * the one place that says so; HTTP answers 503). Jobs still running when the
 * grace ends are cancelled: they fail, refund what they did not check, and
 * their callers get `shutting_down` too.
 *
 * ## Per-account limits (a job-layer rule: this registry knows the running jobs)
 *
 * An account may run at most `limits.maxJobs` checks at once, and its running
 * checks together may hold at most `limits.maxProxiesInFlight` unique proxies
 * (a check alone is bounded by MAX_PROXIES, so this refuses a check only while
 * others of the account run). Over either: `rate_limited` (RateLimitedError,
 * with a Retry-After hint), thrown before the actor exists, so nothing is
 * reserved and no scan row is written. The check, the count and the registry
 * entry happen in one synchronous stretch: two requests cannot both pass on
 * the same free place. The region's fair share (scheduler.ts) is separate.
 *
 * Errors: the answers for the caller (CALLER_ERROR_CODES, job-errors.ts)
 * pass through as they are; anything else is logged here with its detail and
 * rethrown as job_failed (HTTP: a fixed 500 body). stop() is safe to call
 * twice (the second call returns the first's promise) and always resolves.
 */
import { randomBytes } from 'node:crypto';
import { JOB_STATES, JobActor, type CheckResponse, type JobDeps } from './actor';
import { clientCancelled, clientDisconnected, isCallerError, JobAlreadyRunningError, RateLimitedError, RegionUnavailableError, shuttingDown } from './job-errors';
import { ServiceError } from '../errors';
import { JOB_ERROR_CODES } from '../error-codes';
import { waitWithGrace, type Clock } from '../clock';
import type { Logger } from '../log';
import { StateMachine, transitionTable } from '../state-machine';
import type { ChecksPort, LedgerPort, LocalRun, ProgressPort } from './ports';
import type { CheckRequest, JobOwner } from './request';

export const SERVICE_STATES = Object.freeze({ RUNNING: 'running', DRAINING: 'draining', STOPPED: 'stopped' } as const);
export type ServiceState = (typeof SERVICE_STATES)[keyof typeof SERVICE_STATES];
const { RUNNING, DRAINING, STOPPED } = SERVICE_STATES;
export const SERVICE_TRANSITIONS = transitionTable<ServiceState>({ running: [DRAINING], draining: [STOPPED], stopped: [] });

/** Per-account limits (config.limits: MAX_JOBS_PER_ACCOUNT; twice MAX_PROXIES in flight). */
export interface AccountLimits {
  /** Checks one account may run at once. */
  maxJobs: number;
  /** Unique proxies of one account's running checks together. */
  maxProxiesInFlight: number;
}

/** The Retry-After hint of a check refused by a per-account limit (a job's end is not known in advance). */
export const ACCOUNT_LIMIT_RETRY_AFTER_S = 5;

export type ServiceDeps = Omit<JobDeps, 'publish'> & {
  hub: ProgressPort;
  limits: AccountLimits;
  /** A cluster: false while no live agent serves the region (region_unavailable, nothing reserved). Absent: every region is served. */
  regionAvailable?: (region: string) => boolean;
  /** The stop grace's timer (default systemClock; tests pass a fake one). */
  clock?: Clock;
};

export function generateJobId(): string {
  return 'job_' + randomBytes(12).toString('base64url');
}

export class CheckService implements ChecksPort {
  readonly #deps: ServiceDeps;
  readonly #running = new Map<string, { actor: JobActor; done: Promise<unknown> }>();
  /** Per account with running checks: how many, and their unique proxies together. */
  readonly #perAccount = new Map<string, { jobs: number; proxies: number }>();
  readonly #machine = new StateMachine<ServiceState>('check service', SERVICE_TRANSITIONS, RUNNING);
  #stopping: Promise<void> | null = null;

  constructor(deps: ServiceDeps) {
    this.#deps = deps;
  }

  get state(): ServiceState {
    return this.#machine.state;
  }

  get runningJobs(): number {
    return this.#running.size;
  }

  /** An account's running checks and their proxies (for tests and metrics). */
  accountLoad(accountId: string): { jobs: number; proxies: number } {
    const l = this.#perAccount.get(accountId);
    return { jobs: l?.jobs ?? 0, proxies: l?.proxies ?? 0 };
  }

  isRunning(jobId: string): boolean {
    return this.#running.has(jobId);
  }

  /** The live numbers of run `runId` of this node, or null when it does not run here. */
  runProgress(runId: string): LocalRun | null {
    const actor = this.#byRun(runId)?.actor;
    return actor === undefined ? null : { checked: actor.checked, total: actor.proxies, working: actor.working };
  }

  /**
   * Cancels run `runId` of this node for its client (DELETE /checks/{jobId}).
   * Resolves with the job's final state once it has settled (`completed`
   * when it was already writing its result: a cancel no longer stops it
   * then), or null when the run is not running here.
   */
  async cancelRun(runId: string): Promise<'completed' | 'failed' | null> {
    const entry = this.#byRun(runId);
    if (entry === undefined) return null;
    entry.actor.cancel(clientCancelled());
    await entry.done;
    return entry.actor.state === JOB_STATES.COMPLETED ? 'completed' : 'failed';
  }

  #byRun(runId: string): { actor: JobActor; done: Promise<unknown> } | undefined {
    for (const entry of this.#running.values()) if (entry.actor.runId === runId) return entry;
    return undefined;
  }

  assertAccepting(): void {
    if (this.#machine.state !== RUNNING) throw shuttingDown();
  }

  async run(account: JobOwner, request: CheckRequest, signal?: AbortSignal, requestLog?: Logger): Promise<CheckResponse> {
    const { actor, result } = this.#start(account, request, requestLog);
    // The client went away: cancel, so what was not probed is not charged.
    const onAbort = () => actor.cancel(clientDisconnected());
    if (signal?.aborted === true) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return await result;
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Starts a check that outlives its connection: resolves with its jobId once
   * the reservation succeeded, rejects with what refused it (the same errors
   * as `run`). The job then runs to its end whatever happens to the caller.
   */
  async submit(account: JobOwner, request: CheckRequest, requestLog?: Logger): Promise<{ jobId: string }> {
    const { jobId, actor, result } = this.#start(account, request, requestLog, true);
    result.catch(() => {}); // its end is the scan's (logged by #settle when unexpected)
    // a job that fails before its reservation rejects `reserved` first: answer with run()'s mapped error
    await Promise.race([actor.reserved.catch(() => result), result]);
    return { jobId };
  }

  /** Registers and starts one job; `result` settles with its end (errors mapped as `run` documents). */
  #start(account: JobOwner, request: CheckRequest, requestLog?: Logger, async = false): { jobId: string; actor: JobActor; result: Promise<CheckResponse> } {
    this.assertAccepting();
    const jobId = request.jobId ?? generateJobId();
    if (this.#running.has(jobId)) throw new JobAlreadyRunningError(jobId);
    if (this.#deps.regionAvailable?.(request.region) === false) throw new RegionUnavailableError(request.region);
    const { hub, limits: _limits, regionAvailable: _available, clock: _clock, ...rest } = this.#deps;
    // the job logs with the request's logger: its lines carry the request id
    const log = requestLog ?? rest.log;
    const actor = new JobActor(jobId, account.id, request, {
      ...rest,
      // an async check tells the account's webhooks when it ends (check.completed, in its settlement's transaction)
      ledger: async ? tellingWebhooks(rest.ledger) : rest.ledger,
      log,
      publish: (state, final) => hub.publish(account.id, state, final),
    });
    // From here to the try nothing throws: what #admit counts, finally uncounts.
    const proxies = actor.proxies; // those it probes: the ones refused before any connection are not in flight
    const load = this.#admit(account.id, proxies);
    const done = actor.run();
    this.#running.set(jobId, { actor, done: done.catch(() => {}) });
    return { jobId, actor, result: this.#settle({ jobId, account, actor, done, load, proxies, log }) };
  }

  async #settle(j: {
    jobId: string;
    account: JobOwner;
    actor: JobActor;
    done: Promise<CheckResponse>;
    load: { jobs: number; proxies: number };
    proxies: number;
    log: Logger;
  }): Promise<CheckResponse> {
    const { jobId, account, actor, done, load, proxies, log } = j;
    try {
      return await done;
    } catch (err) {
      // an answer for the caller (the jobId running on another API node included: the reservation's database check)
      if (isCallerError(err)) throw err;
      log.error('check job failed', { jobId, account: account.id, err });
      throw new ServiceError(JOB_ERROR_CODES.JOB_FAILED, 'check job failed', { cause: err });
    } finally {
      this.#deps.counters?.jobEnded(actor.state === JOB_STATES.COMPLETED ? 'completed' : 'failed');
      this.#running.delete(jobId);
      load.jobs--;
      load.proxies -= proxies;
      if (load.jobs === 0) this.#perAccount.delete(account.id);
    }
  }

  /** Counts a new check of `accountId`, or throws rate_limited (nothing counted). */
  #admit(accountId: string, proxies: number): { jobs: number; proxies: number } {
    const { maxJobs, maxProxiesInFlight } = this.#deps.limits;
    const load = this.#perAccount.get(accountId) ?? { jobs: 0, proxies: 0 };
    if (load.jobs >= maxJobs) throw new RateLimitedError('concurrent_jobs', maxJobs, ACCOUNT_LIMIT_RETRY_AFTER_S);
    if (load.jobs > 0 && load.proxies + proxies > maxProxiesInFlight) {
      throw new RateLimitedError('proxies_in_flight', maxProxiesInFlight, ACCOUNT_LIMIT_RETRY_AFTER_S);
    }
    load.jobs++;
    load.proxies += proxies;
    this.#perAccount.set(accountId, load);
    return load;
  }

  stop(graceMs: number): Promise<void> {
    if (this.#stopping !== null) return this.#stopping;
    this.#machine.move(RUNNING, DRAINING);
    this.#stopping = (async () => {
      try {
        const all = () => Promise.all([...this.#running.values()].map((j) => j.done));
        await waitWithGrace(
          all,
          graceMs,
          () => {
            this.#deps.log.warn('shutdown grace over (SHUTDOWN_GRACE_MS): cancelling running jobs', { jobs: this.#running.size });
            for (const { actor } of this.#running.values()) actor.cancel();
          },
          this.#deps.clock,
        );
      } finally {
        this.#machine.move(DRAINING, STOPPED);
      }
    })();
    return this.#stopping;
  }
}

/** The ledger of an async check: its settlement also writes check.completed (LedgerPort WebhookNotice). */
function tellingWebhooks(ledger: LedgerPort): LedgerPort {
  return {
    ...ledger,
    reserve: async (i) => {
      const r = await ledger.reserve(i);
      if (r.ok) await ledger.markAsync?.(i.runId);
      return r;
    },
    complete: (i) => ledger.complete({ ...i, webhook: { resultUrl: (i.response as { result_url?: string } | undefined)?.result_url ?? null } }),
    fail: (i) => ledger.fail({ ...i, webhook: { resultUrl: null } }),
  };
}
