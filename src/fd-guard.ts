/**
 * The descriptor guard of a process that serves its own judge: the probes'
 * global cap (the scheduler's) follows the descriptors actually open, so the
 * judge's accept() always finds one free (src/limits.ts says why it must).
 *
 * Every `intervalMs` (25 ms) it reads how many descriptors the process has
 * open (`stat("/proc/self/fd").size`, Linux >= 6.2: O(1); older
 * kernels report 0 and the guard stays off, leaving the static margin
 * JUDGE_FD_SHARE) and the probes in flight, and takes
 *
 *   others   = open - probes in flight   (the judge's connections, the
 *              database, listeners, files; probes between grant and socket
 *              make it a little low, which the spare covers)
 *   capacity = guardedCapacity(limit, cap, max of `others` over the last
 *              WINDOW samples, and of baseline + judgeReserve)
 *                                          (src/limits.ts; `baseline` below)
 *
 * and hands it to `setCapacity` when it changed; and it lets at most
 *
 *   startBudget = (limit - spare - max(open, baseline + probes in flight)) / 2
 *
 * probes start until the next sample (`setStartBudget`): each may bring one
 * judge connection before the guard can see it, so a burst (a wave of black
 * holes timing out together, their slots granted at once to proxies that
 * hold the judge's connection) cannot take the last descriptors between two
 * samples. `baseline` is what was open at the last sample with no probe in
 * flight (the first sample's, less its probes, until then): a probe granted
 * opens its socket only when its thread gets to it, so after a burst of
 * grants `open` alone still looks free and the next sample would grant the
 * same descriptors again (measured: 1 068 probes granted on 1 200
 * descriptors within the first two samples of a job, open at 104). At the
 * defaults it never binds (12 288 in flight at a limit of 20 000: 3 500
 * starts per 25 ms). Lowering the cap revokes nothing:
 * grants stop until enough probes end. The window (40 samples, 1 s) keeps a burst of
 * judge connections from letting the cap spring back at once.
 *
 * While no probe is in flight it samples every `idleIntervalMs` (1 s)
 * instead: a sample is a wake-up of the main thread, and 40 a second were
 * most of an idle service's main-thread CPU. `wake()` (the scheduler's
 * `onBusy`: its first grant after none was in flight) brings the 25 ms
 * cadence back at once. What the idle samples leave in force is as safe as
 * any: a start budget of half the descriptors free when it was read. (A job
 * that waits with nothing in flight because that budget is 0, the
 * descriptors all held by something else, waits for the next idle sample:
 * at most 1 s more.)
 *
 * States: made (its target, the scheduler or runner, does not exist yet:
 * the target's `onBusy` may already call wake(), a no-op) --start(target)-->
 * running (timer armed, unref'd; cadence busy or idle, by the probes in
 * flight at the last sample) --stop()--> stopped. A read that fails (no
 * /proc) or reports 0 stops the guard for good: off.
 */
import { statSync } from 'node:fs';
import { systemClock, type Clock } from './clock';
import { guardedCapacity, judgeReserve, startBudget } from './limits';

const WINDOW = 40;

/** Descriptors open in this process, or null when the kernel does not say (size 0 before Linux 6.2, or no /proc). */
export function openDescriptors(): number | null {
  try {
    const n = statSync('/proc/self/fd').size;
    return n > 0 ? n : null;
  } catch {
    return null;
  }
}

/** What the guard watches and bounds: the scheduler of a service, the runner of an agent. */
export interface GuardTarget {
  probesInFlight: () => number;
  setCapacity: (n: number) => void;
  /** how many probes may start until the next sample (scheduler.setStartBudget) */
  setStartBudget: (n: number) => void;
}

export interface DescriptorGuardOptions {
  /** the open-file limit */
  openFiles: number;
  /** the static cap (MAX_IN_FLIGHT or maxInFlightFor): the guard never raises above it */
  cap: number;
  /** default: openDescriptors() */
  readOpen?: () => number | null;
  /** default 25 */
  intervalMs?: number;
  /** the cadence while no probe is in flight; default 1000 */
  idleIntervalMs?: number;
  /** the sampling timer's clock (default systemClock; tests pass a fake one) */
  clock?: Clock;
}

export class DescriptorGuard {
  private readonly others: number[] = [];
  /** Descriptors open at the last sample with no probe in flight (the database, listeners, threads: what is not probes). */
  private baseline: number | null = null;
  /** cancels the armed timer */
  private timer: (() => void) | null = null;
  /** the armed timer is the idle cadence's */
  private idle = false;
  private current: number;
  private active = true;
  private target: GuardTarget | null = null;

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

  /** Whether the next sample is on the idle cadence (no probe was in flight at the last one). */
  get idling(): boolean {
    return this.idle;
  }

  /** Watches `target`: one sample now (the first one at once), then every intervalMs (idleIntervalMs while no probe is in flight). */
  start(target: GuardTarget): this {
    this.target = target;
    this.tick();
    return this;
  }

  /** Probes started after an idle sample: back to the busy cadence now (no-op unless idling). */
  wake(): void {
    if (!this.active || !this.idle || this.target === null) return;
    this.arm(this.o.intervalMs ?? 25, false);
  }

  private readonly tick = (): void => {
    this.timer = null;
    this.sample();
    if (!this.active || this.target === null) return;
    const idle = this.target.probesInFlight() === 0;
    this.arm(idle ? (this.o.idleIntervalMs ?? 1000) : (this.o.intervalMs ?? 25), idle);
  };

  private arm(ms: number, idle: boolean): void {
    this.timer?.();
    this.idle = idle;
    this.timer = (this.o.clock ?? systemClock).after(ms, this.tick, { unref: true });
  }

  /** One sample: read, update the window, set the capacity when it changed. */
  sample(): void {
    const t = this.target;
    if (!this.active || t === null) return;
    const open = (this.o.readOpen ?? openDescriptors)();
    if (open === null) {
      this.stop();
      return;
    }
    const inFlight = t.probesInFlight();
    if (inFlight === 0 || this.baseline === null) this.baseline = Math.max(0, open - inFlight);
    this.others.push(open - inFlight);
    if (this.others.length > WINDOW) this.others.shift();
    const others = Math.max(...this.others, this.baseline + judgeReserve(this.o.openFiles, this.baseline));
    const next = guardedCapacity({ openFiles: this.o.openFiles, cap: this.o.cap, others });
    if (next !== this.current) {
      this.current = next;
      t.setCapacity(next);
    }
    t.setStartBudget(startBudget(this.o.openFiles, open, this.baseline + inFlight)); // last: a budget that rose runs the passes, under the new cap
  }

  stop(): void {
    this.active = false;
    this.timer?.();
    this.timer = null;
    this.idle = false;
  }
}
