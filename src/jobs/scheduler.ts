/**
 * Per-region fair slot scheduler: how many probes each job may have in flight.
 *
 * Every region has a capacity (16 endpoints x SLOTS_PER_ENDPOINT slots, asked
 * of `capacityFor(region)` on every scheduling pass). Jobs register with a
 * demand (`pending` probes still to start), a `dispatch(n)` callback and a
 * priority class (`check`, the default, or `background`: see "Priority
 * classes"; everything up to that section is about the check class). The
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
 * `setLoadLimit(n)` (src/jobs/lag-limiter.ts: the adaptive limit, learned
 * from the checker's own lag, adaptive-limit.ts) is a second bound of the
 * same kind: the cap in force is min(global capacity, load limit), and
 * everything said here of the global capacity (no revocation, passes when
 * it rises, its headroom and reserves) holds for that minimum, with one
 * exception for checks: against the load limit L, a check's grant counts
 * background probes only up to background's share of L (L - reserve(L),
 * below), never the descriptors' cap. When L falls below what background
 * work holds (nothing is revoked), a check so still starts at once, up to
 * the checks' reserve of L, instead of waiting for background probes to end
 * (a black hole holds its slot for a whole timeout: a check would wait up
 * to the probe timeout for them; the 2 s outliers of bench/RESULTS.md turned
 * out to be the judge's TLS listener, src/judge/tls-thread.ts). The total may then
 * exceed L by background's excess over its share, and only until those
 * background probes end (background is not granted again while it is over).
 * A scheduler without a global capacity gets one while a load limit is set.
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
 * ## Priority classes: checks first, background work in what they leave
 *
 * A job registers as `check` (a /check job: the default) or `background` (a
 * pool's round, DECISIONS "Pools": best effort, nobody waits on its answer).
 * The two classes are two lists of a region; the algorithm above runs on the
 * check list alone, exactly as if background work did not exist, except
 * that background probes in flight count in used(R) and in the global count.
 * A pass serves the check list first; only when NO active check job of the
 * region has pending demand does it go on to the background list, least
 * served first in the same chunks, with these slots:
 *
 *   bgFree = min(capacity - reserve(capacity) - used(R),
 *                globalCapacity - reserve(globalCapacity) - global used,
 *                startBudget - the budget's reserve,
 *                backgroundCapacityFor(R) - background in flight in R)
 *   reserve(x) = min(x - 1, max(H of x, x - floor(x x backgroundShare), m))
 *                (0 for x <= 1; m = the largest first chunk a check may wait
 *                for: effectiveMinGrant of the region for its capacity, and
 *                min(minGrant, max(1, floor(G / 8))) for G, the same for
 *                every region)
 *   threshold  = min(effectiveMinGrant, want, max(1, the most background may hold: the
 *                minimum of capacity - reserve(capacity), globalCapacity -
 *                reserve(globalCapacity) and backgroundCapacityFor(R)))
 *
 * (the threshold never asks for more than background could ever hold, so
 * with nothing in flight it is granted: no stall, as for checks).
 *
 * So a background grant never leaves fewer than reserve(C) of the region
 * free (nor fewer than reserve(G) of the global capacity), whoever holds the
 * rest: background fills at most C - reserve(C) (`backgroundShare`, default
 * 0.9: 90 %), checks keep the rest, which is at least the newcomers'
 * headroom H and one chunk. Background jobs never take the headroom lent
 * above the capacity. When a check arrives while background work holds all
 * it may, it finds reserve(C) >= its first chunk free, plus the headroom H
 * above C as a newcomer, and starts inside register(); as background probes
 * end, their slots go to the check (it has pending demand: background is not
 * granted again until no check waits), so a big check ramps up to the whole
 * capacity within one background probe time. Running background probes are
 * never cancelled: the reserve already lets a check start at once, and a
 * cancelled probe's work would be lost and re-run (its proxy checked, and
 * charged, twice) to win at most one background timeout for the part of a
 * big check that does not fit the reserve. A region of one slot has no
 * reserve (reserve(1) = 0): there a check waits for the background probe.
 *
 * Under a global capacity the slots a release frees go first to the check
 * lists of every region, then to the background lists, so background work in
 * one region never takes the global slots a check of another region waits
 * for. The start budget keeps budget - floor(budget x backgroundShare) (at
 * least minGrant, at most budget - 1) of every budget set for checks, so
 * background starts never make a check wait for the descriptor guard's next
 * sample. `backgroundCapacityFor(R)` (default: no bound) is a cluster node's
 * background window, what the other nodes' checks and background leave it
 * (src/cluster/demand.ts `backgroundWindow`). `demand(R, cls)` is per class.
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
 *     until used drops below it), except a check's grant under a lowered
 *     load limit L: then checks in flight plus min(background in flight,
 *     L - reserve(L)) never exceed L, and the global count never exceeds
 *     the descriptors' cap.
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
 * I5  (classes) I1-I4 hold for the check list as if it were alone. A
 *     background grant is made only while no active check job of its region
 *     has pending demand, and never makes used(R) exceed
 *     capacity - reserve(capacity), the global count exceed
 *     globalCapacity - reserve(globalCapacity), R's background in flight
 *     exceed backgroundCapacityFor(R), or the start budget fall below its
 *     reserve. After every public call a region with waiting background
 *     demand has a waiting check or fewer bgFree than its least-served
 *     background job's threshold (I3 for the background list). Hence, while
 *     the capacities hold, a check registered while only background work
 *     holds slots is granted at least min(pending, maxGrant, reserve(C),
 *     reserve(G) under a global capacity) before register() returns.
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

/** A job's priority class (header: "Priority classes"). */
export const PRIORITY_CLASSES = Object.freeze({
  /** A /check job: served first. */
  CHECK: 'check',
  /** Best-effort work (a pool's round): only what checks leave, below the checks' reserve. */
  BACKGROUND: 'background',
} as const);
export type PriorityClass = (typeof PRIORITY_CLASSES)[keyof typeof PRIORITY_CLASSES];

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
  /** See the header's "Priority classes": the most background work may fill of a capacity, 0 < backgroundShare <= 1, default 0.9. */
  backgroundShare?: number;
  /** A cluster node's background window in a region (src/cluster/demand.ts); default: no bound beyond the reserve. */
  backgroundCapacityFor?: (region: string) => number;
  /** Told on a grant that ends a time with no probe in flight (the descriptor guard's wake). */
  onBusy?: () => void;
}

export interface JobHandle {
  readonly runId: string;
  readonly region: string;
  readonly priority: PriorityClass;
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
  /** Check jobs first, then background jobs. */
  jobs: { runId: string; priority: PriorityClass; inFlight: number; pending: number; state: SchedulerJobState }[];
}

interface RegionState {
  readonly name: string;
  used: number;
  /** Probes of background jobs in flight (part of `used`). */
  bgUsed: number;
  /** Check jobs with pending demand or probes in flight. */
  jobs: Entry[];
  /** Background jobs with pending demand or probes in flight. */
  background: Entry[];
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
    readonly background: boolean,
  ) {
    this.pending = pending;
    this.lastGrant = seq - 2 ** 40;
  }

  get region(): string {
    return this.rs.name;
  }

  get priority(): PriorityClass {
    return this.background ? PRIORITY_CLASSES.BACKGROUND : PRIORITY_CLASSES.CHECK;
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
    if (this.background) this.rs.bgUsed -= n;
    this.owner.released(n, this.background);
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

/** The least-served active job of a list with pending demand (ties: never served, then served least recently). */
function leastServed(list: readonly Entry[]): Entry | undefined {
  let best: Entry | undefined;
  for (const e of list) {
    if (e.pending === 0 || e.state !== ACTIVE) continue;
    if (best === undefined || e.inFlight < best.inFlight || (e.inFlight === best.inFlight && e.lastGrant < best.lastGrant)) {
      best = e;
    }
  }
  return best;
}

export class RegionScheduler {
  private readonly regions = new Map<string, RegionState>();
  private readonly maxGrant: number;
  private readonly minGrant: number;
  private readonly onDispatchError: (err: unknown, runId: string) => void;
  private seq = 0;
  /** The cap in force across all regions: min(the descriptors' cap, the load limit). */
  private globalCapacity: number;
  /** The cap from the open-file limit (option globalCapacity, setGlobalCapacity: the descriptor guard). */
  private fdCapacity: number;
  /** The adaptive load limit (setLoadLimit: src/jobs/lag-limiter.ts); unlimited until set. */
  private loadCap = Number.POSITIVE_INFINITY;
  private readonly jobShare: number;
  private readonly backgroundShare: number;
  private readonly backgroundCapacityFor: ((region: string) => number) | null;
  /** Probes in flight in every region together. */
  private totalUsed = 0;
  /** Background probes in flight in every region together (part of totalUsed). */
  private totalBgUsed = 0;
  /** Background jobs listed in any region (0: every pass is the check path alone). */
  private backgroundListed = 0;
  private readonly onBusy: (() => void) | null;
  /** Probes that may still start until the next setStartBudget (the descriptor guard); unlimited by default. */
  private startBudget = Number.POSITIVE_INFINITY;
  /** The part of the start budget background grants leave to checks (header: "Priority classes"). */
  private budgetReserve = 0;

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
    this.fdCapacity = Number.isFinite(g) ? Math.floor(g) : g;
    this.globalCapacity = this.fdCapacity;
    const share = options.jobShare ?? 1;
    if (!(share > 0 && share <= 1)) throw new ServiceError(JOB_ERROR_CODES.SCHEDULER_BAD_OPTION, `jobShare must be in (0, 1], got ${share}`);
    this.jobShare = share;
    const bgShare = options.backgroundShare ?? 0.9;
    if (!(bgShare > 0 && bgShare <= 1)) throw new ServiceError(JOB_ERROR_CODES.SCHEDULER_BAD_OPTION, `backgroundShare must be in (0, 1], got ${bgShare}`);
    this.backgroundShare = bgShare;
    this.backgroundCapacityFor = options.backgroundCapacityFor ?? null;
    this.onBusy = options.onBusy ?? null;
    this.onDispatchError =
      options.onDispatchError ??
      ((err, runId) => console.error(`scheduler: dispatch of job ${runId} threw; job cancelled`, err));
  }

  /**
   * Add a job with `pending` probes to run in `region`, of priority class
   * `priority` (default `check`). Grants may be made (dispatch called) before
   * this returns. Throws `scheduler_no_capacity` when the region has no slots
   * at all (unknown region).
   */
  register(runId: string, region: string, pending: number, dispatch: (count: number) => void, priority: PriorityClass = PRIORITY_CLASSES.CHECK): JobHandle {
    checkCount(pending, 'pending');
    if (priority !== PRIORITY_CLASSES.CHECK && priority !== PRIORITY_CLASSES.BACKGROUND) {
      throw new ServiceError(JOB_ERROR_CODES.SCHEDULER_BAD_OPTION, `priority must be check or background, got ${String(priority)}`);
    }
    if (this.capacity(region) < 1) {
      throw new ServiceError(JOB_ERROR_CODES.SCHEDULER_NO_CAPACITY, `region ${region} has no probe slots`);
    }
    let rs = this.regions.get(region);
    if (rs === undefined) {
      rs = { name: region, used: 0, bgUsed: 0, jobs: [], background: [], pumping: false, again: false };
      this.regions.set(region, rs);
    }
    const entry = new Entry(this, rs, runId, pending, dispatch, ++this.seq, priority === PRIORITY_CLASSES.BACKGROUND);
    this.settle(entry);
    return entry;
  }

  /**
   * The region's capacity may have risen (a cluster's agents came up, or
   * another node's demand fell): run a pass so waiting jobs take the new
   * slots. A pass otherwise runs only on register / release / addDemand / cancel.
   */
  poke(region: string): void {
    const rs = this.regions.get(region);
    if (rs !== undefined && (rs.jobs.length > 0 || rs.background.length > 0)) this.pump(rs, true);
  }

  /**
   * A new global capacity (the descriptor guard, src/fd-guard.ts): lowering it
   * revokes nothing (grants stop until used drops below it); raising it runs a
   * pass of every region with waiting jobs. Only for a scheduler built with a
   * finite globalCapacity.
   */
  setGlobalCapacity(n: number): void {
    if (!(n >= 1) || !Number.isFinite(n) || this.fdCapacity === Number.POSITIVE_INFINITY) {
      throw new ServiceError(JOB_ERROR_CODES.SCHEDULER_BAD_OPTION, `globalCapacity must be a finite number >= 1 on a scheduler that has one, got ${n}`);
    }
    this.fdCapacity = Math.floor(n);
    this.applyGlobal();
  }

  /**
   * The adaptive load limit (src/jobs/lag-limiter.ts, from the checker's own
   * lag): probes in flight across all regions stay under min(it, the
   * global capacity). It composes like the global capacity (header:
   * "Global capacity"): lowering revokes nothing, raising runs a pass of
   * every region that waits; headroom, reserves and fairness apply to the
   * cap in force. Infinity lifts it.
   */
  setLoadLimit(n: number): void {
    if (!(n >= 1)) throw new ServiceError(JOB_ERROR_CODES.SCHEDULER_BAD_OPTION, `load limit must be >= 1, got ${n}`);
    this.loadCap = Number.isFinite(n) ? Math.floor(n) : n;
    this.applyGlobal();
  }

  /** The load limit in force (Infinity when none was set). */
  get loadLimit(): number {
    return this.loadCap;
  }

  /** The cap in force from its two parts; a pass of every waiting region when it rose. */
  private applyGlobal(): void {
    const next = Math.min(this.fdCapacity, this.loadCap);
    const rose = next > this.globalCapacity;
    this.globalCapacity = next;
    if (rose) this.pumpRegions(null);
  }

  /**
   * At most `n` more probes start (in all regions) until the next call: the
   * descriptor guard's bound on a burst (src/fd-guard.ts: every probe started
   * may bring one judge connection before the guard sees it). Background
   * grants leave part of it to checks (header: "Priority classes"). A budget
   * that rose (for either class) runs a pass of every region with waiting jobs.
   */
  setStartBudget(n: number): void {
    if (!(n >= 0)) throw new ServiceError(JOB_ERROR_CODES.SCHEDULER_BAD_OPTION, `start budget must be >= 0, got ${n}`);
    const before = this.startBudget;
    const backgroundBefore = before - this.budgetReserve;
    this.startBudget = Number.isFinite(n) ? Math.floor(n) : n;
    const b = this.startBudget;
    this.budgetReserve = !Number.isFinite(b) || b <= 1 ? 0 : Math.min(b - 1, Math.max(b - Math.floor(b * this.backgroundShare), this.minGrant));
    // a pass when checks or background may start more than before
    if (b > before || b - this.budgetReserve > backgroundBefore) this.pumpRegions(null);
  }

  /** Probes in flight in a region right now (both classes). */
  inFlight(region: string): number {
    return this.regions.get(region)?.used ?? 0;
  }

  /**
   * Probes in flight in a region plus probes its jobs wait to start: of one
   * priority class, or of both when `priority` is left out (a cluster node
   * publishes them: cluster/demand.ts).
   */
  demand(region: string, priority?: PriorityClass): number {
    const rs = this.regions.get(region);
    if (rs === undefined) return 0;
    let n = 0;
    if (priority !== PRIORITY_CLASSES.BACKGROUND) {
      n += rs.used - rs.bgUsed;
      for (const e of rs.jobs) n += e.pending;
    }
    if (priority !== PRIORITY_CLASSES.CHECK) {
      n += rs.bgUsed;
      for (const e of rs.background) n += e.pending;
    }
    return n;
  }

  /**
   * Slots of a capacity `capacity` that background grants leave to checks
   * (header: "Priority classes", reserve(x)); with this scheduler's options
   * and no global capacity. A cluster node's board keeps it of a region's
   * live slots (src/cluster/demand.ts).
   */
  checkReserve(capacity: number): number {
    return this.reserve(capacity, this.effectiveMinGrant(capacity));
  }

  /** Observability (health, tests): the region's capacity, load and jobs. */
  snapshot(region: string): RegionSnapshot {
    const rs = this.regions.get(region);
    const show = (e: Entry) => ({ runId: e.runId, priority: e.priority, inFlight: e.inFlight, pending: e.pending, state: e.state });
    return {
      capacity: this.capacity(region),
      inFlight: rs?.used ?? 0,
      jobs: rs === undefined ? [] : [...rs.jobs.map(show), ...rs.background.map(show)],
    };
  }

  /** Probes in flight in all regions together. */
  get totalInFlight(): number {
    return this.totalUsed;
  }

  /** @internal: slots came back (before settle); `background`: of a background job. */
  released(n: number, background: boolean): void {
    this.totalUsed -= n;
    if (background) this.totalBgUsed -= n;
  }

  /** @internal: list or unlist the entry after a change, then run a pass of its region. */
  settle(e: Entry): void {
    const busy = e.pending > 0 || e.inFlight > 0;
    if (busy !== e.listed) this.list(e, busy);
    // Under a global cap, slots freed here may be what another region waits
    // for: the other regions with waiting jobs get a pass first, so the
    // releasing region cannot take everything back at once.
    if (this.globalCapacity !== Number.POSITIVE_INFINITY) this.pumpRegions(e.rs);
    else this.pump(e.rs, true);
  }

  private list(e: Entry, on: boolean): void {
    const list = e.background ? e.rs.background : e.rs.jobs;
    if (on) list.push(e);
    else {
      const i = list.indexOf(e);
      if (i >= 0) list.splice(i, 1);
    }
    e.listed = on;
    if (e.background) this.backgroundListed += on ? 1 : -1;
  }

  /**
   * A pass of every region with jobs, `last` (if any) after the others: with
   * background work listed anywhere, the check lists of all regions first
   * (their passes stop before the background lists), then the background
   * lists, so no region's background takes global slots a check waits for.
   */
  private pumpRegions(last: RegionState | null): void {
    const bg = this.backgroundListed > 0;
    for (const rs of this.regions.values()) {
      if (this.checkGlobalFree() <= 0) break;
      if (rs !== last && rs.jobs.length > 0) this.pump(rs, !bg);
    }
    if (last !== null) this.pump(last, true);
    if (!bg) return;
    for (const rs of this.regions.values()) {
      if (this.totalUsed >= this.globalCapacity) break;
      if (rs !== last && rs.background.length > 0) this.pump(rs, true);
    }
  }

  private capacity(region: string): number {
    const c = this.capacityFor(region);
    return Number.isFinite(c) && c > 0 ? Math.floor(c) : 0;
  }

  /**
   * Passes of `rs` until no re-entrant call asks for another; `withBackground`:
   * the background list too. A pass without it only runs in pumpRegions'
   * first loop, whose second loop then gives every background list its pass
   * (so a re-entrant request for one is not lost).
   */
  private pump(rs: RegionState, withBackground: boolean): void {
    if (rs.pumping) {
      rs.again = true;
      return;
    }
    rs.pumping = true;
    try {
      do {
        rs.again = false;
        this.pass(rs, withBackground);
      } while (rs.again);
    } finally {
      rs.pumping = false;
    }
  }

  /** Slots kept for newcomers out of `capacity` (header: "Headroom"). */
  private headroom(capacity: number): number {
    return this.jobShare === 1 || !Number.isFinite(capacity) ? 0 : capacity - Math.floor(capacity * this.jobShare);
  }

  /** The smallest chunk worth waiting for in a region of `capacity` (header: effectiveMinGrant). */
  private effectiveMinGrant(capacity: number): number {
    return Math.min(this.minGrant, Math.max(1, Math.floor(Math.min(capacity, this.globalCapacity) / 8)));
  }

  /** Slots of `capacity` background grants leave free (header: reserve(x)); `m`: the chunk a check starts with. */
  private reserve(capacity: number, m: number): number {
    if (!(capacity > 1) || !Number.isFinite(capacity)) return 0;
    return Math.min(capacity - 1, Math.max(this.headroom(capacity), capacity - Math.floor(capacity * this.backgroundShare), m));
  }

  /**
   * The global slots a check may take (header: "Global capacity"): the
   * descriptors' cap counts every probe in flight; the load limit counts
   * background probes only up to background's share of it (what a
   * background grant may fill under that limit), so when the limit falls
   * below what background work already holds, a check still starts at once
   * instead of waiting for background probes (black holes: a whole timeout)
   * to end.
   */
  private checkGlobalFree(): number {
    const fdFree = this.fdCapacity - this.totalUsed;
    if (this.loadCap === Number.POSITIVE_INFINITY) return fdFree;
    const bgShare = this.loadCap - this.reserve(this.loadCap, this.effectiveMinGrant(this.loadCap));
    const seen = this.totalUsed - this.totalBgUsed + Math.min(this.totalBgUsed, bgShare);
    return Math.min(fdFree, this.loadCap - seen);
  }

  private pass(rs: RegionState, withBackground: boolean): void {
    for (;;) {
      const cap = this.capacity(rs.name);
      const rH = this.headroom(cap);
      const gFree = this.checkGlobalFree();
      if (Math.min(cap + rH - rs.used, gFree, this.startBudget) <= 0) return;
      const best = leastServed(rs.jobs);
      if (best === undefined) {
        // no check waits in this region: background work may take what the checks' reserve leaves
        if (!withBackground || rs.background.length === 0 || !this.passBackground(rs, cap)) return;
        continue;
      }
      const gH = this.headroom(this.globalCapacity);
      const newcomer = best.inFlight < rH;
      const free = Math.min(cap - rs.used + (newcomer ? rH : 0), gFree - (best.inFlight >= gH ? gH : 0), this.startBudget);
      if (free <= 0) return;
      const want = Math.min(best.pending, this.maxGrant);
      const effMin = this.effectiveMinGrant(cap);
      // a newcomer (under the headroom) never waits for more than the headroom holds: with a large
      // minGrant (a cluster's 32) and a small region, the kept slots would otherwise never suffice
      const room = Math.min(newcomer ? rH - best.inFlight : Infinity, best.inFlight < gH ? gH - best.inFlight : Infinity);
      if (free < Math.min(effMin, want, Math.max(1, room))) return;
      this.grant(rs, best, Math.min(want, free));
    }
  }

  /** One background grant if the slots allow it (header: bgFree); false when none was made. */
  private passBackground(rs: RegionState, cap: number): boolean {
    const best = leastServed(rs.background);
    if (best === undefined) return false;
    const effMin = this.effectiveMinGrant(cap);
    // `most`: what background could hold with nothing else in flight; the threshold never exceeds it
    let most = cap - this.reserve(cap, effMin);
    let free = Math.min(most - rs.used, this.startBudget - this.budgetReserve);
    if (this.globalCapacity !== Number.POSITIVE_INFINITY) {
      // the global reserve is the same for every region: the largest first chunk any region's check may wait for
      const g = this.globalCapacity - this.reserve(this.globalCapacity, this.effectiveMinGrant(this.globalCapacity));
      most = Math.min(most, g);
      free = Math.min(free, g - this.totalUsed);
    }
    if (this.backgroundCapacityFor !== null) {
      const w = this.backgroundCapacityFor(rs.name);
      const window = Number.isFinite(w) ? Math.floor(w) : w;
      most = Math.min(most, window);
      free = Math.min(free, window - rs.bgUsed);
    }
    const want = Math.min(best.pending, this.maxGrant);
    if (!(free > 0) || free < Math.min(effMin, want, Math.max(1, most))) return false;
    this.grant(rs, best, Math.min(want, free));
    return true;
  }

  private grant(rs: RegionState, best: Entry, grant: number): void {
    best.pending -= grant;
    best.inFlight += grant;
    rs.used += grant;
    if (best.background) {
      rs.bgUsed += grant;
      this.totalBgUsed += grant;
    }
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
      if (best.background) {
        rs.bgUsed -= back;
        this.totalBgUsed -= back;
      }
      this.totalUsed -= back;
      this.startBudget += back;
      if (best.state === ACTIVE) best.machine.move(ACTIVE, CANCELLED); // dispatch may have cancelled it already
      best.pending = 0;
      if (best.inFlight === 0 && best.listed) this.list(best, false);
      this.onDispatchError(err, best.runId);
    }
  }
}
