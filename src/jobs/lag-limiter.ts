/**
 * The adaptive in-flight limit at work (issue 30): every `intervalMs`
 * (50 ms) while probes are in flight it takes the checker's lag, feeds the
 * pure AdaptiveLimit (adaptive-limit.ts) and hands its limit to the
 * scheduler (RegionScheduler.setLoadLimit), which grants no more probes
 * process-wide than min(that limit, the descriptors' cap).
 *
 * The lag of a tick is the worst of
 * - the probe lanes' (`source.takeLag()`: each lane's worst timer slip
 *   since its last batch of results, src/probe/workers/lag-meter.ts), the
 *   threads that read the proxies' answers;
 * - this thread's own: how late this tick ran, and the worst slip of a
 *   20 ms lag meter that runs beside it (src/probe/workers/lag-meter.ts;
 *   the main thread serves the built-in judge, and a late judge answer
 *   reads as a slow proxy). The meter writes its state to the lanes'
 *   shared slots (`source.mainLag`): a probe whose deadline fires while
 *   the main thread is late is the checker's too (src/probe/codec/checker-lag.ts).
 *
 * While nothing is in flight it does not tick (an idle service has no
 * wake-ups from it); `wake()` (the scheduler's onBusy, beside the
 * descriptor guard's) starts it again. The limit is kept across idle times:
 * a machine that needed a low limit for one job starts the next at it and
 * grows from there as the lag allows.
 *
 * States: made --start(target, source)--> running (ticking while probes are
 * in flight, resting while none) --stop()--> stopped.
 */
import { monotonicClock, type Clock } from '../clock';
import { LagMeter } from '../probe/workers/lag-meter';
import { AdaptiveLimit, type AdaptiveLimitOptions } from './adaptive-limit';

/** What the limiter bounds: the scheduler. */
export interface LoadLimitTarget {
  readonly totalInFlight: number;
  setLoadLimit(n: number): void;
}

/** Where the lanes' lag comes from: the probe workers. */
export interface LagSource {
  takeLag(): number;
  /** Where the lanes read this thread's lag (ProbeWorkers.mainLag); absent: not shared. */
  readonly mainLag?: Float64Array;
}

/** The main thread's lag meter's interval, ms (a wake-up each while probes are in flight). */
const MAIN_METER_MS = 20;

export interface LagLimiterOptions extends AdaptiveLimitOptions {
  /** ms between ticks while probes are in flight (default 50) */
  intervalMs?: number;
  /** default monotonicClock (tests pass a fake one) */
  clock?: Clock;
}

export class LagLimiter {
  readonly #limit: AdaptiveLimit;
  readonly #interval: number;
  readonly #clock: Clock;
  #target: LoadLimitTarget | null = null;
  #source: LagSource | null = null;
  #meter: LagMeter | null = null;
  #cancel: (() => void) | null = null;
  #due = 0;
  #stopped = false;
  /** The worst lag of the last tick (ms), for /metrics. */
  lastLagMs = 0;

  constructor(o: LagLimiterOptions) {
    this.#limit = new AdaptiveLimit(o);
    this.#interval = o.intervalMs ?? 50;
    this.#clock = o.clock ?? monotonicClock;
  }

  /** The limit now. */
  get limit(): number {
    return this.#limit.limit;
  }

  /** Whether a tick is armed. */
  get ticking(): boolean {
    return this.#cancel !== null;
  }

  start(target: LoadLimitTarget, source: LagSource): this {
    this.#target = target;
    this.#source = source;
    this.#meter = new LagMeter(this.#clock, MAIN_METER_MS, source.mainLag ?? null);
    target.setLoadLimit(this.#limit.limit);
    if (target.totalInFlight > 0) this.#arm();
    return this;
  }

  /** Probes were granted after none were in flight: tick again. */
  wake(): void {
    if (this.#stopped || this.#target === null || this.#cancel !== null) return;
    this.#source?.takeLag(); // what the lanes reported while resting is old
    this.#arm();
  }

  stop(): void {
    this.#stopped = true;
    this.#cancel?.();
    this.#cancel = null;
    this.#meter?.busy(false);
  }

  #arm(): void {
    this.#meter?.busy(true);
    this.#due = this.#clock.now() + this.#interval;
    this.#cancel = this.#clock.after(this.#interval, this.#tick, { unref: true });
  }

  readonly #tick = (): void => {
    this.#cancel = null;
    const target = this.#target!;
    const own = Math.max(0, this.#clock.now() - this.#due, this.#meter!.takePeak());
    const lag = Math.max(own, this.#source!.takeLag());
    this.lastLagMs = lag;
    const before = this.#limit.limit;
    const inFlight = target.totalInFlight;
    const next = this.#limit.update({ lagMs: lag, inFlight });
    if (next !== before) target.setLoadLimit(next);
    if (!this.#stopped && inFlight > 0) this.#arm();
    else this.#meter!.busy(false);
  };
}
