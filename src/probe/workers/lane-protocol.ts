/**
 * The messages between the probe workers' front (main thread: probe-workers.ts, its lanes'
 * ends in lane-ends.ts) and the lane each piscina worker runs (lane.ts,
 * entry workers/probe-worker.ts). Types and constants, and the one count of
 * the results a shard owes (expectedResults).
 *
 * Each worker thread runs one long-lived piscina task, its *lane*, with one
 * MessagePort for the workers' whole life. Shards travel over the lane's port,
 * so a shard costs one entry in a message, not a piscina task, a
 * MessageChannel and a transfer of its own:
 *
 *   main -> lane:  {t:'run', settings, forget, shards}
 *                                         shards to start (several per message)
 *                  {t:'cancel', ids}      start no more probes of these shards;
 *                                         the ones in flight finish (each is
 *                                         bounded by the probe timeout)
 *   lane -> main:  {t:'batch', parts, done}
 *                  parts: results of any number of shards, grouped by shard;
 *                  done:  shards that ended, with their counts. A port is
 *                  ordered and `done` is read after `parts`, so a shard's
 *                  last results always arrive before its end.
 *
 * The piscina task of a lane settles only when its thread dies (the task
 * rejects) or the front destroys the threads: it is the liveness signal.
 */
import type { MessagePort } from 'node:worker_threads';
import type { PackedTasks } from './packed-tasks';
import type { CustomUrlResult, CustomUrlRule, ProbeResult, ProbeSettings, ProbeTask } from '../types';
import type { SocketDriver } from '../net/exchange';

export type Shard =
  | { kind: 'probe'; tasks: ProbeTask[]; settings: ProbeSettings; maxConcurrent?: number }
  | { kind: 'custom_url'; tasks: ProbeTask[]; rules: CustomUrlRule[]; settings: ProbeSettings; maxConcurrent?: number };

/**
 * Results a shard owes: one per task, or one per (task, rule) for custom URLs.
 * Any shape of a shard (the workers' Shard, the cluster's WorkShard) counts here.
 */
export function expectedResults(shard: { kind: Shard['kind']; tasks: readonly unknown[]; rules?: readonly unknown[] }): number {
  return shard.kind === 'probe' ? shard.tasks.length : shard.tasks.length * (shard.rules?.length ?? 0);
}

/**
 * A shard packed for the thread boundary, as the lane receives it: numbered
 * by the front, its tasks packed (packed-tasks.ts), its settings by
 * reference to the lane's settings cache.
 */
export type PackedShard = {
  id: number;
  kind: Shard['kind'];
  tasks: PackedTasks;
  settingsId: number;
  rules?: CustomUrlRule[];
  maxConcurrent?: number;
};

/** What piscina hands the worker. */
export type WorkerTask = { kind: 'ping' } | { kind: 'lane'; port: MessagePort };

/**
 * What every thread gets at its start (piscina's workerData): the pool's
 * choice of socket link, and the main thread's lag meter's share
 * (lag-meter.ts newLagShare: its lateness counts at a probe's deadline).
 */
export type LaneWorkerData = { socketDriver: SocketDriver; mainLag?: Float64Array };

export type PingReply = { pong: true; threadId: number; socketDriver: SocketDriver };

export type ShardDone = { id: number; started: number; finished: number; cancelled: boolean };

/**
 * `run` first drops `forget` from the lane's settings cache, then stores
 * `settings` in it, then starts `shards` (the front mirrors each lane's cache,
 * so a job's settings go to a lane once, not with every shard; it forgets
 * only settings no running shard of the lane uses).
 */
export type MainToLane =
  | { t: 'run'; settings: { id: number; settings: ProbeSettings }[]; forget: number[]; shards: PackedShard[] }
  | { t: 'cancel'; ids: number[] };

export type LaneToMain = {
  t: 'batch';
  parts: { id: number; batch: ProbeResult[] | CustomUrlResult[] }[];
  done: ShardDone[];
  /** What the lane saw since its last batch (absent from lanes that do not report). */
  stats?: LaneStats;
};

/**
 * A lane's own load since its last batch: its worst lag (lag-meter.ts
 * takePeak: the adaptive limit's input, src/jobs/lag-limiter.ts), the probes
 * it turned from a timeout into checker_overloaded for that lag
 * (src/probe/codec/checker-lag.ts), and its pinned TLS handshakes, full or resumed
 * (src/probe/net/tls-sessions.ts: /metrics).
 */
export type LaneStats = { lagMs: number; lagRetries: number; tlsFull: number; tlsResumed: number };

/**
 * Lane-side batching: one message carries the results of every shard of the
 * thread. A lane flushes once per turn of its event loop (setImmediate), so
 * the batch is whatever completed in that turn: under load a turn handles
 * many sockets and the batch is large, when idle a result goes out at once
 * (no timer wait before its slot is given back). At most this many results
 * per message.
 */
export const RESULT_BATCH_MAX = 256;

/** Settings objects a lane keeps while no shard uses them (beyond this, unused ones are forgotten). */
export const LANE_SETTINGS_CACHE = 64;
