/**
 * PoolRounds: keeps every pool's proxies checked on their schedule (DECISIONS
 * "Pools"). A timer finds the pools with proxies due (store.runnablePools)
 * and runs a round for each (pool-round.ts), at most MAX_CONCURRENT_ROUNDS
 * at once, one per pool at a time. Every API node of a cluster may run it:
 * a round claims its proxies atomically (FOR UPDATE SKIP LOCKED), so two
 * nodes never check the same proxy in the same round, and a dead node's
 * claims fall due again at the claim's horizon.
 *
 * The timer: next at the earliest due time (store.nextDue), never sooner than
 * MIN_TICK_MS after the last tick nor later than MAX_SLEEP_MS (a cluster's
 * other nodes change pools this node does not hear of). Woken early (still at
 * most once per MIN_TICK_MS) by a pool created or changed, or given
 * proxies by its list URLs (PoolService onChange: `sourced`), by recheck(),
 * and by a round's end. A pool deleted or paused by
 * its owner has its running round on this node cut short. A pool that could not pay
 * (pause / wait) is looked at again after WAIT_RECHECK_MS, not every tick.
 *
 * recheck(poolId, proxies) is the PoolRecheckPort (src/pools/ports.ts): the
 * addresses are made due now at the next tick, coalesced per pool and address.
 *
 * ## States (src/state-machine.ts)
 *
 *   created ──start()──> running ──stop()──> stopping ──> stopped
 *   created ──stop()──> stopped
 *
 * start(): the proxies overdue now (a restart) are spread over each pool's
 * interval first (no burst), then the first tick. stop(): no new tick nor
 * round; running rounds are cut short (their proxies not tried are refunded
 * and due again soon) and waited for at most `stopGraceMs`. Safe twice.
 */
import type { Clock } from '../clock';
import { systemClock } from '../clock';
import type { ProxyAddress } from '../proxy/types';
import { MAX_ROUND } from '../pools/round';
import type { PoolRecheckPort } from '../pools/ports';
import * as store from '../pools/store';
import { StateMachine, transitionTable } from '../state-machine';
import { runPoolRound, type RoundDeps, type RoundOutcome } from './pool-round';
import type { PoolChange } from './pool-service';

/** Rounds of different pools running at once on this node. */
export const MAX_CONCURRENT_ROUNDS = 4;
/** Ticks at most this often. */
export const MIN_TICK_MS = 1000;
/** Ticks at least this often. */
export const MAX_SLEEP_MS = 30_000;
/** A pool that could not pay is looked at again after this long. */
export const WAIT_RECHECK_MS = 5000;
/** How long stop() waits for the rounds it cut short, by default. */
export const STOP_GRACE_MS = 5000;

type RoundsState = 'created' | 'running' | 'stopping' | 'stopped';
const TRANSITIONS = transitionTable<RoundsState>({
  created: ['running', 'stopped'],
  running: ['stopping'],
  stopping: ['stopped'],
  stopped: [],
});

export interface PoolRoundsOptions extends Omit<RoundDeps, 'maxRound' | 'clock' | 'random'> {
  /** Where pool changes are heard (the PoolService); absent: the timer alone. */
  pools?: { onChange(listener: (change: PoolChange) => void): () => void };
  clock?: Clock;
  random?: () => number;
  maxRound?: number;
  maxConcurrent?: number;
  stopGraceMs?: number;
  /** Told of each round's outcome (tests, logs). */
  onRound?: (poolId: string, outcome: RoundOutcome) => void;
}

const addressKey = (a: ProxyAddress) => `${a.host}\u0000${a.port}\u0000${a.username ?? ''}\u0000${a.password ?? ''}`;

export class PoolRounds implements PoolRecheckPort {
  readonly #o: PoolRoundsOptions;
  readonly #deps: RoundDeps;
  readonly #clock: Clock;
  readonly #machine = new StateMachine<RoundsState>('pool rounds', TRANSITIONS, 'created');
  readonly #running = new Map<string, { abort: AbortController; done: Promise<void> }>();
  /** Pools that could not pay: not looked at before this time. */
  readonly #waitUntil = new Map<string, number>();
  readonly #rechecks = new Map<string, Map<string, ProxyAddress>>();
  #timer: { at: number; cancel: () => void } | null = null;
  #lastTick = -Infinity;
  #tick: Promise<void> | null = null;
  #again = false;
  #unsubscribe: () => void = () => {};
  #stopping: Promise<void> | null = null;

  constructor(o: PoolRoundsOptions) {
    this.#o = o;
    this.#clock = o.clock ?? systemClock;
    this.#deps = { ...o, clock: this.#clock, random: o.random ?? Math.random, maxRound: o.maxRound ?? MAX_ROUND };
  }

  get state(): RoundsState {
    return this.#machine.state;
  }

  /** Rounds running on this node now. */
  get runningRounds(): number {
    return this.#running.size;
  }

  /** When the timer fires next (ms, the clock's), null while a tick runs or when none is set (tests: "asleep until then"). */
  get nextTickAt(): number | null {
    return this.#tick === null ? (this.#timer?.at ?? null) : null;
  }

  async start(): Promise<void> {
    await store.spreadAllOverdue(this.#o.db, this.#clock.now());
    this.#machine.move('created', 'running');
    this.#unsubscribe = this.#o.pools?.onChange((c) => this.#heard(c)) ?? (() => {});
    this.#at(0);
  }

  recheck(poolId: string, proxies: readonly ProxyAddress[]): void {
    if (this.state !== 'running' || proxies.length === 0) return;
    const pool = this.#rechecks.get(poolId) ?? new Map<string, ProxyAddress>();
    for (const p of proxies) pool.set(addressKey(p), p);
    this.#rechecks.set(poolId, pool);
    this.wake();
  }

  /** A tick soon: now, or MIN_TICK_MS after the last one. */
  wake(): void {
    this.#at(Math.max(0, this.#lastTick + MIN_TICK_MS - this.#clock.now()));
  }

  stop(): Promise<void> {
    return (this.#stopping ??= this.#stop());
  }

  #heard(c: PoolChange): void {
    this.#waitUntil.delete(c.poolId); // changed: its next round is decided afresh
    // deleted, or paused by its owner: its running round stops (what it did not try is refunded)
    if (c.kind === 'deleted' || (c.kind === 'updated' && c.state === 'paused')) this.#running.get(c.poolId)?.abort.abort();
    if (c.kind !== 'deleted') this.wake();
  }

  /** The next tick in `delayMs`, unless one is set sooner. */
  #at(delayMs: number): void {
    if (this.state !== 'running') return;
    const at = this.#clock.now() + delayMs;
    if (this.#timer !== null && this.#timer.at <= at) return;
    this.#timer?.cancel();
    this.#timer = { at, cancel: this.#clock.after(delayMs, () => this.#fire(), { unref: true }) };
  }

  #fire(): void {
    this.#timer = null;
    if (this.#tick !== null) {
      this.#again = true;
      return;
    }
    this.#tick = this.#runTick().finally(() => {
      this.#tick = null;
      if (this.#again) {
        this.#again = false;
        this.wake();
      }
    });
  }

  async #runTick(): Promise<void> {
    this.#lastTick = this.#clock.now();
    try {
      await this.#applyRechecks();
      await this.#startRounds();
      this.#at(this.#sleepFor(await store.nextDue(this.#o.db)));
    } catch (err) {
      this.#o.log.error('a pool rounds tick failed; tried again', { err });
      this.#at(MIN_TICK_MS);
    }
  }

  #sleepFor(nextDueMs: number | null): number {
    if (nextDueMs === null) return MAX_SLEEP_MS;
    return Math.min(MAX_SLEEP_MS, Math.max(MIN_TICK_MS, nextDueMs - this.#clock.now()));
  }

  async #applyRechecks(): Promise<void> {
    const all = [...this.#rechecks];
    this.#rechecks.clear();
    for (const [poolId, proxies] of all) await store.recheck(this.#o.db, poolId, [...proxies.values()], this.#clock.now());
  }

  async #startRounds(): Promise<void> {
    const free = (this.#o.maxConcurrent ?? MAX_CONCURRENT_ROUNDS) - this.#running.size;
    if (free <= 0) return;
    const nowMs = this.#clock.now();
    for (const [id, until] of this.#waitUntil) if (until <= nowMs) this.#waitUntil.delete(id);
    const exclude = [...this.#running.keys(), ...this.#waitUntil.keys()];
    const found = await store.runnablePools(this.#o.db, nowMs, free, this.#deps.maxRound, exclude);
    for (const { pool, due } of found) {
      if (this.state !== 'running') return;
      this.#launch(pool, due);
    }
  }

  #launch(pool: store.RunnablePool['pool'], due: number): void {
    const abort = new AbortController();
    const done = runPoolRound(this.#deps, pool, due, abort.signal).then(
      (outcome) => this.#ended(pool.id, outcome),
      (err: unknown) => this.#o.log.error('a pool round failed', { pool: pool.id, err }),
    );
    this.#running.set(pool.id, {
      abort,
      done: done.finally(() => {
        this.#running.delete(pool.id);
        this.wake();
      }),
    });
  }

  #ended(poolId: string, outcome: RoundOutcome): void {
    if (outcome === 'wait' || outcome === 'pause') this.#waitUntil.set(poolId, this.#clock.now() + WAIT_RECHECK_MS);
    this.#o.onRound?.(poolId, outcome);
  }

  async #stop(): Promise<void> {
    if (this.state === 'created') return void this.#machine.move('created', 'stopped');
    this.#machine.move('running', 'stopping');
    this.#unsubscribe();
    this.#timer?.cancel();
    this.#timer = null;
    for (const r of this.#running.values()) r.abort.abort();
    const rounds = Promise.all([this.#tick, ...[...this.#running.values()].map((r) => r.done)]);
    await bounded(rounds, this.#clock, this.#o.stopGraceMs ?? STOP_GRACE_MS);
    this.#machine.move('stopping', 'stopped');
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
