/**
 * Live agents, as an API node sees them: the pc_agents bucket watched
 * (protocol.ts), kept in an AgentTable.
 *
 * AgentTable (pure, a clock passed in): an entry lives from the put that
 * brought it until `ttlMs` after the last put *received* (nats-server 2.9 sends
 * no event when the bucket's TTL removes a key, so the table expires entries
 * itself, on this node's clock; no clock is compared across machines). A
 * delete (an agent's graceful stop) removes it at once. A region's capacity
 * is the sum of its live agents' slots; 0 with none (checks to it: 503).
 *
 *   absent ──put──> live ──put──> live (renewed)
 *                    │ └──delete──> absent
 *                    └──ttlMs without a put──> absent (expire(now))
 *
 * AgentRegistry (I/O): the watch (kv-watch.ts: history first, then updates,
 * restarted when it ends), plus a timer that expires entries; every change
 * of a region's capacity is told to its followers (`follow(onChange)`: the
 * scheduler's poke, once the scheduler exists).
 */
import type { KV } from '@nats-io/kv';
import type { Logger } from '../log';
import { watchBucket, type BucketWatch } from './kv-watch';
import { decodeHeartbeat, type AgentHeartbeat } from './protocol';

export interface LiveAgent extends AgentHeartbeat {
  /** When this node last received its heartbeat (ms, its own clock). */
  seenAt: number;
}

export class AgentTable {
  readonly #ttlMs: number;
  readonly #byKey = new Map<string, LiveAgent>();

  constructor(ttlMs: number) {
    this.#ttlMs = ttlMs;
  }

  /** A heartbeat put: returns the region whose capacity may have changed. */
  put(key: string, hb: AgentHeartbeat, now: number): string {
    const before = this.#byKey.get(key);
    this.#byKey.set(key, { ...hb, seenAt: now });
    return before !== undefined && before.region !== hb.region ? before.region : hb.region;
  }

  /** A delete or purge of `key`: the region that lost an agent, or null. */
  remove(key: string): string | null {
    const e = this.#byKey.get(key);
    if (e === undefined) return null;
    this.#byKey.delete(key);
    return e.region;
  }

  /** Drops entries not renewed within the TTL; returns the regions that lost agents. */
  expire(now: number): string[] {
    const lost = new Set<string>();
    for (const [k, e] of this.#byKey) {
      if (now - e.seenAt >= this.#ttlMs) {
        this.#byKey.delete(k);
        lost.add(e.region);
      }
    }
    return [...lost];
  }

  /** Probe slots of the region's live agents together (0: none). */
  capacity(region: string, now: number): number {
    let n = 0;
    for (const e of this.#byKey.values()) if (e.region === region && now - e.seenAt < this.#ttlMs) n += e.slots;
    return n;
  }

  agentCount(region: string, now: number): number {
    let n = 0;
    for (const e of this.#byKey.values()) if (e.region === region && now - e.seenAt < this.#ttlMs) n++;
    return n;
  }

  /** Live agents, ordered by region then id. */
  list(now: number): LiveAgent[] {
    return [...this.#byKey.values()]
      .filter((e) => now - e.seenAt < this.#ttlMs)
      .sort((a, b) => (a.region === b.region ? a.agent.localeCompare(b.agent) : a.region.localeCompare(b.region)));
  }
}

export interface AgentRegistryOptions {
  kv: KV;
  ttlMs: number;
  log: Logger;
  now?: () => number;
}

export class AgentRegistry {
  readonly #o: AgentRegistryOptions;
  readonly #table: AgentTable;
  readonly #now: () => number;
  #timer: ReturnType<typeof setInterval> | null = null;
  #watch: BucketWatch | null = null;
  readonly #followers: ((region: string) => void)[] = [];

  private constructor(o: AgentRegistryOptions) {
    this.#o = o;
    this.#table = new AgentTable(o.ttlMs);
    this.#now = o.now ?? Date.now;
  }

  /** Starts watching; resolves once the bucket's current entries are in (so the first check sees live agents). */
  static async start(o: AgentRegistryOptions): Promise<AgentRegistry> {
    const r = new AgentRegistry(o);
    await r.#startWatch();
    r.#timer = setInterval(() => {
      for (const region of r.#table.expire(r.#now())) r.#changed(region);
    }, Math.max(50, Math.floor(o.ttlMs / 4)));
    r.#timer.unref?.();
    return r;
  }

  /** `onChange` is told of every region whose live agents changed from now on (the scheduler's poke: its slots may have risen). */
  follow(onChange: (region: string) => void): void {
    this.#followers.push(onChange);
  }

  capacity(region: string): number {
    return this.#table.capacity(region, this.#now());
  }

  agentCount(region: string): number {
    return this.#table.agentCount(region, this.#now());
  }

  list(): LiveAgent[] {
    return this.#table.list(this.#now());
  }

  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    this.#watch?.stop();
  }

  async #startWatch(): Promise<void> {
    this.#watch = await watchBucket({
      kv: this.#o.kv,
      what: 'agent heartbeat',
      log: this.#o.log,
      onPut: (key, value) => this.#changed(this.#table.put(key, decodeHeartbeat(value), this.#now())),
      onDelete: (key) => {
        const region = this.#table.remove(key);
        if (region !== null) this.#changed(region);
      },
    });
  }

  #changed(region: string): void {
    for (const f of this.#followers) f(region);
  }
}
