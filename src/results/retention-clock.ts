/**
 * The retention clock (src/results/retention.ts, "The clock, and a clock
 * that jumps"): the wall clock minus the forward jumps seen while the
 * process runs. Pure state over two injected clocks (no timers, no I/O):
 * each `read()` compares how far the wall clock moved since the last read
 * with how far the monotonic clock moved; running ahead by more than the
 * tolerance is a jump, added to the skew; a backward move pays the skew back
 * (never below 0). A backward move with no skew to pay is believed: results
 * are then kept longer, never deleted early.
 */
/** `read()`: the retention clock's time, and the jump found on this read (0 when none). */
export class RetentionClock {
  #lastWall: number;
  #lastMono: number;
  #skew = 0;
  readonly #wall: () => number;
  readonly #mono: () => number;
  readonly #toleranceMs: number;

  constructor(wall: () => number, mono: () => number, toleranceMs: number) {
    this.#wall = wall;
    this.#mono = mono;
    this.#toleranceMs = toleranceMs;
    this.#lastWall = wall();
    this.#lastMono = mono();
  }

  /** Forward jumps not paid back yet, in ms. */
  get skewMs(): number {
    return this.#skew;
  }

  read(): { now: number; jumpMs: number } {
    const wall = this.#wall();
    const mono = this.#mono();
    const ahead = wall - this.#lastWall - (mono - this.#lastMono);
    this.#lastWall = wall;
    this.#lastMono = mono;
    let jumpMs = 0;
    if (ahead > this.#toleranceMs) {
      jumpMs = ahead;
      this.#skew += ahead;
    } else if (ahead < 0 && this.#skew > 0) {
      this.#skew = Math.max(0, this.#skew + ahead);
    }
    return { now: wall - this.#skew, jumpMs };
  }
}
