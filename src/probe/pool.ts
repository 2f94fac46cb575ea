/**
 * The probe worker pool: piscina threads (one per core by default), each
 * running many shards at once (`concurrentTasksPerWorker`), each shard running
 * all of its probes concurrently (workers/probe-worker.ts). Results stream
 * back over a per-shard MessagePort in small batches while the shard runs.
 *
 * Queueing and cancellation: aborting a running piscina task terminates its
 * whole thread (and every other shard on it), so this pool never hands
 * piscina an AbortSignal. It keeps its own queue instead and submits at most
 * threads x concurrentTasksPerWorker shards, so piscina never queues:
 *   - abort before the shard was submitted: it is dropped (outcome.dropped);
 *   - abort while it runs: a cooperative {t:'cancel'} over its port; the
 *     worker starts no more probes and finishes the ones in flight (each is
 *     bounded by the probe timeout), then reports 'done'.
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
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { PingReply, Shard, ShardReply, WorkerTask, WorkerToMain } from './pool-protocol';
import type { CustomUrlResult, ProbeResult } from './types';

export type { Shard } from './pool-protocol';

export const POOL_ERROR_CODES = Object.freeze({
  workerLoadFailed: 'pool_worker_load_failed',
  startTimeout: 'pool_start_timeout',
  workerFailed: 'pool_worker_failed',
  callbackFailed: 'pool_callback_failed',
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
  /** Shards one thread runs at once (default 256). */
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
  shard: Shard;
  onResults: OnResults;
  signal: AbortSignal | undefined;
  resolve: (o: ShardOutcome) => void;
  reject: (e: unknown) => void;
  onAbort: (() => void) | null;
  /** set once running: sends the cooperative cancel */
  cancel: (() => void) | null;
}

export const DEFAULT_WORKER_FILE = fileURLToPath(new URL('../../workers/probe-worker.ts', import.meta.url));

const PoolState = Object.freeze({ open: 'open', closed: 'closed' } as const);

export class ProbePool {
  readonly threads: number;
  private readonly maxRunning: number;
  private readonly waiting: Entry[] = [];
  private readonly live = new Set<Entry>();
  private state: (typeof PoolState)[keyof typeof PoolState] = PoolState.open;
  private closing: Promise<void> | null = null;

  private constructor(
    private readonly piscina: Piscina,
    threads: number,
    perWorker: number,
  ) {
    this.threads = threads;
    this.maxRunning = threads * perWorker;
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
      concurrentTasksPerWorker: perWorker,
      // the pool never lets piscina queue (see header); a bounded queue makes a bug loud
      maxQueue: threads * perWorker,
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
    return { queued: this.waiting.length, running: this.live.size };
  }

  /**
   * Run one shard. `onResults` gets every result, in batches, as they complete.
   * Resolves once every started probe has reported (or with dropped=true when
   * `signal` aborted before the shard was submitted). Rejects with PoolError
   * pool_worker_failed if the worker thread dies, pool_closed if the pool is
   * closed first, pool_callback_failed if onResults throws.
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
      const entry: Entry = { shard, onResults, signal, resolve, reject, onAbort: null, cancel: null };
      if (signal) {
        entry.onAbort = () => {
          const at = this.waiting.indexOf(entry);
          if (at !== -1) {
            this.waiting.splice(at, 1);
            signal.removeEventListener('abort', entry.onAbort!);
            resolve({ dropped: true, started: 0, finished: 0, cancelled: false });
          } else {
            entry.cancel?.();
          }
        };
        signal.addEventListener('abort', entry.onAbort, { once: true });
      }
      this.waiting.push(entry);
      this.pump();
    });
  }

  private pump(): void {
    while (this.state === PoolState.open && this.live.size < this.maxRunning && this.waiting.length > 0) {
      this.dispatch(this.waiting.shift()!);
    }
  }

  private dispatch(entry: Entry): void {
    this.live.add(entry);
    const { port1, port2 } = new MessageChannel();
    let done: ShardReply | null = null;
    let taskFinished = false;
    let callbackError: unknown = null;
    let settled = false;
    let cancelSent = false;

    const settle = (err: unknown, outcome?: ShardOutcome) => {
      if (settled) return;
      settled = true;
      port1.close();
      if (entry.signal && entry.onAbort) entry.signal.removeEventListener('abort', entry.onAbort);
      this.live.delete(entry);
      if (err) entry.reject(err);
      else entry.resolve(outcome!);
      this.pump();
    };
    const maybeDone = () => {
      if (!done || !taskFinished) return;
      if (callbackError) {
        settle(new PoolError(POOL_ERROR_CODES.callbackFailed, `onResults threw: ${errorText(callbackError)}`, { cause: callbackError }));
      } else {
        settle(null, { dropped: false, started: done.started, finished: done.finished, cancelled: done.cancelled });
      }
    };
    entry.cancel = () => {
      if (cancelSent || settled) return;
      cancelSent = true;
      port1.postMessage({ t: 'cancel' });
    };
    port1.on('message', (m: WorkerToMain) => {
      if (settled) return;
      if (m.t === 'results') {
        if (callbackError) return;
        try {
          entry.onResults(m.batch);
        } catch (err) {
          callbackError = err;
          entry.cancel?.();
        }
      } else if (m.t === 'done') {
        done = { started: m.started, finished: m.finished, cancelled: m.cancelled };
        maybeDone();
      }
    });
    const task: WorkerTask = { ...entry.shard, port: port2 };
    (this.piscina.run(task, { transferList: [port2] as never }) as Promise<ShardReply>).then(
      () => {
        taskFinished = true;
        maybeDone();
      },
      (err: unknown) => {
        const closed = this.state === PoolState.closed;
        settle(
          closed
            ? new PoolError(POOL_ERROR_CODES.closed, 'probe pool closed while the shard ran', { cause: err })
            : new PoolError(POOL_ERROR_CODES.workerFailed, `probe worker failed: ${errorText(err)}`, { cause: err }),
        );
      },
    );
  }

  /** Reject queued shards, stop the threads (running shards reject with pool_closed). Idempotent. */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    this.state = PoolState.closed;
    for (const entry of this.waiting.splice(0)) {
      if (entry.signal && entry.onAbort) entry.signal.removeEventListener('abort', entry.onAbort);
      entry.reject(new PoolError(POOL_ERROR_CODES.closed, 'probe pool closed before the shard ran'));
    }
    this.closing = this.piscina.destroy().catch(() => undefined);
    return this.closing;
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
