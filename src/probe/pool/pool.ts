/**
 * The probe worker pool: piscina threads (one per core by default), each
 * running one long-lived lane (protocol in src/probe/pool/pool-protocol.ts) that
 * runs many shards at once, each shard running its probes concurrently
 * (workers/probe-worker.ts). Shards go to the lane with the fewest probes
 * assigned; the shards granted in one turn of the event loop travel to a lane
 * in one message, and a lane sends the results of all its shards back
 * together, so the cost of crossing the thread boundary is per batch, not per
 * shard or per probe.
 *
 * Queueing and cancellation: aborting a running piscina task terminates its
 * whole thread (and every shard on it), so this pool never hands piscina an
 * AbortSignal. It keeps its own queue and runs at most
 * threads x concurrentTasksPerWorker shards at once:
 *   - abort before the shard was sent to a lane: it is dropped (outcome.dropped);
 *   - abort while it runs: a cooperative cancel over the lane's port; the
 *     lane starts no more of its probes and finishes the ones in flight (each
 *     is bounded by the probe timeout), then reports it done.
 * A lane whose thread dies rejects its running shards with pool_worker_failed
 * and is replaced by a new lane on the thread piscina starts instead.
 *
 * Start-up fails loudly: `start()` pings every thread and rejects with a
 * PoolError (code pool_worker_load_failed / pool_start_timeout) when a worker
 * cannot load, instead of leaving an await that never settles.
 *
 * Shard states: queued -> running -> settled (resolved | rejected), or
 * queued -> dropped. Pool states: open -> closed (close() is idempotent).
 */
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { LaneSettings } from './lane-settings';
import { packTasks, type PackedTasks } from './packed-tasks';
import { LANE_SETTINGS_CACHE, type LaneShard, type LaneToMain, type MainToLane, type PingReply, type Shard, type WorkerTask } from './pool-protocol';
import type { CustomUrlResult, ProbeResult, ProbeSettings } from '../types';

export type { Shard } from './pool-protocol';

export const POOL_ERROR_CODES = Object.freeze({
  workerLoadFailed: 'pool_worker_load_failed',
  startTimeout: 'pool_start_timeout',
  workerFailed: 'pool_worker_failed',
  callbackFailed: 'pool_callback_failed',
  badShard: 'pool_bad_shard',
  closed: 'pool_closed',
} as const);
export type PoolErrorCode = (typeof POOL_ERROR_CODES)[keyof typeof POOL_ERROR_CODES];

export class PoolError extends Error {
  constructor(
    readonly code: PoolErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'PoolError';
  }
}

export interface ProbePoolOptions {
  /** Worker threads; default: the number of cores. */
  threads?: number;
  /** Worker entry; default workers/probe-worker.ts. */
  filename?: string;
  /** Shards one thread runs at once (default 4096). */
  concurrentTasksPerWorker?: number;
  /** How long start() waits for every thread to answer a ping (default 10 s). */
  startTimeoutMs?: number;
}

export interface ShardOutcome {
  /** True when the shard was aborted before it was submitted: nothing ran. */
  dropped: boolean;
  /** Probes (or probe x URL pairs) started / finished by the worker. */
  started: number;
  finished: number;
  /** True when a cooperative cancel stopped the shard early. */
  cancelled: boolean;
}

type OnResults = (batch: ProbeResult[] | CustomUrlResult[]) => void;

interface Entry {
  readonly id: number;
  shard: Shard;
  onResults: OnResults;
  signal: AbortSignal | undefined;
  resolve: (o: ShardOutcome) => void;
  reject: (e: unknown) => void;
  onAbort: (() => void) | null;
  /** set once running */
  lane: Lane | null;
  /** probes (or pairs) of the shard: the lane's load while it runs */
  size: number;
  cancelSent: boolean;
  callbackError: unknown;
  /** id of shard.settings in its lane's cache (set on dispatch) */
  settingsId: number;
}

/** The main thread's end of one worker thread's lane. */
interface Lane {
  readonly slot: number;
  readonly port: MessagePort;
  readonly live: Map<number, Entry>;
  /** probes of the running shards */
  load: number;
  /** shards, settings and cancels waiting for this turn's message */
  outShards: LaneShard[];
  /** the lane's settings cache, mirrored */
  settings: LaneSettings;
  outCancels: number[];
  flushQueued: boolean;
  dead: boolean;
}

export const DEFAULT_WORKER_FILE = fileURLToPath(new URL('../../../workers/probe-worker.ts', import.meta.url));

const PoolState = Object.freeze({ open: 'open', closed: 'closed' } as const);

export class ProbePool {
  readonly threads: number;
  private readonly maxRunning: number;
  private readonly waiting: Entry[] = [];
  private readonly lanes: Lane[] = [];
  private running = 0;
  private nextId = 1;
  /** One id per settings object (a job passes the same object with every shard). */
  private readonly settingsIds = new WeakMap<ProbeSettings, number>();
  private nextSettingsId = 1;
  private state: (typeof PoolState)[keyof typeof PoolState] = PoolState.open;
  private closing: Promise<void> | null = null;

  private constructor(
    private readonly piscina: Piscina,
    threads: number,
    perWorker: number,
  ) {
    this.threads = threads;
    this.maxRunning = threads * perWorker;
    for (let i = 0; i < threads; i++) this.lanes.push(this.openLane(i));
  }

  static async start(opts: ProbePoolOptions = {}): Promise<ProbePool> {
    const threads = Math.max(1, opts.threads ?? availableParallelism());
    // A shard lives as long as its slowest probe (one black hole holds it for the
    // whole timeout), so the cap on running shards must not cap probes in flight:
    // 4096 per thread covers the largest region capacity with 64-probe grants.
    const perWorker = Math.max(1, opts.concurrentTasksPerWorker ?? 4096);
    const filename = opts.filename ?? DEFAULT_WORKER_FILE;
    const piscina = new Piscina({
      filename,
      minThreads: threads,
      maxThreads: threads,
      // piscina runs one lane per thread (plus the start-up ping); shards never become piscina tasks
      concurrentTasksPerWorker: 2,
      maxQueue: threads * 2,
    });
    let loadError: unknown = null;
    let failStart: ((e: unknown) => void) | null = null;
    // Kept for the pool's whole life: an 'error' event without a listener would crash the process.
    piscina.on('error', (err: unknown) => {
      loadError ??= err;
      failStart?.(err);
    });
    let timer: ReturnType<typeof setTimeout> | null = null;
    const startTimeoutMs = opts.startTimeoutMs ?? 10_000;
    try {
      await new Promise<void>((resolve, reject) => {
        failStart = (err) =>
          reject(new PoolError(POOL_ERROR_CODES.workerLoadFailed, `probe worker ${filename} failed to load: ${errorText(err)}`, { cause: err }));
        timer = setTimeout(
          () => reject(new PoolError(POOL_ERROR_CODES.startTimeout, `probe worker ${filename} did not answer within ${startTimeoutMs} ms`)),
          startTimeoutMs,
        );
        const pings: Promise<PingReply>[] = [];
        for (let i = 0; i < threads; i++) pings.push(piscina.run({ kind: 'ping' } satisfies WorkerTask) as Promise<PingReply>);
        Promise.all(pings).then(
          (replies) => {
            if (replies.every((r) => r && r.pong === true)) resolve();
            else reject(new PoolError(POOL_ERROR_CODES.workerLoadFailed, `probe worker ${filename} answered the ping with something else`));
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
    return new ProbePool(piscina, threads, perWorker);
  }

  /** Shards waiting for a slot / running now. */
  get stats(): { queued: number; running: number } {
    return { queued: this.waiting.length, running: this.running };
  }

  /**
   * Run one shard. `onResults` gets every result, in batches, as they complete.
   * Resolves once every started probe has reported (or with dropped=true when
   * `signal` aborted before the shard was sent to a thread). Rejects with
   * PoolError pool_worker_failed if the worker thread dies, pool_closed if the
   * pool is closed first, pool_callback_failed if onResults throws.
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
    if (this.state !== PoolState.open) return Promise.reject(new PoolError(POOL_ERROR_CODES.closed, 'probe pool is closed'));
    if (signal?.aborted) return Promise.resolve({ dropped: true, started: 0, finished: 0, cancelled: false });
    return new Promise<ShardOutcome>((resolve, reject) => {
      const size = shard.kind === 'probe' ? shard.tasks.length : shard.tasks.length * shard.rules.length;
      const entry: Entry = {
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
            signal.removeEventListener('abort', entry.onAbort!);
            resolve({ dropped: true, started: 0, finished: 0, cancelled: false });
          } else {
            this.cancel(entry);
          }
        };
        signal.addEventListener('abort', entry.onAbort, { once: true });
      }
      this.waiting.push(entry);
      this.pump();
    });
  }

  private pump(): void {
    while (this.state === PoolState.open && this.running < this.maxRunning && this.waiting.length > 0) {
      this.dispatch(this.waiting.shift()!);
    }
  }

  private dispatch(entry: Entry): void {
    const shard = entry.shard;
    let tasks: PackedTasks;
    try {
      tasks = packTasks(shard.tasks);
    } catch (err) {
      // parsed hosts never contain a line break; a caller that passes one gets its shard refused, nothing else
      if (entry.signal && entry.onAbort) entry.signal.removeEventListener('abort', entry.onAbort);
      entry.reject(new PoolError(POOL_ERROR_CODES.badShard, `shard refused: ${errorText(err)}`, { cause: err }));
      return;
    }
    let lane = this.lanes[0]!;
    for (const l of this.lanes) if (l.load < lane.load) lane = l;
    entry.lane = lane;
    lane.live.set(entry.id, entry);
    lane.load += entry.size;
    this.running++;
    entry.settingsId = this.settingsIdOf(shard.settings);
    lane.settings.use(entry.settingsId, shard.settings);
    const packed: LaneShard = { id: entry.id, kind: shard.kind, tasks, settingsId: entry.settingsId };
    if (shard.kind === 'custom_url') packed.rules = shard.rules;
    if (shard.maxConcurrent !== undefined) packed.maxConcurrent = shard.maxConcurrent;
    lane.outShards.push(packed);
    this.queueFlush(lane);
  }

  /** One id per settings object (a job passes the same object with every shard). */
  private settingsIdOf(settings: ProbeSettings): number {
    let id = this.settingsIds.get(settings);
    if (id === undefined) {
      id = this.nextSettingsId++;
      this.settingsIds.set(settings, id);
    }
    return id;
  }

  private cancel(entry: Entry): void {
    const lane = entry.lane;
    if (lane === null || entry.cancelSent || !lane.live.has(entry.id)) return;
    entry.cancelSent = true;
    lane.outCancels.push(entry.id);
    this.queueFlush(lane);
  }

  /** Everything for a lane in one turn of the event loop goes in one message. */
  private queueFlush(lane: Lane): void {
    if (lane.flushQueued) return;
    lane.flushQueued = true;
    queueMicrotask(() => {
      lane.flushQueued = false;
      if (lane.dead || this.state !== PoolState.open) return;
      if (lane.outShards.length > 0) {
        const msg: MainToLane = { t: 'run', ...lane.settings.take(), shards: lane.outShards };
        lane.outShards = [];
        lane.port.postMessage(msg);
      }
      if (lane.outCancels.length > 0) {
        const ids = lane.outCancels;
        lane.outCancels = [];
        lane.port.postMessage({ t: 'cancel', ids } satisfies MainToLane);
      }
    });
  }

  private openLane(slot: number): Lane {
    const { port1, port2 } = new MessageChannel();
    const lane: Lane = {
      slot,
      port: port1,
      live: new Map(),
      load: 0,
      outShards: [],
      settings: new LaneSettings(LANE_SETTINGS_CACHE),
      outCancels: [],
      flushQueued: false,
      dead: false,
    };
    port1.on('message', (m: LaneToMain) => this.onBatch(lane, m));
    (this.piscina.run({ kind: 'lane', port: port2 } satisfies WorkerTask, { transferList: [port2] as never }) as Promise<never>).then(
      () => this.laneEnded(lane, null),
      (err: unknown) => this.laneEnded(lane, err),
    );
    return lane;
  }

  private onBatch(lane: Lane, m: LaneToMain): void {
    if (lane.dead) return;
    for (const part of m.parts) {
      const entry = lane.live.get(part.id);
      if (entry === undefined || entry.callbackError !== null) continue;
      try {
        entry.onResults(part.batch);
      } catch (err) {
        entry.callbackError = err;
        this.cancel(entry);
      }
    }
    for (const d of m.done) {
      const entry = lane.live.get(d.id);
      if (entry === undefined) continue;
      if (entry.callbackError !== null) {
        const err = entry.callbackError;
        this.settle(entry, new PoolError(POOL_ERROR_CODES.callbackFailed, `onResults threw: ${errorText(err)}`, { cause: err }));
      } else {
        this.settle(entry, null, { dropped: false, started: d.started, finished: d.finished, cancelled: d.cancelled });
      }
    }
    this.pump();
  }

  private settle(entry: Entry, err: unknown, outcome?: ShardOutcome): void {
    const lane = entry.lane!;
    if (!lane.live.delete(entry.id)) return;
    lane.load -= entry.size;
    lane.settings.done(entry.settingsId);
    this.running--;
    if (entry.signal && entry.onAbort) entry.signal.removeEventListener('abort', entry.onAbort);
    if (err) entry.reject(err);
    else entry.resolve(outcome!);
  }

  /** The lane's task settled: its thread died (or the pool closed it). Its shards fail; a new lane takes its place. */
  private laneEnded(lane: Lane, err: unknown): void {
    if (lane.dead) return;
    lane.dead = true;
    lane.port.close();
    const closed = this.state === PoolState.closed;
    for (const entry of [...lane.live.values()]) {
      this.settle(
        entry,
        closed
          ? new PoolError(POOL_ERROR_CODES.closed, 'probe pool closed while the shard ran', { cause: err })
          : new PoolError(POOL_ERROR_CODES.workerFailed, `probe worker failed: ${errorText(err ?? 'its lane ended')}`, { cause: err }),
      );
    }
    if (!closed) {
      this.lanes[lane.slot] = this.openLane(lane.slot);
      this.pump();
    }
  }

  /** Reject queued and running shards with pool_closed, stop the threads. Idempotent. */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    this.state = PoolState.closed;
    for (const entry of this.waiting.splice(0)) {
      if (entry.signal && entry.onAbort) entry.signal.removeEventListener('abort', entry.onAbort);
      entry.reject(new PoolError(POOL_ERROR_CODES.closed, 'probe pool closed before the shard ran'));
    }
    for (const lane of this.lanes) this.laneEnded(lane, null);
    this.closing = this.piscina.destroy().catch(() => undefined);
    return this.closing;
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
