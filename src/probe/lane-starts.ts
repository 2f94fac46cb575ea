/**
 * When a lane starts its probes (workers/probe-worker.ts). Pure: the next
 * turn of the event loop is injected.
 *
 * A lane starts at most `perTurn` probes per turn of its event loop, first
 * starts of a new shard and replacements for finished probes alike. Any more
 * wait here, in shard order, for the next turn. Under CPU saturation (a big
 * job's first seconds: thousands of refused connects free their slots at
 * once) the start rate so follows the rate at which the lane gets through its
 * socket events, instead of piling connects onto a loop that cannot read
 * their answers yet. A probe's clock starts when it starts, so the wait
 * happens before the clock, and response times stay what the proxy took:
 * bench/RESULTS.md "Session 3: a start budget in the lanes" (scenario C,
 * working proxies' overhead p99 285-346 ms -> 16-19 ms, wall unchanged).
 *
 * Run states, as this queue sees them:
 *   idle    not queued; its next replacement may start at once (replace)
 *   queued  waiting for budget (`run.queued`); started oldest first
 *   drained left the queue: nothing more startable now (onDrained tells the lane)
 * A run is in the queue at most once.
 */

/** What the queue needs from a shard run. */
export interface StartableRun {
  /** can start another probe now */
  readonly startable: boolean;
  /** in this queue (kept by the queue) */
  queued: boolean;
  /** starts up to `max` probes; returns how many */
  pump(max: number): number;
}

export class LaneStarts<R extends StartableRun> {
  #budget: number;
  readonly #queue: R[] = [];
  #turnArmed = false;

  /**
   * @param perTurn   probes started per turn of the event loop at most
   * @param nextTurn  runs a callback on the next turn (setImmediate)
   * @param onDrained a run left the queue (the lane checks whether it ended)
   */
  constructor(
    readonly perTurn: number,
    private readonly nextTurn: (fn: () => void) => void,
    private readonly onDrained: (run: R) => void,
  ) {
    if (!Number.isInteger(perTurn) || perTurn < 1) throw new RangeError(`perTurn must be a positive integer, got ${perTurn}`);
    this.#budget = perTurn;
  }

  /** Runs waiting for budget. */
  get waiting(): number {
    return this.#queue.length;
  }

  /** A new run: it waits behind the runs already queued. */
  add(run: R): void {
    if (!run.queued) {
      run.queued = true;
      this.#queue.push(run);
    }
    this.startSome();
  }

  /** One of `run`'s probes ended: its replacement starts now if this turn's budget allows, else it queues. */
  replace(run: R): void {
    if (run.queued || !run.startable) return;
    if (this.#budget > 0) this.#budget -= run.pump(1);
    else this.add(run);
  }

  /** Starts queued runs' probes, oldest run first, while the budget lasts; arms the next turn if any wait. */
  startSome(): void {
    const q = this.#queue;
    while (this.#budget > 0 && q.length > 0) {
      const run = q[0]!;
      this.#budget -= run.pump(this.#budget);
      if (run.startable) break; // budget spent
      run.queued = false;
      q.shift();
      this.onDrained(run);
    }
    if (q.length > 0 && !this.#turnArmed) {
      this.#turnArmed = true;
      this.nextTurn(this.#onTurn);
    }
  }

  readonly #onTurn = (): void => {
    this.#turnArmed = false;
    this.#budget = this.perTurn;
    this.startSome();
  };
}
