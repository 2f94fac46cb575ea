/**
 * PoolService: the pools as the HTTP layer sees them (its PoolsPort,
 * src/http/context.ts). It owns what the store does not: the limits of this
 * deployment (PoolLimits from the configuration), the clock, new pool ids
 * (src/pools/pool-id.ts from crypto random bytes), and the changes it made,
 * told to every listener after they are committed.
 *
 * `onChange` is where the scheduling side plugs in (the pool owner, the events of
 * `GET /ws?pool=`): `created` (a new pool, its proxies due at once),
 * `updated` (settings, state or members changed; `previousState` and `state`
 * say whether the owner paused or resumed it, `added` how many proxies are
 * new and due at once), `sourced` (a list URL added `added` proxies, due at
 * once: told by PoolSources through `sourced()`), `deleted`. A listener that throws is logged and
 * does not undo the change or keep the others from hearing of it.
 *
 * Reads: with an owner in this process (useOwner: src/jobs/pool-owner.ts),
 * a pool it owns is counted and paged from its memory, others from the
 * durable copy (store.ts OwnerReads). A PATCH answers once the owner applied
 * it (`applied`), so its pool object counts what the PATCH did; a DELETE once
 * the owner gave back what it had reserved for the pool.
 *
 * Events: the owner's pause and resume (a PATCH of `state`) are published
 * here (`publishTo`: the events hub, the webhooks' outbox) once the PATCH is
 * applied, with the pool's counts then; the pauses for insufficient_checks
 * and their resumes are the pool actor's.
 *
 * Nothing here charges: pools are charged by their owner as checks are made
 * durable (src/jobs/pool-durable.ts), never when they are created or changed.
 */
import type { Db } from '../../db/client';
import type { Logger } from '../log';
import type { PoolLimits } from '../pools/limits';
import { ownerStateEvent } from '../pools/owner-events';
import { NO_POOL_EVENTS, type PoolEventsPort } from '../pools/ports';
import { newPoolId } from '../pools/pool-id';
import type { PoolProxiesQuery } from '../pools/query';
import type { PoolObject } from '../pools/shape';
import * as store from '../pools/store';
import type { PoolCreate, PoolPatch, PoolState } from '../pools/types';

export type PoolChange =
  | { kind: 'created'; accountId: string; poolId: string; added: number }
  | { kind: 'updated'; accountId: string; poolId: string; previousState: PoolState; state: PoolState; added: number; removed: number }
  | { kind: 'sourced'; accountId: string; poolId: string; added: number }
  | { kind: 'deleted'; accountId: string; poolId: string };

export type PoolChangeListener = (change: PoolChange) => void;

export interface PoolServiceOptions {
  db: Db;
  limits: PoolLimits;
  log: Pick<Logger, 'error'>;
  now?: () => number;
  /** Random bytes for new ids (crypto.getRandomValues by default). */
  randomBytes?: (n: number) => Uint8Array;
}

export class PoolService {
  readonly limits: PoolLimits;
  readonly #db: Db;
  readonly #log: Pick<Logger, 'error'>;
  readonly #now: () => number;
  readonly #random: (n: number) => Uint8Array;
  readonly #listeners = new Set<PoolChangeListener>();
  #owner: (store.OwnerReads & { applied(poolId: string): Promise<void> }) | undefined;
  #events: PoolEventsPort = NO_POOL_EVENTS;

  constructor(o: PoolServiceOptions) {
    this.limits = Object.freeze({ ...o.limits });
    this.#db = o.db;
    this.#log = o.log;
    this.#now = o.now ?? Date.now;
    this.#random = o.randomBytes ?? ((n) => crypto.getRandomValues(new Uint8Array(n)));
  }

  /** Reads of the pools the owner of this process holds come from its memory. */
  useOwner(owner: store.OwnerReads & { applied(poolId: string): Promise<void> }): void {
    this.#owner = owner;
  }

  /** Where the owner's pause and resume of a pool (a PATCH of `state`) are published: pool.paused (reason `owner`) / pool.resumed, with the counts after it. */
  publishTo(events: PoolEventsPort): void {
    this.#events = events;
  }

  /** Hears of every committed change; the returned function stops it. */
  onChange(listener: PoolChangeListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #tell(change: PoolChange): void {
    for (const l of this.#listeners) {
      try {
        l(change);
      } catch (err) {
        this.#log.error('a pool change listener failed', { pool: change.poolId, kind: change.kind, err });
      }
    }
  }

  async create(accountId: string, req: PoolCreate): Promise<store.PoolCreated> {
    const id = newPoolId(this.#random(64));
    const made = await store.createPool(this.#db, accountId, id, req, this.limits, this.#now());
    this.#tell({ kind: 'created', accountId, poolId: id, added: made.added });
    return made;
  }

  list(accountId: string): Promise<PoolObject[]> {
    return store.listPools(this.#db, accountId, this.#now(), this.#owner);
  }

  get(accountId: string, poolId: string): Promise<PoolObject | null> {
    return store.getPool(this.#db, accountId, poolId, this.#now(), this.#owner);
  }

  async update(accountId: string, poolId: string, patch: PoolPatch): Promise<store.PoolUpdated | null> {
    const u = await store.updatePool(this.#db, accountId, poolId, patch, this.limits, this.#now());
    if (u === null) return null;
    this.#tell({ kind: 'updated', accountId, poolId, previousState: u.previousState, state: u.pool.state, added: u.added, removed: u.removed });
    let out = u;
    if (this.#owner !== undefined) {
      await this.#owner.applied(poolId);
      out = { ...u, pool: (await this.get(accountId, poolId)) ?? u.pool };
    }
    const event = ownerStateEvent(poolId, u.previousState, out.pool.state, out.pool.counts, this.#now());
    if (event !== null) this.#events.publish(accountId, event);
    return out;
  }

  /** A pool's list URL added `added` proxies (committed by PoolSources): told to the listeners. */
  sourced(accountId: string, poolId: string, added: number): void {
    this.#tell({ kind: 'sourced', accountId, poolId, added });
  }

  async delete(accountId: string, poolId: string): Promise<boolean> {
    const gone = await store.deletePool(this.#db, accountId, poolId);
    if (!gone) return false;
    this.#tell({ kind: 'deleted', accountId, poolId });
    // the owner's reservation settled (its rest refunded) before the answer
    await this.#owner?.applied(poolId);
    return true;
  }

  /** One page of the pool's proxies, read at `nowMs` (uptime and latency are read from the history then). */
  async proxies(accountId: string, poolId: string, query: PoolProxiesQuery): Promise<(store.PoolProxiesListing & { nowMs: number }) | null> {
    const nowMs = this.#now();
    const listing = await store.proxiesPage(this.#db, accountId, poolId, query, this.#owner, nowMs);
    return listing === null ? null : { ...listing, nowMs };
  }
}
