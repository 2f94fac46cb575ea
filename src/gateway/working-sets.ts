/**
 * PoolWorkingSets: the gateway's pool side over the real pools (GatewayPools,
 * ./ports.ts): a pool's working proxies from its owner's memory (`memory`,
 * the pool owner of this process) or, for a pool owned elsewhere, read from
 * the store (src/pools/working-set.ts, one statement), and cached, and the failures the
 * gateway reports turned into re-checks (PoolRecheckPort), coalesced.
 *
 * Cache (per account and pool; at most `maxPools` entries, the least recently
 * used goes first): an entry is fresh until the pool's events (the events
 * hub's `watch`: proxy.up, proxy.down, round.completed, pool.paused,
 * pool.resumed) mark it stale, or `ttlMs` (30 s) passed: the fallback for
 * what no event tells (a proxy's first passing check, members an owner
 * removed on another node). A stale entry is read again on its next use; a
 * read that finds the same upstreams keeps the same WorkingSet object (the
 * gateway caches its matches per object). Concurrent uses share one read. A
 * pool that is not the account's is not cached (null: the client's 407). A
 * deleted pool's entry goes at once. A read that fails while an older set is
 * cached serves the older set (logged); with none, the gateway answers
 * `unavailable`.
 *
 * Entry states: (none) --use--> loading --read--> fresh --event | ttl--> stale
 *   --use--> loading; any --pool deleted | evicted | not the account's--> (none)
 *
 * Re-checks: each reported upstream is re-checked at most once per
 * `quietMs` (30 s, the chooser's SUSPECT_MS: the gateway reports every failed
 * try); reports are gathered for `coalesceMs` (100 ms) and handed over as one
 * recheck(pool, proxies) per pool.
 */
import { rowsOf, type Db } from '../../db/client';
import { systemClock, type Clock } from '../clock';
import type { Logger } from '../log';
import type { PoolWatcher } from '../pools/events-hub';
import type { PoolRecheckPort } from '../pools/ports';
import { sameUpstreams, upstreamsOf, workingUpstreamsStatement, type PoolUpstream } from '../pools/working-set';
import type { ProxyAddress } from '../proxy/types';
import type { GatewayAccount, GatewayPools } from './ports';
import { SUSPECT_MS, type Upstream, type WorkingSet } from './upstream-choice';

export const WORKING_SET_TTL_MS = 30_000;
export const DEFAULT_MAX_POOLS = 10_000;
export const RECHECK_COALESCE_MS = 100;

export interface WorkingSetsOptions {
  db: Db;
  /** A pool's working proxies from its owner's memory (src/jobs/pool-owner.ts); undefined: not owned here, read from `db`. */
  memory?: (accountId: string, poolId: string) => Promise<PoolUpstream[] | undefined>;
  /** The pool events feed (src/pools/events-hub.ts PoolEventsFeed, or the cluster's). */
  events: { watch(accountId: string, fn: PoolWatcher): () => void };
  recheck: PoolRecheckPort;
  authenticate: GatewayPools['authenticate'];
  log: Pick<Logger, 'warn'>;
  clock?: Clock;
  ttlMs?: number;
  maxPools?: number;
  quietMs?: number;
  coalesceMs?: number;
}

interface Entry {
  accountId: string;
  poolId: string;
  set: WorkingSet | null;
  loadedAt: number;
  stale: boolean;
  /** Bumped by every event: a read that started before one leaves the entry stale. */
  version: number;
  loading: Promise<WorkingSet | null> | null;
}

const entryKey = (accountId: string, poolId: string): string => `${accountId}|${poolId}`;

export class PoolWorkingSets implements GatewayPools {
  readonly #db: Db;
  readonly #memory: WorkingSetsOptions['memory'];
  readonly #events: WorkingSetsOptions['events'];
  readonly #recheck: PoolRecheckPort;
  readonly #authenticate: GatewayPools['authenticate'];
  readonly #log: Pick<Logger, 'warn'>;
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #maxPools: number;
  readonly #quietMs: number;
  readonly #coalesceMs: number;
  /** Insertion order = use order (a use moves its entry to the end). */
  readonly #entries = new Map<string, Entry>();
  /** One watch per account with cached pools. */
  readonly #watches = new Map<string, { stop: () => void; pools: number }>();
  /** Reports waiting for the flush, per pool. */
  readonly #pending = new Map<string, Map<string, ProxyAddress>>();
  /** Re-checks asked recently (pool|key -> until), oldest first. */
  readonly #quiet = new Map<string, number>();
  #flushTimer: (() => void) | null = null;
  #stopped = false;
  /** Store reads (tests). */
  reads = 0;

  constructor(o: WorkingSetsOptions) {
    this.#db = o.db;
    this.#memory = o.memory;
    this.#events = o.events;
    this.#recheck = o.recheck;
    this.#authenticate = o.authenticate;
    this.#log = o.log;
    this.#clock = o.clock ?? systemClock;
    this.#ttlMs = o.ttlMs ?? WORKING_SET_TTL_MS;
    this.#maxPools = o.maxPools ?? DEFAULT_MAX_POOLS;
    this.#quietMs = o.quietMs ?? SUSPECT_MS;
    this.#coalesceMs = o.coalesceMs ?? RECHECK_COALESCE_MS;
  }

  /** Pools cached. */
  get size(): number {
    return this.#entries.size;
  }

  authenticate(key: string): Promise<GatewayAccount | null> {
    return this.#authenticate(key);
  }

  async workingSet(accountId: string, poolId: string): Promise<WorkingSet | null> {
    const k = entryKey(accountId, poolId);
    const e = this.#entries.get(k);
    if (e !== undefined) {
      this.#entries.delete(k);
      this.#entries.set(k, e);
      if (e.set !== null && !e.stale && this.#clock.now() - e.loadedAt < this.#ttlMs) return e.set;
      return this.#load(e);
    }
    const entry: Entry = { accountId, poolId, set: null, loadedAt: 0, stale: true, version: 0, loading: null };
    this.#entries.set(k, entry);
    this.#watchAccount(accountId);
    this.#evict();
    return this.#load(entry);
  }

  reportFailure(poolId: string, upstream: Upstream): void {
    if (this.#stopped) return;
    const now = this.#clock.now();
    const qk = `${poolId}|${upstream.key}`;
    const until = this.#quiet.get(qk);
    if (until !== undefined && until > now) return;
    this.#quiet.delete(qk);
    if (this.#quiet.size >= this.#maxPools * 10) {
      const oldest = this.#quiet.keys().next();
      if (!oldest.done) this.#quiet.delete(oldest.value);
    }
    this.#quiet.set(qk, now + this.#quietMs);
    let p = this.#pending.get(poolId);
    if (p === undefined) {
      p = new Map();
      this.#pending.set(poolId, p);
    }
    const address: ProxyAddress = upstream.username === undefined ? { host: upstream.host, port: upstream.port } : { host: upstream.host, port: upstream.port, username: upstream.username, password: upstream.password ?? '' };
    p.set(upstream.key, address);
    if (this.#flushTimer === null) this.#flushTimer = this.#clock.after(this.#coalesceMs, () => this.#flush(), { unref: true });
  }

  /** Hands the pending reports over now, and stops: no more timers or watches. Safe twice. */
  stop(): void {
    if (this.#stopped) return;
    this.#flushTimer?.();
    this.#flush();
    this.#stopped = true;
    for (const w of this.#watches.values()) w.stop();
    this.#watches.clear();
    this.#entries.clear();
  }

  #flush(): void {
    this.#flushTimer = null;
    const pending = [...this.#pending];
    this.#pending.clear();
    for (const [poolId, proxies] of pending) {
      try {
        this.#recheck.recheck(poolId, [...proxies.values()]);
      } catch (err) {
        this.#log.warn('gateway: asking a pool to re-check failed', { pool: poolId, err });
      }
    }
  }

  #load(e: Entry): Promise<WorkingSet | null> {
    if (e.loading !== null) return e.loading;
    const version = e.version;
    const p = (async (): Promise<WorkingSet | null> => {
      let upstreams: Upstream[] | null;
      try {
        this.reads++;
        upstreams = (await this.#memory?.(e.accountId, e.poolId)) ?? upstreamsOf(rowsOf<Record<string, unknown>>(await this.#db.execute(workingUpstreamsStatement(e.accountId, e.poolId))));
      } catch (err) {
        if (e.set === null) throw err;
        this.#log.warn('gateway: reading a pool\'s working proxies failed; serving the last ones read', { pool: e.poolId, err });
        return e.set;
      }
      if (upstreams === null) {
        this.#drop(e);
        return null;
      }
      if (e.set === null || !sameUpstreams(e.set.upstreams, upstreams)) e.set = Object.freeze({ poolId: e.poolId, upstreams: Object.freeze(upstreams) });
      e.loadedAt = this.#clock.now();
      e.stale = e.version !== version;
      return e.set;
    })();
    e.loading = p;
    void p.then(
      () => {
        e.loading = null;
      },
      () => {
        e.loading = null;
      },
    );
    return p;
  }

  #watchAccount(accountId: string): void {
    const w = this.#watches.get(accountId);
    if (w !== undefined) {
      w.pools++;
      return;
    }
    const stop = this.#events.watch(accountId, (s) => {
      const pool = s.kind === 'event' ? s.event.pool : s.pool;
      const e = this.#entries.get(entryKey(accountId, pool));
      if (e === undefined) return;
      if (s.kind === 'closed') this.#drop(e);
      else {
        e.stale = true;
        e.version++;
      }
    });
    this.#watches.set(accountId, { stop, pools: 1 });
  }

  /** Forgets an entry and, with its account's last one, the account's watch. */
  #drop(e: Entry): void {
    const k = entryKey(e.accountId, e.poolId);
    if (this.#entries.get(k) !== e) return;
    this.#entries.delete(k);
    const w = this.#watches.get(e.accountId);
    if (w === undefined) return;
    w.pools--;
    if (w.pools <= 0) {
      this.#watches.delete(e.accountId);
      w.stop();
    }
  }

  #evict(): void {
    while (this.#entries.size > this.#maxPools) {
      const oldest = this.#entries.values().next();
      if (oldest.done) return;
      this.#drop(oldest.value);
    }
  }
}
