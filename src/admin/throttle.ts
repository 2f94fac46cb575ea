/**
 * Failed admin tokens, throttled per client address (pure: no I/O, an
 * injectable clock).
 *
 * `maxFailures` failures from one address within `windowMs` block that
 * address for `blockMs`: while blocked, its requests are answered 429 with
 * Retry-After before the token is even looked at (a right token included).
 * Requests with the right token are never counted. After the block the
 * address gets `maxFailures` fresh tries.
 *
 * Memory is bounded: at most `maxAddresses` addresses are tracked. When the
 * table is full, entries whose window and block are over go first, then the
 * least recently failing address.
 */

export interface ThrottleOptions {
  maxFailures: number;
  windowMs: number;
  blockMs: number;
  maxAddresses: number;
  /** Milliseconds (tests inject a clock). */
  now?: () => number;
}

export const ADMIN_THROTTLE: Readonly<Omit<ThrottleOptions, 'now'>> = Object.freeze({
  maxFailures: 5,
  windowMs: 60_000,
  blockMs: 60_000,
  maxAddresses: 10_000,
});

interface Entry {
  failures: number;
  /** Start of the current counting window. */
  since: number;
  /** 0 when not blocked. */
  blockedUntil: number;
}

export class FailureThrottle {
  readonly #entries = new Map<string, Entry>();
  readonly #opts: ThrottleOptions;
  readonly #now: () => number;

  constructor(opts: Partial<ThrottleOptions> = {}) {
    this.#opts = { ...ADMIN_THROTTLE, ...opts };
    this.#now = opts.now ?? Date.now;
  }

  /** Addresses tracked now. */
  get size(): number {
    return this.#entries.size;
  }

  /** Whole seconds `address` must still wait (>= 1), or null when it may try. */
  blockedFor(address: string): number | null {
    const e = this.#entries.get(address);
    if (e === undefined) return null;
    const t = this.#now();
    if (e.blockedUntil > t) return Math.max(1, Math.ceil((e.blockedUntil - t) / 1000));
    if (this.#over(e, t)) this.#entries.delete(address);
    return null;
  }

  /** Counts a failed token from `address`; true when this failure blocks it. */
  fail(address: string): boolean {
    const t = this.#now();
    let e = this.#entries.get(address);
    if (e === undefined || this.#over(e, t)) {
      e = { failures: 0, since: t, blockedUntil: 0 };
    }
    this.#entries.delete(address); // re-inserted last: the Map's order is the recency order
    if (this.#entries.size >= this.#opts.maxAddresses) this.#makeRoom(t);
    e.failures++;
    let blocked = false;
    if (e.failures >= this.#opts.maxFailures) {
      e.blockedUntil = t + this.#opts.blockMs;
      e.failures = 0;
      e.since = e.blockedUntil;
      blocked = true;
    }
    this.#entries.set(address, e);
    return blocked;
  }

  /** The window and any block are over: the entry says nothing any more. */
  #over(e: Entry, t: number): boolean {
    return e.blockedUntil <= t && t - e.since >= this.#opts.windowMs;
  }

  #makeRoom(t: number): void {
    for (const [k, e] of this.#entries) if (this.#over(e, t)) this.#entries.delete(k);
    while (this.#entries.size >= this.#opts.maxAddresses) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
  }
}
