/**
 * localExecution (src/jobs/local-execution.ts): the ProbeExecution port over
 * the region scheduler and fake probe workers. Slots go back as results arrive and when
 * a shard ends; a shard that ends short rejects with shard_incomplete; a
 * grant that throws is reported to the job.
 */
import { describe, expect, test } from 'bun:test';
import { localExecution } from '../../src/jobs/local-execution';
import type { ExecutionHandle, WorkerPort, ResultBatch, Shard } from '../../src/jobs/ports';
import { RegionScheduler } from '../../src/jobs/scheduler';
import { settle } from '../helpers/fake-clock';
import type { ProbeResult, ProbeSettings } from '../../src/probe/types';

const settings = {} as ProbeSettings;
const shardOf = (from: number, n: number): Shard => ({
  kind: 'probe',
  tasks: Array.from({ length: n }, (_, i) => ({ index: from + i, proxy: { host: '192.0.2.1', port: 1 } })),
  settings,
});
const result = (index: number): ProbeResult => ({ index, status: 'failed', statusCode: null, responseTimeMs: 1, anonymity: null, origin: null, error: { code: 'connect_refused', message: 'x' } });

/** Fake probe workers that answer each shard with `answer(shard)` results in the next turn of the event loop. */
function workers(answer: (s: Shard) => number = (s) => s.tasks.length): WorkerPort {
  return {
    runShard(shard, onResults) {
      return new Promise((resolve) =>
        setImmediate(() => {
          onResults(shard.tasks.slice(0, answer(shard)).map((t) => result(t.index)));
          resolve(undefined);
        }),
      );
    },
  };
}

describe('localExecution', () => {
  test('runs a job through every grant and gives every slot back', async () => {
    const scheduler = new RegionScheduler(() => 8);
    const exec = localExecution(scheduler, workers());
    const got: number[] = [];
    let next = 0;
    const runs: Promise<void>[] = [];
    const ac = new AbortController();
    const done = new Promise<void>((resolve) => {
      exec.open({
        runId: 'j1',
        region: 'us1',
        demand: 50,
        onGrant: (n, h: ExecutionHandle) => {
          runs.push(h.run(shardOf(next, n), (b: ResultBatch) => {
            for (const r of b) got.push(r.index);
            if (got.length === 50) resolve();
          }, ac.signal));
          next += n;
        },
        onError: (e) => {
          throw e;
        },
      });
    });
    await done;
    await Promise.all(runs);
    await settle();
    expect(got.sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(scheduler.inFlight('us1')).toBe(0);
  });

  test('a shard that ends short rejects with shard_incomplete and still returns its slots', async () => {
    const scheduler = new RegionScheduler(() => 4);
    const exec = localExecution(scheduler, workers((s) => s.tasks.length - 1));
    const ac = new AbortController();
    const failure = await new Promise<unknown>((resolve) => {
      exec.open({ runId: 'j2', region: 'us1', demand: 4, onGrant: (n, h) => void h.run(shardOf(0, n), () => {}, ac.signal).catch(resolve), onError: resolve });
    });
    expect(failure).toMatchObject({ code: 'shard_incomplete' });
    await settle();
    expect(scheduler.inFlight('us1')).toBe(0);
  });

  test('an aborted shard that ends short resolves (the job is already over)', async () => {
    const scheduler = new RegionScheduler(() => 4);
    const exec = localExecution(scheduler, workers(() => 0));
    const ac = new AbortController();
    ac.abort();
    const out = await new Promise<unknown>((resolve) => {
      exec.open({ runId: 'j3', region: 'us1', demand: 2, onGrant: (n, h) => void h.run(shardOf(0, n), () => {}, ac.signal).then(() => resolve('resolved'), resolve), onError: resolve });
    });
    expect(out).toBe('resolved');
  });

  test('a grant that throws is reported to the job as dispatch_failed, and the scheduler takes the slots back', async () => {
    const scheduler = new RegionScheduler(() => 4, { onDispatchError: () => {} });
    const exec = localExecution(scheduler, workers());
    const errors: unknown[] = [];
    const h = exec.open({ runId: 'j4', region: 'us1', demand: 10, onGrant: () => { throw new Error('boom'); }, onError: (e) => errors.push(e) });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'dispatch_failed', cause: { message: 'boom' } });
    expect(scheduler.inFlight('us1')).toBe(0);
    h.cancel(); // idempotent after the scheduler's own cancel
  });

  test('the priority class reaches the scheduler: a background job takes what checks leave, a check opened beside it starts at once', () => {
    // 40 slots, reserve 4 (backgroundShare 0.9): a background job may hold 36
    const scheduler = new RegionScheduler(() => 40, { minGrant: 1 });
    const exec = localExecution(scheduler, workers());
    const granted = { round: 0, check: 0 };
    const open = (runId: string, priority: 'check' | 'background' | undefined, demand: number, who: 'round' | 'check') =>
      exec.open({ runId, region: 'us1', demand, ...(priority !== undefined ? { priority } : {}), onGrant: (n) => void (granted[who] += n), onError: (e) => { throw e; } });
    const round = open('round', 'background', 1000, 'round');
    expect(granted.round).toBe(36);
    const check = open('check', undefined, 10, 'check'); // the default class is check
    expect(granted.check).toBe(4); // the reserve, inside open()
    expect(scheduler.snapshot('us1').jobs.map((j) => [j.runId, j.priority])).toEqual([['check', 'check'], ['round', 'background']]);
    expect(scheduler.demand('us1', 'background')).toBe(1000);
    round.cancel();
    check.cancel();
  });
});
