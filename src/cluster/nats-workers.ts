/**
 * The API node's WorkerPort in a cluster: a granted shard goes out on its
 * region's JetStream work queue, its results come back on this node's
 * results subject (protocol.ts). The RegionScheduler in front of it
 * (local-execution.ts) keeps the window: only granted probes are published.
 *
 * ## One shard
 *
 *   runShard ──publish parts──> waiting ──results of every task──> resolved
 *      │                          │  └──no sign of life for deadlineMs──> rejected (shard_failed)
 *      │                          └──signal aborted (the job ended)──> resolved (late results dropped)
 *
 * A shard of more than SHARD_MAX_TASKS tasks goes out as several messages
 * (parts), each `<instance>-<seq>-<part>` (instance: random per NatsWorkers, so
 * ids never repeat across restarts of a node). A result counts once: its key is the task
 * index (custom URLs: index x rules + urlIndex, a number), and a key already
 * seen, or not a task of that part, is a duplicate (dropped, counted). So
 * whatever JetStream redelivers (an agent died, a report was lost), the job
 * hears each result once.
 *
 * Reports (protocol.ts) carry many shards' news; each entry is handled as
 * start, then results, then done. A report with done entries is a request:
 * the reply lists the done parts still missing results (the agent naks
 * them; another delivery fills the gap); a part no longer here (finished,
 * failed or its job ended) is not missing: the agent acks and the queue
 * forgets it.
 *
 * Sign of life (resets the deadline): the publish, an agent's `start`, any
 * result. A part waiting in the queue behind other nodes' work shows none,
 * so the shard deadline (cluster.shardDeadlineMs, 120 s) bounds that wait too.
 *
 * Publishing retries (NATS may be restarting) until the deadline, with a
 * JetStream message id per part, so a retried publish is stored once.
 */
import { randomBytes } from 'node:crypto';
import { ServiceError } from '../errors';
import { JOB_ERROR_CODES } from '../error-codes';
import { sleep, systemClock, type Clock } from '../clock';
import type { WorkerPort, ResultBatch, Shard, ShardContext } from '../jobs/ports';
import type { Logger } from '../log';
import type { CustomUrlResult, ProbeResult } from '../probe/types';
import { PROTOCOL_VERSION, SHARD_MAX_TASKS, type ReportReply, type ResultsReport, type WorkShard } from './protocol';

/** How NatsWorkers reach NATS (src/cluster/nats.ts; a fake in unit tests). */
export interface WorkTransport {
  /** Publish a part on pc.work.<region> (JetStream; `msgId` de-duplicates a retried publish). Rejects when not stored. */
  publishWork(region: string, shard: WorkShard, msgId: string): Promise<void>;
  /** Tell agents a run ended (pc.cancel). */
  publishCancel(node: string, run: string): void;
}

export interface NatsWorkersCounters {
  /** A shard delivered again (an agent's `start` with delivery > 1). */
  shardsRedelivered(n: number): void;
  /** Results dropped as duplicates. */
  duplicateResults?(n: number): void;
}

export interface NatsWorkersOptions {
  node: string;
  transport: WorkTransport;
  deadlineMs: number;
  log: Logger;
  counters?: NatsWorkersCounters;
  /** The deadline's and the publish retries' timers (default systemClock; tests pass a fake one). */
  clock?: Clock;
}

/** One work-queue message of a shard (a WorkShard on the wire: at most SHARD_MAX_TASKS tasks). */
interface ShardPart {
  /** Keys of this part's tasks not yet answered (index, or index x urls + urlIndex). */
  missing: Set<number>;
  /** custom_url: rules per task (0: a probe part). */
  urls: number;
  call: ShardCall;
}

/** One call of runShard: its parts, the results still owed, its settlement and deadline. */
interface ShardCall {
  seq: number;
  parts: string[];
  left: number;
  onResults: (batch: ResultBatch) => void;
  settle: (err?: Error) => void;
  /** Cancels the deadline's timer; null when none is armed (settled, or the deadline passed). */
  timer: (() => void) | null;
}

const PUBLISH_RETRY_MS = 250;

/** A result's key in its part, or -1 when it cannot be one of the part's (wrong kind, urlIndex out of range). */
function keyOf(r: ProbeResult | CustomUrlResult, urls: number): number {
  if (!('urlIndex' in r)) return urls === 0 ? r.index : -1;
  return urls > 0 && r.urlIndex < urls ? r.index * urls + r.urlIndex : -1;
}

export class NatsWorkers implements WorkerPort {
  readonly #o: NatsWorkersOptions;
  /**
   * This instance's own prefix of shard ids: a node restarted under the same
   * NODE_ID starts counting again, and without it its new shards would take
   * the ids of the old run's (results of an old job's shard folded into a new
   * job's, and JetStream's duplicate window dropping the new publishes).
   */
  readonly #instance = randomBytes(4).toString('hex');
  readonly #parts = new Map<string, ShardPart>();
  #seq = 0;
  #running = 0;
  #closed = false;

  readonly #clock: Clock;

  constructor(o: NatsWorkersOptions) {
    this.#o = o;
    this.#clock = o.clock ?? systemClock;
  }

  /** Shards published and not yet ended (for /metrics: shaped like ProbeWorkers' stats). */
  get stats(): { queued: number; running: number } {
    return { queued: 0, running: this.#running };
  }

  /** No local threads: agents probe. */
  get threads(): number {
    return 0;
  }

  runShard(shard: Shard, onResults: (batch: ResultBatch) => void, signal?: AbortSignal, ctx?: ShardContext): Promise<void> {
    if (ctx === undefined) return Promise.reject(new ServiceError(JOB_ERROR_CODES.CLUSTER_NO_CONTEXT, 'a cluster shard needs its run and region'));
    if (this.#closed) return Promise.reject(new ServiceError(JOB_ERROR_CODES.SHARD_FAILED, 'the cluster workers are closed'));
    if (signal?.aborted === true) return Promise.resolve();
    const seq = ++this.#seq;
    const rules = shard.kind === 'custom_url' ? shard.rules : [];
    return new Promise<void>((resolve, reject) => {
      const call: ShardCall = {
        seq,
        parts: [],
        left: 0,
        onResults,
        timer: null,
        settle: (err) => {
          call.timer?.();
          call.timer = null;
          for (const id of call.parts) this.#parts.delete(id);
          signal?.removeEventListener('abort', onAbort);
          this.#running--;
          if (err === undefined) resolve();
          else reject(err);
          call.settle = () => {};
        },
      };
      const onAbort = () => call.settle();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#running++;
      const works: WorkShard[] = [];
      for (let i = 0, part = 0; i < shard.tasks.length; i += SHARD_MAX_TASKS, part++) {
        const tasks = shard.tasks.slice(i, i + SHARD_MAX_TASKS);
        const id = `${this.#instance}-${seq}-${part}`;
        const missing = new Set<number>();
        const urls = shard.kind === 'probe' ? 0 : rules.length;
        for (const t of tasks) {
          if (urls === 0) missing.add(t.index);
          else for (let u = 0; u < urls; u++) missing.add(t.index * urls + u);
        }
        call.parts.push(id);
        call.left += missing.size;
        this.#parts.set(id, { missing, urls, call });
        works.push({
          v: PROTOCOL_VERSION,
          node: this.#o.node,
          run: ctx.runId,
          shard: id,
          kind: shard.kind,
          type: shard.settings.type,
          timeoutMs: shard.settings.timeoutMs,
          tasks,
          ...(shard.kind === 'custom_url' ? { rules } : {}),
        });
      }
      if (call.left === 0) return call.settle();
      this.#alive(call);
      for (const w of works) void this.#publish(ctx.region, w, call);
    });
  }

  endJob(ctx: ShardContext): void {
    if (this.#closed) return;
    try {
      this.#o.transport.publishCancel(this.#o.node, ctx.runId);
    } catch (err) {
      this.#o.log.warn('publishing a run cancel failed (agents probe its queued shards, their results are dropped)', { runId: ctx.runId, err });
    }
  }

  /**
   * One report on this node's results subject. `reply` answers a report
   * that ends shards (absent for publishes).
   */
  receive(m: ResultsReport, reply?: (r: ReportReply) => void): void {
    const missing: string[] = [];
    for (const e of m.shards) {
      const part = this.#parts.get(e.shard);
      if (e.start === true && e.delivery > 1) this.#o.counters?.shardsRedelivered(1);
      if (e.results !== undefined) this.#results(part, e.results);
      else if (part !== undefined) this.#alive(part.call);
      // a shard no longer here has nothing to wait for: the agent acks it
      if (e.done === true && part !== undefined && part.missing.size > 0) missing.push(e.shard);
    }
    reply?.({ missing });
  }

  #results(part: ShardPart | undefined, results: readonly (ProbeResult | CustomUrlResult)[]): void {
    if (part === undefined) {
      this.#o.counters?.duplicateResults?.(results.length);
      return;
    }
    const fresh: (ProbeResult | CustomUrlResult)[] = [];
    for (const r of results) {
      if (part.missing.delete(keyOf(r, part.urls))) fresh.push(r);
    }
    const dup = results.length - fresh.length;
    if (dup > 0) this.#o.counters?.duplicateResults?.(dup);
    const call = part.call;
    if (fresh.length === 0) return this.#alive(call);
    call.left -= fresh.length;
    try {
      call.onResults(fresh as ResultBatch);
    } catch (err) {
      return call.settle(new ServiceError(JOB_ERROR_CODES.SHARD_FAILED, 'handling shard results failed', { cause: err }));
    }
    if (call.left === 0) call.settle();
    else this.#alive(call);
  }

  /** Rejects every waiting shard (their jobs fail and refund). Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    const calls = new Set([...this.#parts.values()].map((p) => p.call));
    for (const call of calls) call.settle(new ServiceError(JOB_ERROR_CODES.SHARD_FAILED, 'the cluster workers closed'));
  }

  #alive(call: ShardCall): void {
    call.timer?.();
    call.timer = this.#clock.after(this.#o.deadlineMs, () => {
      call.timer = null;
      this.#o.log.warn('a cluster shard showed no sign of life (the shard deadline): its job fails', { shard: call.seq, deadlineMs: this.#o.deadlineMs });
      call.settle(new ServiceError(JOB_ERROR_CODES.SHARD_FAILED, `no result or agent for ${this.#o.deadlineMs} ms (the shard deadline)`));
    });
  }

  async #publish(region: string, w: WorkShard, call: ShardCall): Promise<void> {
    const msgId = `${this.#o.node}.${w.shard}`;
    for (let attempt = 0; ; attempt++) {
      if (!this.#parts.has(w.shard)) return; // settled meanwhile
      try {
        await this.#o.transport.publishWork(region, w, msgId);
        return;
      } catch (err) {
        if (attempt === 0) this.#o.log.warn('publishing a shard failed; trying again until the shard deadline', { shard: w.shard, region, err });
        // the deadline timer fails the shard if this never succeeds
        await sleep(this.#clock, Math.min(PUBLISH_RETRY_MS * (attempt + 1), 2000));
        if (call.timer === null) return;
      }
    }
  }
}
