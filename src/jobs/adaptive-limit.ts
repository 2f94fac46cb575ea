/**
 * The adaptive in-flight limit: how many probes the process may have in
 * flight, learned from the checker's own lag (issue 30). Pure arithmetic: a
 * caller (lag-limiter.ts) feeds it one sample per tick and hands the limit to
 * the scheduler (RegionScheduler.setLoadLimit).
 *
 * Why: on a CPU-bound machine thousands of probes in flight buy nothing once
 * the CPU is the limit; each waits for the CPU and its proxy gets the blame
 * (an answer that sat in a socket buffer while the thread was busy reads as
 * a timeout). The lag of the threads that read the answers (a timer's slip:
 * how late a timer ran against its due time) is the checker's own queueing
 * delay, the way a TCP Vegas sender reads its queue from the RTT above the
 * base RTT.
 *
 * The update is Netflix concurrency-limits' Gradient2 with lag in place of
 * the RTT:
 *
 *   long     = long + (min(lag, ceilingMs) - long) / longWindow   (the lag the machine has anyway)
 *   allowed  = min(ceilingMs, max(targetMs, tolerance x long))
 *   gradient = clamp(allowed / lag, 0.5, 1)               (1 while lag <= allowed)
 *   grow     = gradient = 1 and inFlight >= limit x appLimited ? limit x growth : 0
 *   next     = limit x gradient + grow
 *   limit    = clamp(limit + smoothing x (next - limit), min, max)
 *
 * So: while the lag is within what is allowed and the limit is what binds
 * (probes in flight near it), the limit grows (x (1 + growth x smoothing)
 * per tick); while the lag is above it, the limit shrinks in proportion to
 * the excess (at most by half x smoothing per tick); a limit nobody uses
 * (inFlight well below it) does not grow. `long` lets a machine whose lag
 * has a floor that is not ours (another process on the cores) keep its
 * throughput instead of shrinking to the minimum, but never beyond
 * `ceilingMs`: above it the checker's lag would blame proxies whatever the
 * cause, and the limit shrinks.
 *
 * Properties (test/unit/adaptive-limit.test.ts, fast-check): the limit stays
 * in [min, max]; a higher lag never gives a higher limit than a lower one
 * from the same state; a lag within what is allowed never lowers it; after
 * any history, enough ticks of low lag with the limit in use bring it back
 * to max.
 */

export interface AdaptiveLimitOptions {
  /** The lowest limit (default 64). */
  min?: number;
  /** The highest limit (the static cap: MAX_IN_FLIGHT). */
  max: number;
  /** The first limit (default max: nothing changes until lag shows). */
  initial?: number;
  /** Lag always allowed, in ms (default 50: half the retry threshold at the default timeout). */
  targetMs?: number;
  /** Lag never accepted as the machine's floor, in ms (default 100: the retry threshold at the default timeout). */
  ceilingMs?: number;
  /** The long average may be exceeded by this factor before the limit shrinks (default 1.5). */
  tolerance?: number;
  /** Ticks the long average spans (default 100: 5 s at 50 ms). */
  longWindow?: number;
  /** The share of the distance to the next limit taken per tick (default 0.3). */
  smoothing?: number;
  /** The growth per tick while lag is low, as a share of the limit (default 0.25). */
  growth?: number;
  /** The limit grows only while inFlight >= limit x appLimited (default 0.5). */
  appLimited?: number;
}

export interface LagSample {
  /** The worst lag seen since the last sample, in ms (>= 0). */
  lagMs: number;
  /** Probes in flight now. */
  inFlight: number;
}

export class AdaptiveLimit {
  readonly min: number;
  readonly max: number;
  readonly #target: number;
  readonly #ceiling: number;
  readonly #tolerance: number;
  readonly #longWindow: number;
  readonly #smoothing: number;
  readonly #growth: number;
  readonly #appLimited: number;
  #limit: number;
  #long: number;

  constructor(o: AdaptiveLimitOptions) {
    const max = Math.floor(o.max);
    if (!(max >= 1)) throw new RangeError(`max must be >= 1, got ${o.max}`);
    this.max = max;
    this.min = Math.max(1, Math.min(max, Math.floor(o.min ?? 64)));
    this.#target = o.targetMs ?? 50;
    this.#ceiling = Math.max(this.#target, o.ceilingMs ?? 100);
    this.#tolerance = o.tolerance ?? 1.5;
    this.#longWindow = Math.max(1, o.longWindow ?? 100);
    this.#smoothing = clamp(o.smoothing ?? 0.3, 0.01, 1);
    this.#growth = Math.max(0, o.growth ?? 0.25);
    this.#appLimited = clamp(o.appLimited ?? 0.5, 0, 1);
    this.#limit = clamp(Math.floor(o.initial ?? max), this.min, max);
    this.#long = 0;
  }

  /** The limit now (an integer in [min, max]). */
  get limit(): number {
    return this.#limit;
  }

  /** The lag the limit tolerates now, in ms. */
  get allowedMs(): number {
    return allowed(this.#target, this.#ceiling, this.#tolerance, this.#long);
  }

  /** One tick: the lag and load since the last; returns the new limit. */
  update(s: LagSample): number {
    const lag = Number.isFinite(s.lagMs) && s.lagMs > 0 ? s.lagMs : 0;
    this.#limit = this.next(this.#limit, this.#long, lag, s.inFlight);
    this.#long += (Math.min(lag, this.#ceiling) - this.#long) / this.#longWindow;
    return this.#limit;
  }

  /** The limit after one tick from (limit, long) with this lag and load: the header's formula, without changing anything. */
  next(limit: number, long: number, lagMs: number, inFlight: number): number {
    const ok = allowed(this.#target, this.#ceiling, this.#tolerance, long);
    const gradient = lagMs <= ok ? 1 : clamp(ok / lagMs, 0.5, 1);
    const grow = gradient === 1 && inFlight >= limit * this.#appLimited ? limit * this.#growth : 0;
    const target = limit * gradient + grow;
    const moved = limit + this.#smoothing * (target - limit);
    // round toward the move, so a small step still moves by one and a limit at rest stays put
    const n = moved > limit ? Math.ceil(moved) : Math.floor(moved);
    return clamp(n, this.min, this.max);
  }
}

function allowed(target: number, ceiling: number, tolerance: number, long: number): number {
  return Math.min(ceiling, Math.max(target, tolerance * long));
}

function clamp(x: number, lo: number, hi: number): number {
  return x < lo ? lo : x > hi ? hi : x;
}
