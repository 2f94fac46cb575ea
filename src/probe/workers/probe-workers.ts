/**
 * The probe workers, their public front: piscina threads (one per core by
 * default), each running one long-lived lane (src/probe/workers/lane.ts,
 * protocol in lane-protocol.ts) that runs many shards at once, each shard
 * running its probes concurrently. Shards go to the lane with the fewest
 * probes assigned; the shards granted in one turn of the event loop travel to
 * a lane in one message, and a lane sends the results of all its shards back
 * together, so the cost of crossing the thread boundary is per batch, not per
 * shard or per probe. This file is the front (start-up, the queue, abort
 * signals, close); the running shards' bookkeeping (least-loaded choice,
 * per-turn messages, result routing, lane death) is lane-ends.ts.
 * (Not a "pool": that word is the user's, a kept set of proxies.)
 *
 * Queueing and cancellation: aborting a running piscina task terminates its
 * whole thread (and every shard on it), so ProbeWorkers never hands piscina an
 * AbortSignal. It keeps its own queue and runs at most
 * threads x concurrentTasksPerWorker shards at once:
 *   - abort before the shard was sent to a lane: it is dropped (outcome.dropped);
 *   - abort while it runs: a cooperative cancel over the lane's port; the
 *     lane starts no more of its probes and finishes the ones in flight (each
 *     is bounded by the probe timeout), then reports it done.
 * A lane whose thread dies rejects its running shards with worker_failed
 * and is replaced by a new lane on the thread piscina starts instead.
 *
 * Start-up fails loudly: `start()` pings every thread and rejects with a
 * ServiceError (code worker_load_failed / workers_start_timeout) when a
 * worker cannot load, instead of leaving an await that never settles. Every
 * rejection is a ServiceError with a WORKER(S)_* code of DOMAIN_ERROR_CODES
 * (src/error-codes.ts).
 *
 * Shard states: queued -> running -> settled (resolved | rejected), or
 * queued -> dropped (where it is says which: the queue, a lane, neither).
 * close() is idempotent; after it every runShard rejects workers_closed.
 */
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { errorText, ServiceError } from '../../errors';
import { DOMAIN_ERROR_CODES } from '../../error-codes';
import { LaneEnds, releaseAbort, type OnResults, type ShardCall, type ShardOutcome } from './lane-ends';
import { expectedResults, type LaneStats, type LaneWorkerData, type PingReply, type Shard, type WorkerTask } from './lane-protocol';
import { newLagShare } from './lag-meter';
import type { SocketDriver } from '../net/exchange';
import type { CustomUrlResult, ProbeResult } from '../types';

export type { Shard } from './lane-protocol';
export type { ShardOutcome } from './lane-ends';

export interface ProbeWorkersOptions {
  /** Worker threads; default: the number of cores. */
  threads?: number;
  /** Worker entry; default workers/probe-worker.ts. */
  filename?: string;
  /** Shards one thread runs at once (default 4096). */
  concurrentTasksPerWorker?: number;
  /** How long start() waits for every thread to answer a ping (default 10 s). */
  startTimeoutMs?: number;
  /** The probes' socket link in every thread (PROBE_SOCKET_DRIVER; lane.ts applies it); default native where available. */
  socketDriver?: SocketDriver;
}

export const DEFAULT_WORKER_FILE = fileURLToPath(new URL('../../../workers/probe-worker.ts', import.meta.url));

export class ProbeWorkers {
  readonly threads: number;
  private readonly maxRunning: number;
  private readonly waiting: ShardCall[] = [];
  private readonly lanes: LaneEnds;
  private nextId = 1;
  private closed = false;
  private closing: Promise<void> | null = null;

  private constructor(
    private readonly piscina: Piscina,
    threads: number,
    perWorker: number,
    /** the socket link the threads said they use at start (PROBE_SOCKET_DRIVER; `node` where the native one is unavailable) */
    readonly socketDriver: SocketDriver,
    /** the main thread's lag as the lanes read it (lag-meter.ts newLagShare): the main thread's meter writes it (src/jobs/lag-limiter.ts) */
    readonly mainLag: Float64Array,
  ) {
    this.threads = threads;
    this.maxRunning = threads * perWorker;
    this.lanes = new LaneEnds(piscina, threads, () => this.pump(), (s) => this.noteStats(s));
  }

  /** The lanes' worst lag since the last takeLag (ms). */
  private lagPeak = 0;
  /** Counts over the workers' life (/metrics): probes a lane turned into checker_overloaded for its lag, and the lanes' pinned TLS handshakes. */
  readonly laneCounts = { lagRetries: 0, tlsFull: 0, tlsResumed: 0 };

  /**
   * The worst lag any lane reported since the last call, in ms (0 when none
   * did): the adaptive limit's input (src/jobs/lag-limiter.ts).
   */
  takeLag(): number {
    const p = this.lagPeak;
    this.lagPeak = 0;
    return p;
  }

  private noteStats(s: LaneStats): void {
    if (s.lagMs > this.lagPeak) this.lagPeak = s.lagMs;
    this.laneCounts.lagRetries += s.lagRetries;
    this.laneCounts.tlsFull += s.tlsFull;
    this.laneCounts.tlsResumed += s.tlsResumed;
  }

  static async start(opts: ProbeWorkersOptions = {}): Promise<ProbeWorkers> {
    const threads = Math.max(1, opts.threads ?? availableParallelism());
    // A shard lives as long as its slowest probe (one black hole holds it for the
    // whole timeout), so the cap on running shards must not cap probes in flight:
    // 4096 per thread covers the largest region capacity with 64-probe grants.
    const perWorker = Math.max(1, opts.concurrentTasksPerWorker ?? 4096);
    const filename = opts.filename ?? DEFAULT_WORKER_FILE;
    // the main thread's lag, written by its meter (src/jobs/lag-limiter.ts), read by every lane at a deadline
    const mainLag = newLagShare();
    const piscina = new Piscina({
      filename,
      minThreads: threads,
      maxThreads: threads,
      // piscina runs one lane per thread (plus the start-up ping); shards never become piscina tasks
      concurrentTasksPerWorker: 2,
      maxQueue: threads * 2,
      // read by each thread as it starts, replacements of dead threads included (lane.ts)
      workerData: { socketDriver: opts.socketDriver ?? 'native', mainLag } satisfies LaneWorkerData,
    });
    let loadError: unknown = null;
    let failStart: ((e: unknown) => void) | null = null;
    // Kept for the workers' whole life: an 'error' event without a listener would crash the process.
    piscina.on('error', (err: unknown) => {
      loadError ??= err;
      failStart?.(err);
    });
    let timer: ReturnType<typeof setTimeout> | null = null;
    let drivers: (SocketDriver | undefined)[] = [];
    const startTimeoutMs = opts.startTimeoutMs ?? 10_000;
    try {
      await new Promise<void>((resolve, reject) => {
        failStart = (err) =>
          reject(new ServiceError(DOMAIN_ERROR_CODES.WORKER_LOAD_FAILED, `probe worker ${filename} failed to load: ${errorText(err)}`, { cause: err }));
        timer = setTimeout(
          () => reject(new ServiceError(DOMAIN_ERROR_CODES.WORKERS_START_TIMEOUT, `probe worker ${filename} did not answer within ${startTimeoutMs} ms`)),
          startTimeoutMs,
        );
        const pings: Promise<PingReply>[] = [];
        for (let i = 0; i < threads; i++) pings.push(piscina.run({ kind: 'ping' } satisfies WorkerTask) as Promise<PingReply>);
        Promise.all(pings).then(
          (replies) => {
            drivers = replies.map((r) => r?.socketDriver);
            if (replies.every((r) => r && r.pong === true)) resolve();
            else reject(new ServiceError(DOMAIN_ERROR_CODES.WORKER_LOAD_FAILED, `probe worker ${filename} answered the ping with something else`));
          },
          (err: unknown) => failStart?.(loadError ?? err),
        );
      });
    } catch (err) {
      await piscina.destroy().catch(() => undefined);
      throw err;
    } finally {
      if (timer) clearTimeout(timer);
      failStart = null;
    }
    return new ProbeWorkers(piscina, threads, perWorker, drivers[0] ?? 'native', mainLag);
  }

  /** Shards waiting for a slot / running now. */
  get stats(): { queued: number; running: number } {
    return { queued: this.waiting.length, running: this.lanes.running };
  }

  /**
   * Run one shard. `onResults` gets every result, in batches, as they complete.
   * Resolves once every started probe has reported (or with dropped=true when
   * `signal` aborted before the shard was sent to a thread). Rejects with
   * ServiceError worker_failed if the worker thread dies, workers_closed if the
   * workers are closed first, workers_callback_failed if onResults throws.
   */
  runShard(shard: Extract<Shard, { kind: 'probe' }>, onResults: (batch: ProbeResult[]) => void, signal?: AbortSignal): Promise<ShardOutcome>;
  runShard(shard: Extract<Shard, { kind: 'custom_url' }>, onResults: (batch: CustomUrlResult[]) => void, signal?: AbortSignal): Promise<ShardOutcome>;
  runShard(shard: Shard, onResults: OnResults, signal?: AbortSignal): Promise<ShardOutcome>;
  runShard(
    shard: Shard,
    callback: OnResults | ((batch: ProbeResult[]) => void) | ((batch: CustomUrlResult[]) => void),
    signal?: AbortSignal,
  ): Promise<ShardOutcome> {
    // the overloads tie the callback's batch type to shard.kind; the worker sends exactly that kind
    const onResults = callback as OnResults;
    if (this.closed) return Promise.reject(new ServiceError(DOMAIN_ERROR_CODES.WORKERS_CLOSED, 'the probe workers are closed'));
    if (signal?.aborted) return Promise.resolve({ dropped: true, started: 0, finished: 0, cancelled: false });
    return new Promise<ShardOutcome>((resolve, reject) => {
      const size = expectedResults(shard);
      const entry: ShardCall = {
        id: this.nextId++,
        shard,
        onResults,
        signal,
        resolve,
        reject,
        onAbort: null,
        lane: null,
        size,
        cancelSent: false,
        callbackError: null,
        settingsId: 0,
      };
      if (signal) {
        entry.onAbort = () => {
          const at = this.waiting.indexOf(entry);
          if (at !== -1) {
            this.waiting.splice(at, 1);
            releaseAbort(entry);
            resolve({ dropped: true, started: 0, finished: 0, cancelled: false });
          } else {
            this.lanes.cancel(entry);
          }
        };
        signal.addEventListener('abort', entry.onAbort, { once: true });
      }
      this.waiting.push(entry);
      this.pump();
    });
  }

  private pump(): void {
    const lanes = this.lanes;
    while (!this.closed && lanes.running < this.maxRunning && this.waiting.length > 0) {
      lanes.dispatch(this.waiting.shift()!);
    }
  }

  /** Reject queued and running shards with workers_closed, stop the threads. Idempotent. */
  close(): Promise<void> {
    if (this.closing !== null) return this.closing;
    this.closed = true;
    for (const entry of this.waiting.splice(0)) {
      releaseAbort(entry);
      entry.reject(new ServiceError(DOMAIN_ERROR_CODES.WORKERS_CLOSED, 'the probe workers closed before the shard ran'));
    }
    this.lanes.close();
    this.closing = this.piscina.destroy().catch(() => undefined);
    return this.closing;
  }
}
