/**
 * A thread's own lag: how late its event loop runs what is due (issue 30).
 * A repeating timer every `intervalMs` notes its slip (when it ran minus
 * when it was due); a slip is the time the thread spent on other work (or
 * off its core) while sockets with answers waited to be read.
 *
 * Two readings, both cheap:
 * - `lagSince(t)`: the worst slip since time t (and the slip of the tick
 *   that is due and has not run yet, so a deadline that fires in the same
 *   late turn as the tick sees it): the lane asks it for a probe that timed
 *   out, over the probe's life (lane.ts: such a probe is tried again, not
 *   turned into a verdict);
 * - `takePeak()`: the worst slip since the last take, sent to the main
 *   thread with the lane's results (the adaptive limit's input:
 *   src/jobs/lag-limiter.ts).
 *
 * The slips are kept as maxima per BUCKET_MS over the last WINDOW_MS (a
 * ring of numbers): `lagSince` of an older t answers with the whole window.
 * The timer runs only while the lane has work (`busy(true)`), so an idle
 * thread has no wake-ups. Time and timer are a Clock (the lane's:
 * monotonicClock; unit tests drive a fake one).
 */
import { monotonicClock, type Clock } from '../../clock';

/** Width of a ring slot, ms. */
export const BUCKET_MS = 50;
/** How far back `lagSince` sees, ms (a probe's timeout is at most 20 s: src/http/check-request.ts TIMEOUT_MAX_MS). */
export const WINDOW_MS = 32_768;

export class LagMeter {
  readonly #interval: number;
  readonly #t: Clock;
  readonly #ring: Float64Array;
  /** The bucket number each ring slot holds (a slot of an older bucket is stale). */
  readonly #slotOf: Float64Array;
  #peak = 0;
  /** When the armed tick is due; NaN while stopped. */
  #due = Number.NaN;
  #cancel: (() => void) | null = null;

  constructor(clock: Clock = monotonicClock, intervalMs = 10) {
    this.#t = clock;
    this.#interval = intervalMs;
    const slots = Math.ceil(WINDOW_MS / BUCKET_MS);
    this.#ring = new Float64Array(slots);
    this.#slotOf = new Float64Array(slots).fill(-1);
  }

  /** The thread has work (start ticking) or none (stop: no wake-ups while idle). */
  busy(on: boolean): void {
    if (on === (this.#cancel !== null)) return;
    if (on) this.#arm(this.#t.now());
    else {
      this.#cancel?.();
      this.#cancel = null;
      this.#due = Number.NaN;
    }
  }

  /** Notes a slip observed at `at` (the tick does; tests may too). */
  record(at: number, slipMs: number): void {
    if (!(slipMs > 0)) return;
    if (slipMs > this.#peak) this.#peak = slipMs;
    const b = Math.floor(at / BUCKET_MS);
    const i = b % this.#ring.length;
    if (this.#slotOf[i] !== b) {
      this.#slotOf[i] = b;
      this.#ring[i] = slipMs;
    } else if (slipMs > this.#ring[i]!) this.#ring[i] = slipMs;
  }

  /** The worst slip from `since` to now, the tick that is overdue now included. */
  lagSince(since: number): number {
    const now = this.#t.now();
    let worst = this.#due === this.#due && now > this.#due ? now - this.#due : 0;
    const last = Math.floor(now / BUCKET_MS);
    const first = Math.max(Math.floor(since / BUCKET_MS), last - this.#ring.length + 1);
    for (let b = first; b <= last; b++) {
      const i = b % this.#ring.length;
      if (this.#slotOf[i] === b && this.#ring[i]! > worst) worst = this.#ring[i]!;
    }
    return worst;
  }

  /** The worst slip since the last call (0 when none), the overdue tick's included. */
  takePeak(): number {
    const now = this.#t.now();
    const overdue = this.#due === this.#due && now > this.#due ? now - this.#due : 0;
    const p = Math.max(this.#peak, overdue);
    this.#peak = 0;
    return p;
  }

  #arm(from: number): void {
    this.#due = from + this.#interval;
    this.#cancel = this.#t.after(this.#interval, this.#tick);
  }

  readonly #tick = (): void => {
    const now = this.#t.now();
    this.record(now, now - this.#due);
    this.#arm(now);
  };
}
