/**
 * Per-region fair slot scheduler: how many probes each job may have in flight.
 *
 * Every region has a capacity (16 endpoints x SLOTS_PER_ENDPOINT slots, asked
 * of `capacityFor(region)` on every scheduling pass). Jobs register with a
 * demand (`pending` probes still to start) and a `dispatch(n)` callback. The
 * scheduler grants slots by calling `dispatch(n)`; the job then starts exactly
 * n probes (in one shard or several) and calls `handle.release(k)` as probes
 * finish. There are no timers and no promises: the scheduler only acts inside
 * `register`, `release`, `addDemand` and `cancel`, synchronously, so it is
 * deterministic and testable by driving those calls.
 *
 * ## Algorithm: least-served first (max-min fair), in chunks
 *
 * A scheduling pass of region R repeats:
 *
 *   free      = capacityFor(R) - used(R)
 *   candidate = the ACTIVE job of R with pending > 0 and the FEWEST probes in
 *               flight; ties go to a job never granted yet (in registration
 *               order), then to the one granted least recently
 *   want      = min(candidate.pending, maxGrant)
 *   threshold = min(effectiveMinGrant, want, the headroom left to it when
 *               the candidate holds less than the headroom; see "Headroom")
 *   stop when free < threshold (or free <= 0, or no candidate)
 *   grant     = min(want, free): pending -= grant, inFlight += grant,
 *               used += grant, then dispatch(grant)
 *
 * `effectiveMinGrant = min(minGrant, maxGrant, max(1, floor(capacity / 8)))`,
 * so small regions (tests with 1 slot per endpoint) never wait long to fill a
 * chunk. Waiting for `threshold` free slots is what lets callers form shards
 * of a useful size instead of one probe per message; it never stalls, because
 * `free < threshold <= capacity` means some probe is in flight and its release
 * will run another pass.
 *
 * Fairness: freed slots always go to the job holding the fewest, so a 10-probe
 * job registered while a 20 000-probe job holds the whole region receives the
 * first `threshold` (<= 10) slots that free up, before the big job gets any
 * back, and all its 10 probes start within the first few release events: it
 * finishes in about one probe round after the first releases, not behind the
 * big job's queue. Jobs with large demand converge to equal shares (within one
 * chunk, `maxGrant`). Regions are fully independent.
 *
 * ## Global capacity (optional)
 *
 * `globalCapacity` bounds probes in flight across all regions (they share the
 * process's file descriptors). A pass then grants at most
 * min(region free, global free); a release in one region first runs a pass of
 * every other region with waiting jobs, then its own, so no region starves
 * behind the global cap.
 * I1 holds for the global count too. `setGlobalCapacity(n)` changes it while
 * running (src/fd-guard.ts: the built-in judge's descriptors): lowering
 * revokes nothing, raising runs a pass of every region that waits; and
 * `setStartBudget(n)` lets at most n more probes start until its next call
 * (the guard's bound on a burst between two of its samples; unlimited when
 * never called). A pass grants at most min(region free, global free, budget).
 * Option `onBusy` is told on the grant that ends a time with nothing in
 * flight (the guard then samples at its busy cadence again).
 *
 * ## Headroom for newcomers (option `jobShare`, default 1: none)
 *
 * With jobShare < 1, `H = capacity - floor(capacity x jobShare)`.
 *
 * In a region, H slots above its capacity are lent to jobs that hold fewer
 * than H probes: such a job is granted while the region holds fewer than
 * capacity + H, any other only while it holds fewer than capacity. A huge job
 * alone so holds the whole capacity (a lone job's wall time pays nothing for
 * the headroom: bench/RESULTS.md "As users run it"), and a job that arrives
 * while it runs starts at once instead of waiting for the huge job's probes
 * to time out; the region is over its capacity by at most H, and only until
 * the huge job's next releases (they are not re-granted while it is over).
 *
 * The global capacity (open files) is a hard limit: there the last H of it
 * are kept instead, for jobs that hold fewer than H probes; a job already
 * holding H or more is granted only while more than H are free.
 * The free slots in I3 below are the ones usable by the least-served job.
 *
 * ## Job states (SCHEDULER_JOB_STATES, moved through src/state-machine.ts)
 *
 *   active ──cancel(), or its dispatch threw──> cancelled
 *
 * - ACTIVE: registered; takes grants while pending > 0. A job with pending 0
 *   and nothing in flight is idle and leaves the region's list (no cost), but
 *   `addDemand(n)` brings it back (e.g. custom-URL probes after the judge
 *   probes).
 * - CANCELLED: `cancel()` (idempotent) drops all pending demand; probes
 *   already granted stay counted in flight until the job releases them.
 *   Further `addDemand` throws; `release` still works. Call `cancel()` when a
 *   job ends for any reason: it is the unregister.
 *
 * ## Invariants (checked by test/unit/scheduler.test.ts with fast-check)
 *
 * I1  used(R) = sum of inFlight of R's jobs, and a grant never makes
 *     used(R) exceed capacityFor(R), or capacityFor(R) + H for a job holding
 *     fewer than H (headroom); the global count never exceeds the global
 *     capacity (lowering a capacity revokes nothing; it only stops grants
 *     until used drops below it).
 * I2  a grant never exceeds the job's pending demand and is >= 1;
 *     granted - released = inFlight for every job; release(n) with
 *     n > inFlight throws (code `scheduler_over_release`).
 * I3  after every public call returns, every region either has no pending
 *     demand or has fewer free slots than the least-served job's threshold.
 * I4  dispatch is called synchronously with state already updated; it may
 *     re-enter the scheduler (release, addDemand, cancel, register): a pass in
 *     progress picks the changes up, it is never run twice concurrently.
 *     dispatch must not throw; if it does, the grant is taken back, the job is
 *     cancelled and `onDispatchError(err, runId)` is told.
 *
 * A capacity that rises between calls (a cluster region's agents came up)
 * is taken up by `poke(region)`, which runs the region's pass.
 *
 * Cost: one pass is O(grants x jobs in the region); a region has few jobs.
 */

import { ServiceError } from '../errors';
import { JOB_ERROR_CODES } from '../error-codes';
import { StateMachine, transitionTable } from '../state-machine';

export const SCHEDULER_JOB_STATES = Object.freeze({
  ACTIVE: 'active',
  CANCELLED: 'cancelled',
} as const);
export type SchedulerJobState = (typeof SCHEDULER_JOB_STATES)[keyof typeof SCHEDULER_JOB_STATES];
const { ACTIVE, CANCELLED } = SCHEDULER_JOB_STATES;
export const SCHEDULER_JOB_TRANSITIONS = transitionTable<SchedulerJobState>({ active: [CANCELLED], cancelled: [] });

export interface SchedulerOptions {
  /** Largest single grant (shard size bound). Default 64. */
  maxGrant?: number;
  /** Preferred smallest grant (see header: clamped to capacity / 8). Default 4: a grant costs one entry in a lane message, so waiting to fill bigger chunks would only leave slots idle; callers that release once per turn get bigger grants under load anyway. */
  minGrant?: number;
  /** Told when a dispatch callback throws (the job is then cancelled). Default: console.error. */
  onDispatchError?: (err: unknown, runId: string) => void;
  /**
   * Probes in flight across ALL regions at most (the process's file
   * descriptors are one pool). Default: no limit. When it binds, a release in
   * one region also runs a pass of the other regions that wait.
   */
  globalCapacity?: number;
  /** See the header's "Headroom": 0 < jobShare <= 1, default 1. */
  jobShare?: number;
  /** Told on a grant that ends a time with no probe in flight (the descriptor guard's wake). */
  onBusy?: () => void;
}

export interface JobHandle {
  readonly runId: string;
  readonly region: string;
  /** Probes granted and not yet released. */
  readonly inFlight: number;
  /** Probes still waiting for a slot. */
  readonly pending: number;
  readonly state: SchedulerJobState;
  /** n probes finished: their slots return to the region and are re-granted fairly. */
  release(n: number): void;
  /** More probes to run (e.g. the custom-URL stage). Throws once cancelled. */
  addDemand(n: number): void;
  /** Drop all pending demand (idempotent); in-flight probes still need release(). */
  cancel(): void;
}

export interface RegionSnapshot {
  capacity: number;
  inFlight: number;
  jobs: { runId: string; inFlight: number; pending: number; state: SchedulerJobState }[];
}


interface RegionState {
  readonly name: string;
  used: number;
  /** Jobs with pending demand or probes in flight. */
  jobs: Entry[];
  pumping: boolean;
  again: boolean;
}

function checkCount(n: number, what: string): void {
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new ServiceError(JOB_ERROR_CODES.SCHEDULER_BAD_COUNT, `${what} must be a non-negative integer, got ${n}`);
  }
}

class Entry implements JobHandle {
  inFlight = 0;
  pending: number;
  readonly machine = new StateMachine<SchedulerJobState>('scheduler job', SCHEDULER_JOB_TRANSITIONS, ACTIVE);
  /**
   * Sequence number of the last grant. Before the first grant it is the
   * registration number minus 2^40, so on a tie a job that was never served
   * goes before every job that was (and new jobs keep registration order).
   */
  lastGrant: number;
  listed = false;

  constructor(
    private readonly owner: RegionScheduler,
    readonly rs: RegionState,
    readonly runId: string,
    pending: number,
    readonly dispatch: (count: number) => void,
    seq: number,
  ) {
    this.pending = pending;
    this.lastGrant = seq - 2 ** 40;
  }

  get region(): string {
    return this.rs.name;
  }

  get state(): SchedulerJobState {
    return this.machine.state;
  }

  release(n: number): void {
    checkCount(n, 'release count');
    if (n > this.inFlight) {
      throw new ServiceError(
        JOB_ERROR_CODES.SCHEDULER_OVER_RELEASE,
        `job ${this.runId} released ${n} slots but has ${this.inFlight} in flight`,
      );
    }
    if (n === 0) return;
    this.inFlight -= n;
    this.rs.used -= n;
    this.owner.released(n);
    this.owner.settle(this);
  }

  addDemand(n: number): void {
    checkCount(n, 'demand');
    if (this.state !== ACTIVE) {
      throw new ServiceError(JOB_ERROR_CODES.SCHEDULER_JOB_CANCELLED, `job ${this.runId} is cancelled`);
    }
    if (n === 0) return;
    this.pending += n;
    this.owner.settle(this);
  }

  cancel(): void {
    if (this.state === CANCELLED) return;
    this.machine.move(ACTIVE, CANCELLED);
    this.pending = 0;
    this.owner.settle(this);
  }
}

export class RegionScheduler {
  private readonly regions = new Map<string, RegionState>();
  private readonly maxGrant: number;
  private readonly minGrant: number;
  private readonly onDispatchError: (err: unknown, runId: string) => void;
  private seq = 0;
  private globalCapacity: number;
  private readonly jobShare: number;
  /** Probes in flight in every region together. */
  private totalUsed = 0;
  private readonly onBusy: (() => void) | null;
  /** Probes that may still start until the next setStartBudget (the descriptor guard); unlimited by default. */
  private startBudget = Number.POSITIVE_INFINITY;

  constructor(
    private readonly capacityFor: (region: string) => number,
    options: SchedulerOptions = {},
  ) {
    const maxGrant = options.maxGrant ?? 64;
    const minGrant = options.minGrant ?? 4;
    if (!Number.isSafeInteger(maxGrant) || maxGrant < 1) {
      throw new ServiceError(JOB_ERROR_CODES.SCHEDULER_BAD_OPTION, `maxGrant must be a positive integer, got ${maxGrant}`);
    }
    if (!Number.isSafeInteger(minGrant) || minGrant < 1) {
      throw new ServiceError(JOB_ERROR_CODES.SCHEDULER_BAD_OPTION, `minGrant must be a positive integer, got ${minGrant}`);
    }
    this.maxGrant = maxGrant;
    this.minGrant = Math.min(minGrant, maxGrant);
    const g = options.globalCapacity ?? Number.POSITIVE_INFINITY;
    if (!(g >= 1)) throw new ServiceError(JOB_ERROR_CODES.SCHEDULER_BAD_OPTION, `globalCapacity must be >= 1, got ${g}`);
    this.globalCapacity = Number.isFinite(g) ? Math.floor(g) : g;
    const share = options.jobShare ?? 1;
    if (!(share > 0 && share <= 1)) throw new ServiceError(JOB_ERROR_CODES.SCHEDULER_BAD_OPTION, `jobShare must be in (0, 1], got ${share}`);
    this.jobShare = share;
    this.onBusy = options.onBusy ?? null;
    this.onDispatchError =
      options.onDispatchError ??
      ((err, runId) => console.error(`scheduler: dispatch of job ${runId} threw; job cancelled`, err));
  }

  /**
   * Add a job with `pending` probes to run in `region`. Grants may be made
   * (dispatch called) before this returns. Throws `scheduler_no_capacity` when
   * the region has no slots at all (unknown region).
   */
  register(runId: string, region: string, pending: number, dispatch: (count: number) => void): JobHandle {
    checkCount(pending, 'pending');
    if (this.capacity(region) < 1) {
      throw new ServiceError(JOB_ERROR_CODES.SCHEDULER_NO_CAPACITY, `region ${region} has no probe slots`);
    }
    let rs = this.regions.get(region);
    if (rs === undefined) {
      rs = { name: region, used: 0, jobs: [], pumping: false, again: false };
      this.regions.set(region, rs);
    }
    const entry = new Entry(this, rs, runId, pending, dispatch, ++this.seq);
    this.settle(entry);
    return entry;
  }

  /**
   * The region's capacity may have risen (a cluster's agents came up):
   * run a pass so waiting jobs take the new slots. A pass otherwise runs
   * only on register / release / addDemand / cancel.
   */
  poke(region: string): void {
    const rs = this.regions.get(region);
    if (rs !== undefined && rs.jobs.length > 0) this.pump(rs);
  }

  /**
   * A new global capacity (the descriptor guard, src/fd-guard.ts): lowering it
   * revokes nothing (grants stop until used drops below it); raising it runs a
   * pass of every region with waiting jobs. Only for a scheduler built with a
   * finite globalCapacity.
   */
  setGlobalCapacity(n: number): void {
    if (!(n >= 1) || !Number.isFinite(n) || this.globalCapacity === Number.POSITIVE_INFINITY) {
      throw new ServiceError(JOB_ERROR_CODES.SCHEDULER_BAD_OPTION, `globalCapacity must be a finite number >= 1 on a scheduler that has one, got ${n}`);
    }
    const rose = Math.floor(n) > this.globalCapacity;
    this.globalCapacity = Math.floor(n);
    if (!rose) return;
    for (const rs of this.regions.values()) {
      if (this.totalUsed >= this.globalCapacity) break;
      if (rs.jobs.length > 0) this.pump(rs);
    }
  }

  /**
   * At most `n` more probes start (in all regions) until the next call: the
   * descriptor guard's bound on a burst (src/fd-guard.ts: every probe started
   * may bring one judge connection before the guard sees it). A budget that
   * rose runs a pass of every region with waiting jobs.
   */
  setStartBudget(n: number): void {
    if (!(n >= 0)) throw new ServiceError(JOB_ERROR_CODES.SCHEDULER_BAD_OPTION, `start budget must be >= 0, got ${n}`);
    const rose = n > this.startBudget;
    this.startBudget = Number.isFinite(n) ? Math.floor(n) : n;
    if (!rose) return;
    for (const rs of this.regions.values()) {
      if (this.startBudget <= 0 || this.totalUsed >= this.globalCapacity) break;
      if (rs.jobs.length > 0) this.pump(rs);
    }
  }

  /** Probes in flight in a region right now. */
  inFlight(region: string): number {
    return this.regions.get(region)?.used ?? 0;
  }

  /** Probes in flight in a region plus probes its jobs wait to start (a cluster node publishes it: cluster/demand.ts). */
  demand(region: string): number {
    const rs = this.regions.get(region);
    if (rs === undefined) return 0;
    let n = rs.used;
    for (const e of rs.jobs) n += e.pending;
    return n;
  }

  /** Observability (health, tests): the region's capacity, load and jobs. */
  snapshot(region: string): RegionSnapshot {
    const rs = this.regions.get(region);
    return {
      capacity: this.capacity(region),
      inFlight: rs?.used ?? 0,
      jobs: (rs?.jobs ?? []).map((e) => ({ runId: e.runId, inFlight: e.inFlight, pending: e.pending, state: e.state })),
    };
  }

  /** Probes in flight in all regions together. */
  get totalInFlight(): number {
    return this.totalUsed;
  }

  /** @internal: slots came back (before settle). */
  released(n: number): void {
    this.totalUsed -= n;
  }

  /** @internal: list or unlist the entry after a change, then run a pass of its region. */
  settle(e: Entry): void {
    const busy = e.pending > 0 || e.inFlight > 0;
    if (busy && !e.listed) {
      e.rs.jobs.push(e);
      e.listed = true;
    } else if (!busy && e.listed) {
      const i = e.rs.jobs.indexOf(e);
      if (i >= 0) e.rs.jobs.splice(i, 1);
      e.listed = false;
    }
    // Under a global cap, slots freed here may be what another region waits
    // for: the other regions with waiting jobs get a pass first, so the
    // releasing region cannot take everything back at once.
    if (this.globalCapacity !== Number.POSITIVE_INFINITY) {
      for (const rs of this.regions.values()) {
        if (this.totalUsed >= this.globalCapacity) break;
        if (rs !== e.rs && rs.jobs.length > 0) this.pump(rs);
      }
    }
    this.pump(e.rs);
  }

  private capacity(region: string): number {
    const c = this.capacityFor(region);
    return Number.isFinite(c) && c > 0 ? Math.floor(c) : 0;
  }

  private pump(rs: RegionState): void {
    if (rs.pumping) {
      rs.again = true;
      return;
    }
    rs.pumping = true;
    try {
      do {
        rs.again = false;
        this.pass(rs);
      } while (rs.again);
    } finally {
      rs.pumping = false;
    }
  }

  /** Slots kept for newcomers out of `capacity` (header: "Headroom"). */
  private headroom(capacity: number): number {
    return this.jobShare === 1 || !Number.isFinite(capacity) ? 0 : capacity - Math.floor(capacity * this.jobShare);
  }

  private pass(rs: RegionState): void {
    for (;;) {
      const cap = this.capacity(rs.name);
      const rH = this.headroom(cap);
      if (Math.min(cap + rH - rs.used, this.globalCapacity - this.totalUsed, this.startBudget) <= 0) return;
      let best: Entry | undefined;
      for (const e of rs.jobs) {
        if (e.pending === 0 || e.state !== ACTIVE) continue;
        if (best === undefined || e.inFlight < best.inFlight || (e.inFlight === best.inFlight && e.lastGrant < best.lastGrant)) {
          best = e;
        }
      }
      if (best === undefined) return;
      const gH = this.headroom(this.globalCapacity);
      const newcomer = best.inFlight < rH;
      const free = Math.min(cap - rs.used + (newcomer ? rH : 0), this.globalCapacity - this.totalUsed - (best.inFlight >= gH ? gH : 0), this.startBudget);
      if (free <= 0) return;
      const want = Math.min(best.pending, this.maxGrant);
      const effMin = Math.min(this.minGrant, Math.max(1, Math.floor(Math.min(cap, this.globalCapacity) / 8)));
      // a newcomer (under the headroom) never waits for more than the headroom holds: with a large
      // minGrant (a cluster's 32) and a small region, the kept slots would otherwise never suffice
      const room = Math.min(newcomer ? rH - best.inFlight : Infinity, best.inFlight < gH ? gH - best.inFlight : Infinity);
      if (free < Math.min(effMin, want, Math.max(1, room))) return;
      const grant = Math.min(want, free);
      best.pending -= grant;
      best.inFlight += grant;
      rs.used += grant;
      const wasIdle = this.totalUsed === 0;
      this.totalUsed += grant;
      this.startBudget -= grant;
      best.lastGrant = ++this.seq;
      if (wasIdle) this.onBusy?.();
      try {
        best.dispatch(grant);
      } catch (err) {
        // dispatch may have released some of the grant before throwing
        const back = Math.min(grant, best.inFlight);
        best.inFlight -= back;
        rs.used -= back;
        this.totalUsed -= back;
        this.startBudget += back;
        if (best.state === ACTIVE) best.machine.move(ACTIVE, CANCELLED); // dispatch may have cancelled it already
        best.pending = 0;
        if (best.inFlight === 0 && best.listed) {
          rs.jobs.splice(rs.jobs.indexOf(best), 1);
          best.listed = false;
        }
        this.onDispatchError(err, best.runId);
      }
    }
  }
}
