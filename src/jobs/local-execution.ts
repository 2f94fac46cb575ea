/**
 * ProbeExecution in this process: the region scheduler's fair slots
 * (scheduler.ts) and the probe workers' lanes (src/probe/workers/probe-workers.ts).
 * A job's priority class (`ExecutionJob.priority`, default `check`) is its
 * registration's: background jobs get only what checks leave.
 *
 * Slots go back to the scheduler here, as results arrive and, for whatever a
 * shard never reported, when it ends: never through the job's mailbox, so a
 * job that failed or was cancelled still returns every slot it held. Slots
 * are released once per turn: a lane's message carries the results of many
 * shards, and one release for all of them lets the scheduler re-grant them in
 * full chunks instead of one small shard per shard reported.
 */
import { ServiceError } from '../errors';
import { JOB_ERROR_CODES } from '../error-codes';
import { expectedResults } from '../probe/workers/lane-protocol';
import type { ExecutionHandle, ExecutionJob, WorkerPort, ProbeExecution, ResultBatch, Shard } from './ports';
import type { JobHandle, RegionScheduler } from './scheduler';

export function localExecution(scheduler: RegionScheduler, workers: WorkerPort): ProbeExecution {
  return { open: (job) => new LocalJob(scheduler, workers, job) };
}

class LocalJob implements ExecutionHandle {
  readonly #workers: WorkerPort;
  readonly #entry: JobHandle;
  readonly #ctx: { runId: string; region: string };
  #ended = false;
  #toRelease = 0;

  constructor(scheduler: RegionScheduler, workers: WorkerPort, job: ExecutionJob) {
    this.#workers = workers;
    this.#ctx = { runId: job.runId, region: job.region };
    // A grant may come before register() returns: releases wait a microtask, so #entry is set by then.
    this.#entry = scheduler.register(job.runId, job.region, job.demand, (n) => {
      try {
        job.onGrant(n, this);
      } catch (err) {
        job.onError(new ServiceError(JOB_ERROR_CODES.DISPATCH_FAILED, 'starting a granted shard failed', { cause: err }));
        throw err; // the scheduler takes the grant back and cancels the job (its I4)
      }
    }, job.priority);
  }

  run(shard: Shard, onBatch: (batch: ResultBatch) => void, signal: AbortSignal): Promise<void> {
    const expected = expectedResults(shard);
    let reported = 0;
    const settle = (): number => {
      const missing = expected - reported;
      reported = expected;
      if (missing > 0) this.#releaseSoon(missing);
      return missing;
    };
    return this.#workers
      .runShard(
        shard,
        (batch) => {
          const n = Math.min(batch.length, expected - reported);
          reported += n;
          if (n > 0) this.#releaseSoon(n);
          onBatch(batch);
        },
        signal,
        this.#ctx,
      )
      .then(
        () => {
          const missing = settle();
          if (missing > 0 && !signal.aborted) {
            throw new ServiceError(JOB_ERROR_CODES.SHARD_INCOMPLETE, `a shard reported ${expected - missing} of ${expected} results`);
          }
        },
        (err: unknown) => {
          settle();
          throw err;
        },
      );
  }

  addDemand(n: number): void {
    this.#entry.addDemand(n);
  }

  release(n: number): void {
    if (n > 0) this.#releaseSoon(n);
  }

  cancel(): void {
    this.#entry.cancel();
    if (this.#ended) return;
    this.#ended = true;
    this.#workers.endJob?.(this.#ctx);
  }

  #releaseSoon(n: number): void {
    if (this.#toRelease === 0) {
      queueMicrotask(() => {
        const k = this.#toRelease;
        this.#toRelease = 0;
        this.#entry.release(k);
      });
    }
    this.#toRelease += n;
  }
}
