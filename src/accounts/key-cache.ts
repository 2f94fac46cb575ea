/**
 * A short-lived cache of API key -> account, so a burst of requests with one
 * key does not cost a database round trip each. Entries live `ttlMs` (default
 * 2 s) and are keyed by the key's sha256, never the key itself. Misses (an
 * unknown or revoked key) are cached too, so a flood of bad keys cannot
 * hammer the database. `clear()` is called after every admin command in this
 * process (a revoke takes effect at once); a revoke made by another process
 * (the admin command on PostgreSQL) takes effect within `ttlMs`.
 */
import { hashApiKey } from './keys';

export class KeyCache<A> {
  readonly #entries = new Map<string, { value: A | null; until: number }>();
  readonly #ttlMs: number;
  readonly #max: number;
  readonly #now: () => number;

  constructor(opts: { ttlMs?: number; maxEntries?: number; now?: () => number } = {}) {
    this.#ttlMs = opts.ttlMs ?? 2000;
    this.#max = opts.maxEntries ?? 10_000;
    this.#now = opts.now ?? Date.now;
  }

  get size(): number {
    return this.#entries.size;
  }

  async get(key: string, load: (key: string) => Promise<A | null>): Promise<A | null> {
    const h = hashApiKey(key);
    const now = this.#now();
    const hit = this.#entries.get(h);
    if (hit !== undefined && hit.until > now) return hit.value;
    const value = await load(key);
    if (this.#entries.size >= this.#max) this.#entries.clear();
    this.#entries.set(h, { value, until: now + this.#ttlMs });
    return value;
  }

  clear(): void {
    this.#entries.clear();
  }
}
