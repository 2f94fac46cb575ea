/**
 * Time under the test's control (src/clock.ts Clock): nothing fires until the
 * test moves the clock, and then every timer due fires in order, each one's
 * promise reactions run before the next. So a unit test says "150 ms pass"
 * instead of sleeping 150 ms and hoping the machine kept up.
 *
 *   const clock = new FakeClock();
 *   const workers = new NatsWorkers({ ..., clock });
 *   await clock.advance(100);        // timers due within 100 ms have fired
 *
 * settle() and until() wait on the event loop, never on a timer: for work
 * that is asynchronous but not timed (a promise chain, a microtask, an
 * I/O-free callback).
 */
import type { Clock } from '../../src/clock';

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
}

export class FakeClock implements Clock {
  #now: number;
  #seq = 0;
  #timers: Timer[] = [];

  constructor(start = 0) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  after(ms: number, fn: () => void): () => void {
    const t: Timer = { at: this.#now + Math.max(0, ms), seq: this.#seq++, fn };
    this.#timers.push(t);
    return () => {
      this.#timers = this.#timers.filter((x) => x !== t);
    };
  }

  /** Timers waiting to fire. */
  get pending(): number {
    return this.#timers.length;
  }

  /**
   * Moves time forward by `ms`: fires every timer due by then, earliest first
   * (the order they were set among equals), with the clock at each one's
   * time, and lets the work each one starts run (settle) before the next.
   * A timer set while advancing fires too if it falls due within the span.
   */
  async advance(ms: number): Promise<void> {
    const end = this.#now + ms;
    await settle();
    for (;;) {
      const next = this.#timers.reduce<Timer | null>((a, t) => (a === null || t.at < a.at || (t.at === a.at && t.seq < a.seq) ? t : a), null);
      if (next === null || next.at > end) break;
      this.#timers = this.#timers.filter((t) => t !== next);
      this.#now = next.at;
      next.fn();
      await settle();
    }
    this.#now = end;
  }
}

/** Lets `turns` turns of the event loop pass (setImmediate: after the I/O and timers of each turn), no timer involved. */
export async function settle(turns = 3): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** Waits until `cond()` holds, one event-loop turn at a time, for at most `turns` turns; then asserts it (fails loudly, never hangs). */
export async function until(cond: () => boolean, turns = 1000): Promise<void> {
  for (let i = 0; i < turns && !cond(); i++) await new Promise<void>((resolve) => setImmediate(resolve));
  if (!cond()) throw new Error(`condition not met within ${turns} turns of the event loop`);
}
