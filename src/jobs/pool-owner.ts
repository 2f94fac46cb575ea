/**
 * PoolOwner: the pools this process owns (DECISIONS "Pools are actors"), one
 * PoolActor each (pool-actor.ts). Embedded, the process owns every pool (it
 * takes every lease); in a cluster the pools are placed by rendezvous
 * hashing over the nodes whose owner runs (#place, every half lease: a node
 * that joins takes its share, a node that leaves or dies gives its pools to
 * their next-best node once their leases expire), and a node keeps those it
 * holds by flushing. A pool is adopted at once by the node that hears of its
 * creation, and moves to its placement at that node's next look.
 *
 * It follows the PoolService's changes (`onChange`), one after another per
 * pool: `created` -> a new actor; `updated` -> the actor re-reads the pool's
 * row (settings, the owner's pause or resume) and, when members were added
 * or removed, reconciles them; `sourced` -> reconciled; `deleted` -> the
 * actor ends and gives its reservation's rest back. `applied(poolId)`
 * resolves once every change heard so far for the pool is applied (the
 * PoolService answers a PATCH after it, so the pool object it returns counts
 * from memory).
 *
 * A change heard for a pool another node holds (a cluster: the PATCH, pause,
 * resume or delete came to this node) is told to that node at once
 * (`changed` over src/cluster/pool-reads.ts), which applies it before it
 * answers; no answer: this node adopts the pool when it can, else the
 * holder sees it at its next look (#place re-reads the pools it holds).
 *
 * It is the PoolRecheckPort (the gateway's failed upstreams: due now in the
 * owning actor; the gateway coalesces them) and the reads port of the pool
 * store (store.ts OwnerReads: stats, pages and the one-pass listing from
 * memory) and of the gateway's working sets (`memory`). In a cluster
 * (`useRemote`) what it does not own is asked of the node holding the pool's
 * lease (reads and re-checks, src/cluster/pool-reads.ts; an unlimited
 * listing is pulled from there a chunk at a time: remoteListing), and it
 * answers the others for what it owns (ServedPools: the `local*` methods
 * and `listing`).
 *
 * On PGlite (no autovacuum) it vacuums the tables the flushes rewrite every
 * `vacuumEveryMs` (`vacuum` given by the composition).
 *
 * ## States (src/state-machine.ts)
 *
 *   created ──start()──> running ──stop()──> stopping ──> stopped
 *   created ──stop()──> stopped
 */
import type { Clock } from '../clock';
import { systemClock } from '../clock';
import type { Logger } from '../log';
import type { ListingStream, ListingText, OwnedPoolStats, PoolChangeNote, PoolRecheckPort, RemotePoolReads, ServedPools } from '../pools/ports';
import type { PoolProxiesQuery } from '../pools/query';
import type { ProxiesPage } from '../pools/proxies-sql';
import type { ProxyListing } from '../pools/proxy-listing';
import type { PoolRow } from '../pools/shape';
import * as store from '../pools/store';
import type { PoolUpstream } from '../pools/working-set';
import type { ProxyAddress } from '../proxy/types';
import { StateMachine, transitionTable } from '../state-machine';
import { PoolActor, type PoolActorDeps } from './pool-actor';
import { dropOwner, leaseHolder, placementView, settleGoneLeases } from './pool-durable';
import { placeOwner } from '../pools/placement';
import type { PoolChange } from './pool-service';

/** How long stop() waits for the probes it cut short, by default. */
export const STOP_GRACE_MS = 5000;
/** A pool's lease lasts this long past its owner's last flush (three flushes at the default). */
export const LEASE_MS = 30_000;
/** PGlite: the rewritten tables are vacuumed this often. */
export const VACUUM_EVERY_MS = 600_000;

type OwnerState = 'created' | 'running' | 'stopping' | 'stopped';
const TRANSITIONS = transitionTable<OwnerState>({
  created: ['running', 'stopped'],
  running: ['stopping'],
  stopping: ['stopped'],
  stopped: [],
});

export interface PoolOwnerOptions extends Omit<PoolActorDeps, 'onLost' | 'force' | 'clock' | 'random' | 'leaseMs'> {
  /** Where pool changes are heard (the PoolService). */
  pools?: { onChange(listener: (change: PoolChange) => void): () => void };
  /** Embedded: this process owns every pool (takes every lease). */
  embedded: boolean;
  clock?: Clock;
  random?: () => number;
  leaseMs?: number;
  stopGraceMs?: number;
  /** VACUUM of the tables the flushes rewrite (PGlite); absent: none. */
  vacuum?: () => Promise<void>;
  vacuumEveryMs?: number;
  log: Pick<Logger, 'warn' | 'error'>;
}

export class PoolOwner implements PoolRecheckPort, store.OwnerReads, ServedPools {
  readonly #o: PoolOwnerOptions;
  readonly #clock: Clock;
  readonly #machine = new StateMachine<OwnerState>('pool owner', TRANSITIONS, 'created');
  readonly #actors = new Map<string, PoolActor>();
  readonly #chains = new Map<string, Promise<void>>();
  #unsubscribe: () => void = () => {};
  #timers: (() => void)[] = [];
  #stopping: Promise<void> | null = null;
  #remote: RemotePoolReads | null = null;
  /** A cluster: pools seen without a live lease, since when (the fallback when their winner does not take them). */
  readonly #freeSince = new Map<string, number>();
  /** Actors of pools deleted (a listing of theirs still being written ends). */
  readonly #deleted = new WeakSet<PoolActor>();

  constructor(o: PoolOwnerOptions) {
    this.#o = o;
    this.#clock = o.clock ?? systemClock;
  }

  get state(): OwnerState {
    return this.#machine.state;
  }

  /** Pools with probes out now (/metrics' proxycheck_pool_rounds_running: the name of when pools checked in rounds). */
  get probingPools(): number {
    let n = 0;
    for (const a of this.#actors.values()) if (a.inFlight > 0) n++;
    return n;
  }

  /** The actor of a pool this process owns (tests). */
  actor(poolId: string): PoolActor | undefined {
    return this.#actors.get(poolId);
  }

  async start(): Promise<void> {
    await settleGoneLeases(this.#o.db, this.#clock.now());
    this.#machine.move('created', 'running');
    this.#unsubscribe = this.#o.pools?.onChange((c) => this.#heard(c)) ?? (() => {});
    if (this.#o.embedded) for (const row of await store.allPoolRows(this.#o.db)) await this.#adopt(row, true);
    else {
      await this.#place();
      this.#every(this.#leaseMs / 2, () => this.#place());
    }
    if (this.#o.vacuum !== undefined) this.#every(this.#o.vacuumEveryMs ?? VACUUM_EVERY_MS, () => this.#o.vacuum!());
  }

  #every(ms: number, fn: () => Promise<void>): void {
    let cancel = (): void => {};
    const tick = (): void => {
      cancel = this.#clock.after(
        ms,
        () => {
          if (this.state !== 'running') return;
          void fn()
            .catch((err: unknown) => this.#o.log.error('a pool owner task failed; tried again', { err }))
            .finally(tick);
        },
        { unref: true },
      );
    };
    tick();
    this.#timers.push(() => cancel());
  }

  get #leaseMs(): number {
    return this.#o.leaseMs ?? LEASE_MS;
  }

  /**
   * A cluster, every half lease: this node's owner renews its presence
   * (pool_owners), and each pool goes to its placement (pools/placement.ts
   * over the live owners). A pool this node holds and another live owner now
   * wins (a node joined) is flushed and released: the winner takes it at its
   * next look. A free pool (no live lease) is taken by its winner; by anyone
   * once its lease has been expired for a whole lease (the winner did not
   * come). The pools held are re-read (another node may have changed them).
   */
  async #place(): Promise<void> {
    const me = this.#o.nodeId;
    const { owners, leases } = await placementView(this.#o.db, me, this.#clock.now() + this.#leaseMs);
    const rows = await store.allPoolRows(this.#o.db);
    const ids = new Set(rows.map((r) => r.id));
    for (const id of [...this.#freeSince.keys()]) if (!ids.has(id)) this.#freeSince.delete(id);
    for (const row of rows) {
      if (this.state !== 'running') return;
      const winner = placeOwner(row.id, owners);
      const a = this.#actors.get(row.id);
      if (a !== undefined) {
        if (winner !== null && winner !== me) this.#on(row.id, () => this.#release(row.id));
        else this.#on(row.id, async () => (a.configure(row), a.reconcile()));
        continue;
      }
      const lease = leases.get(row.id);
      if (lease !== undefined && lease.expiredMs <= 0) {
        this.#freeSince.delete(row.id);
        continue;
      }
      const since = this.#freeSince.get(row.id) ?? this.#clock.now();
      this.#freeSince.set(row.id, since);
      // the winner takes it; anyone once it has been free for a whole lease (its winner did not come)
      if (winner === me || winner === null || this.#clock.now() - since > this.#leaseMs) {
        await this.#adopt(row, true);
        if (this.#actors.has(row.id)) this.#freeSince.delete(row.id);
      }
    }
  }

  /** A pool this node holds moves to another owner: a last flush, the lease released (its reservation's rest refunded). */
  async #release(poolId: string): Promise<void> {
    const a = this.#actors.get(poolId);
    if (a === undefined) return;
    this.#actors.delete(poolId);
    await a.stop(this.#o.stopGraceMs ?? STOP_GRACE_MS);
  }

  /** An actor for the pool when its lease can be taken; `spread`: a start or a take-over (the overdue spread), not a new pool. */
  async #adopt(row: PoolRow, spread: boolean): Promise<void> {
    if (this.state !== 'running' || this.#actors.has(row.id)) return;
    const actor: PoolActor = new PoolActor(
      {
        ...this.#o,
        clock: this.#clock,
        random: this.#o.random ?? Math.random,
        leaseMs: this.#o.leaseMs ?? LEASE_MS,
        force: this.#o.embedded,
        onLost: () => {
          if (this.#actors.get(row.id) === actor) this.#actors.delete(row.id);
        },
      },
      row,
    );
    this.#actors.set(row.id, actor);
    try {
      if (!(await actor.start(spread))) this.#actors.delete(row.id);
    } catch (err) {
      this.#actors.delete(row.id);
      this.#o.log.error('taking a pool failed', { pool: row.id, err });
    }
  }

  /** `task` after the pool's earlier changes (one at a time per pool). */
  #on(poolId: string, task: () => Promise<void>): void {
    const next = (this.#chains.get(poolId) ?? Promise.resolve())
      .then(task)
      .catch((err: unknown) => this.#o.log.error('applying a pool change failed', { pool: poolId, err }));
    this.#chains.set(poolId, next);
    void next.then(() => {
      if (this.#chains.get(poolId) === next) this.#chains.delete(poolId);
    });
  }

  /** Resolves once the changes heard so far for the pool are applied. */
  applied(poolId: string): Promise<void> {
    return this.#chains.get(poolId) ?? Promise.resolve();
  }

  #heard(c: PoolChange): void {
    if (this.state !== 'running') return;
    const id = c.poolId;
    const note: PoolChangeNote | null = c.kind === 'created' ? null : c.kind === 'updated' ? (c.added + c.removed > 0 ? 'members' : 'settings') : c.kind;
    this.#on(id, async () => {
      if (note !== null && !this.#actors.has(id)) {
        // held by another node (a cluster): told at once, applied there before the change is answered
        const node = await this.#holder(id);
        if (node !== null && (await this.#remote!.changed(node, id, note))) return;
      }
      if (note === 'deleted') return this.#deleteActor(id);
      const row = await store.poolRow(this.#o.db, id);
      if (row === null) return;
      if (!this.#actors.has(id)) return this.#adopt(row, false);
      await this.#apply(id, note, row);
    });
  }

  /** The pool was deleted: its actor ends (its listings with it: #deleted) and gives its reservation's rest back. */
  async #deleteActor(id: string): Promise<void> {
    const actor = this.#actors.get(id);
    this.#actors.delete(id);
    if (actor === undefined) return;
    this.#deleted.add(actor);
    await actor.deleted();
  }

  /** A change applied to the actor of a pool held here: its row re-read (settings), its members reconciled. */
  async #apply(id: string, note: PoolChangeNote | null, row: PoolRow): Promise<void> {
    const actor = this.#actors.get(id);
    if (actor === undefined) return;
    if (note === 'settings' || note === 'members') actor.configure(row);
    if (note === 'sourced' || note === 'members') await actor.reconcile();
  }

  /** A change made through another node's PoolService (src/cluster/pool-reads.ts): applied after this pool's earlier changes. */
  async localChanged(poolId: string, note: PoolChangeNote): Promise<boolean> {
    if (this.state !== 'running' || !this.#actors.has(poolId)) return false;
    this.#on(poolId, async () => {
      if (note === 'deleted') return this.#deleteActor(poolId);
      const row = await store.poolRow(this.#o.db, poolId);
      if (row !== null) await this.#apply(poolId, note, row);
    });
    await this.applied(poolId);
    return true;
  }

  /** A cluster: the pools other nodes own are asked of them (src/cluster/pool-reads.ts). */
  useRemote(remote: RemotePoolReads): void {
    this.#remote = remote;
  }

  /** The node holding the lease of a pool this process does not own, when there is a remote to ask. */
  async #holder(poolId: string): Promise<string | null> {
    if (this.#remote === null) return null;
    const node = await leaseHolder(this.#o.db, poolId);
    return node === null || node === this.#o.nodeId ? null : node;
  }

  recheck(poolId: string, proxies: readonly ProxyAddress[]): void {
    if (this.localRecheck(poolId, proxies)) return;
    void this.#holder(poolId).then(
      (node) => node !== null && this.#remote!.recheck(node, poolId, proxies),
      (err: unknown) => this.#o.log.warn('a pool re-check found no owner to ask', { pool: poolId, err }),
    );
  }

  async stats(poolId: string): Promise<OwnedPoolStats | null> {
    const local = this.localStats(poolId);
    if (local !== null) return local;
    const node = await this.#holder(poolId);
    return node === null ? null : this.#remote!.stats(node, poolId);
  }

  async page(poolId: string, query: PoolProxiesQuery): Promise<ProxiesPage | null> {
    const local = this.localPage(poolId, query);
    if (local !== null) return local;
    const node = await this.#holder(poolId);
    return node === null ? null : this.#remote!.page(node, poolId, query);
  }

  /**
   * Every match of `query` from this process's memory in one pass (an
   * unlimited txt / csv listing, src/pools/proxy-listing.ts); null when the
   * pool is not held here (then it is paged as ever: from the node holding
   * it, or the durable copy). It ends when the pool is deleted; a pool moved
   * to another node meanwhile is written to its end from the snapshot.
   */
  listing(poolId: string, query: PoolProxiesQuery): ProxyListing | null {
    const a = this.#loaded(poolId);
    return a === undefined ? null : a.listing(query, () => this.#deleted.has(a));
  }

  /**
   * Every match of `query` from the memory of the node holding the pool,
   * a chunk at a time (src/cluster/pool-reads.ts); null when this process
   * has no remote to ask, nobody holds the pool, or its holder does not
   * answer (then the durable copy answers).
   */
  async remoteListing(poolId: string, query: PoolProxiesQuery, text: ListingText): Promise<ListingStream | null> {
    const node = await this.#holder(poolId);
    return node === null ? null : this.#remote!.listing(node, poolId, query, text);
  }

  /** The actor of a pool this process holds and has loaded (one still loading answers nothing yet: the durable copy does). */
  #loaded(poolId: string): PoolActor | undefined {
    const a = this.#actors.get(poolId);
    return a !== undefined && a.state !== 'created' ? a : undefined;
  }

  localRecheck(poolId: string, proxies: readonly ProxyAddress[]): boolean {
    const a = this.#loaded(poolId);
    a?.recheck(proxies);
    return a !== undefined;
  }

  localStats(poolId: string): OwnedPoolStats | null {
    const a = this.#loaded(poolId);
    return a === undefined ? null : { counts: a.counts(), ...a.schedule(), targetCounts: a.targetCounts() };
  }

  localPage(poolId: string, query: PoolProxiesQuery): ProxiesPage | null {
    return this.#loaded(poolId)?.page(query) ?? null;
  }

  /** The account's pool's working proxies from memory; undefined when this process does not own the pool. */
  memory(accountId: string, poolId: string): PoolUpstream[] | undefined {
    const a = this.#loaded(poolId);
    return a !== undefined && a.accountId === accountId ? a.upstreams() : undefined;
  }

  /** The gateway's working set (WorkingSetsOptions.memory): this process's memory, else the owner's; undefined: read the durable copy. */
  async upstreams(accountId: string, poolId: string): Promise<PoolUpstream[] | undefined> {
    const local = this.memory(accountId, poolId);
    if (local !== undefined) return local;
    const node = await this.#holder(poolId);
    return node === null ? undefined : ((await this.#remote!.upstreams(node, accountId, poolId)) ?? undefined);
  }

  /** Every owned pool flushed now (tests, a stop). */
  async flushAll(): Promise<void> {
    await Promise.all([...this.#actors.values()].map((a) => a.flush()));
  }

  stop(): Promise<void> {
    return (this.#stopping ??= this.#stop());
  }

  async #stop(): Promise<void> {
    if (this.state === 'created') return void this.#machine.move('created', 'stopped');
    this.#machine.move('running', 'stopping');
    this.#unsubscribe();
    for (const cancel of this.#timers) cancel();
    await Promise.all([...this.#chains.values()]);
    const grace = this.#o.stopGraceMs ?? STOP_GRACE_MS;
    await Promise.all([...this.#actors.values()].map((a) => a.stop(grace)));
    this.#actors.clear();
    if (!this.#o.embedded) await dropOwner(this.#o.db, this.#o.nodeId).catch((err: unknown) => this.#o.log.warn('dropping this node from the pools\' placement failed', { err }));
    this.#machine.move('stopping', 'stopped');
  }
}
