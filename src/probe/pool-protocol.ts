/**
 * The messages between the probe pool (src/probe/pool.ts, main thread) and
 * its piscina workers (workers/probe-worker.ts). Types and constants only.
 *
 * A shard is one piscina task. Its MessagePort carries, in order:
 *   worker -> main: {t: 'started'}, then {t: 'results', batch} any number of
 *                   times, then exactly one {t: 'done', ...} (the port is
 *                   ordered, so 'done' always follows the last batch)
 *   main -> worker: {t: 'cancel'}: start no more probes, finish the ones in
 *                   flight, then 'done'.
 * The piscina task result itself is only a liveness signal (a worker that
 * dies rejects it); results never travel in it.
 */
import type { MessagePort } from 'node:worker_threads';
import type { CustomUrlResult, CustomUrlRule, ProbeResult, ProbeSettings, ProbeTask } from './types';

export type Shard =
  | { kind: 'probe'; tasks: ProbeTask[]; settings: ProbeSettings; maxConcurrent?: number }
  | { kind: 'custom_url'; tasks: ProbeTask[]; rules: CustomUrlRule[]; settings: ProbeSettings; maxConcurrent?: number };

/** What piscina hands the worker. */
export type WorkerTask = { kind: 'ping' } | (Shard & { port: MessagePort });

export type PingReply = { pong: true; threadId: number };
export type ShardReply = { started: number; finished: number; cancelled: boolean };

export type WorkerToMain =
  | { t: 'started' }
  | { t: 'results'; batch: ProbeResult[] | CustomUrlResult[] }
  | { t: 'done'; started: number; finished: number; cancelled: boolean };

export type MainToWorker = { t: 'cancel' };

/** Worker-side batching: flush when this many results wait, or after FLUSH_MS. */
export const RESULT_BATCH_MAX = 64;
export const RESULT_FLUSH_MS = 5;
