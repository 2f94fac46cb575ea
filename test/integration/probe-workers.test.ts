/**
 * Integration tests for src/probe/workers/probe-workers.ts (+ lane-ends.ts) and the lane
 * (src/probe/workers/lane.ts, entry workers/probe-worker.ts): real
 * piscina threads running real probes against loopback sockets (a refused
 * port fails at once, a black hole times out), plus broken workers.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProbeWorkers } from '../../src/probe/workers/probe-workers';
import { isServiceError } from '../../src/errors';
import type { ProbeResult, ProbeSettings, ProbeTask } from '../../src/probe/types';

const tmp = mkdtempSync(join(tmpdir(), 'workers-test-'));
let hole: Server;
const holeSockets = new Set<Socket>();
let holePort = 0;
let refusedPort = 0;
let workers: ProbeWorkers;

const settings = (timeoutMs: number): ProbeSettings => ({
  type: 'http',
  timeoutMs,
  judge: { url: 'http://127.0.0.1:9/judge', protocol: 'http:', host: '127.0.0.1', port: 9, path: '/judge' },
  checkerIps: [],
  baselineHeaders: [],
  allowPrivateTargets: true,
});
const tasks = (n: number, port: () => number, from = 0): ProbeTask[] =>
  Array.from({ length: n }, (_, i) => ({ index: from + i, proxy: { host: '127.0.0.1', port: port() } }));

beforeAll(async () => {
  hole = createServer((s) => {
    holeSockets.add(s);
    s.on('close', () => holeSockets.delete(s));
  });
  await new Promise<void>((r) => hole.listen(0, '127.0.0.1', r));
  holePort = (hole.address() as { port: number }).port;
  const tmpServer = createServer();
  await new Promise<void>((r) => tmpServer.listen(0, '127.0.0.1', r));
  refusedPort = (tmpServer.address() as { port: number }).port;
  await new Promise<void>((r) => tmpServer.close(() => r()));
  workers = await ProbeWorkers.start({ threads: 2 });
});

afterAll(async () => {
  await workers?.close();
  for (const s of holeSockets) s.destroy();
  await new Promise<void>((r) => hole.close(() => r()));
  rmSync(tmp, { recursive: true, force: true });
});

describe('ProbeWorkers', () => {
  test('starts with the requested threads, fast', async () => {
    const t = performance.now();
    const p = await ProbeWorkers.start({ threads: 2 });
    const ms = performance.now() - t;
    expect(p.threads).toBe(2);
    expect(ms).toBeLessThan(1500);
    await p.close();
  });

  test('results stream back before the shard ends', async () => {
    const arrivals: { at: number; results: ProbeResult[] }[] = [];
    const t = performance.now();
    let n = 0;
    const ts = [...tasks(5, () => refusedPort, 0), ...tasks(5, () => holePort, 5)];
    const out = await workers.runShard({ kind: 'probe', tasks: ts, settings: settings(600) }, (batch) => {
      arrivals.push({ at: performance.now() - t, results: batch });
      n += batch.length;
    });
    const end = performance.now() - t;
    expect(out).toEqual({ dropped: false, started: 10, finished: 10, cancelled: false });
    expect(n).toBe(10);
    const refused = arrivals.filter((a) => a.results.every((r) => r.error?.code === 'connect_refused'));
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0]!.at).toBeLessThan(end - 300); // long before the black holes time out
    const all = arrivals.flatMap((a) => a.results);
    expect(all.filter((r) => r.error?.code === 'timeout').map((r) => r.index).sort((a, b) => a - b)).toEqual([5, 6, 7, 8, 9]);
  });

  test('many shards in parallel on 2 threads: every result exactly once', async () => {
    const seen: number[] = [];
    const shards = Array.from({ length: 24 }, (_, s) =>
      workers.runShard({ kind: 'probe', tasks: tasks(25, () => refusedPort, s * 25), settings: settings(1000) }, (batch) => {
        for (const r of batch) seen.push(r.index);
      }),
    );
    const outs = await Promise.all(shards);
    expect(outs.every((o) => o.finished === 25 && !o.dropped)).toBe(true);
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 600 }, (_, i) => i));
    expect(workers.stats).toEqual({ queued: 0, running: 0 });
  });

  test('replacements beyond a turn\'s start budget wait for the next turn and all run: every result exactly once', async () => {
    // refused connects end at once, so most replacements find the lane's per-turn budget spent
    const seen: number[] = [];
    const out = await workers.runShard({ kind: 'probe', tasks: tasks(3000, () => refusedPort), settings: settings(2000), maxConcurrent: 200 }, (batch) => {
      for (const r of batch) seen.push(r.index);
    });
    expect(out).toEqual({ dropped: false, started: 3000, finished: 3000, cancelled: false });
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 3000 }, (_, i) => i));
  });

  test('cooperative cancel stops a running shard quickly without killing the thread', async () => {
    const ac = new AbortController();
    const t = performance.now();
    let got = 0;
    const running = workers.runShard(
      { kind: 'probe', tasks: tasks(40, () => holePort), settings: settings(300), maxConcurrent: 4 },
      (b) => {
        got += b.length;
        if (got >= 4) ac.abort();
      },
      ac.signal,
    );
    const out = await running;
    expect(out.cancelled).toBe(true);
    expect(out.finished).toBe(out.started);
    expect(out.started).toBeLessThan(40);
    expect(performance.now() - t).toBeLessThan(2000); // 10 rounds of 300 ms would be 3 s
    // the thread survived: another shard still runs
    const again = await workers.runShard({ kind: 'probe', tasks: tasks(3, () => refusedPort), settings: settings(500) }, () => {});
    expect(again.finished).toBe(3);
  });

  test('a big shard starts in steps; a cancel that arrives between them stops the rest', async () => {
    const p = await ProbeWorkers.start({ threads: 1 });
    try {
      const ac = new AbortController();
      let got = 0;
      const running = p.runShard(
        { kind: 'probe', tasks: tasks(20_000, () => refusedPort), settings: settings(300) },
        (b) => {
          got += b.length;
        },
        ac.signal,
      );
      setTimeout(() => ac.abort(), 0); // after the lane took the shard, long before its 20 000 probes could all start
      const out = await running;
      expect(out.cancelled).toBe(true);
      expect(out.finished).toBe(out.started);
      expect(got).toBe(out.started);
      expect(out.started).toBeGreaterThan(0);
      expect(out.started).toBeLessThan(20_000);
    } finally {
      await p.close();
    }
  });

  test('a shard aborted before it was submitted is dropped; an already aborted signal too', async () => {
    const small = await ProbeWorkers.start({ threads: 1, concurrentTasksPerWorker: 1 });
    try {
      const first = small.runShard({ kind: 'probe', tasks: tasks(2, () => holePort), settings: settings(400) }, () => {});
      const ac = new AbortController();
      let called = false;
      const second = small.runShard({ kind: 'probe', tasks: tasks(2, () => refusedPort), settings: settings(400) }, () => (called = true), ac.signal);
      expect(small.stats).toEqual({ queued: 1, running: 1 });
      ac.abort();
      expect(await second).toEqual({ dropped: true, started: 0, finished: 0, cancelled: false });
      expect(called).toBe(false);
      expect((await first).finished).toBe(2);
      const pre = await small.runShard({ kind: 'probe', tasks: tasks(1, () => refusedPort), settings: settings(400) }, () => {}, AbortSignal.abort());
      expect(pre.dropped).toBe(true);
    } finally {
      await small.close();
    }
  });

  test('close twice is safe; queued and later shards reject with workers_closed', async () => {
    const p = await ProbeWorkers.start({ threads: 1, concurrentTasksPerWorker: 1 });
    const running = p.runShard({ kind: 'probe', tasks: tasks(1, () => holePort), settings: settings(2000) }, () => {});
    const queued = p.runShard({ kind: 'probe', tasks: tasks(1, () => refusedPort), settings: settings(500) }, () => {});
    const settled = Promise.allSettled([running, queued]);
    const c1 = p.close();
    const c2 = p.close();
    expect(c1).toBe(c2);
    await c1;
    const [r1, r2] = await settled;
    expect(r1.status === 'rejected' && (r1.reason as { code: string }).code).toBe('workers_closed');
    expect(r2.status === 'rejected' && (r2.reason as { code: string }).code).toBe('workers_closed');
    // every rejection of the workers is the root ServiceError (src/errors.ts), no class of its own
    expect(r1.status === 'rejected' && isServiceError(r1.reason, 'workers_closed')).toBe(true);
    expect(r2.status === 'rejected' && isServiceError(r2.reason, 'workers_closed')).toBe(true);
    await expect(p.runShard({ kind: 'probe', tasks: [], settings: settings(500) }, () => {})).rejects.toMatchObject({ code: 'workers_closed' });
  });

  test('a shard whose tasks cannot be packed is refused alone; the workers go on', async () => {
    await expect(
      workers.runShard({ kind: 'probe', tasks: [{ index: 0, proxy: { host: 'a\nb', port: 1 } }], settings: settings(500) }, () => {}),
    ).rejects.toMatchObject({ code: 'workers_bad_shard' });
    expect(workers.stats).toEqual({ queued: 0, running: 0 });
    expect((await workers.runShard({ kind: 'probe', tasks: tasks(2, () => refusedPort), settings: settings(500) }, () => {})).finished).toBe(2);
  });

  test('an empty shard resolves at once', async () => {
    expect(await workers.runShard({ kind: 'probe', tasks: [], settings: settings(500) }, () => {})).toEqual({
      dropped: false,
      started: 0,
      finished: 0,
      cancelled: false,
    });
  });

  test('custom_url shards run every (proxy, rule) pair', async () => {
    const got: string[] = [];
    const rules = [
      { url: 'http://127.0.0.1:9/a', requiredStatusCodes: [200], caseSensitive: false },
      { url: 'http://127.0.0.1:9/b', requiredStatusCodes: [200], caseSensitive: false },
    ];
    const out = await workers.runShard({ kind: 'custom_url', tasks: tasks(3, () => refusedPort), rules, settings: settings(500) }, (batch) => {
      for (const r of batch) got.push(`${r.index}/${r.urlIndex}/${r.success}`);
    });
    expect(out.finished).toBe(6);
    expect(got.sort()).toEqual(['0/0/false', '0/1/false', '1/0/false', '1/1/false', '2/0/false', '2/1/false']);
  });

  test('onResults throwing rejects the shard with workers_callback_failed', async () => {
    await expect(
      workers.runShard({ kind: 'probe', tasks: tasks(3, () => refusedPort), settings: settings(500) }, () => {
        throw new Error('consumer bug');
      }),
    ).rejects.toMatchObject({ code: 'workers_callback_failed' });
  });
});

describe('ProbeWorkers lanes', () => {
  // A lane that speaks the protocol without probing: a shard whose first host is
  // "crash" kills its thread; any other shard answers every task at once.
  const laneWorker = `
import { threadId } from 'node:worker_threads';
export default function (task) {
  if (task.kind === 'ping') return { pong: true, threadId };
  return new Promise(() => {
    task.port.on('message', (m) => {
      if (m.t !== 'run') return;
      for (const s of m.shards) {
        const hosts = s.tasks.hosts.split('\\n');
        const n = s.tasks.index.length;
        if (hosts[0] === 'crash') setTimeout(() => { throw new Error('thread died'); }, 5);
        else task.port.postMessage({ t: 'batch', parts: [{ id: s.id, batch: [...s.tasks.index].map((index) => ({ index, threadId })) }], done: [{ id: s.id, started: n, finished: n, cancelled: false }] });
      }
    });
  });
}
`;
  const hostTasks = (host: string, n: number): ProbeTask[] => Array.from({ length: n }, (_, i) => ({ index: i, proxy: { host, port: 1 } }));

  test('a thread that dies fails its running shards with worker_failed; a new lane takes over', async () => {
    const file = join(tmp, 'lane-worker.mjs');
    writeFileSync(file, laneWorker);
    const p = await ProbeWorkers.start({ threads: 1, filename: file });
    try {
      await expect(p.runShard({ kind: 'probe', tasks: hostTasks('crash', 2), settings: settings(500) }, () => {})).rejects.toMatchObject({
        code: 'worker_failed',
      });
      expect(p.stats).toEqual({ queued: 0, running: 0 });
      const got: number[] = [];
      const out = await p.runShard({ kind: 'probe', tasks: hostTasks('ok', 3), settings: settings(500) }, (b) => got.push(...b.map((r) => r.index)));
      expect(out).toEqual({ dropped: false, started: 3, finished: 3, cancelled: false });
      expect(got).toEqual([0, 1, 2]);
    } finally {
      await p.close();
    }
  });

  test('a job\'s settings travel to a lane once; more jobs than the lane keeps still run', async () => {
    // the real worker: a shard whose settings the lane lacks would kill the thread (worker_failed)
    const p = await ProbeWorkers.start({ threads: 1 });
    try {
      const many = Array.from({ length: 150 }, () => settings(500)); // > LANE_SETTINGS_CACHE distinct objects
      for (let round = 0; round < 2; round++) {
        const outs = await Promise.all(many.map((s, i) => p.runShard({ kind: 'probe', tasks: tasks(1, () => refusedPort, i), settings: s }, () => {})));
        expect(outs.every((o) => o.finished === 1)).toBe(true);
      }
    } finally {
      await p.close();
    }
  });

  test('shards spread over the threads by load', async () => {
    const file = join(tmp, 'lane-worker-2.mjs');
    writeFileSync(file, laneWorker);
    const p = await ProbeWorkers.start({ threads: 2, filename: file });
    try {
      const threads = new Set<number>();
      await Promise.all(
        Array.from({ length: 8 }, () =>
          p.runShard({ kind: 'probe', tasks: hostTasks('ok', 4), settings: settings(500) }, (b) => {
            for (const r of b as unknown as { threadId: number }[]) threads.add(r.threadId);
          }),
        ),
      );
      expect(threads.size).toBe(2);
    } finally {
      await p.close();
    }
  });
});

describe('ProbeWorkers start-up failures are loud', () => {
  test('a worker that cannot load rejects start() fast with worker_load_failed', async () => {
    const file = join(tmp, 'broken-worker.ts');
    writeFileSync(file, "import { nothing } from './does-not-exist';\nexport default function () { return nothing; }\n");
    const t = performance.now();
    await expect(ProbeWorkers.start({ threads: 2, filename: file })).rejects.toMatchObject({ code: 'worker_load_failed' });
    expect(performance.now() - t).toBeLessThan(3000);
  });
  test('a worker that throws at load rejects too', async () => {
    const file = join(tmp, 'throwing-worker.ts');
    writeFileSync(file, "throw new Error('boom at load');\nexport default function () { return 1; }\n");
    await expect(ProbeWorkers.start({ threads: 1, filename: file })).rejects.toMatchObject({ code: 'worker_load_failed' });
  });
  test('a missing worker file rejects', async () => {
    await expect(ProbeWorkers.start({ threads: 1, filename: join(tmp, 'missing.ts') })).rejects.toMatchObject({ code: 'worker_load_failed' });
  });
  test('a worker that never finishes loading hits the start timeout', async () => {
    const file = join(tmp, 'hanging-worker.ts');
    writeFileSync(file, 'await new Promise((r) => setTimeout(r, 60_000));\nexport default function () { return 1; }\n');
    const t = performance.now();
    await expect(ProbeWorkers.start({ threads: 1, filename: file, startTimeoutMs: 400 })).rejects.toMatchObject({ code: 'workers_start_timeout' });
    expect(performance.now() - t).toBeLessThan(3000);
  });
  test('a worker that answers the ping wrongly is refused', async () => {
    const file = join(tmp, 'wrong-worker.ts');
    writeFileSync(file, 'export default function () { return { pong: false }; }\n');
    await expect(ProbeWorkers.start({ threads: 1, filename: file })).rejects.toMatchObject({ code: 'worker_load_failed' });
  });
});
