/**
 * Probes the checker itself failed to run (`checker_overloaded`: this process
 * ran out of file descriptors, buffers or ports, or the probe timed out while
 * its lane was late: src/probe/codec/checker-lag.ts) are our fault, not the
 * proxy's: they are tried again, a little later, up to `max` times each, and
 * a probe that never got its try is reported but never charged (`notTried`).
 *
 * The actor owns one. `retry(index)` parks a probe; after `delayMs` x its
 * attempt the parked probes become ready and `onReady(n)` asks the execution
 * for n more slots; the actor's grants then `take` them before new ones.
 */
import { systemClock, type Clock } from '../clock';

export class ProbeRetries {
  readonly #attempts: Uint8Array;
  readonly #max: number;
  readonly #delayMs: number;
  readonly #onReady: (n: number) => void;
  #ready: number[] = [];
  #parked: number[] = [];
  readonly #clock: Clock;
  /** Cancels the armed release; null when none is armed. */
  #timer: (() => void) | null = null;
  #stopped = false;
  /** Probes that ended `checker_overloaded` after every retry: reported, never charged. */
  notTried = 0;

  constructor(total: number, onReady: (n: number) => void, opts: { max?: number; delayMs?: number; clock?: Clock } = {}) {
    this.#attempts = new Uint8Array(total);
    this.#max = opts.max ?? 3;
    this.#delayMs = opts.delayMs ?? 250;
    this.#onReady = onReady;
    this.#clock = opts.clock ?? systemClock;
  }

  /** Probes waiting for their next try (parked or ready). */
  get waiting(): number {
    return this.#ready.length + this.#parked.length;
  }

  /** A probe the checker failed to run: true when it will be tried again (do not fold its result); false when its tries are used up. */
  retry(index: number): boolean {
    const a = this.#attempts[index] ?? this.#max;
    if (a >= this.#max || this.#stopped) {
      this.notTried++;
      return false;
    }
    this.#attempts[index] = a + 1;
    this.#parked.push(index);
    this.#timer ??= this.#clock.after(this.#delayMs * (a + 1), () => this.#release());
    return true;
  }

  /** Up to n ready probes, for the next grant. */
  take(n: number): number[] {
    if (this.#ready.length === 0) return [];
    return this.#ready.splice(0, n);
  }

  /** The job ended: nothing more is released. Safe twice. */
  stop(): void {
    this.#stopped = true;
    this.#timer?.();
    this.#timer = null;
  }

  #release(): void {
    this.#timer = null;
    if (this.#stopped) return;
    const n = this.#parked.length;
    this.#ready.push(...this.#parked);
    this.#parked = [];
    if (n > 0) this.#onReady(n);
  }
}
