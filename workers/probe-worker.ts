/**
 * Piscina worker entry: runs one shard's probes concurrently and streams the
 * results back over the shard's MessagePort in small batches (protocol in
 * src/probe/pool-protocol.ts). Thin on purpose: the probing itself is
 * runProbe / runCustomUrl. Never touches the database.
 */
import { threadId } from 'node:worker_threads';
import { runCustomUrl } from '../src/probe/custom-url';
import { runProbe } from '../src/probe/probe';
import {
  RESULT_BATCH_MAX,
  RESULT_FLUSH_MS,
  type MainToWorker,
  type PingReply,
  type ShardReply,
  type WorkerTask,
  type WorkerToMain,
} from '../src/probe/pool-protocol';
import type { CustomUrlResult, ProbeResult } from '../src/probe/types';

type AnyResult = ProbeResult | CustomUrlResult;

function runShard(task: Exclude<WorkerTask, { kind: 'ping' }>): Promise<ShardReply> {
  const { port, tasks, settings } = task;
  const rules = task.kind === 'custom_url' ? task.rules : null;
  const perTask = rules ? rules.length : 1;
  const total = tasks.length * perTask;
  const limit = Math.max(1, Math.min(task.maxConcurrent ?? total, total));
  let next = 0;
  let inFlight = 0;
  let finished = 0;
  let cancelled = false;
  let settled = false;
  let pending: AnyResult[] = [];
  let timer: ReturnType<typeof setTimeout> | null = null;

  const post = (m: WorkerToMain) => port.postMessage(m);
  const flush = () => {
    if (timer) {
      clearTimeout(timer);
      timer = null;
    }
    if (pending.length === 0) return;
    post({ t: 'results', batch: pending as ProbeResult[] | CustomUrlResult[] });
    pending = [];
  };

  return new Promise<ShardReply>((resolve) => {
    const finish = () => {
      if (settled) return;
      settled = true;
      flush();
      const reply: ShardReply = { started: next, finished, cancelled };
      post({ t: 'done', ...reply });
      port.close();
      resolve(reply);
    };
    const onResult = (r: AnyResult) => {
      inFlight--;
      finished++;
      pending.push(r);
      if (pending.length >= RESULT_BATCH_MAX) flush();
      else if (!timer) timer = setTimeout(flush, RESULT_FLUSH_MS);
      pump();
    };
    const start = (i: number): Promise<AnyResult> => {
      const t = tasks[Math.floor(i / perTask)]!;
      if (!rules) return runProbe(t, settings);
      const urlIndex = i % perTask;
      return runCustomUrl(t, urlIndex, rules[urlIndex]!, settings);
    };
    const internalFailure = (i: number, err: unknown): AnyResult => {
      // runProbe / runCustomUrl never reject by contract; if one does, report that pair failed rather than lose it.
      const t = tasks[Math.floor(i / perTask)]!;
      const error = { code: 'bad_response' as const, message: `internal error: ${err instanceof Error ? err.message : String(err)}` };
      if (!rules) return { index: t.index, status: 'failed', statusCode: null, responseTimeMs: 0, anonymity: null, origin: null, error };
      return { index: t.index, urlIndex: i % perTask, success: false, statusCode: null, responseTimeMs: 0, error };
    };
    const pump = () => {
      while (!cancelled && inFlight < limit && next < total) {
        const i = next++;
        inFlight++;
        start(i).then(onResult, (err: unknown) => onResult(internalFailure(i, err)));
      }
      if (inFlight === 0 && (cancelled || next >= total)) finish();
    };
    port.on('message', (m: MainToWorker) => {
      if (m && m.t === 'cancel' && !cancelled) {
        cancelled = true;
        if (inFlight === 0) finish();
      }
    });
    post({ t: 'started' });
    pump();
  });
}

export default async function probeWorker(task: WorkerTask): Promise<PingReply | ShardReply> {
  if (task.kind === 'ping') return { pong: true, threadId };
  return runShard(task);
}
