/**
 * src/probe/workers/lane-ends.ts with a fake piscina: each lane's task hands
 * its port to the test, which plays the lane (reads the front's messages,
 * answers with batches) and can end the task (the thread died). Covers the
 * least-loaded choice, one message per lane per turn, result routing, cancel,
 * callback failures, lane death and close. Real threads:
 * test/integration/probe-workers.test.ts.
 */
import { afterEach, describe, expect, test } from 'bun:test';
import type { MessagePort } from 'node:worker_threads';
import { LaneEnds, type ShardCall, type ShardOutcome } from '../../src/probe/workers/lane-ends';
import type { LaneToMain, MainToLane, WorkerTask } from '../../src/probe/workers/lane-protocol';
import type { ProbeResult, ProbeSettings, ProbeTask } from '../../src/probe/types';
import { isServiceError } from '../../src/errors';
import { settle, until } from '../helpers/fake-clock';

/** One fake lane: the test's end of its port, what it received, and its piscina task's fate. */
interface FakeLane {
  port: MessagePort;
  got: MainToLane[];
  end(err?: unknown): void;
}

function fakeRunner() {
  const lanes: FakeLane[] = [];
  const runner = {
    run(task: WorkerTask): Promise<never> {
      if (task.kind !== 'lane') throw new Error('only lanes here');
      return new Promise<never>((_resolve, reject) => {
        const got: MainToLane[] = [];
        task.port.on('message', (m: MainToLane) => got.push(m));
        lanes.push({ port: task.port, got, end: (err) => reject(err ?? new Error('thread died')) });
      });
    },
  };
  return { runner: runner as never, lanes };
}

const settings = (): ProbeSettings => ({
  type: 'http',
  timeoutMs: 500,
  judge: { url: 'http://127.0.0.1:9/judge', protocol: 'http:', host: '127.0.0.1', port: 9, path: '/judge' },
  checkerIps: [],
  baselineHeaders: [],
  allowPrivateTargets: true,
});
const tasks = (n: number, host = '127.0.0.1'): ProbeTask[] => Array.from({ length: n }, (_, i) => ({ index: i, proxy: { host, port: 1 } }));

let nextId = 1;
interface Probe {
  entry: ShardCall;
  outcome: Promise<ShardOutcome>;
  results: number[];
}
function entryOf(n: number, s: ProbeSettings, opts: { host?: string; onResults?: () => void } = {}): Probe {
  const results: number[] = [];
  let entry!: ShardCall;
  const outcome = new Promise<ShardOutcome>((resolve, reject) => {
    entry = {
      id: nextId++,
      shard: { kind: 'probe', tasks: tasks(n, opts.host), settings: s },
      onResults: opts.onResults ?? ((b) => results.push(...(b as ProbeResult[]).map((r) => r.index))),
      signal: undefined,
      resolve,
      reject,
      onAbort: null,
      lane: null,
      size: n,
      cancelSent: false,
      callbackError: null,
      settingsId: 0,
    };
  });
  outcome.catch(() => undefined);
  return { entry, outcome, results };
}
const result = (index: number): ProbeResult => ({ index, status: 'failed', statusCode: null, responseTimeMs: 1, anonymity: null, origin: null, error: null });
const batch = (parts: [number, number[]][], done: [number, number][] = []): LaneToMain => ({
  t: 'batch',
  parts: parts.map(([id, idx]) => ({ id, batch: idx.map(result) })),
  done: done.map(([id, n]) => ({ id, started: n, finished: n, cancelled: false })),
});
/** What the lane at `i` received, once it received at least `n` messages (port messages arrive on a later turn). */
const received = async (lanes: FakeLane[], i: number, n = 1): Promise<MainToLane[]> => {
  await until(() => (lanes[i]?.got.length ?? 0) >= n);
  return lanes[i]!.got;
};

const open: FakeLane[][] = [];
afterEach(() => {
  for (const list of open.splice(0)) for (const l of list) l.port.close();
});
function setup(threads: number) {
  const { runner, lanes } = fakeRunner();
  open.push(lanes);
  let freed = 0;
  const pl = new LaneEnds(runner, threads, () => freed++);
  return { pl, lanes, freed: () => freed };
}

describe('LaneEnds', () => {
  test('a shard goes to the lane with the fewest probes assigned (ties: the lowest slot)', async () => {
    const { pl, lanes } = setup(3);
    const s = settings();
    for (const n of [5, 3, 1, 2, 4]) pl.dispatch(entryOf(n, s).entry);
    // 5 -> lane 0; 3 -> 1; 1 -> 2; 2 -> 2 (load 1); 4 -> 1 (lanes 1 and 2 tie at 3: the lower slot)
    expect(pl.loads).toEqual([5, 7, 3]);
    expect(pl.running).toBe(5);
    for (const i of [0, 1, 2]) await received(lanes, i);
    await settle(); // one message per lane: nothing more comes
    const sizes = lanes.map((l) => l.got.flatMap((m) => (m.t === 'run' ? m.shards.map((x) => x.tasks.index.length) : [])));
    expect(sizes).toEqual([[5], [3, 4], [1, 2]]);
  });

  test('one message per lane per turn; a job\'s settings travel once', async () => {
    const { pl, lanes } = setup(1);
    const s = settings();
    const a = entryOf(2, s);
    const b = entryOf(2, s);
    pl.dispatch(a.entry);
    pl.dispatch(b.entry);
    await received(lanes, 0);
    await settle();
    expect(lanes[0]!.got).toHaveLength(1);
    const first = lanes[0]!.got[0]!;
    if (first.t !== 'run') throw new Error('expected run');
    expect(first.shards.map((x) => x.id)).toEqual([a.entry.id, b.entry.id]);
    expect(first.settings).toHaveLength(1);
    expect(first.settings[0]!.settings).toEqual(s); // a copy: it crossed a port
    expect(first.shards.every((x) => x.settingsId === first.settings[0]!.id)).toBe(true);
    // the tasks travel packed
    expect([...first.shards[0]!.tasks.index]).toEqual([0, 1]);
    expect(first.shards[0]!.tasks.hosts).toBe('127.0.0.1\n127.0.0.1');

    pl.dispatch(entryOf(1, s).entry);
    const second = (await received(lanes, 0, 2))[1]!;
    expect(second.t === 'run' && second.settings).toEqual([]);
  });

  test('results go to their shard; `done` settles it, frees its load and tells the front', async () => {
    const { pl, lanes, freed } = setup(1);
    const s = settings();
    const a = entryOf(2, s);
    const b = entryOf(3, s);
    pl.dispatch(a.entry);
    pl.dispatch(b.entry);
    await received(lanes, 0);
    lanes[0]!.port.postMessage(batch([[a.entry.id, [0]], [b.entry.id, [2, 0]]]));
    await until(() => b.results.length === 2);
    expect(a.results).toEqual([0]);
    expect(b.results).toEqual([2, 0]);
    expect(freed()).toBe(1);
    lanes[0]!.port.postMessage(batch([[a.entry.id, [1]]], [[a.entry.id, 2]]));
    expect(await a.outcome).toEqual({ dropped: false, started: 2, finished: 2, cancelled: false });
    expect(a.results).toEqual([0, 1]);
    expect(pl.running).toBe(1);
    expect(pl.loads).toEqual([3]);
    // unknown ids (already settled) are ignored: a message of b's after them finds a's results unchanged
    lanes[0]!.port.postMessage(batch([[a.entry.id, [9]]], [[a.entry.id, 2]]));
    lanes[0]!.port.postMessage(batch([[b.entry.id, [1]]]));
    await until(() => b.results.length === 3);
    expect(a.results).toEqual([0, 1]);
  });

  test('cancel: once, in the next message, only while the shard runs', async () => {
    const { pl, lanes } = setup(1);
    const a = entryOf(4, settings());
    pl.cancel(a.entry); // not running yet: nothing
    pl.dispatch(a.entry);
    pl.cancel(a.entry);
    pl.cancel(a.entry);
    await received(lanes, 0, 2);
    await settle(); // once: no second cancel follows
    expect(lanes[0]!.got.map((m) => m.t)).toEqual(['run', 'cancel']);
    expect(lanes[0]!.got[1]).toEqual({ t: 'cancel', ids: [a.entry.id] });
  });

  test('onResults throwing cancels the shard, which then rejects with workers_callback_failed', async () => {
    const { pl, lanes } = setup(1);
    const a = entryOf(2, settings(), {
      onResults: () => {
        throw new Error('boom');
      },
    });
    pl.dispatch(a.entry);
    await received(lanes, 0);
    lanes[0]!.port.postMessage(batch([[a.entry.id, [0]]]));
    await received(lanes, 0, 2);
    expect(lanes[0]!.got.at(-1)).toEqual({ t: 'cancel', ids: [a.entry.id] });
    lanes[0]!.port.postMessage(batch([[a.entry.id, [1]]], [[a.entry.id, 2]]));
    const err = await a.outcome.then(
      () => null,
      (e: unknown) => e,
    );
    expect(isServiceError(err, 'workers_callback_failed')).toBe(true);
    expect((err as Error).message).toBe('onResults threw: boom');
    expect((err as Error).cause).toBeInstanceOf(Error);
  });

  test('a shard whose tasks cannot be packed is refused alone with workers_bad_shard', async () => {
    const { pl, lanes } = setup(1);
    const bad = entryOf(1, settings(), { host: 'a\nb' });
    pl.dispatch(bad.entry);
    await expect(bad.outcome).rejects.toMatchObject({ code: 'workers_bad_shard', message: 'shard refused: host of task 0 contains a line break' });
    expect(pl.running).toBe(0);
    expect(pl.loads).toEqual([0]);
    // the next shard's message is the lane's first: nothing of the refused one went out
    const good = entryOf(1, settings());
    pl.dispatch(good.entry);
    const got = await received(lanes, 0);
    expect(got).toHaveLength(1);
    expect(got[0]!.t === 'run' && got[0]!.shards.map((x) => x.id)).toEqual([good.entry.id]);
  });

  test('a lane whose task ends fails its shards with worker_failed; a new lane takes its slot', async () => {
    const { pl, lanes, freed } = setup(2);
    const s = settings();
    const a = entryOf(3, s);
    const b = entryOf(1, s);
    pl.dispatch(a.entry); // lane 0
    pl.dispatch(b.entry); // lane 1
    await received(lanes, 0);
    await received(lanes, 1);
    lanes[0]!.end(new Error('thread died'));
    const err = await a.outcome.then(
      () => null,
      (e: unknown) => e,
    );
    expect(isServiceError(err, 'worker_failed')).toBe(true);
    expect((err as Error).message).toBe('probe worker failed: thread died');
    expect(lanes).toHaveLength(3); // the replacement
    expect(freed()).toBe(1);
    expect(pl.loads).toEqual([0, 1]);
    expect(pl.running).toBe(1);
    // the new lane at slot 0 gets the next shard, with the settings again (its cache is empty)
    const c = entryOf(1, s);
    pl.dispatch(c.entry);
    const m = (await received(lanes, 2))[0]!;
    expect(m.t === 'run' && m.shards[0]!.id).toBe(c.entry.id);
    expect(m.t === 'run' && m.settings.length).toBe(1);
  });

  test('close: running shards reject with workers_closed; no message goes out and no lane is opened', async () => {
    const { pl, lanes, freed } = setup(2);
    const a = entryOf(2, settings());
    pl.dispatch(a.entry);
    pl.close();
    await expect(a.outcome).rejects.toMatchObject({ code: 'workers_closed', message: 'the probe workers closed while the shard ran' });
    await settle(5);
    expect(lanes).toHaveLength(2);
    expect(lanes[0]!.got).toEqual([]);
    expect(pl.running).toBe(0);
    expect(freed()).toBe(0);
    lanes[0]!.end(); // the threads stop afterwards: nothing more happens
    await settle(5);
    expect(lanes).toHaveLength(2);
  });
});
