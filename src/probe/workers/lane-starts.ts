/**
 * When a lane starts its probes (src/probe/workers/lane.ts). Pure: the next
 * turn of the event loop is injected.
 *
 * A lane starts at most `perTurn` probes per turn of its event loop, first
 * starts of a new shard and replacements for finished probes alike. Any more
 * wait here for the next turn. Under CPU saturation (a big job's first
 * seconds: thousands of refused connects free their slots at once) the start
 * rate so follows the rate at which the lane gets through its socket events,
 * instead of piling connects onto a loop that cannot read their answers yet.
 * A probe's clock starts when it starts, so the wait happens before the
 * clock, and response times stay what the proxy took (the figures:
 * bench/RESULTS.md "Session 3: a start budget in the lanes").
 *
 * Waiting runs are grouped (a group = a job: the lane passes the shard's
 * settings id) and the groups take turns, QUANTUM probes at a time; inside a
 * group, oldest run first. A small job's shard so starts within a turn even
 * when a big job has thousands of granted probes waiting in the same lane:
 * the region scheduler's fairness (least-served job first) holds here too.
 *
 * A run is in this queue (`isQueued`: waiting for budget, in its group's
 * FIFO) or not (its next replacement may start at once: `replace`); it
 * leaves the queue once nothing more of it is startable now, and onDrained
 * tells the lane. That is membership, kept here (a Set), not a state of the
 * run: the run's own states (running, cancelled, done) are the lane's
 * (lane.ts). A run is in the queue at most once; a group is in the rotation
 * while it has queued runs.
 */

/** What the queue needs from a shard run. */
export interface StartableRun {
  /** can start another probe now */
  readonly startable: boolean;
  /** runs of one group (job) share a turn of the rotation */
  readonly group: number;
  /** starts up to `max` probes; returns how many */
  pump(max: number): number;
}

/** Probes a group starts before the next group's turn. */
export const QUANTUM = 8;

export class LaneStarts<R extends StartableRun> {
  #budget: number;
  /** group -> its queued runs, oldest first; Map order is the rotation */
  readonly #groups = new Map<number, R[]>();
  /** The runs in #groups. */
  readonly #queued = new Set<R>();
  readonly #nextTurn: (fn: () => void) => void;
  readonly #onDrained: (run: R) => void;
  #turnArmed = false;

  /**
   * @param perTurn   probes started per turn of the event loop at most
   * @param nextTurn  runs a callback on the next turn (setImmediate)
   * @param onDrained a run left the queue (the lane checks whether it ended)
   */
  constructor(
    readonly perTurn: number,
    nextTurn: (fn: () => void) => void,
    onDrained: (run: R) => void,
  ) {
    if (!Number.isInteger(perTurn) || perTurn < 1) throw new RangeError(`perTurn must be a positive integer, got ${perTurn}`);
    this.#budget = perTurn;
    this.#nextTurn = nextTurn;
    this.#onDrained = onDrained;
  }

  /** Runs waiting for budget. */
  get waiting(): number {
    return this.#queued.size;
  }

  /** `run` waits in this queue for budget. */
  isQueued(run: R): boolean {
    return this.#queued.has(run);
  }

  /** A new run: it waits behind its group's queued runs, its group behind the groups already waiting. */
  add(run: R): void {
    if (!this.#queued.has(run)) {
      this.#queued.add(run);
      const q = this.#groups.get(run.group);
      if (q === undefined) this.#groups.set(run.group, [run]);
      else q.push(run);
    }
    this.startSome();
  }

  /** One of `run`'s probes ended: its replacement starts now if this turn's budget allows, else it queues. */
  replace(run: R): void {
    if (!run.startable || this.#queued.has(run)) return;
    if (this.#budget > 0) this.#budget -= run.pump(1);
    else this.add(run);
  }

  /** Starts queued probes while the budget lasts, the groups taking turns; arms the next turn if any wait. */
  startSome(): void {
    const groups = this.#groups;
    while (this.#budget > 0 && groups.size > 0) {
      // the group at the head of the rotation: QUANTUM probes from its oldest runs, then to the back
      const [group, q] = groups.entries().next().value as [number, R[]];
      let quantum = Math.min(QUANTUM, this.#budget);
      while (quantum > 0 && q.length > 0) {
        const run = q[0]!;
        const n = run.pump(quantum);
        quantum -= n;
        this.#budget -= n;
        if (run.startable) break; // quantum spent
        this.#queued.delete(run);
        q.shift();
        this.#onDrained(run);
      }
      groups.delete(group);
      if (q.length > 0) groups.set(group, q); // to the back of the rotation
    }
    if (groups.size > 0 && !this.#turnArmed) {
      this.#turnArmed = true;
      this.#nextTurn(this.#onTurn);
    }
  }

  readonly #onTurn = (): void => {
    this.#turnArmed = false;
    this.#budget = this.perTurn;
    this.startSome();
  };
}
