/**
 * PoolEventsHub: fans a pool's events (events.ts) out to the owner's
 * `GET /ws?pool={id}` subscribers and to the in-process watchers (the
 * gateway's working sets, working-sets.ts). Pure fan-out: no I/O, no timer;
 * in a cluster src/cluster/pool-events.ts carries the events between the
 * nodes' hubs and feeds each node's hub with the others'.
 *
 * Keys: a subscription is to one pool of one account (`account|pool`); an
 * event published for (account, pool) reaches only the subscriptions of that
 * key, so an account never hears another's pools. The route checks that the
 * pool is the account's before it subscribes (404 otherwise).
 *
 * Subscriptions: open -> (closed by the hub: the pool was deleted 1000, too
 * slow 1013, shutdown 1000) | (unsubscribed by the socket's close handler).
 * An event is sent as one JSON text message; a subscriber whose unsent
 * buffer passes `maxBufferedBytes` is closed with 1013 instead (it does not
 * read), so nothing here grows with a slow reader.
 *
 * Caps (refused with 1013 "try again later", as the progress hub's): per
 * pool (`maxPerPool`, 32), per account (`maxPerAccount`, WS_MAX_PER_ACCOUNT,
 * 64), pools followed on this node (`maxPools`, 10 000).
 *
 * Watchers (`watch(account, fn)`) hear every event of the account's pools and
 * `closed` when a pool is deleted; a watcher that throws is isolated.
 */
import type { PoolEventsPort } from './ports';
import type { PoolEvent } from './events';

/** A WebSocket as the hub sees it (the same shape as the progress hub's Subscriber, src/jobs/ports.ts). */
export interface Subscriber {
  readonly accountId: string | null;
  send(text: string): void;
  close(code: number, reason: string): void;
  /** Bytes queued and not yet sent to the peer. */
  bufferedAmount(): number;
}

export type SubscribeOutcome = { ok: true; unsubscribe: () => void } | { ok: false; code: number; reason: string };

export const POOL_WS_CLOSE = Object.freeze({ NORMAL: 1000, TRY_AGAIN_LATER: 1013 } as const);

/** What a watcher hears: an event, or that a pool is gone. */
export type PoolSignal = { kind: 'event'; event: PoolEvent } | { kind: 'closed'; pool: string };
export type PoolWatcher = (signal: PoolSignal) => void;

/** What the routes and the gateway need of the hub (one node's, or the cluster adapter around it). */
export interface PoolEventsFeed extends PoolEventsPort {
  /** `sub` follows the account's pool `poolId` (the caller checked it is the account's). */
  subscribe(accountId: string, poolId: string, sub: Subscriber): SubscribeOutcome;
  /** The pool was deleted: its subscribers are closed (1000) and watchers told. */
  closePool(accountId: string, poolId: string): void;
  /** Hears the account's pools' events; the function returned stops it. */
  watch(accountId: string, fn: PoolWatcher): () => void;
  /** Open /ws?pool= subscriptions (metrics, tests). */
  readonly subscribers: number;
  closeAll(): void;
}

export interface PoolHubOptions {
  maxBufferedBytes?: number;
  maxPerPool?: number;
  maxPerAccount?: number;
  maxPools?: number;
}

const keyOf = (accountId: string, poolId: string): string => `${accountId}|${poolId}`;

export class PoolEventsHub implements PoolEventsFeed {
  readonly #pools = new Map<string, Set<Subscriber>>();
  readonly #perAccount = new Map<string, number>();
  readonly #watchers = new Map<string, Set<PoolWatcher>>();
  readonly #maxBuffered: number;
  readonly #maxPerPool: number;
  readonly #maxPerAccount: number;
  readonly #maxPools: number;
  #subscribers = 0;

  constructor(o: PoolHubOptions = {}) {
    this.#maxBuffered = o.maxBufferedBytes ?? 256 * 1024;
    this.#maxPerPool = o.maxPerPool ?? 32;
    this.#maxPerAccount = o.maxPerAccount ?? 64;
    this.#maxPools = o.maxPools ?? 10_000;
  }

  get subscribers(): number {
    return this.#subscribers;
  }

  /** Pools with a subscriber (tests). */
  get pools(): number {
    return this.#pools.size;
  }

  /** Accounts with a watcher (tests). */
  get watchedAccounts(): number {
    return this.#watchers.size;
  }

  /** Whether anybody on this node listens to the account (a subscriber or a watcher). */
  listens(accountId: string): boolean {
    return (this.#perAccount.get(accountId) ?? 0) > 0 || this.#watchers.has(accountId);
  }

  subscribe(accountId: string, poolId: string, sub: Subscriber): SubscribeOutcome {
    const key = keyOf(accountId, poolId);
    let subs = this.#pools.get(key);
    if (subs !== undefined && subs.size >= this.#maxPerPool) return { ok: false, code: POOL_WS_CLOSE.TRY_AGAIN_LATER, reason: 'too many subscribers for this pool' };
    if ((this.#perAccount.get(accountId) ?? 0) >= this.#maxPerAccount) {
      return { ok: false, code: POOL_WS_CLOSE.TRY_AGAIN_LATER, reason: 'too many subscriptions for this account (WS_MAX_PER_ACCOUNT)' };
    }
    if (subs === undefined) {
      if (this.#pools.size >= this.#maxPools) return { ok: false, code: POOL_WS_CLOSE.TRY_AGAIN_LATER, reason: 'too many pools followed' };
      subs = new Set();
      this.#pools.set(key, subs);
    }
    subs.add(sub);
    this.#subscribers++;
    this.#perAccount.set(accountId, (this.#perAccount.get(accountId) ?? 0) + 1);
    return { ok: true, unsubscribe: () => this.#remove(accountId, key, sub) };
  }

  /** Takes `sub` out and uncounts it (once, however often it is called). */
  #remove(accountId: string, key: string, sub: Subscriber): void {
    const subs = this.#pools.get(key);
    if (subs === undefined || !subs.delete(sub)) return;
    if (subs.size === 0) this.#pools.delete(key);
    this.#subscribers--;
    const n = (this.#perAccount.get(accountId) ?? 1) - 1;
    if (n <= 0) this.#perAccount.delete(accountId);
    else this.#perAccount.set(accountId, n);
  }

  publish(accountId: string, event: PoolEvent): void {
    this.#tell(accountId, { kind: 'event', event });
    const key = keyOf(accountId, event.pool);
    const subs = this.#pools.get(key);
    if (subs === undefined) return;
    const text = JSON.stringify(event);
    for (const s of [...subs]) {
      if (s.bufferedAmount() > this.#maxBuffered) {
        this.#remove(accountId, key, s);
        s.close(POOL_WS_CLOSE.TRY_AGAIN_LATER, 'subscriber too slow');
        continue;
      }
      try {
        s.send(text);
      } catch {
        // a closed socket: its close handler unsubscribes it
      }
    }
  }

  closePool(accountId: string, poolId: string): void {
    this.#tell(accountId, { kind: 'closed', pool: poolId });
    const key = keyOf(accountId, poolId);
    const subs = this.#pools.get(key);
    if (subs === undefined) return;
    for (const s of [...subs]) {
      this.#remove(accountId, key, s);
      s.close(POOL_WS_CLOSE.NORMAL, 'pool deleted');
    }
  }

  watch(accountId: string, fn: PoolWatcher): () => void {
    let set = this.#watchers.get(accountId);
    if (set === undefined) {
      set = new Set();
      this.#watchers.set(accountId, set);
    }
    const own = set;
    const w: PoolWatcher = (s) => fn(s); // a distinct entry per call, even for the same fn
    own.add(w);
    return () => {
      own.delete(w);
      if (own.size === 0 && this.#watchers.get(accountId) === own) this.#watchers.delete(accountId);
    };
  }

  #tell(accountId: string, signal: PoolSignal): void {
    const set = this.#watchers.get(accountId);
    if (set === undefined) return;
    for (const w of [...set]) {
      try {
        w(signal);
      } catch {
        // a watcher's failure is its own: the others and the subscribers still hear
      }
    }
  }

  /** Closes every subscriber (shutdown) and forgets the watchers. Safe twice. */
  closeAll(): void {
    for (const [key, subs] of [...this.#pools]) {
      const accountId = key.slice(0, key.indexOf('|'));
      for (const s of [...subs]) {
        this.#remove(accountId, key, s);
        s.close(POOL_WS_CLOSE.NORMAL, 'server shutting down');
      }
    }
    this.#watchers.clear();
  }
}
