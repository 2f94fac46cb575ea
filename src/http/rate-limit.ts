/**
 * Requests per second per account: one token bucket per account, pure (no
 * I/O, an injected clock in milliseconds).
 *
 * A bucket holds at most `burst` tokens and refills `ratePerS` tokens a
 * second; a request takes one. With none left the request is refused and told
 * when one will be there: `retryAfterS`, whole seconds rounded up (at least 1),
 * the value of the 429's Retry-After header. A request that gets its token is
 * told what is left: `remaining` (whole tokens) and `resetS`, whole seconds
 * until the bucket is full again.
 *
 * `rateLimitHeaders` turns either into the IETF httpapi draft's fields
 * (draft-ietf-httpapi-ratelimit-headers, the three-field form of drafts 00-06):
 * `RateLimit-Limit` the burst (the quota of a quiet account), `RateLimit-
 * Remaining`, `RateLimit-Reset` (delay-seconds). On a refusal Remaining is 0
 * and Reset the same point in time as Retry-After, as the draft asks.
 *
 * Memory: at most `maxKeys` buckets are kept, least recently used first out
 * (a Map in use order). A bucket that is dropped comes back full, which is
 * what a bucket left alone for burst / ratePerS seconds is anyway; only more
 * than `maxKeys` accounts busy at once could gain from that.
 */

export interface RateLimitOptions {
  /** Tokens refilled per second (> 0). */
  ratePerS: number;
  /** Bucket size: requests allowed at once after a quiet spell (>= 1). */
  burst: number;
  /** Buckets kept at most (LRU). Default 10 000. */
  maxKeys?: number;
  /** Milliseconds, monotonic enough (a clock that goes back refills nothing). */
  now: () => number;
}

export type TakeOutcome = { ok: true; remaining: number; resetS: number } | { ok: false; retryAfterS: number };

/** The RateLimit-* fields of an answer under a bucket of `limit` (the burst), after `outcome`. */
export function rateLimitHeaders(limit: number, outcome: TakeOutcome): Record<string, string> {
  const [remaining, reset] = outcome.ok ? [outcome.remaining, outcome.resetS] : [0, outcome.retryAfterS];
  return { 'RateLimit-Limit': String(limit), 'RateLimit-Remaining': String(remaining), 'RateLimit-Reset': String(reset) };
}

interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimiter {
  readonly #rate: number;
  readonly #burst: number;
  readonly #maxKeys: number;
  readonly #now: () => number;
  readonly #buckets = new Map<string, Bucket>();

  constructor(opts: RateLimitOptions) {
    if (!(opts.ratePerS > 0)) throw new RangeError('ratePerS must be > 0');
    if (!(opts.burst >= 1)) throw new RangeError('burst must be >= 1');
    this.#rate = opts.ratePerS;
    this.#burst = opts.burst;
    this.#maxKeys = Math.max(1, opts.maxKeys ?? 10_000);
    this.#now = opts.now;
  }

  get ratePerS(): number {
    return this.#rate;
  }

  get burst(): number {
    return this.#burst;
  }

  /** Buckets kept (for tests and metrics). */
  get size(): number {
    return this.#buckets.size;
  }

  /** Takes one token from `key`'s bucket, or says how long until one is there. */
  take(key: string): TakeOutcome {
    const now = this.#now();
    let b = this.#buckets.get(key);
    if (b === undefined) {
      b = { tokens: this.#burst, at: now };
    } else {
      this.#buckets.delete(key); // re-inserted below: the Map's order is the use order
      const elapsed = Math.max(0, now - b.at);
      b.tokens = Math.min(this.#burst, b.tokens + (elapsed * this.#rate) / 1000);
      b.at = Math.max(b.at, now);
    }
    this.#buckets.set(key, b);
    if (this.#buckets.size > this.#maxKeys) {
      const oldest = this.#buckets.keys().next().value as string;
      this.#buckets.delete(oldest);
    }
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return { ok: true, remaining: Math.floor(b.tokens), resetS: Math.ceil((this.#burst - b.tokens) / this.#rate) };
    }
    return { ok: false, retryAfterS: Math.max(1, Math.ceil((1 - b.tokens) / this.#rate)) };
  }
}
