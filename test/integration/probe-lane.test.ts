/**
 * A lane (src/probe/workers/lane.ts) driven directly over a MessageChannel in
 * this thread, its shards' states through their moves: running -> cancelled
 * -> done (a cancel while probes are in flight: they finish, then one `done`
 * with cancelled), running -> done (all started and finished, or an empty
 * shard), and the moves that must not happen: a second cancel, a cancel of a
 * done shard, a shard reported done twice. Real probes against a loopback
 * server that holds connections until the test lets them go.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { createServer, type Server, type Socket } from 'node:net';
import type { ProbeSettings, ProbeTask } from '../../src/probe/types';
import { probeWorker } from '../../src/probe/workers/lane';
import type { LaneToMain, MainToLane, ShardDone } from '../../src/probe/workers/lane-protocol';
import { packTasks } from '../../src/probe/workers/packed-tasks';

let hole: Server;
const held = new Set<Socket>();
let holePort = 0;

const settings: ProbeSettings = {
  type: 'http',
  timeoutMs: 20_000,
  judge: { url: 'http://127.0.0.1:9/judge', protocol: 'http:', host: '127.0.0.1', port: 9, path: '/judge' },
  checkerIps: [],
  baselineHeaders: [],
  allowPrivateTargets: true,
};
const tasks = (n: number): ProbeTask[] => Array.from({ length: n }, (_, i) => ({ index: i, proxy: { host: '127.0.0.1', port: holePort } }));

beforeAll(async () => {
  hole = createServer((s) => {
    held.add(s);
    s.on('close', () => held.delete(s));
  });
  await new Promise<void>((r) => hole.listen(0, '127.0.0.1', r));
  holePort = (hole.address() as { port: number }).port;
});
afterAll(async () => {
  release();
  await new Promise<void>((r) => hole.close(() => r()));
});

/** A lane on one end of a channel; the test is the main thread on the other. */
function lane() {
  const { port1, port2 } = new MessageChannel();
  void probeWorker({ kind: 'lane', port: port2 as MessagePort });
  const done: ShardDone[] = [];
  const results = new Map<number, number>();
  let waiters: (() => void)[] = [];
  port1.on('message', (m: LaneToMain) => {
    for (const p of m.parts) results.set(p.id, (results.get(p.id) ?? 0) + p.batch.length);
    done.push(...m.done);
    for (const w of waiters) w();
    waiters = [];
  });
  const until = async (cond: () => boolean) => {
    while (!cond()) await new Promise<void>((r) => waiters.push(r));
  };
  let sentSettings = false;
  const send = (m: MainToLane) => port1.postMessage(m);
  const run = (id: number, n: number, maxConcurrent?: number) => {
    send({
      t: 'run',
      settings: sentSettings ? [] : [{ id: 1, settings }],
      forget: [],
      shards: [{ id, kind: 'probe', tasks: packTasks(tasks(n)), settingsId: 1, ...(maxConcurrent !== undefined ? { maxConcurrent } : {}) }],
    });
    sentSettings = true;
  };
  const cancel = (...ids: number[]) => send({ t: 'cancel', ids });
  /** Waits for a sentinel (an empty shard) to be reported: everything sent before it has been handled and flushed. */
  const settle = async (sentinel: number) => {
    run(sentinel, 0);
    await until(() => done.some((d) => d.id === sentinel));
  };
  return { done, results, until, run, cancel, settle, close: () => port1.close() };
}

/** Lets every held connection go (its probe fails at once). */
function release(): void {
  for (const s of held) s.destroy();
  held.clear();
}

const untilHeld = async (n: number) => {
  while (held.size < n) await new Promise((r) => setTimeout(r, 5));
};

describe('a shard in its lane: running -> cancelled -> done, running -> done', () => {
  test('cancelled while probes are in flight: no more start, the ones in flight finish, one done with cancelled; a second cancel changes nothing', async () => {
    const l = lane();
    try {
      l.run(1, 6, 2);
      await untilHeld(2);
      l.cancel(1);
      l.cancel(1); // cancelled already: ignored
      await l.settle(100);
      expect(l.done.filter((d) => d.id === 1)).toEqual([]); // two probes still in flight
      release(); // the held probes fail now
      await l.until(() => l.done.some((d) => d.id === 1));
      l.cancel(1); // done: ignored
      await l.settle(101);
      expect(l.done.filter((d) => d.id === 1)).toEqual([{ id: 1, started: 2, finished: 2, cancelled: true }]);
      expect(l.results.get(1)).toBe(2);
    } finally {
      l.close();
    }
  });

  test('all started and finished: done once, not cancelled; a late cancel is ignored', async () => {
    const l = lane();
    try {
      l.run(2, 3);
      await untilHeld(3);
      release();
      await l.until(() => l.done.some((d) => d.id === 2));
      l.cancel(2);
      await l.settle(102);
      expect(l.done.filter((d) => d.id === 2)).toEqual([{ id: 2, started: 3, finished: 3, cancelled: false }]);
    } finally {
      l.close();
    }
  });

  test('an empty shard is done at once; cancelling a shard the lane never had does nothing', async () => {
    const l = lane();
    try {
      l.cancel(77);
      l.run(3, 0);
      await l.settle(103);
      expect(l.done).toEqual([
        { id: 3, started: 0, finished: 0, cancelled: false },
        { id: 103, started: 0, finished: 0, cancelled: false },
      ]);
    } finally {
      l.close();
    }
  });
});
