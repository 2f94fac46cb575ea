/**
 * A short-lived cache of API key -> account, so a burst of requests with one
 * key does not cost a database round trip each. Entries live `ttlMs` (default
 * 2 s) and are keyed by the key's sha256, never the key itself.
 *
 * - Two bounded LRUs: known keys, and misses (unknown or revoked keys, cached
 *   too so a flood of one bad key cannot hammer the database). A stream of
 *   random keys fills only the miss LRU: it never evicts a good key.
 * - Refresh ahead: a hit on a known key in the second half of its life
 *   starts a look-up in the background (single flight) and is answered from
 *   the entry at once, so a key in steady use never waits on the database
 *   (the gateway's connection path: a database busy with a pool's flush
 *   would otherwise hold one connection per `ttlMs` behind it). An answer
 *   is still never older than `ttlMs`: an expired entry is not served, and
 *   a refresh that fails leaves the entry to expire.
 * - Concurrent look-ups of one key share one query (single flight).
 * - `clear()` (after every admin command in this process) starts a new
 *   generation: a look-up already in flight from before it neither stores its
 *   answer nor serves a request that arrives after it, so a revocation cannot
 *   be undone by a look-up that raced it. A revoke made by another process
 *   (the admin command on PostgreSQL) takes effect within `ttlMs`.
 */
import { hashApiKey } from './keys';

interface Entry<A> {
  value: A | null;
  until: number;
}

/** A Map kept in recency order: a hit moves to the end, the oldest goes first. */
class Lru<V> {
  readonly #map = new Map<string, V>();
  constructor(readonly max: number) {}
  get size(): number {
    return this.#map.size;
  }
  get(k: string): V | undefined {
    const v = this.#map.get(k);
    if (v !== undefined) {
      this.#map.delete(k);
      this.#map.set(k, v);
    }
    return v;
  }
  set(k: string, v: V): void {
    this.#map.delete(k);
    this.#map.set(k, v);
    if (this.#map.size > this.max) this.#map.delete(this.#map.keys().next().value as string);
  }
  delete(k: string): void {
    this.#map.delete(k);
  }
  clear(): void {
    this.#map.clear();
  }
}

export class KeyCache<A> {
  readonly #known: Lru<Entry<A>>;
  readonly #misses: Lru<Entry<A>>;
  readonly #inFlight = new Map<string, Promise<A | null>>();
  readonly #ttlMs: number;
  readonly #now: () => number;
  #generation = 0;

  constructor(opts: { ttlMs?: number; maxEntries?: number; maxMisses?: number; now?: () => number } = {}) {
    this.#ttlMs = opts.ttlMs ?? 2000;
    this.#known = new Lru(opts.maxEntries ?? 10_000);
    this.#misses = new Lru(opts.maxMisses ?? opts.maxEntries ?? 10_000);
    this.#now = opts.now ?? Date.now;
  }

  /** Entries held (known keys and misses). */
  get size(): number {
    return this.#known.size + this.#misses.size;
  }

  get(key: string, load: (key: string) => Promise<A | null>): Promise<A | null> {
    const h = hashApiKey(key);
    const now = this.#now();
    const hit = this.#known.get(h) ?? this.#misses.get(h);
    if (hit !== undefined) {
      if (hit.until > now) {
        if (hit.value !== null && hit.until - now < this.#ttlMs / 2 && !this.#inFlight.has(h)) this.#load(h, key, load).catch(() => {});
        return Promise.resolve(hit.value);
      }
      this.#known.delete(h);
      this.#misses.delete(h);
    }
    return this.#inFlight.get(h) ?? this.#load(h, key, load);
  }

  /** One look-up of `key` (hash `h`), shared by the look-ups that come while it runs; its answer replaces the entry. */
  #load(h: string, key: string, load: (key: string) => Promise<A | null>): Promise<A | null> {
    const generation = this.#generation;
    const p = load(key).then(
      (value) => {
        if (generation === this.#generation) {
          this.#inFlight.delete(h);
          (value === null ? this.#known : this.#misses).delete(h);
          (value === null ? this.#misses : this.#known).set(h, { value, until: this.#now() + this.#ttlMs });
        }
        return value;
      },
      (err: unknown) => {
        if (generation === this.#generation) this.#inFlight.delete(h);
        throw err;
      },
    );
    this.#inFlight.set(h, p);
    return p;
  }

  /** Forget everything, including look-ups in flight (see the header). */
  clear(): void {
    this.#generation++;
    this.#known.clear();
    this.#misses.clear();
    this.#inFlight.clear();
  }
}
