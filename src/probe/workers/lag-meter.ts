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
 *
 * Shared: a meter given a `share` (a Float64Array of SHARE_SLOTS on a
 * SharedArrayBuffer) also writes its state there, on the time line of
 * `absoluteNow` (performance.timeOrigin + performance.now(): the same in
 * every thread), and `sharedLateness(share)` computes its lateness from
 * another thread. The main thread's meter (src/jobs/lag-limiter.ts) shares
 * its own this way with the lanes: the built-in judge answers on the main
 * thread, so a proxy's answer is late when that thread is, and a deadline
 * that fires while it is late is the checker's too.
 */
import { monotonicClock, type Clock } from '../../clock';

/** Slots of a shared meter: when its tick is due, its last slip, when that tick ran (absolute ms; NaN due: stopped). */
export const SHARE_SLOTS = 4;
const DUE = 0;
const LAST_SLIP = 1;
const LAST_AT = 2;
const INTERVAL = 3;

/** A time line every thread shares (ms). */
export function absoluteNow(): number {
  return performance.timeOrigin + performance.now();
}

/** A shared meter's lateness as lateness() would say it, read from any thread at `now` (absolute ms). */
export function sharedLateness(share: Float64Array, now: number = absoluteNow()): number {
  const over = now - share[DUE]!;
  if (over > 0) return over;
  return share[DUE] === share[DUE] && now - share[LAST_AT]! < share[INTERVAL]! ? share[LAST_SLIP]! : 0;
}

/** A new share (a SharedArrayBuffer's view), stopped. */
export function newLagShare(): Float64Array {
  const s = new Float64Array(new SharedArrayBuffer(SHARE_SLOTS * Float64Array.BYTES_PER_ELEMENT));
  s[DUE] = Number.NaN;
  s[LAST_AT] = Number.NEGATIVE_INFINITY;
  return s;
}

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

  readonly #share: Float64Array | null;
  /** absolute time minus the clock's (the share's time line) */
  readonly #offset: number;

  constructor(clock: Clock = monotonicClock, intervalMs = 10, share: Float64Array | null = null) {
    this.#clock = clock;
    this.#interval = intervalMs;
    this.#share = share;
    this.#offset = share === null ? 0 : absoluteNow() - clock.now();
    if (share !== null) share[INTERVAL] = intervalMs;
  }

  /** The thread has work (start ticking) or none (stop: no wake-ups while idle). */
  busy(on: boolean): void {
    if (on === (this.#cancel !== null)) return;
    if (on) this.#arm(this.#clock.now());
    else {
      this.#cancel?.();
      this.#cancel = null;
      this.#due = Number.NaN;
      if (this.#share !== null) this.#share[DUE] = Number.NaN;
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
    if (this.#share !== null) this.#share[DUE] = this.#due + this.#offset;
    this.#cancel = this.#clock.after(this.#interval, this.#tick);
  }

  readonly #tick = (): void => {
    const now = this.#clock.now();
    const slip = now - this.#due;
    if (slip > this.#peak) this.#peak = slip;
    this.#lastSlip = slip > 0 ? slip : 0;
    this.#lastAt = now;
    if (this.#share !== null) {
      this.#share[LAST_SLIP] = this.#lastSlip;
      this.#share[LAST_AT] = now + this.#offset;
    }
    this.#arm(now);
  };
}
