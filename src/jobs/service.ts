/**
 * CheckService: the HTTP layer's entry into check jobs (ChecksPort). It keeps
 * the registry of running jobIds (409 on a duplicate: the fast path; across
 * API nodes the reservation refuses a jobId that runs anywhere, and its
 * JobAlreadyRunningError passes through), spawns one JobActor per
 * request, and stops gracefully.
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
import { clientDisconnected, isCallerError, JobAlreadyRunningError, RateLimitedError, RegionUnavailableError, shuttingDown } from './job-errors';
import { ServiceError } from '../errors';
import { JOB_ERROR_CODES } from '../error-codes';
import { waitWithGrace, type Clock } from '../clock';
import type { Logger } from '../log';
import { StateMachine, transitionTable } from '../state-machine';
import type { ChecksPort, ProgressPort } from './ports';
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

  assertAccepting(): void {
    if (this.#machine.state !== RUNNING) throw shuttingDown();
  }

  async run(account: JobOwner, request: CheckRequest, signal?: AbortSignal, requestLog?: Logger): Promise<CheckResponse> {
    this.assertAccepting();
    const jobId = request.jobId ?? generateJobId();
    if (this.#running.has(jobId)) throw new JobAlreadyRunningError(jobId);
    if (this.#deps.regionAvailable?.(request.region) === false) throw new RegionUnavailableError(request.region);
    const { hub, limits: _limits, regionAvailable: _available, clock: _clock, ...rest } = this.#deps;
    // the job logs with the request's logger: its lines carry the request id
    const log = requestLog ?? rest.log;
    const actor = new JobActor(jobId, account.id, request, {
      ...rest,
      log,
      publish: (state, final) => hub.publish(account.id, state, final),
    });
    // From here to the try nothing throws: what #admit counts, finally uncounts.
    const proxies = actor.proxies; // those it probes: the ones refused before any connection are not in flight
    const load = this.#admit(account.id, proxies);
    const done = actor.run();
    this.#running.set(jobId, { actor, done: done.catch(() => {}) });
    // The client went away: cancel, so what was not probed is not charged.
    const onAbort = () => actor.cancel(clientDisconnected());
    if (signal?.aborted === true) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return await done;
    } catch (err) {
      // an answer for the caller (the jobId running on another API node included: the reservation's database check)
      if (isCallerError(err)) throw err;
      log.error('check job failed', { jobId, account: account.id, err });
      throw new ServiceError(JOB_ERROR_CODES.JOB_FAILED, 'check job failed', { cause: err });
    } finally {
      this.#deps.counters?.jobEnded(actor.state === JOB_STATES.COMPLETED ? 'completed' : 'failed');
      signal?.removeEventListener('abort', onAbort);
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
