/**
 * The probing part of a pool's round (src/jobs/pool-round.ts runs it once
 * the round is reserved and its proxies claimed): the claimed proxies go
 * through the SAME probe execution as /check (ProbeExecution, priority
 * `background`: only what the region's checks leave), with the pool's
 * settings (type, auto included, timeout, https on or off: probe-setup.ts,
 * as the check job's), and each result is folded into the proxy's row
 * (src/pools/fold.ts foldCheck, geo as the check job looks it up).
 *
 * A proxy the SSRF guard refuses whatever happens (a literal private or
 * loopback address while ALLOW_PRIVATE_TARGETS is off: refused-targets.ts,
 * as /check) is not probed: it is folded failed `blocked_target` and counted
 * in `blocked`, which the round does not charge.
 *
 * Folded rows are written in batches of WRITE_BATCH (one applyResults
 * statement each) and the batch's proxy.up / proxy.down events published
 * after it, with the pool's counts after the write (read once per round,
 * then kept: #publish). Results are
 * handled one batch at a time (a Mailbox), so writes never overlap.
 *
 * The end: every claimed proxy folded; or the round was cut short (its
 * signal: the service stops, or the round's deadline) or failed (a shard
 * failed): then the proxies not folded are written as not tried (fold.ts
 * notTried: due again soon) and the tally says how many. `run` never
 * rejects for a probe failure: the round settles what was tried.
 */
import type { Db } from '../../db/client';
import type { Clock } from '../clock';
import type { Logger } from '../log';
import type { ProbeResult, ProbeSettings } from '../probe/types';
import { proxyEvent, type RoundTally } from '../pools/events';
import { foldCheck, notTried, type FoldedCheck } from '../pools/fold';
import type { PoolEventsPort } from '../pools/ports';
import type { Random } from '../pools/schedule';
import { addressOf, type PoolProxyRow, type PoolRow } from '../pools/shape';
import type { PoolCounts, ProxyStatus } from '../pools/types';
import { moveCount } from '../pools/verdict';
import * as store from '../pools/store';
import { Mailbox } from './mailbox';
import type { ExecutionHandle, GeoPort, ProbeExecution, ResultBatch, SettingsFactory } from './ports';
import { originGeo, probeSettingsFor } from './probe-setup';
import { refusedResult, splitRefused } from './refused-targets';
import { probeShard } from './shards';

/** Folded rows per applyResults statement. */
export const WRITE_BATCH = 250;

export interface RoundProbeDeps {
  db: Db;
  execution: ProbeExecution;
  settings: SettingsFactory;
  geo: GeoPort;
  events: PoolEventsPort;
  clock: Clock;
  random: Random;
  log: Pick<Logger, 'warn' | 'error'>;
}

interface Pending {
  f: FoldedCheck;
  /** The proxy's status before this check. */
  from: ProxyStatus;
  responseTimeMs: number | undefined;
  error: ProbeResult['error'];
}

/** What a round's probing did (`charged` is the round's to fill in). */
export type ProbeTally = Omit<RoundTally, 'charged'>;

export class RoundProbe {
  readonly #d: RoundProbeDeps;
  readonly #pool: PoolRow;
  readonly #runId: string;
  /** The rows to probe (the refused ones taken out). */
  readonly #rows: readonly PoolProxyRow[];
  readonly #refused: readonly PoolProxyRow[];
  readonly #settings: ProbeSettings;
  readonly #seen: Uint8Array;
  readonly #abort = new AbortController();
  readonly #mailbox: Mailbox<ProbeResult[]>;
  /** Folded and not yet written, with what their event needs of the result. */
  readonly #pending: Pending[] = [];
  readonly #tally: ProbeTally = { checked: 0, working: 0, failed: 0, not_tried: 0 };
  /** The pool's counts, read once (at the first event) and then moved by this round's own writes; null before. */
  #counts: PoolCounts | null = null;
  #folded = 0;
  #next = 0;
  #exec: ExecutionHandle | null = null;
  #finish: (() => void) | null = null;

  constructor(deps: RoundProbeDeps, pool: PoolRow, runId: string, rows: readonly PoolProxyRow[]) {
    this.#d = deps;
    this.#pool = pool;
    this.#runId = runId;
    this.#settings = probeSettingsFor(deps.settings, pool.type, pool.timeoutMs, pool.https);
    const { probe, refused } = splitRefused([...rows], this.#settings.allowPrivateTargets);
    this.#rows = probe;
    this.#refused = refused;
    this.#seen = new Uint8Array(probe.length);
    this.#mailbox = new Mailbox<ProbeResult[]>(
      (batch) => this.#onResults(batch),
      (err) => this.#stop('a round result could not be written', err),
    );
  }

  /** Proxies refused before any connection (in the tally as failed): not charged. */
  get blocked(): number {
    return this.#refused.length;
  }

  /** Probes every row; resolves with the tally once each is folded and written (or the round was cut short). */
  async run(signal: AbortSignal): Promise<ProbeTally> {
    this.#foldRefused();
    if (this.#rows.length > 0) await this.#probe(signal);
    await this.#mailbox.idle();
    await this.#writeRest();
    return { ...this.#tally };
  }

  #foldRefused(): void {
    const ctx = { poolType: this.#pool.type, intervalS: this.#pool.intervalS, nowMs: this.#d.clock.now(), random: this.#d.random };
    for (const row of this.#refused) {
      const r = refusedResult(row);
      this.#tally.checked++;
      this.#tally.failed++;
      this.#pending.push({ f: foldCheck(row, r, null, ctx), from: row.status, responseTimeMs: undefined, error: r.error });
    }
  }

  #probe(signal: AbortSignal): Promise<void> {
    const settings = this.#settings;
    const addresses = this.#rows.map(addressOf);
    return new Promise<void>((resolve) => {
      this.#finish = resolve;
      const onAbort = () => this.#stop(null);
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      this.#exec = this.#d.execution.open({
        runId: this.#runId,
        region: this.#pool.region,
        demand: this.#rows.length,
        priority: 'background',
        onGrant: (n, exec) => {
          const from = this.#next;
          this.#next = Math.min(this.#rows.length, from + n);
          exec.run(probeShard(addresses, from, this.#next, settings), (b: ResultBatch) => this.#mailbox.post(b as ProbeResult[]), this.#abort.signal).then(
            undefined,
            (err: unknown) => this.#stop('a shard of a pool round failed', err),
          );
        },
        onError: (err) => this.#stop('starting a shard of a pool round failed', err),
      });
    }).finally(() => this.#exec?.cancel());
  }

  /** The end of the probing: all folded, or cut short (`why` null) or failed. Idempotent. */
  #stop(why: string | null, err?: unknown): void {
    if (why !== null && !this.#abort.signal.aborted) this.#d.log.warn(why, { pool: this.#pool.id, runId: this.#runId, err });
    this.#abort.abort();
    const f = this.#finish;
    this.#finish = null;
    f?.();
  }

  async #onResults(batch: ProbeResult[]): Promise<void> {
    if (this.#abort.signal.aborted) return;
    const nowMs = this.#d.clock.now();
    const ctx = { poolType: this.#pool.type, intervalS: this.#pool.intervalS, nowMs, random: this.#d.random };
    for (const r of batch) {
      const row = this.#rows[r.index];
      if (row === undefined || this.#seen[r.index] !== 0) continue;
      this.#seen[r.index] = 1;
      this.#add(foldCheck(row, r, originGeo(this.#d.geo, r), ctx), row.status, r);
    }
    const last = this.#folded === this.#rows.length;
    await this.#write(last);
    if (last) this.#stop(null);
  }

  #add(f: FoldedCheck, from: ProxyStatus, r: Pick<ProbeResult, 'responseTimeMs' | 'error'> | null): void {
    this.#folded++;
    this.#pending.push({ f, from, responseTimeMs: r?.responseTimeMs ?? undefined, error: r?.error ?? null });
    if (f.outcome === 'not_tried') this.#tally.not_tried++;
    else {
      this.#tally.checked++;
      if (f.outcome === 'working') this.#tally.working++;
      else this.#tally.failed++;
    }
  }

  /** The rows not folded (cut short) as not tried, then the last write. */
  async #writeRest(): Promise<void> {
    const ctx = { intervalS: this.#pool.intervalS, nowMs: this.#d.clock.now(), random: this.#d.random };
    this.#rows.forEach((row, i) => {
      if (this.#seen[i] === 0) this.#add(notTried(row, ctx), row.status, null);
    });
    await this.#write(true);
  }

  /** Full batches of the pending rows (`all`: the rest too), one statement each, then their events with the counts after it. */
  async #write(all: boolean): Promise<void> {
    while (this.#pending.length >= WRITE_BATCH || (all && this.#pending.length > 0)) {
      const batch = this.#pending.splice(0, WRITE_BATCH);
      await store.applyResults(this.#d.db, this.#pool.id, batch.map((p) => p.f.row));
      if (this.#counts !== null) for (const p of batch) this.#counts = moveCount(this.#counts, p.from, p.f.row.status);
      await this.#publish(batch.filter((p) => p.f.event !== null));
    }
  }

  /**
   * The batch's events, with the pool's counts after its write: read from the
   * database at the round's first event (a count over the pool's rows), then
   * kept by moving them with each row this round writes (verdict.ts
   * moveCount), so a round reads them once, not once per batch. What others
   * change meanwhile (the owner's adds, another node's round) shows in the
   * next round's counts and in round.completed's (read again at the end).
   */
  async #publish(events: readonly Pending[]): Promise<void> {
    if (events.length === 0) return;
    const nowMs = this.#d.clock.now();
    this.#counts ??= await store.poolCounts(this.#d.db, this.#pool.id);
    const counts = this.#counts;
    for (const { f, responseTimeMs, error } of events) {
      const detail = { ...(responseTimeMs !== undefined ? { responseTimeMs } : {}), error };
      this.#d.events.publish(this.#pool.accountId, proxyEvent(this.#pool.id, f.event!, nowMs, addressOf(f.row), counts, detail));
    }
  }
}
