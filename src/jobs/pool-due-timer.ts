/**
 * DueTimer: the one due-time loop of the pools (DECISIONS "Pools are
 * actors": one loop for the schedule and the list sources). A PoolActor arms
 * it at its heap's earliest due proxy (src/jobs/pool-actor.ts), PoolSources
 * at the earliest due list URL (src/jobs/pool-sources.ts); it fires `fire`
 * once at that time.
 *
 * - Armed for a time while an earlier one (still ahead) is set: the earlier
 *   stays (each firing re-arms for what is due next). Armed for an earlier
 *   one: it moves there.
 * - Never more than `maxDelayMs` ahead (a look at least that often: a late
 *   clock, a region back, a source due on another node's change), never less
 *   than `minDelayMs` (no spin on a due time that has passed).
 *
 * The clock is injected (src/clock.ts): a test drives it with a fake one.
 */
import type { Clock } from '../clock';

export interface DueTimerOptions {
  minDelayMs: number;
  maxDelayMs: number;
}

export class DueTimer {
  readonly #clock: Clock;
  readonly #fire: () => void;
  readonly #o: DueTimerOptions;
  #at = Infinity;
  #cancel: (() => void) | null = null;

  constructor(clock: Clock, fire: () => void, o: DueTimerOptions) {
    this.#clock = clock;
    this.#fire = fire;
    this.#o = o;
  }

  /** When it fires next (epoch ms), or null when it is not armed. */
  get at(): number | null {
    return this.#cancel === null ? null : this.#at;
  }

  /** Fires at `atMs` (Infinity: only after maxDelayMs), clamped as the header says; an earlier time already set stays. */
  arm(atMs: number, nowMs: number = this.#clock.now()): void {
    const at = Math.min(atMs, nowMs + this.#o.maxDelayMs);
    if (this.#cancel !== null && this.#at <= at && this.#at > nowMs) return;
    this.cancel();
    const delay = Math.max(this.#o.minDelayMs, at - nowMs);
    this.#at = nowMs + delay;
    this.#cancel = this.#clock.after(
      delay,
      () => {
        this.#cancel = null;
        this.#at = Infinity;
        this.#fire();
      },
      { unref: true },
    );
  }

  /** Not armed any more (safe when it is not). */
  cancel(): void {
    this.#cancel?.();
    this.#cancel = null;
    this.#at = Infinity;
  }
}
