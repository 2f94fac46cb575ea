/**
 * Piscina worker entry. A thread runs one lane (protocol in
 * src/probe/pool-protocol.ts): it receives shards over the lane's port, runs
 * each shard's probes concurrently (up to the shard's maxConcurrent), and
 * sends the results of all its shards back together in batches. Thin on
 * purpose: the probing itself is runProbe / runCustomUrl. Never touches the
 * database.
 *
 * Shard states: running -> (cancelled) -> done. A shard is done when nothing
 * of it is in flight and it will start nothing more (all started, or
 * cancelled); its `done` entry goes out in the flush after its last result.
 */
import { threadId, type MessagePort } from 'node:worker_threads';
import { runCustomUrl } from '../src/probe/custom-url';
import { runProbe } from '../src/probe/probe';
import {
  RESULT_BATCH_MAX,
  type LaneReply,
  type LaneShard,
  type LaneToMain,
  type MainToLane,
  type PingReply,
  type ShardDone,
  type WorkerTask,
} from '../src/probe/pool-protocol';
import type { CustomUrlResult, ProbeResult } from '../src/probe/types';

type AnyResult = ProbeResult | CustomUrlResult;

class LaneShardRun {
  next = 0;
  inFlight = 0;
  finished = 0;
  cancelled = false;
  readonly total: number;
  readonly limit: number;
  private readonly perTask: number;

  constructor(
    readonly shard: LaneShard,
    private readonly lane: Lane,
  ) {
    this.perTask = shard.kind === 'custom_url' ? shard.rules.length : 1;
    this.total = shard.tasks.length * this.perTask;
    this.limit = Math.max(1, Math.min(shard.maxConcurrent ?? this.total, this.total));
  }

  get ended(): boolean {
    return this.inFlight === 0 && (this.cancelled || this.next >= this.total);
  }

  pump(): void {
    while (!this.cancelled && this.inFlight < this.limit && this.next < this.total) {
      const i = this.next++;
      this.inFlight++;
      this.start(i).then(
        (r) => this.lane.onResult(this, r),
        (err: unknown) => this.lane.onResult(this, this.internalFailure(i, err)),
      );
    }
  }

  private start(i: number): Promise<AnyResult> {
    const s = this.shard;
    if (s.kind === 'probe') return runProbe(s.tasks[i]!, s.settings);
    const t = s.tasks[Math.floor(i / this.perTask)]!;
    const urlIndex = i % this.perTask;
    return runCustomUrl(t, urlIndex, s.rules[urlIndex]!, s.settings);
  }

  /** runProbe / runCustomUrl never reject by contract; if one does, that pair is reported failed rather than lost. */
  private internalFailure(i: number, err: unknown): AnyResult {
    const t = this.shard.tasks[Math.floor(i / this.perTask)]!;
    const error = { code: 'bad_response' as const, message: `internal error: ${err instanceof Error ? err.message : String(err)}` };
    if (this.shard.kind === 'probe') return { index: t.index, status: 'failed', statusCode: null, responseTimeMs: 0, anonymity: null, origin: null, error };
    return { index: t.index, urlIndex: i % this.perTask, success: false, statusCode: null, responseTimeMs: 0, error };
  }
}

class Lane {
  private readonly running = new Map<number, LaneShardRun>();
  private pending = new Map<number, AnyResult[]>();
  private pendingCount = 0;
  private done: ShardDone[] = [];
  private immediate: ReturnType<typeof setImmediate> | null = null;

  constructor(private readonly port: MessagePort) {}

  receive(m: MainToLane): void {
    if (m.t === 'run') {
      for (const shard of m.shards) {
        const run = new LaneShardRun(shard, this);
        this.running.set(shard.id, run);
        run.pump();
        if (run.ended) this.end(run); // an empty shard
      }
    } else if (m.t === 'cancel') {
      for (const id of m.ids) {
        const run = this.running.get(id);
        if (run === undefined || run.cancelled) continue;
        run.cancelled = true;
        if (run.ended) this.end(run);
      }
    }
  }

  onResult(run: LaneShardRun, r: AnyResult): void {
    run.inFlight--;
    run.finished++;
    const list = this.pending.get(run.shard.id);
    if (list === undefined) this.pending.set(run.shard.id, [r]);
    else list.push(r);
    this.pendingCount++;
    run.pump();
    if (run.ended) this.end(run);
    else if (this.pendingCount >= RESULT_BATCH_MAX) this.flush();
    else this.immediate ??= setImmediate(this.flush);
  }

  private end(run: LaneShardRun): void {
    this.running.delete(run.shard.id);
    this.done.push({ id: run.shard.id, started: run.next, finished: run.finished, cancelled: run.cancelled });
    if (this.running.size === 0 || this.pendingCount >= RESULT_BATCH_MAX) this.flush();
    else this.immediate ??= setImmediate(this.flush);
  }

  readonly flush = (): void => {
    if (this.immediate !== null) {
      clearImmediate(this.immediate);
      this.immediate = null;
    }
    if (this.pendingCount === 0 && this.done.length === 0) return;
    const parts: LaneToMain['parts'] = [];
    for (const [id, batch] of this.pending) parts.push({ id, batch: batch as ProbeResult[] | CustomUrlResult[] });
    const msg: LaneToMain = { t: 'batch', parts, done: this.done };
    this.pending = new Map();
    this.pendingCount = 0;
    this.done = [];
    this.port.postMessage(msg);
  };
}

function runLane(port: MessagePort): Promise<LaneReply> {
  return new Promise<LaneReply>((resolve) => {
    const lane = new Lane(port);
    port.on('message', (m: MainToLane) => {
      if (m.t === 'close') {
        lane.flush();
        port.close();
        resolve({ closed: true });
      } else {
        lane.receive(m);
      }
    });
  });
}

export default async function probeWorker(task: WorkerTask): Promise<PingReply | LaneReply> {
  if (task.kind === 'ping') return { pong: true, threadId };
  return runLane(task.port);
}
