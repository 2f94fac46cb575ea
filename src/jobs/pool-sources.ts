/**
 * PoolSources: the pools' list URLs (DECISIONS "Pools": `sources`) kept
 * followed. On a timer it fetches each source of an active pool that is due
 * (every `every_s` seconds; a new one at once), reads its addresses as
 * /check-raw reads lines (src/pools/source-extract.ts), adds those not in the
 * pool yet, due at once, as far as the limits leave room
 * (src/pools/store.ts addSourceProxies: what does not fit is counted in
 * `not_added`, `limit` says which limit), and records the outcome where the
 * pool object shows it (`sources[].last_fetch`, `next_fetch_at`). Addresses
 * that left the list stay in the pool until their owner removes them. New
 * addresses are told to the pool service (`sourced`: a `sourced` change),
 * so the pool's actor checks them at once rather than at its next look.
 *
 * Fetches go through src/jobs/source-fetch.ts (SSRF guard per hop, size cap,
 * deadline), `concurrency` at a time. A failed fetch records its code and is
 * tried again after SOURCE_MIN_EVERY_S (sooner than `every_s` only when that
 * is longer).
 *
 * A cluster: every API node runs one. Before fetching, a node claims the due
 * time it read with a conditional UPDATE (src/pools/sources-sql.ts
 * claimSourceStatement: the row's due time must still be the one read), so
 * of the nodes that saw a source due, one fetches it.
 *
 * States (src/state-machine.ts):
 *   created   built, not started: wakes are ignored
 *   idle      waiting: its timer is set for the next due source (at most
 *             `pollMs` away, so a source due on another node's change is
 *             seen), or a wake comes first
 *   passing   a pass is under way: due sources claimed, fetched, recorded,
 *             until none is due; a wake during it runs another pass after
 *   stopped   final: timer cancelled, fetches under way aborted (their
 *             sources made due again at once), the pool service's
 *             listener removed
 *   created -> passing  start()
 *   idle -> passing     the timer, or a wake (PoolService.onChange: a pool
 *                       created, or changed: resumed, ...)
 *   passing -> idle     the pass ended (its failures logged, never thrown),
 *                       unless a wake came during it: then another pass
 *   created | idle | passing -> stopped   stop() (safe twice: one promise)
 */
import type { Db } from '../../db/client';
import { systemClock, type Clock } from '../clock';
import { DueTimer } from './pool-due-timer';
import { errorCode } from '../errors';
import type { Logger } from '../log';
import { SOURCE_MIN_EVERY_S, type PoolLimits } from '../pools/limits';
import type { SourceFetchOutcome } from '../pools/shape';
import { extractSourceAddresses } from '../pools/source-extract';
import * as store from '../pools/store';
import { StateMachine, transitionTable } from '../state-machine';
import type { PoolChangeListener } from './pool-service';

type SourcesState = 'created' | 'idle' | 'passing' | 'stopped';
export const POOL_SOURCES_TRANSITIONS = transitionTable<SourcesState>({
  created: ['passing', 'stopped'],
  idle: ['passing', 'stopped'],
  passing: ['idle', 'stopped'],
  stopped: [],
});

/** The longest wait between two looks at the due sources. */
export const DEFAULT_SOURCES_POLL_MS = 60_000;
/** Due sources read per query. */
const DUE_BATCH = 64;

export interface PoolSourcesOptions {
  db: Db;
  limits: PoolLimits;
  /** The body of a list URL (src/jobs/source-fetch.ts fetchSource with the service's options); rejects with a SOURCE_* code. */
  fetch: (url: string, signal: AbortSignal) => Promise<string>;
  /** Where pool changes are heard (PoolService.onChange) and the addresses a source added are told (PoolService.sourced). */
  changes?: { onChange(listener: PoolChangeListener): () => void; sourced(accountId: string, poolId: string, added: number): void };
  log: Pick<Logger, 'info' | 'warn' | 'error'>;
  clock?: Clock;
  pollMs?: number;
  /** Fetches at once (4). */
  concurrency?: number;
}

export class PoolSources {
  readonly #o: PoolSourcesOptions;
  readonly #clock: Clock;
  readonly #machine = new StateMachine<SourcesState>('pool sources', POOL_SOURCES_TRANSITIONS, 'created');
  readonly #aborts = new Set<AbortController>();
  /** The next pass at the earliest due source (at most pollMs away: pool-due-timer.ts, the pools' one due-time loop). */
  readonly #timer: DueTimer;
  #again = false;
  #pass: Promise<void> | null = null;
  #stopping: Promise<void> | null = null;
  readonly #unsubscribe: () => void;

  constructor(o: PoolSourcesOptions) {
    this.#o = o;
    this.#clock = o.clock ?? systemClock;
    const pollMs = o.pollMs ?? DEFAULT_SOURCES_POLL_MS;
    this.#timer = new DueTimer(this.#clock, () => this.wake(), { minDelayMs: Math.min(1000, pollMs), maxDelayMs: pollMs });
    this.#unsubscribe = o.changes?.onChange((c) => {
      if (c.kind !== 'deleted' && c.kind !== 'sourced') this.wake(); // 'sourced' is its own
    }) ?? (() => {});
  }

  get state(): SourcesState {
    return this.#machine.state;
  }

  /** Starts the first pass now (once: later calls do nothing). */
  start(): void {
    if (this.#machine.state !== 'created') return;
    this.#machine.move('created', 'passing');
    this.#pass = this.#run();
  }

  /** A pass now (after the one under way, when there is one); nothing before start() or after stop(). */
  wake(): void {
    const m = this.#machine;
    if (m.state === 'passing') {
      this.#again = true;
      return;
    }
    if (m.state !== 'idle') return;
    this.#timer.cancel();
    m.move('idle', 'passing');
    this.#pass = this.#run();
  }

  /** The pass under way, if any (tests). */
  settled(): Promise<void> {
    return this.#pass ?? Promise.resolve();
  }

  async #run(): Promise<void> {
    for (;;) {
      this.#again = false;
      try {
        await this.#onePass();
      } catch (err) {
        this.#o.log.warn('pool sources: a pass failed; tried again at the next one', { err });
      }
      let next = Infinity;
      try {
        next = (await store.nextSourceDue(this.#o.db, this.#clock.now())) ?? Infinity;
      } catch (err) {
        this.#o.log.warn('pool sources: the next due time could not be read', { err });
      }
      if (this.#machine.state !== 'passing') return;
      if (this.#again) continue; // woken during the pass: another one at once
      this.#machine.move('passing', 'idle');
      this.#timer.arm(next);
      return;
    }
  }

  /** Every source due now, claimed and fetched, `concurrency` at a time, until none is due (or none could be claimed). */
  async #onePass(): Promise<void> {
    const width = Math.max(1, this.#o.concurrency ?? 4);
    for (;;) {
      if (this.#machine.state !== 'passing') return;
      const due = await store.dueSources(this.#o.db, this.#clock.now(), DUE_BATCH);
      if (due.length === 0) return;
      let claimed = 0;
      let next = 0;
      const lane = async (): Promise<void> => {
        while (next < due.length && this.#machine.state === 'passing') {
          const s = due[next++] as store.DueSource;
          if (await this.#follow(s)) claimed++;
        }
      };
      await Promise.all(Array.from({ length: Math.min(width, due.length) }, lane));
      if (claimed === 0) return; // another node has them
    }
  }

  /** Claims `s`, fetches it, adds its new addresses, records the outcome. false when another node claimed it first. */
  async #follow(s: store.DueSource): Promise<boolean> {
    const { db, limits, log } = this.#o;
    const claimedAt = this.#clock.now();
    const nextMs = claimedAt + s.everyS * 1000;
    if (!(await store.claimSource(db, s, nextMs))) return false;
    const abort = new AbortController();
    this.#aborts.add(abort);
    const outcome: SourceFetchOutcome = { at: '', error: null, found: 0, invalid: 0, added: 0, not_added: 0, limit: null };
    let retryAt: number | undefined;
    try {
      const body = await this.#o.fetch(s.url, abort.signal);
      const list = extractSourceAddresses(body);
      outcome.found = list.proxies.length;
      outcome.invalid = list.invalid;
      const r = await store.addSourceProxies(db, s.accountId, s.poolId, s.type, list.proxies, limits, this.#clock.now());
      outcome.added = r.added;
      outcome.not_added = r.notAdded;
      outcome.limit = r.limit;
      if (r.added > 0) this.#o.changes?.sourced(s.accountId, s.poolId, r.added);
    } catch (err) {
      if (abort.signal.aborted && this.#machine.state === 'stopped') {
        // stopped mid-fetch: due again at once for the next start (or another node)
        await store.recordSource(db, s, null, this.#clock.now()).catch(() => {});
        return true;
      }
      outcome.error = errorCode(err);
      const retry = this.#clock.now() + SOURCE_MIN_EVERY_S * 1000;
      if (retry < nextMs) retryAt = retry;
      log.info('pool source: fetch failed', { pool: s.poolId, url: s.url, code: outcome.error, err });
    } finally {
      this.#aborts.delete(abort);
    }
    outcome.at = new Date(this.#clock.now()).toISOString();
    await store.recordSource(db, s, outcome, retryAt);
    if (outcome.added > 0 || outcome.not_added > 0) log.info('pool source: addresses added', { pool: s.poolId, url: s.url, added: outcome.added, notAdded: outcome.not_added, limit: outcome.limit });
    return true;
  }

  /** Stops the timer and the fetches under way, waits for the pass. Safe twice. */
  stop(): Promise<void> {
    return (this.#stopping ??= (async () => {
      this.#unsubscribe();
      this.#timer.cancel();
      if (this.#machine.state !== 'stopped') this.#machine.move(['created', 'idle', 'passing'], 'stopped');
      for (const a of this.#aborts) a.abort();
      await this.#pass;
    })());
  }
}
