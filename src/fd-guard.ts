/**
 * The descriptor guard of a process that serves its own judge: the probes'
 * global cap (the scheduler's) follows the descriptors actually open, so the
 * judge's accept() always finds one free (src/limits.ts says why it must).
 *
 * Every `intervalMs` (100 ms) it reads how many descriptors the process has
 * open (`stat("/proc/self/fd").size`, Linux >= 6.2: O(1), a few µs; older
 * kernels report 0 and the guard stays off, leaving the static margin
 * JUDGE_FD_SHARE) and the probes in flight, and takes
 *
 *   others   = open - probes in flight   (the judge's connections, the
 *              database, listeners, files; probes between grant and socket
 *              make it a little low, which the spare covers)
 *   capacity = guardedCapacity(limit, cap, max of `others` over the last
 *              WINDOW samples)            (src/limits.ts)
 *
 * and hands it to `setCapacity` when it changed. Lowering revokes nothing:
 * grants stop until enough probes end. The window (1 s) keeps a burst of
 * judge connections from letting the cap spring back at once.
 *
 * States: running (timer armed, unref'd) --stop()--> stopped. A read that
 * fails (no /proc) or reports 0 stops the guard for good: off.
 */
import { statSync } from 'node:fs';
import { guardedCapacity } from './limits';

const WINDOW = 10;

/** Descriptors open in this process, or null when the kernel does not say (size 0 before Linux 6.2, or no /proc). */
export function openDescriptors(): number | null {
  try {
    const n = statSync('/proc/self/fd').size;
    return n > 0 ? n : null;
  } catch {
    return null;
  }
}

export interface DescriptorGuardOptions {
  /** the open-file limit */
  openFiles: number;
  /** the static cap (MAX_IN_FLIGHT or maxInFlightFor): the guard never raises above it */
  cap: number;
  probesInFlight: () => number;
  setCapacity: (n: number) => void;
  /** default: openDescriptors() */
  readOpen?: () => number | null;
  /** default 100 */
  intervalMs?: number;
}

export class DescriptorGuard {
  private readonly others: number[] = [];
  private timer: ReturnType<typeof setInterval> | null = null;
  private current: number;
  private active = true;

  constructor(private readonly o: DescriptorGuardOptions) {
    this.current = o.cap;
  }

  /** Whether it still watches (false after stop() or when the kernel gave no count). */
  get running(): boolean {
    return this.active;
  }

  /** The cap it set last. */
  get capacity(): number {
    return this.current;
  }

  /** Takes one sample now (the first one at once), then every intervalMs. */
  start(): this {
    this.sample();
    if (this.active) {
      this.timer = setInterval(() => this.sample(), this.o.intervalMs ?? 100);
      this.timer.unref?.();
    }
    return this;
  }

  /** One sample: read, update the window, set the capacity when it changed. */
  sample(): void {
    if (!this.active) return;
    const open = (this.o.readOpen ?? openDescriptors)();
    if (open === null) {
      this.stop();
      return;
    }
    this.others.push(open - this.o.probesInFlight());
    if (this.others.length > WINDOW) this.others.shift();
    const next = guardedCapacity({ openFiles: this.o.openFiles, cap: this.o.cap, others: Math.max(...this.others) });
    if (next !== this.current) {
      this.current = next;
      this.o.setCapacity(next);
    }
  }

  stop(): void {
    this.active = false;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}
