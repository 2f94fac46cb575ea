import { describe, expect, test } from 'bun:test';
import { NatsWorkers, type WorkTransport } from '../../src/cluster/nats-workers';
import { SHARD_MAX_TASKS, type WorkShard } from '../../src/cluster/protocol';
import { isServiceError } from '../../src/errors';
import { memoryLogger } from '../../src/log';
import type { ResultBatch, Shard } from '../../src/jobs/ports';
import type { CustomUrlResult, ProbeResult, ProbeSettings } from '../../src/probe/types';
import { FakeClock, settle } from '../helpers/fake-clock';

const settings = { type: 'http', timeoutMs: 1000 } as ProbeSettings;
const ctx = { runId: 'run1', region: 'us1' };
const probeShard = (n: number, from = 0): Shard => ({
  kind: 'probe',
  tasks: Array.from({ length: n }, (_, i) => ({ index: from + i, proxy: { host: '127.0.0.1', port: 1 } })),
  settings,
});
/** A report of one shard entry. */
const rep = (shard: string, e: { results?: (ProbeResult | CustomUrlResult)[]; start?: true; done?: true; delivery?: number }) => ({
  agent: 'x',
  shards: [{ shard, delivery: e.delivery ?? 1, ...(e.start ? { start: e.start } : {}), ...(e.results ? { results: e.results as ProbeResult[] } : {}), ...(e.done ? { done: e.done } : {}) }],
});
const result = (index: number): ProbeResult => ({ index, status: 'failed', statusCode: null, responseTimeMs: 1, anonymity: null, origin: null, error: { code: 'timeout', message: 't' } });

function bed(deadlineMs = 5000) {
  const published: { region: string; w: WorkShard; msgId: string }[] = [];
  const cancels: string[] = [];
  let failPublishes = 0;
  const transport: WorkTransport = {
    publishWork: async (region, w, msgId) => {
      if (failPublishes > 0) {
        failPublishes--;
        throw new Error('nats down');
      }
      published.push({ region, w, msgId });
    },
    publishCancel: (node, job) => cancels.push(`${node}/${job}`),
  };
  const counts = { redelivered: 0, duplicates: 0 };
  const clock = new FakeClock();
  const log = memoryLogger('warn');
  const workers = new NatsWorkers({
    node: 'n1',
    transport,
    deadlineMs,
    log,
    counters: { shardsRedelivered: (n) => (counts.redelivered += n), duplicateResults: (n) => (counts.duplicates += n) },
    clock,
  });
  return { workers, published, cancels, counts, clock, log, failNext: (n: number) => (failPublishes = n) };
}

describe('NatsWorkers', () => {
  test('a node restarted under the same NODE_ID never reuses shard ids or message ids (old results cannot reach a new job)', async () => {
    const before = bed();
    const after = bed(); // the same node id 'n1', a new process
    const r1 = before.workers.runShard(probeShard(2), () => {}, undefined, ctx).catch(() => 'closed');
    const got: number[] = [];
    const r2 = after.workers.runShard(probeShard(2), (b: ResultBatch) => got.push(...b.map((r) => r.index)), undefined, { ...ctx, runId: 'run2' }).catch(() => 'closed');
    await settle();
    const [a, b] = [before.published[0]!, after.published[0]!];
    expect(a.w.shard).not.toBe(b.w.shard);
    expect(a.msgId).not.toBe(b.msgId);
    // a late batch of the old run's shard, arriving at the new process
    after.workers.receive(rep(a.w.shard, { results: [result(0), result(1)] }));
    expect(got).toEqual([]);
    before.workers.close();
    after.workers.close();
    expect([await r1, await r2]).toEqual(['closed', 'closed']);
  });

  test('splits a shard into parts of SHARD_MAX_TASKS, each result reaches the job once', async () => {
    const { workers, published, counts } = bed();
    const got: number[] = [];
    const done = workers.runShard(probeShard(SHARD_MAX_TASKS + 3), (b: ResultBatch) => got.push(...b.map((r) => r.index)), undefined, ctx);
    await settle();
    expect(published.map((p) => p.w.tasks.length)).toEqual([SHARD_MAX_TASKS, 3]);
    expect(published.every((p) => p.region === 'us1' && p.w.node === 'n1' && p.w.run === 'run1')).toBe(true);
    const [a, b] = published.map((p) => p.w.shard);
    workers.receive(rep(b!, { results: [result(SHARD_MAX_TASKS), result(SHARD_MAX_TASKS)] }));
    // a redelivery sends the same results again, and a result that is not this part's task is dropped too
    let missing = null as string[] | null;
    workers.receive(rep(b!, { start: true, delivery: 2, results: [result(SHARD_MAX_TASKS), result(0)], done: true }), (r) => (missing = r.missing));
    expect(missing).toEqual([b!]); // two of its three tasks are missing: nak
    // one report, two shards: b's last results and its done, and a's results (a not done: nothing said of it)
    workers.receive(
      {
        agent: 'x',
        shards: [
          { shard: b!, delivery: 3, results: [result(SHARD_MAX_TASKS + 1), result(SHARD_MAX_TASKS + 2)], done: true },
          { shard: a!, delivery: 1, results: Array.from({ length: SHARD_MAX_TASKS }, (_, i) => result(i)) },
        ],
      },
      (r) => (missing = r.missing),
    );
    expect(missing).toEqual([]);
    await done;
    expect(got.sort((x, y) => x - y)).toEqual(Array.from({ length: SHARD_MAX_TASKS + 3 }, (_, i) => i));
    expect(counts).toEqual({ redelivered: 1, duplicates: 3 });
    // the shard is gone: a late `done` is acked, late results dropped
    workers.receive(rep(a!, { done: true, delivery: 3 }), (r) => (missing = r.missing));
    expect(missing).toEqual([]);
    workers.receive(rep(a!, { results: [result(1)] }));
    expect(got).toHaveLength(SHARD_MAX_TASKS + 3);
  });

  test('custom-URL results are keyed by (index, urlIndex)', async () => {
    const { workers, published } = bed();
    const rules = [{ url: 'http://t/', requiredStatusCodes: [200], caseSensitive: false }];
    const got: string[] = [];
    const done = workers.runShard({ kind: 'custom_url', tasks: probeShard(2).tasks, rules, settings }, (b) => got.push(...(b as { index: number; urlIndex: number }[]).map((r) => `${r.index}:${r.urlIndex}`)), undefined, ctx);
    await settle();
    expect(published[0]!.w.rules).toEqual(rules);
    const r = (index: number, urlIndex = 0) => ({ index, urlIndex, success: true, statusCode: 200, responseTimeMs: 1, error: null });
    // a urlIndex beyond the rules, and a probe result, are not this part's
    workers.receive(rep(published[0]!.w.shard, { results: [r(0), r(0), r(1, 1)] }));
    workers.receive(rep(published[0]!.w.shard, { results: [result(1)] }));
    expect(got).toEqual(['0:0']);
    workers.receive(rep(published[0]!.w.shard, { results: [r(1)] }));
    await done;
    expect(got).toEqual(['0:0', '1:0']);
  });

  test('no sign of life within the deadline: shard_failed, not a moment before, and the warning names the setting', async () => {
    const { workers, clock, log } = bed(60);
    let err: unknown = 'pending';
    void workers.runShard(probeShard(2), () => {}, undefined, ctx).catch((e: unknown) => (err = e));
    await clock.advance(59);
    expect(err).toBe('pending');
    await clock.advance(1);
    expect(isServiceError(err, 'shard_failed')).toBe(true);
    expect(workers.stats.running).toBe(0);
    expect(log.lines.map((l) => l.msg)).toContain('a cluster shard showed no sign of life (the shard deadline): its job fails');
  });

  test('a batch is a sign of life: the deadline restarts from it', async () => {
    const { workers, published, clock } = bed(150);
    let outcome = 'pending';
    const done = workers.runShard(probeShard(2), () => {}, undefined, ctx).then(
      () => (outcome = 'done'),
      (e: unknown) => (outcome = isServiceError(e) ? e.code : 'other'),
    );
    await clock.advance(100);
    workers.receive(rep(published[0]!.w.shard, { results: [result(0)] }));
    await clock.advance(149); // 249 ms after the start: past the first deadline, within the restarted one
    expect(outcome).toBe('pending');
    workers.receive(rep(published[0]!.w.shard, { results: [result(1)] }));
    await done;
    expect(outcome).toBe('done');
    expect(clock.pending).toBe(0); // the deadline's timer went with the shard
  });

  test('without a sign of life after a batch, the restarted deadline fails it', async () => {
    const { workers, published, clock } = bed(150);
    let err: unknown = 'pending';
    void workers.runShard(probeShard(2), () => {}, undefined, ctx).catch((e: unknown) => (err = e));
    await clock.advance(100);
    workers.receive(rep(published[0]!.w.shard, { results: [result(0)] }));
    await clock.advance(150);
    expect(isServiceError(err, 'shard_failed')).toBe(true);
  });

  test('a failed publish is tried again with the same message id, after a growing wait', async () => {
    const { workers, published, failNext, clock } = bed();
    failNext(2);
    const done = workers.runShard(probeShard(1), () => {}, undefined, ctx);
    await settle();
    expect(published).toHaveLength(0); // the first try failed; the next waits 250 ms
    await clock.advance(250);
    expect(published).toHaveLength(0); // the second failed too; the third waits 500 ms
    await clock.advance(499);
    expect(published).toHaveLength(0);
    await clock.advance(1);
    expect(published).toHaveLength(1);
    expect(published[0]!.msgId).toBe(`n1.${published[0]!.w.shard}`);
    workers.receive(rep(published[0]!.w.shard, { results: [result(0)] }));
    await done;
  });

  test('an aborted shard resolves; endJob publishes the cancel; close fails what waits', async () => {
    const { workers, cancels } = bed();
    const ac = new AbortController();
    const aborted = workers.runShard(probeShard(1), () => {}, ac.signal, ctx);
    ac.abort();
    await aborted;
    workers.endJob(ctx);
    expect(cancels).toEqual(['n1/run1']);
    const waiting = workers.runShard(probeShard(1), () => {}, undefined, ctx);
    workers.close();
    let err: unknown;
    await waiting.catch((e: unknown) => (err = e));
    expect(isServiceError(err, 'shard_failed')).toBe(true);
    expect(workers.stats.running).toBe(0);
  });
});
