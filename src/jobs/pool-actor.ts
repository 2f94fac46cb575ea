/**
 * PoolActor: one pool's owner (DECISIONS "Pools are actors"). It holds the
 * pool's lease (pool-durable.ts), its proxies in compact arrays
 * (src/pools/proxy-table.ts) and its schedule in a due-time heap
 * (src/pools/due-heap.ts), and feeds due proxies to the SAME probe execution
 * as /check (ProbeExecution, priority `background`: only what the region's
 * checks leave) continuously: no rounds, no barrier. Each result folds in
 * place (src/pools/table-fold.ts) on the main thread; nothing touches the
 * database on the way.
 *
 * Charging: checks are reserved ahead through the ledger under the lease's
 * run id (a reservation covers many checks; a proxy is only granted to the
 * probes while reserved units are left). Every `flushMs` (POOL_FLUSH_S) the
 * dirty proxies are written in chunks of FLUSH_CHUNK, each chunk one fenced
 * transaction that also settles exactly the checks it makes durable; the
 * actor pauses between chunks about as long as a chunk took
 * (src/pools/flush-pace.ts: a /check's statements and the HTTP answers go
 * between them). A
 * flush is a durable batch: `round.completed` (at most one per flush) with
 * the batch's tally, and its record (a pool_rounds row and a completed scan
 * for /me usage) made by its first chunk that settles and added to by each
 * later one, in the chunk's transaction (a crash between chunks leaves the
 * record equal to what was settled and charged). A check the checker did not
 * perform (`checker_overloaded`, cut short) and a proxy refused before any
 * connection (blocked_target) are never charged.
 *
 * With an outbox (the webhooks'), each proxy.up / proxy.down waits with its
 * slot and goes out as pool.proxies_changed messages written in the
 * transaction of the chunk that makes the slot durable: a crash loses the
 * unflushed verdicts and their messages together, never one without the other.
 *
 * Reads come from memory: counts, the next due time, checks per day, pages
 * (src/pools/proxy-page.ts), an unlimited txt / csv listing in one pass
 * (src/pools/proxy-listing.ts), the gateway's working set.
 *
 * ## States (src/state-machine.ts)
 *
 *   created ──start()──> running ⇄ starved     (the balance cannot pay: pool.paused
 *      │                   ⇅                    insufficient_checks; tried again every
 *      │                 idle                   WAIT_RECHECK_MS, then pool.resumed)
 *      │                   (paused by its owner: nothing probed, reads served)
 *      └─────────> any of them ──stop() / deleted()──> stopping ──> stopped
 *                  any of them ──a flush found another token──> lost (nothing more
 *                                written or charged; what it reserved since is given back)
 *
 * A slot's own states (slotState): HEAP (scheduled), READY (due, waiting for a
 * grant), FLIGHT (probing), TARGETS (passed the judge check; its pool's
 * targets being fetched through it), DEAD (removed from the pool).
 *
 * Targets (DECISIONS "Targets in pools"): a proxy whose check passed the
 * judge gets one (proxy, target) pair per customUrls entry, fetched as
 * /check's custom-URL stage fetches them (runCustomUrl: same timeout, no
 * redirects, body up to 1 MiB) through its own protocol's settings; pairs
 * are asked of the execution beside the probes but never reserved nor
 * charged; the proxy is due again once its pairs are in. A failed proxy
 * makes no pair. Each target's state per proxy is a TargetColumns of the
 * table (pools/target-columns.ts), flushed with the proxy's state row.
 */
import type { Db } from '../../db/client';
import { nextTurn, type Clock } from '../clock';
import { errorCode } from '../errors';
import type { Logger } from '../log';
import type { CustomUrlResult, ProbeResult, ProbeSettings, ProbeTask } from '../probe/types';
import { proxyKey } from '../proxy/dedupe';
import type { ProxyType } from '../proxy/types';
import { DueHeap } from '../pools/due-heap';
import { pausedEvent, proxyEvent, resumedEvent, roundCompletedEvent } from '../pools/events';
import { emptyStateBatch, emptyVerdictBatch } from '../pools/flush-sql';
import { flushGapMs } from '../pools/flush-pace';
import type { PoolEvent } from '../pools/events';
import type { PoolBatchOutbox, PoolEventsPort } from '../pools/ports';
import { memoryPage } from '../pools/proxy-page';
import { listingOrder, MemoryListing, type ProxyListing } from '../pools/proxy-listing';
import { ProxyTable } from '../pools/proxy-table';
import type { PoolProxiesQuery } from '../pools/query';
import { checksPerDay, clampDue, spreadOverdue, type Random } from '../pools/schedule';
import { addressOf, type PoolProxyRow, type PoolRow } from '../pools/shape';
import type { ProxiesPage } from '../pools/proxies-sql';
import { pauseForChecks, resumeForChecks } from '../pools/store';
import { foldNotTried, foldSlot } from '../pools/table-fold';
import { pushStateSlot, pushVerdictSlot } from '../pools/table-batch';
import type { TargetState } from '../pools/target-columns';
import { emptyTargetBatch, pushTargetSlot } from '../pools/targets-sql';
import type { PoolCounts } from '../pools/types';
import { upstreamOfRow, type PoolUpstream } from '../pools/working-set';
import type { ProxyAddress } from '../proxy/types';
import { StateMachine, transitionTable } from '../state-machine';
import { flushChunk, type PoolTx, loadPoolRows, loadPoolTargets, poolProxyIds, refundLost, releaseLease, reserveChecks, takeLease, PoolLeaseLostError, type PoolLease } from './pool-durable';
import type { ExecutionHandle, GeoPort, ProbeExecution, ResultBatch, SettingsFactory } from './ports';
import { DueTimer } from './pool-due-timer';
import { originGeo, probeSettingsFor } from './probe-setup';
import { refusedResult, splitRefused } from './refused-targets';
import { probeTarget, splitBySettings } from './shards';

/**
 * Proxies per flush transaction. On PGlite a chunk's transaction runs in this thread: 250 rows
 * block it ~10 ms (1 000 did ~25-55 ms) for ~1.3x the per-row time of 1 000-row chunks
 * (the chunk's fixed statements); bench/RESULTS.md "Flush cost per proxy (issue 29)".
 */
export const FLUSH_CHUNK = 250;
/** A pool that could not pay tries again after this long. */
export const WAIT_RECHECK_MS = 5000;
/** Most units one reservation takes. */
export const MAX_RESERVATION = 10_000;
/** The timer looks at the heap at least this often (a region coming back, a late clock). */
export const MAX_SLEEP_MS = 5000;
/**
 * A look takes the proxies due within this much after now too (at most 5 %
 * of the interval: half the schedule's jitter, so a proxy is still checked
 * within its interval): the due times of a steady pool come one by one,
 * and each look is a demand, a grant and a shard message to a lane; taken
 * a second at a time they go out in grants of many (issue 29: 330 due a
 * second were ~50 shards a second of a few probes each).
 */
export const DUE_EARLY_MS = 1000;
/**
 * The proxies taken early are asked of the probes this many at a time (the
 * region scheduler's maxGrant: one grant, one shard), unless the earliest of
 * them is due now: then what is ready goes at once. A pool's results come
 * back a few at a time, and asking at each batch made a shard of ~6 probes
 * per results batch; a probe thread pays per shard and per wake-up, not only
 * per probe (issue 29: at 750 checks/s, shards of 8 cost the probe threads
 * ~270 µs a probe, shards of 64 ~195, a one-shot's ~190; bench/RESULTS.md
 * "Where a pool check's CPU went"). Never later than due: only how early.
 */
export const ASK_BATCH = 64;

const HEAP = 0;
const READY = 1;
const FLIGHT = 2;
const DEAD = 3;
const TARGETS = 4;

/** One (proxy, target) fetch waiting for a probe slot. */
interface Pair {
  slot: number;
  name: string;
}

export type ActorState = 'created' | 'running' | 'starved' | 'idle' | 'stopping' | 'stopped' | 'lost';
const TRANSITIONS = transitionTable<ActorState>({
  created: ['running', 'starved', 'idle', 'stopping', 'lost'],
  running: ['starved', 'idle', 'stopping', 'lost'],
  starved: ['running', 'idle', 'stopping', 'lost'],
  idle: ['running', 'starved', 'stopping', 'lost'],
  stopping: ['stopped'],
  stopped: [],
  lost: ['stopping'],
});

export interface PoolActorDeps {
  db: Db;
  execution: ProbeExecution;
  settings: SettingsFactory;
  geo: GeoPort;
  events: PoolEventsPort;
  clock: Clock;
  random: Random;
  log: Pick<Logger, 'warn' | 'error'>;
  nodeId: string;
  /** POOL_FLUSH_S in ms. */
  flushMs: number;
  leaseMs: number;
  /** Take the lease whoever holds it (embedded: the process owns every pool). */
  force: boolean;
  /** ALLOW_PRIVATE_TARGETS (known before the judge starts: the probes' settings are made only once it has); absent: the settings' own. */
  allowPrivateTargets?: boolean;
  /** false: no agent serves the region now (a cluster): nothing is probed meanwhile. */
  regionAvailable?: (region: string) => boolean;
  /** Told of each durable batch, pause and resume (metrics). */
  onOutcome?: (outcome: 'paused' | 'resumed' | { working: number; failed: number }) => void;
  /** Told when the lease was lost (the owner forgets the actor). */
  onLost?: () => void;
  /** The webhooks' pool.proxies_changed, written in the transaction of the chunk that makes the proxies durable; absent: none. */
  outbox?: PoolBatchOutbox<PoolTx>;
}

interface Tally {
  checked: number;
  working: number;
  failed: number;
  not_tried: number;
}

const zeroTally = (): Tally => ({ checked: 0, working: 0, failed: 0, not_tried: 0 });

export class PoolActor {
  readonly #d: PoolActorDeps;
  #pool: PoolRow;
  readonly #machine = new StateMachine<ActorState>('pool actor', TRANSITIONS, 'created');
  readonly #t = new ProxyTable(64);
  #heap = new DueHeap(this.#t.nextCheck, 64);
  #slotState = new Uint8Array(64);
  /** Charged checks folded since the slot's last flush. */
  #unsettled = new Uint16Array(64);
  #dirty = new Uint8Array(64);
  #verdictDirty = new Uint8Array(64);
  #dirtyList: number[] = [];
  #ready: number[] = [];
  #readyHead = 0;
  readonly #flight = new Set<number>();
  readonly #counts: PoolCounts = { total: 0, working: 0, failed: 0, unchecked: 0 };
  /** Live proxies per consecutive-failure count (checks per day). */
  readonly #failures = new Map<number, number>();
  /** The probes' settings, made at first use (the judge starts after the owner) and again after a change. */
  #settingsMade: ProbeSettings | null = null;
  #lease: PoolLease | null = null;
  #exec: ExecutionHandle | null = null;
  #abort = new AbortController();
  #demanded = 0;
  #reserved = 0;
  #settled = 0;
  #pendingCharged = 0;
  #reserving: Promise<void> | null = null;
  #unlimited = false;
  #tally = zeroTally();
  #batchStartedMs = 0;
  /** Fires #pump at the heap's earliest due time (at least every MAX_SLEEP_MS). */
  #timer: DueTimer;
  #flushTimer: (() => void) | null = null;
  #flushing: Promise<void> | null = null;
  #waitUntil = 0;
  #shards = new Set<Promise<void>>();
  readonly #cancelled = new WeakSet<ExecutionHandle>();
  /** Pairs of proxies in TARGETS waiting for a slot, and how many of them are asked of the execution. */
  #pairs: Pair[] = [];
  #pairsHead = 0;
  #pairsDemanded = 0;
  /** Pairs not yet reported per slot in TARGETS. */
  #pairsLeft = new Uint8Array(64);
  /** The custom-URL settings per protocol (made at first use, again after a change). */
  #urlSettings = new Map<ProxyType, ProbeSettings>();
  /** The judge check's settings of the protocols proxies named by their scheme (made at first use, again after a change). */
  #ownSettings = new Map<ProxyType, ProbeSettings>();
  #targetDirty = new Uint8Array(64);
  /** proxy.up / proxy.down per slot since its last flush (only with an outbox): they go out with the slot's chunk. */
  readonly #slotEvents = new Map<number, PoolEvent[]>();

  constructor(deps: PoolActorDeps, pool: PoolRow) {
    this.#d = deps;
    this.#pool = pool;
    this.#timer = new DueTimer(deps.clock, () => this.#pump(), { minDelayMs: 20, maxDelayMs: MAX_SLEEP_MS });
    this.#t.setTargets(pool.customUrls.map((r) => r.name));
  }

  get #settings(): ProbeSettings {
    return (this.#settingsMade ??= probeSettingsFor(this.#d.settings, this.#pool.type, this.#pool.timeoutMs, this.#pool.https));
  }

  get state(): ActorState {
    return this.#machine.state;
  }

  get poolId(): string {
    return this.#pool.id;
  }

  get accountId(): string {
    return this.#pool.accountId;
  }

  /** Probes out now. */
  get inFlight(): number {
    return this.#flight.size;
  }

  /** The lease this actor holds (null before start or once lost). */
  get lease(): PoolLease | null {
    return this.#lease;
  }

  /**
   * Takes the lease (false: another node holds it), loads the pool, starts
   * probing and flushing. `spread`: what is overdue is spread over the
   * interval first (a restart or a take-over: no burst); a new pool's
   * proxies are due at once.
   */
  async start(spread: boolean): Promise<boolean> {
    const p = this.#pool;
    const nowMs = this.#d.clock.now();
    this.#lease = await takeLease(this.#d.db, { poolId: p.id, accountId: p.accountId, nodeId: this.#d.nodeId, nowMs, leaseMs: this.#d.leaseMs, force: this.#d.force });
    if (this.#lease === null) return false;
    const last = await loadPoolRows(this.#d.db, p.id, 0, (rows) => this.#append(rows));
    await loadPoolTargets(this.#d.db, p.id, 0, last, (id, name, st) => this.#loadTarget(id, name, st));
    this.#t.fit(); // the load's size is known now: no idle slots (issue 29)
    this.#ensure(this.#t.capacity);
    if (spread) this.#spreadOverdue(this.#d.clock.now());
    this.#batchStartedMs = this.#d.clock.now();
    const next: ActorState = p.state === 'active' ? 'running' : p.pausedReason === 'insufficient_checks' ? 'starved' : 'idle';
    this.#machine.move('created', next);
    this.#scheduleFlush();
    this.#pump();
    return true;
  }

  // ---- membership and settings -------------------------------------------------------------------

  #append(rows: readonly PoolProxyRow[]): void {
    for (const row of rows) {
      const slot = this.#t.add(row);
      this.#ensure(this.#t.capacity);
      this.#slotState[slot] = HEAP;
      this.#heap.push(slot);
      this.#countIn(slot, 1);
    }
  }

  /** A durable target row into the slot of its proxy (ids ascend with the slots). */
  #loadTarget(proxyId: number, name: string, st: TargetState): void {
    const t = this.#t;
    let lo = 0;
    let hi = t.size - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const id = t.id[mid]!;
      if (id === proxyId) {
        t.target(name)?.set(mid, st);
        return;
      }
      if (id < proxyId) lo = mid + 1;
      else hi = mid - 1;
    }
  }

  /** The per-slot arrays and the heap sized for `cap` slots (the table's capacity: grown, or fitted after a load). */
  #ensure(cap: number): void {
    if (this.#slotState.length === cap) return;
    const grow = <A extends Uint8Array | Uint16Array>(a: A, make: (n: number) => A): A => {
      const b = make(cap);
      b.set(a.subarray(0, Math.min(a.length, cap)) as never);
      return b;
    };
    this.#slotState = grow(this.#slotState, (n) => new Uint8Array(n));
    this.#unsettled = grow(this.#unsettled, (n) => new Uint16Array(n));
    this.#dirty = grow(this.#dirty, (n) => new Uint8Array(n));
    this.#verdictDirty = grow(this.#verdictDirty, (n) => new Uint8Array(n));
    this.#pairsLeft = grow(this.#pairsLeft, (n) => new Uint8Array(n));
    this.#targetDirty = grow(this.#targetDirty, (n) => new Uint8Array(n));
    this.#heap.resize(this.#t.nextCheck, cap);
  }

  /** Slot counted in (+1) or out (-1) of the counts and the failures histogram. */
  #countIn(slot: number, sign: 1 | -1): void {
    const status = this.#t.statusOf(slot);
    this.#counts.total += sign;
    this.#counts[status] += sign;
    const f = this.#t.failures[slot]!;
    this.#failures.set(f, (this.#failures.get(f) ?? 0) + sign);
  }

  #markDirty(slot: number): void {
    if (this.#dirty[slot] === 1) return;
    this.#dirty[slot] = 1;
    this.#dirtyList.push(slot);
  }

  /** The pool's row changed (PATCH): settings, and the owner's pause or resume. */
  configure(pool: PoolRow): void {
    const before = this.#pool;
    this.#pool = pool;
    this.#settingsMade = null;
    this.#urlSettings.clear();
    this.#ownSettings.clear();
    // from each proxy's next check: a kept name keeps its states, a new one starts unchecked
    this.#t.setTargets(pool.customUrls.map((r) => r.name));
    const nowMs = this.#d.clock.now();
    if (pool.intervalS < before.intervalS) this.#rewriteDue((due) => clampDue(due, nowMs, pool.intervalS));
    const s = this.state;
    if (s === 'stopping' || s === 'stopped' || s === 'lost') return;
    if (pool.state === 'paused' && pool.pausedReason === 'owner' && s !== 'idle') {
      this.#machine.move(['running', 'starved'], 'idle');
      this.#closeExec();
    } else if (pool.state === 'active' && s !== 'running') {
      this.#spreadOverdue(nowMs);
      this.#machine.move(['idle', 'starved'], 'running');
      this.#waitUntil = 0;
    }
    this.#pump();
  }

  /** Members were added or removed (PATCH, a list URL): the new ones loaded, the gone ones dropped. */
  async reconcile(): Promise<void> {
    const ids = await poolProxyIds(this.#d.db, this.#pool.id);
    const t = this.#t;
    let j = 0;
    for (let s = 0; s < t.size; s++) {
      if (this.#slotState[s] === DEAD) continue;
      while (j < ids.length && ids[j]! < t.id[s]!) j++;
      if (j < ids.length && ids[j] === t.id[s]) continue;
      this.#kill(s);
    }
    const last = t.size === 0 ? 0 : t.id[t.size - 1]!;
    const upTo = await loadPoolRows(this.#d.db, this.#pool.id, last, (rows) => this.#append(rows));
    await loadPoolTargets(this.#d.db, this.#pool.id, last, upTo, (id, name, st) => this.#loadTarget(id, name, st));
    this.#pump();
  }

  #kill(slot: number): void {
    const st = this.#slotState[slot];
    if (st === HEAP) this.#heap.remove(slot);
    if (st === FLIGHT) this.#flight.delete(slot);
    // a slot in TARGETS: its pairs are skipped when taken, their results dropped
    this.#slotState[slot] = DEAD;
    this.#t.live[slot] = 0;
    this.#countIn(slot, -1);
    // its unflushed charged checks stay charged only once durable: they never will be
    this.#pendingCharged -= this.#unsettled[slot]!;
    this.#unsettled[slot] = 0;
    this.#slotEvents.delete(slot);
  }

  /** New due times for the scheduled slots (`f` of their due times, same order), each marked dirty. */
  #rewriteDue(f: (due: number[]) => number[]): void {
    const slots: number[] = [];
    for (let s = 0; s < this.#t.size; s++) if (this.#slotState[s] === HEAP) slots.push(s);
    const due = slots.map((s) => this.#t.nextCheck[s]!);
    const next = f(due);
    slots.forEach((s, i) => {
      if (next[i] === due[i]) return;
      this.#t.nextCheck[s] = next[i]!;
      this.#heap.update(s);
      this.#markDirty(s);
    });
  }

  /** The overdue spread over the interval (a start, a resume: no burst; schedule.ts spreadOverdue). */
  #spreadOverdue(nowMs: number): void {
    this.#rewriteDue((due) => spreadOverdue(due, nowMs, this.#pool.intervalS));
  }

  /** The gateway's failed upstreams (already coalesced by the gateway, working-sets.ts): due now. Matched by the pool's identity of an address (proxyKey), as the upstreams' keys. */
  recheck(proxies: readonly ProxyAddress[]): void {
    if (proxies.length === 0) return;
    const wanted = new Set(proxies.map((a) => proxyKey(addressOf({ host: a.host, port: a.port, username: a.username ?? '', password: a.password ?? '' }))));
    const hosts = new Set(proxies.map((a) => a.host));
    const t = this.#t;
    const nowMs = this.#d.clock.now();
    for (let s = 0; s < t.size; s++) {
      if (this.#slotState[s] !== HEAP || !hosts.has(t.hostOf(s))) continue;
      if (!wanted.has(proxyKey(addressOf(t.addressAt(s)))) || t.nextCheck[s]! <= nowMs) continue;
      t.nextCheck[s] = nowMs;
      this.#heap.update(s);
      this.#markDirty(s);
    }
    this.#pump();
  }

  // ---- feeding the probes -------------------------------------------------------------------------

  /** Moves what is due to the ready queue, reserves when short, asks the execution for slots, sets the timer. Never throws. */
  #pump(): void {
    try {
      this.#pumpOnce();
    } catch (err) {
      this.#d.log.error('a pool actor step failed; tried again', { pool: this.#pool.id, err });
      this.#timer.cancel();
      this.#timer.arm(Infinity);
    }
  }

  #pumpOnce(): void {
    const s = this.state;
    if (s !== 'running' && s !== 'starved') return;
    const nowMs = this.#d.clock.now();
    const guarded = !(this.#d.allowPrivateTargets ?? this.#settings.allowPrivateTargets);
    const horizon = nowMs + Math.min(DUE_EARLY_MS, this.#pool.intervalS * 50);
    while (this.#heap.size > 0 && this.#heap.peekDue() <= horizon) {
      const slot = this.#heap.pop();
      // refused before any connection whatever happens (as /check): a verdict now, never probed nor charged
      if (guarded && splitRefused([{ host: this.#t.hostOf(slot) }], false).refused.length > 0) {
        this.#foldBlocked(slot);
        continue;
      }
      this.#slotState[slot] = READY;
      this.#ready.push(slot);
    }
    if (s === 'starved') {
      if (nowMs >= this.#waitUntil && this.#readyCount() > 0) this.#reserve(true);
      return this.#sleep(nowMs);
    }
    if (this.#d.regionAvailable?.(this.#pool.region) === false) return this.#sleep(nowMs);
    const want = this.#readyCount() - this.#demanded;
    const credit = this.#credit();
    // pairs are never charged: asked whatever the credit
    const pairsAsk = Math.max(0, this.#pairs.length - this.#pairsHead - this.#pairsDemanded);
    // taken early: held until a batch is ready or the earliest of them is due (ASK_BATCH)
    const held = want > 0 && want < ASK_BATCH && this.#readyDue() > nowMs;
    const probeAsk = held ? 0 : Math.max(0, Math.min(want, credit));
    const ask = probeAsk + pairsAsk;
    if (ask > 0) {
      // counted first: a grant may come inside open() / addDemand()
      this.#demanded += probeAsk;
      this.#pairsDemanded += pairsAsk;
      try {
        if (this.#exec === null) this.#open(ask);
        else this.#exec.addDemand(ask);
      } catch (err) {
        // no capacity in the region now (a cluster's agents gone): looked at again at the next timer
        this.#d.log.warn('a pool could not ask for probes; tried again', { pool: this.#pool.id, err: errorCode(err) });
        this.#closeExec();
      }
    }
    if (want > credit) this.#reserve(false);
    this.#sleep(nowMs, held ? this.#readyDue() : Infinity);
  }

  #readyCount(): number {
    return this.#ready.length - this.#readyHead;
  }

  /** When the earliest ready proxy is due (they leave the heap in due order); Infinity when none. */
  #readyDue(): number {
    for (let i = this.#readyHead; i < this.#ready.length; i++) {
      const slot = this.#ready[i]!;
      if (this.#slotState[slot] === READY) return this.#t.nextCheck[slot]!;
    }
    return Infinity;
  }

  /** Units reserved and not yet spoken for. */
  #credit(): number {
    return this.#reserved - this.#settled - this.#pendingCharged - this.#flight.size - this.#demanded;
  }

  /** Arms the timer for the heap's next due (or `heldDue`, the held ready proxies' earliest, when sooner). */
  #sleep(nowMs: number, heldDue = Infinity): void {
    const due = Math.min(this.#heap.peekDue(), heldDue);
    this.#timer.arm(Math.min(due, this.state === 'starved' ? Math.max(this.#waitUntil, nowMs + 50) : Infinity), nowMs);
  }

  /**
   * More units: the checks the next flush window needs (at most
   * MAX_RESERVATION), else exactly what is due now; when not even that can
   * be paid, the pool pauses (insufficient_checks) and tries again later.
   */
  #reserve(resuming: boolean): void {
    if (this.#reserving !== null || this.#lease === null) return;
    const lease = this.#lease;
    const need = Math.max(1, this.#readyCount() - this.#credit());
    const live = this.#counts.total;
    const ahead = Math.min(MAX_RESERVATION, Math.max(need, Math.ceil((2 * live * this.#d.flushMs) / (this.#pool.intervalS * 1000))));
    this.#reserving = (async () => {
      const nowMs = this.#d.clock.now();
      let r = await reserveChecks(this.#d.db, lease, ahead, nowMs);
      let units = ahead;
      if (!r.ok && need < ahead) {
        r = await reserveChecks(this.#d.db, lease, need, nowMs);
        units = need;
      }
      if (r.ok) {
        this.#reserved += units;
        this.#unlimited = r.unlimited;
        if (resuming && this.state === 'starved') await this.#resume();
      } else if (!resuming && this.state === 'running') await this.#pause({ required: need, available: r.available });
      else this.#waitUntil = this.#d.clock.now() + WAIT_RECHECK_MS;
    })()
      .catch((err: unknown) => {
        this.#d.log.error('reserving checks for a pool failed; tried again', { pool: this.#pool.id, err });
        this.#waitUntil = this.#d.clock.now() + WAIT_RECHECK_MS;
      })
      .finally(() => {
        this.#reserving = null;
        this.#pump();
      });
  }

  async #pause(short: { required: number; available: number }): Promise<void> {
    this.#machine.move('running', 'starved');
    this.#waitUntil = this.#d.clock.now() + WAIT_RECHECK_MS;
    const nowMs = this.#d.clock.now();
    if (!(await pauseForChecks(this.#d.db, this.#pool.id, nowMs))) return;
    this.#pool = { ...this.#pool, state: 'paused', pausedReason: 'insufficient_checks' };
    this.#d.events.publish(this.#pool.accountId, pausedEvent(this.#pool.id, nowMs, this.#counts, 'insufficient_checks', short));
    this.#d.onOutcome?.('paused');
  }

  async #resume(): Promise<void> {
    const nowMs = this.#d.clock.now();
    await resumeForChecks(this.#d.db, this.#pool.id, nowMs);
    this.#pool = { ...this.#pool, state: 'active', pausedReason: null };
    if (this.state !== 'starved') return;
    this.#machine.move('starved', 'running');
    this.#spreadOverdue(nowMs);
    this.#d.events.publish(this.#pool.accountId, resumedEvent(this.#pool.id, nowMs, this.#counts));
    this.#d.onOutcome?.('resumed');
  }

  #open(demand: number): void {
    const lease = this.#lease!;
    const exec = this.#d.execution.open({
      runId: lease.runId,
      region: this.#pool.region,
      demand,
      priority: 'background',
      onGrant: (n, exec) => this.#granted(n, exec),
      onError: (err) => {
        this.#d.log.warn('starting a shard of a pool failed', { pool: this.#pool.id, err });
        this.#closeExec();
      },
    });
    // a grant inside open() may have given it back already
    if (!this.#cancelled.has(exec)) this.#exec = exec;
  }

  /** Drops what the execution has not granted yet (the ready slots stay ready). */
  #closeExec(exec: ExecutionHandle | null = this.#exec): void {
    if (exec !== null) {
      exec.cancel();
      this.#cancelled.add(exec);
    }
    if (this.#exec === exec) this.#exec = null;
    this.#demanded = 0;
    this.#pairsDemanded = 0;
  }

  #takeReady(): number {
    while (this.#readyHead < this.#ready.length) {
      const slot = this.#ready[this.#readyHead++]!;
      if (this.#slotState[slot] === READY) return slot;
    }
    this.#ready = [];
    this.#readyHead = 0;
    return -1;
  }

  #granted(granted: number, exec: ExecutionHandle): void {
    const forPairs = Math.min(granted, this.#pairsDemanded);
    this.#pairsDemanded -= forPairs;
    this.#demanded = Math.max(0, this.#demanded - (granted - forPairs));
    const pairs = this.#takePairs(granted);
    const n = granted - pairs.length;
    if (n === 0) return this.#runPairs(pairs, exec);
    const slots: number[] = [];
    while (slots.length < n) {
      let slot = this.#takeReady();
      // a slot removed meanwhile: the grant is filled from the next due (checked a little early)
      if (slot < 0 && this.#heap.size > 0) slot = this.#heap.pop();
      if (slot < 0) break;
      slots.push(slot);
    }
    if (this.#readyHead > 4096 && this.#readyHead * 2 > this.#ready.length) {
      this.#ready = this.#ready.slice(this.#readyHead);
      this.#readyHead = 0;
    }
    const tasks: ProbeTask[] = slots.map((slot) => {
      this.#slotState[slot] = FLIGHT;
      this.#flight.add(slot);
      return { index: slot, proxy: probeTarget(addressOf(this.#t.addressAt(slot))) };
    });
    if (slots.length < n) {
      // fewer than granted (members removed since the demand, a pool emptied): no more demand on this
      // handle, and the grant's other slots go back to the scheduler now
      this.#closeExec(exec);
      exec.release(n - slots.length);
    }
    if (pairs.length > 0) this.#runPairs(pairs, exec);
    if (tasks.length === 0) return;
    // a proxy with its own protocol (its line's scheme) is probed with that protocol's settings: a shard per protocol
    for (const shard of splitBySettings({ kind: 'probe', tasks, settings: this.#settings }, (slot) => this.#probeSettings(slot))) {
      const own = [...new Set(shard.tasks.map((t) => t.index))];
      const run = exec
        .run(shard, (b: ResultBatch) => this.#results(b as ProbeResult[]), this.#abort.signal)
        .catch((err: unknown) => {
          if (!this.#abort.signal.aborted) this.#d.log.warn('a shard of a pool failed', { pool: this.#pool.id, err: errorCode(err) });
        })
        .finally(() => {
          this.#shards.delete(run);
          this.#unreported(own);
        });
      this.#shards.add(run);
    }
  }

  /** The probe settings of a slot: its own protocol's (DECISIONS "Mixed lists"), else the pool's. */
  #probeSettings(slot: number): ProbeSettings {
    const own = this.#t.protocolOf(slot);
    if (own === null || own === this.#pool.type) return this.#settings;
    let s = this.#ownSettings.get(own);
    if (s === undefined) this.#ownSettings.set(own, (s = probeSettingsFor(this.#d.settings, own, this.#pool.timeoutMs, this.#pool.https)));
    return s;
  }

  /** Up to `n` waiting pairs of live slots. */
  #takePairs(n: number): Pair[] {
    const out: Pair[] = [];
    while (out.length < n && this.#pairsHead < this.#pairs.length) {
      const p = this.#pairs[this.#pairsHead++]!;
      if (this.#slotState[p.slot] === TARGETS) out.push(p);
    }
    if (this.#pairsHead === this.#pairs.length) {
      this.#pairs = [];
      this.#pairsHead = 0;
    } else if (this.#pairsHead > 4096 && this.#pairsHead * 2 > this.#pairs.length) {
      this.#pairs = this.#pairs.slice(this.#pairsHead);
      this.#pairsHead = 0;
    }
    return out;
  }

  /** The settings a target is fetched with through a proxy of `type` (as /check's custom-URL stage). */
  #settingsFor(type: ProxyType): ProbeSettings {
    let s = this.#urlSettings.get(type);
    if (s === undefined) this.#urlSettings.set(type, (s = probeSettingsFor(this.#d.settings, type, this.#pool.timeoutMs, false)));
    return s;
  }

  /** The pairs as shards, one per (target, protocol). */
  #runPairs(pairs: readonly Pair[], exec: ExecutionHandle): void {
    const groups = new Map<string, { name: string; type: ProxyType; tasks: ProbeTask[] }>();
    for (const p of pairs) {
      const type = this.#t.typeOf(p.slot) ?? (this.#pool.type === 'auto' ? 'http' : this.#pool.type);
      const key = `${p.name}\u0000${type}`;
      let g = groups.get(key);
      if (g === undefined) groups.set(key, (g = { name: p.name, type, tasks: [] }));
      g.tasks.push({ index: p.slot, proxy: probeTarget(addressOf(this.#t.addressAt(p.slot))) });
    }
    for (const g of groups.values()) {
      const rule = this.#pool.customUrls.find((r) => r.name === g.name);
      const reported = new Set<number>();
      const slots = [...new Set(g.tasks.map((t) => t.index))];
      if (rule === undefined) {
        // the target was removed since the pair was queued: nothing to fetch
        for (const slot of slots) this.#pairDone(slot);
        continue;
      }
      const run = exec
        .run({ kind: 'custom_url', tasks: g.tasks, rules: [rule], settings: this.#settingsFor(g.type) }, (b: ResultBatch) => this.#pairResults(g.name, b as CustomUrlResult[], reported), this.#abort.signal)
        .catch((err: unknown) => {
          if (!this.#abort.signal.aborted) this.#d.log.warn('a target shard of a pool failed', { pool: this.#pool.id, err: errorCode(err) });
        })
        .finally(() => {
          this.#shards.delete(run);
          // pairs with no result: the target's state unchanged, the proxy due again
          for (const slot of slots) if (!reported.has(slot)) (reported.add(slot), this.#pairDone(slot));
          this.#pump();
        });
      this.#shards.add(run);
    }
  }

  #pairResults(name: string, batch: readonly CustomUrlResult[], reported: Set<number>): void {
    const nowMs = this.#d.clock.now();
    for (const r of batch) {
      const slot = r.index;
      if (reported.has(slot)) continue;
      reported.add(slot);
      if (this.#slotState[slot] !== TARGETS) continue;
      const col = this.#t.target(name);
      if (col !== undefined) {
        col.fold(slot, r.success, r.statusCode, r.responseTimeMs, nowMs);
        this.#targetDirty[slot] = 1;
      }
      this.#pairDone(slot);
    }
    this.#pump();
  }

  /** One pair of a slot in TARGETS is in: the last one puts the proxy back on the heap. */
  #pairDone(slot: number): void {
    if (this.#slotState[slot] !== TARGETS) return;
    const left = this.#pairsLeft[slot]! - 1;
    this.#pairsLeft[slot] = Math.max(0, left);
    if (left <= 0) this.#back(slot);
  }

  /** Slots of an ended shard that got no result: not tried, due again soon. */
  #unreported(slots: readonly number[]): void {
    const ctx = { intervalS: this.#pool.intervalS, nowMs: this.#d.clock.now(), random: this.#d.random };
    let any = false;
    for (const slot of slots) {
      if (this.#slotState[slot] !== FLIGHT) continue;
      this.#flight.delete(slot);
      foldNotTried(this.#t, slot, ctx);
      this.#tally.not_tried++;
      this.#back(slot);
      any = true;
    }
    if (any) this.#pump();
  }

  #back(slot: number): void {
    this.#slotState[slot] = HEAP;
    this.#heap.push(slot);
    this.#markDirty(slot);
  }

  #foldBlocked(slot: number): void {
    const r = refusedResult({ host: this.#t.hostOf(slot) });
    this.#fold(slot, r, false);
  }

  #results(batch: readonly ProbeResult[]): void {
    for (const r of batch) {
      const slot = r.index;
      if (this.#slotState[slot] !== FLIGHT) continue;
      this.#flight.delete(slot);
      this.#fold(slot, r, true);
    }
    this.#pump();
  }

  /** One result folded in place; `charged`: a check performed (a blocked proxy's is not). */
  #fold(slot: number, r: ProbeResult, charged: boolean): void {
    const t = this.#t;
    const nowMs = this.#d.clock.now();
    const from = t.statusOf(slot);
    const failuresBefore = t.failures[slot]!;
    const f = foldSlot(t, slot, r, r.status === 'working' ? originGeo(this.#d.geo, r) : null, { poolType: t.protocolOf(slot) ?? this.#pool.type, intervalS: this.#pool.intervalS, nowMs, random: this.#d.random });
    if (f.outcome === 'not_tried') this.#tally.not_tried++;
    else {
      this.#tally.checked++;
      if (f.outcome === 'working') this.#tally.working++;
      else this.#tally.failed++;
      if (charged) {
        this.#unsettled[slot] = this.#unsettled[slot]! + 1;
        this.#pendingCharged++;
      }
      const to = t.statusOf(slot);
      if (to !== from) {
        this.#counts[from]--;
        this.#counts[to]++;
      }
      const failures = t.failures[slot]!;
      if (failures !== failuresBefore) {
        this.#failures.set(failuresBefore, (this.#failures.get(failuresBefore) ?? 0) - 1);
        this.#failures.set(failures, (this.#failures.get(failures) ?? 0) + 1);
      }
      if (f.verdictChanged) this.#verdictDirty[slot] = 1;
      if (f.event !== null) {
        const detail = { ...(r.responseTimeMs !== null && r.responseTimeMs !== undefined ? { responseTimeMs: r.responseTimeMs } : {}), error: r.error };
        const event = proxyEvent(this.#pool.id, f.event, nowMs, addressOf(t.rowOf(slot)), this.#counts, detail);
        this.#d.events.publish(this.#pool.accountId, event);
        if (this.#d.outbox !== undefined) {
          const list = this.#slotEvents.get(slot);
          if (list === undefined) this.#slotEvents.set(slot, [event]);
          else list.push(event);
        }
      }
      // passed the judge check: its targets are fetched through it before it is due again
      const targets = this.#pool.customUrls;
      if (f.outcome === 'working' && targets.length > 0 && this.#live()) {
        this.#slotState[slot] = TARGETS;
        this.#pairsLeft[slot] = targets.length;
        this.#markDirty(slot);
        for (const rule of targets) this.#pairs.push({ slot, name: rule.name });
        return;
      }
    }
    this.#back(slot);
  }

  // ---- flushing ------------------------------------------------------------------------------------

  #scheduleFlush(): void {
    this.#flushTimer = this.#d.clock.after(this.#d.flushMs, () => void this.flush().finally(() => this.#live() && this.#scheduleFlush()), { unref: true });
  }

  #live(): boolean {
    const s = this.state;
    return s === 'running' || s === 'starved' || s === 'idle';
  }

  /** Writes every dirty proxy now (fenced chunks), settles their checks, publishes round.completed. */
  flush(): Promise<void> {
    if (this.#flushing !== null) return this.#flushing;
    if (this.#lease === null || this.state === 'lost' || this.state === 'stopped') return Promise.resolve();
    this.#flushing = this.#flush(this.#lease).finally(() => {
      this.#flushing = null;
    });
    return this.#flushing;
  }

  async #flush(lease: PoolLease): Promise<void> {
    const list = this.#dirtyList;
    this.#dirtyList = [];
    const tally = this.#tally;
    this.#tally = zeroTally();
    const startedMs = this.#batchStartedMs;
    this.#batchStartedMs = this.#d.clock.now();
    let settledAll = 0;
    let seq: number | null = null;
    const flushStarted = performance.now();
    // at least one chunk: an empty one still renews the lease
    for (let i = 0; i === 0 || i < list.length; i += FLUSH_CHUNK) {
      const slots = list.slice(i, i + FLUSH_CHUNK);
      const state = emptyStateBatch();
      const verdicts = emptyVerdictBatch();
      const targets = emptyTargetBatch();
      let settled = 0;
      let working = 0;
      const taken: number[] = [];
      const events: PoolEvent[] = [];
      const eventSlots: [number, PoolEvent[]][] = [];
      for (const s of slots) {
        this.#dirty[s] = 0;
        const evs = this.#slotEvents.get(s);
        if (evs !== undefined) {
          this.#slotEvents.delete(s);
          if (this.#slotState[s] !== DEAD) (events.push(...evs), eventSlots.push([s, evs]));
        }
        if (this.#slotState[s] === DEAD) continue;
        pushStateSlot(state, this.#t, s);
        if (this.#verdictDirty[s] === 1) {
          this.#verdictDirty[s] = 0;
          pushVerdictSlot(verdicts, this.#t, s);
        }
        if (this.#targetDirty[s] === 1) {
          this.#targetDirty[s] = 0;
          pushTargetSlot(targets, this.#t, s);
        }
        const u = this.#unsettled[s]!;
        taken.push(u);
        settled += u;
        if (u > 0 && this.#t.status[s] === 1) working++;
        this.#unsettled[s] = 0;
      }
      const nowMs = this.#d.clock.now();
      // the batch's record (one pool_rounds row, one scan for /me usage per flush) grows with each
      // chunk that settles, in its transaction: a flush cut between chunks leaves usage == charged
      const outbox = this.#d.outbox;
      let messages = 0;
      const counts = { ...this.#counts };
      const chunkStarted = performance.now();
      try {
        const recorded = await flushChunk(this.#d.db, lease, {
          ...(outbox !== undefined && events.length > 0 ? { alsoInTx: async (tx) => (messages = await outbox.write(tx, this.#pool.accountId, this.#pool.id, events, counts)) } : {}),
          state,
          verdicts,
          targets,
          settled,
          leaseUntilMs: nowMs + this.#d.leaseMs,
          batch: settled > 0 ? { tally: { checked: settled, working, charged: this.#unlimited ? 0 : settled }, startedMs, nowMs, seq } : null,
        });
        if (recorded !== null) seq = recorded;
        if (messages > 0) outbox?.written();
      } catch (err) {
        // nothing of this chunk is durable: its slots dirty again, their checks unsettled and events unsent, the rest too
        for (const [s, evs] of eventSlots) this.#slotEvents.set(s, [...evs, ...(this.#slotEvents.get(s) ?? [])]);
        this.#restore(slots, taken, verdicts.id, targets.id);
        for (const s of list.slice(i + FLUSH_CHUNK)) this.#markDirty(s);
        this.#tally.checked += tally.checked;
        this.#tally.working += tally.working;
        this.#tally.failed += tally.failed;
        this.#tally.not_tried += tally.not_tried;
        if (err instanceof PoolLeaseLostError) return this.#lost(lease);
        this.#d.log.error('a pool flush failed; tried again at the next one', { pool: this.#pool.id, err });
        return;
      }
      this.#settled += settled;
      this.#pendingCharged -= settled;
      settledAll += settled;
      // paced while the pool lives (src/pools/flush-pace.ts); the last flush of a stop goes at once
      const now = performance.now();
      const gap = this.#live() ? flushGapMs({ chunkMs: now - chunkStarted, elapsedMs: now - flushStarted, chunksLeft: Math.ceil((list.length - i) / FLUSH_CHUNK) - 1, flushMs: this.#d.flushMs }) : 0;
      await (gap >= 1 ? new Promise<void>((r) => setTimeout(r, gap)) : nextTurn());
    }
    if (tally.checked + tally.not_tried === 0) return;
    const nowMs = this.#d.clock.now();
    this.#d.events.publish(this.#pool.accountId, roundCompletedEvent(this.#pool.id, nowMs, this.#counts, { ...tally, charged: this.#unlimited ? 0 : settledAll }));
    this.#d.onOutcome?.({ working: tally.working, failed: tally.failed });
  }

  #restore(slots: readonly number[], taken: readonly number[], verdictIds: readonly number[], targetIds: readonly number[]): void {
    const ids = new Set(verdictIds);
    const targetSet = new Set(targetIds);
    let k = 0;
    for (const s of slots) {
      if (this.#slotState[s] === DEAD) continue;
      this.#unsettled[s] = this.#unsettled[s]! + (taken[k++] ?? 0);
      if (ids.has(this.#t.id[s]!)) this.#verdictDirty[s] = 1;
      if (targetSet.has(this.#t.id[s]!)) this.#targetDirty[s] = 1;
      this.#markDirty(s);
    }
  }

  /** Another owner holds the lease: nothing more is written or charged; what this one reserved beyond its durable checks goes back. */
  async #lost(lease: PoolLease): Promise<void> {
    if (!this.#live()) return;
    this.#d.log.warn('a pool\'s lease was taken over: this node stops owning it', { pool: this.#pool.id, token: lease.token });
    this.#machine.move(['running', 'starved', 'idle'], 'lost');
    this.#halt();
    this.#lease = null;
    await refundLost(this.#d.db, lease, this.#settled, this.#d.clock.now()).catch((err: unknown) => this.#d.log.error('giving back a lost pool lease\'s reservation failed', { pool: this.#pool.id, err }));
    this.#d.onLost?.();
  }

  /** No more probing, timers or grants; running shards cut short. */
  #halt(): void {
    this.#timer.cancel();
    this.#flushTimer?.();
    this.#flushTimer = null;
    this.#closeExec();
    this.#abort.abort();
  }

  // ---- the end -------------------------------------------------------------------------------------

  /** The service stops: probing cut short (at most `graceMs` for the shards), a last flush, the lease released with the rest of its reservation. */
  async stop(graceMs: number): Promise<void> {
    if (this.state === 'stopped' || this.state === 'stopping') return;
    const lost = this.state === 'lost';
    this.#machine.move(['created', 'running', 'starved', 'idle', 'lost'], 'stopping');
    this.#halt();
    await bounded(Promise.all([...this.#shards, this.#reserving]), this.#d.clock, graceMs);
    const lease = this.#lease;
    if (!lost && lease !== null) {
      await this.#flushing;
      await this.#flush(lease).catch((err: unknown) => this.#d.log.error('the last flush of a pool failed', { pool: this.#pool.id, err }));
      if (this.#lease !== null) await releaseLease(this.#d.db, lease, this.#d.clock.now()).catch((err: unknown) => this.#d.log.error('releasing a pool lease failed', { pool: this.#pool.id, err }));
    }
    this.#machine.move('stopping', 'stopped');
  }

  /** The pool was deleted: nothing flushed (its rows are gone), the reservation's rest given back. */
  async deleted(): Promise<void> {
    if (this.state === 'stopped' || this.state === 'stopping') return;
    this.#machine.move(['created', 'running', 'starved', 'idle', 'lost'], 'stopping');
    this.#halt();
    const lease = this.#lease;
    if (lease !== null) await releaseLease(this.#d.db, lease, this.#d.clock.now()).catch((err: unknown) => this.#d.log.error('releasing a deleted pool\'s lease failed', { pool: this.#pool.id, err }));
    this.#machine.move('stopping', 'stopped');
  }

  // ---- reads from memory ---------------------------------------------------------------------------

  counts(): PoolCounts {
    return { ...this.#counts };
  }

  /** Working proxies passing each target (counts.targets); {} without targets. */
  targetCounts(): Record<string, number> {
    const t = this.#t;
    const out: Record<string, number> = {};
    for (const c of t.targets) {
      let n = 0;
      for (let s = 0; s < t.size; s++) if (t.live[s] === 1 && t.status[s] === 1 && c.passed(s)) n++;
      out[c.name] = n;
    }
    return out;
  }

  /** The pool object's schedule fields: the earliest due time of a live proxy, checks per day. */
  schedule(): { nextDueAt: Date | null; checksPerDay: number } {
    let due = this.#heap.peekDue();
    for (const s of this.#flight) due = Math.min(due, this.#t.nextCheck[s]!);
    for (let i = this.#readyHead; i < this.#ready.length; i++) {
      const s = this.#ready[i]!;
      if (this.#slotState[s] === READY) due = Math.min(due, this.#t.nextCheck[s]!);
    }
    let cpd = 0;
    for (const [f, n] of this.#failures) if (n > 0) cpd += n * checksPerDay(this.#pool.intervalS, f);
    return { nextDueAt: Number.isFinite(due) ? new Date(due) : null, checksPerDay: cpd };
  }

  page(q: PoolProxiesQuery): ProxiesPage {
    const p = memoryPage(this.#t, q);
    return { rows: p.slots.map((s) => this.#t.rowOf(s)), nextCursor: p.nextCursor };
  }

  /** Every match of `q` as an unlimited txt / csv listing, its matches and order taken now (proxy-listing.ts); `gone` ends it. */
  listing(q: PoolProxiesQuery, gone: () => boolean): ProxyListing {
    return new MemoryListing(this.#t, listingOrder(this.#t, q), gone);
  }

  /** The working proxies as gateway upstreams, in id order. */
  upstreams(): PoolUpstream[] {
    const out: PoolUpstream[] = [];
    const t = this.#t;
    for (let s = 0; s < t.size; s++) {
      if (t.live[s] !== 1 || t.status[s] !== 1) continue;
      const targets = t.targets.filter((c) => c.passed(s)).map((c) => c.name);
      const u = upstreamOfRow({ ...t.addressAt(s), type: t.typeOf(s), protocols: t.protocols[s]!, country: t.texts.text(t.country[s]!), targets });
      if (u !== null) out.push(u);
    }
    return out;
  }
}

/** Resolves when `p` settles or after `ms`, whichever is first. */
function bounded(p: Promise<unknown>, clock: Clock, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const cancel = clock.after(ms, resolve, { unref: true });
    p.then(
      () => (cancel(), resolve()),
      () => (cancel(), resolve()),
    );
  });
}
