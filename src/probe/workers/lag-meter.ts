/**
 * A thread's own lag: how late its event loop runs what is due (issue 30).
 * A repeating timer every `intervalMs` (10 ms) notes its slip (when it ran
 * minus when it was due); a slip is time the thread spent on other work (or
 * off its core) while sockets with answers may have waited to be read.
 *
 * Two readings, both O(1):
 * - `lateness()`: how overdue the armed tick is right now, i.e. how long the
 *   thread has been busy without getting back to its timers; within one
 *   interval after a late tick, that tick's slip (the timers due after a
 *   busy stretch run in the same turn as the tick, before the sockets are
 *   read: a deadline there must see the stretch the tick just closed). The lane hands
 *   it to the exchanges of its thread (src/probe/net/exchange.ts
 *   setLatenessSource), which add it up at each of their reads and at their
 *   deadline (src/probe/codec/checker-lag.ts);
 * - `takePeak()`: the worst slip since the last take (the overdue tick's
 *   included), sent to the main thread with the lane's results (the adaptive
 *   limit's input: src/jobs/lag-limiter.ts).
 *
 * The timer runs only while the lane has work (`busy(true)`), so an idle
 * thread has no wake-ups. Time and timer are a Clock (the lane's:
 * monotonicClock; unit tests drive a fake one).
 */
import { monotonicClock, type Clock } from '../../clock';

export class LagMeter {
  readonly #interval: number;
  readonly #clock: Clock;
  #peak = 0;
  /** The last tick's slip and when it ran (lateness: a stretch just closed). */
  #lastSlip = 0;
  #lastAt = Number.NEGATIVE_INFINITY;
  /** When the armed tick is due; NaN while stopped. */
  #due = Number.NaN;
  #cancel: (() => void) | null = null;

  constructor(clock: Clock = monotonicClock, intervalMs = 10) {
    this.#clock = clock;
    this.#interval = intervalMs;
  }

  /** The thread has work (start ticking) or none (stop: no wake-ups while idle). */
  busy(on: boolean): void {
    if (on === (this.#cancel !== null)) return;
    if (on) this.#arm(this.#clock.now());
    else {
      this.#cancel?.();
      this.#cancel = null;
      this.#due = Number.NaN;
    }
  }

  /** How overdue the armed tick is now, or the last tick's slip within an interval after it ran, ms (0 while on time or stopped). */
  lateness(): number {
    const now = this.#clock.now();
    const over = now - this.#due; // NaN while stopped
    if (over > 0) return over;
    return now - this.#lastAt < this.#interval && this.#due === this.#due ? this.#lastSlip : 0;
  }

  /** The worst slip since the last call (0 when none), the overdue tick's included. */
  takePeak(): number {
    const over = this.#clock.now() - this.#due;
    const p = over > this.#peak ? over : this.#peak;
    this.#peak = 0;
    return p;
  }

  #arm(from: number): void {
    this.#due = from + this.#interval;
    this.#cancel = this.#clock.after(this.#interval, this.#tick);
  }

  readonly #tick = (): void => {
    const now = this.#clock.now();
    const slip = now - this.#due;
    if (slip > this.#peak) this.#peak = slip;
    this.#lastSlip = slip > 0 ? slip : 0;
    this.#lastAt = now;
    this.#arm(now);
  };
}
