/**
 * A probe that timed out while the checker itself was late is tried again,
 * not judged, and charged once (issue 30): a real lane (src/probe/workers/
 * lane.ts, in this thread over a MessageChannel) under a JobActor with a real
 * scheduler, real probes through loopback proxies to a real judge, and the
 * thread's lateness injected (setLatenessSource, what the lane's lag meter
 * feeds; the meter itself: test/unit/lag-meter.test.ts, and a real stall of
 * the main thread: probe-workers-lag.test.ts) while the first tries wait.
 * (A real stall of this thread is not used here: when Bun runs the deadline
 * after a long stall, relative to the meter's late tick, decides whether the
 * loop had read its sockets in between, and with it the verdict.)
 *
 *   proxy A  holds its first connection, then forwards to the judge: its
 *            first try times out during the lag (ours: tried again), the
 *            second works;
 *   proxy B  holds every connection (a black hole): its first try times out
 *            during the lag (ours: tried again), the second without lag
 *            (the proxy's: timeout, its verdict).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { JobActor, type JobDeps } from '../../src/jobs/actor';
import { localExecution } from '../../src/jobs/local-execution';
import type { LedgerPort, ResultBatch, WorkerPort } from '../../src/jobs/ports';
import type { CheckRequest } from '../../src/jobs/request';
import { RegionScheduler } from '../../src/jobs/scheduler';
import { startJudgeServer, type JudgeServer } from '../../src/judge/server';
import { memoryLogger } from '../../src/log';
import type { ProbeSettings } from '../../src/probe/types';
import { probeWorker } from '../../src/probe/workers/lane';
import { setLatenessSource } from '../../src/probe/net/exchange';
import type { LaneStats, LaneToMain, MainToLane } from '../../src/probe/workers/lane-protocol';
import { packTasks } from '../../src/probe/workers/packed-tasks';
import { parseProxyList } from '../../src/proxy/parse';
import { resultFilePath } from '../../src/results/dir-store';
import { newResultId } from '../../src/results/links';
import { openResultWriter } from '../../src/results/writer';

const dir = mkdtempSync(join(tmpdir(), 'pc-lag-'));
let judge: JudgeServer;
const servers: Server[] = [];
const sockets = new Set<Socket>();
/** Connections each proxy saw. */
const seen = { a: 0, b: 0 };
let portA = 0;
let portB = 0;

async function listen(onSocket: (s: Socket) => void): Promise<number> {
  const srv = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
    onSocket(s);
  });
  servers.push(srv);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return (srv.address() as { port: number }).port;
}

beforeAll(async () => {
  judge = await startJudgeServer();
  // A: the first connection is held; later ones go to the judge as an http proxy sends them (origin-form)
  portA = await listen((s) => {
    if (++seen.a === 1) return;
    const up = connect(judge.port, '127.0.0.1');
    up.on('error', () => s.destroy());
    up.pipe(s);
    s.once('data', (head: Buffer) => {
      up.write(Buffer.from(head.toString('latin1').replace(/^(\S+) http:\/\/[^/]+/, '$1 '), 'latin1'));
      s.pipe(up);
    });
  });
  portB = await listen(() => {
    seen.b++;
  });
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  for (const srv of servers) await new Promise<void>((r) => srv.close(() => r()));
  await judge.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Probe workers of one lane in this thread: what the lane reports is kept in `stats`. */
function laneWorkers(): WorkerPort & { stats: LaneStats[]; close(): void } {
  const { port1, port2 } = new MessageChannel();
  void probeWorker({ kind: 'lane', port: port2 as MessagePort });
  const live = new Map<number, { onResults: (b: ResultBatch) => void; resolve: (v: unknown) => void }>();
  const settingsIds = new Map<ProbeSettings, number>();
  const stats: LaneStats[] = [];
  let nextId = 1;
  port1.on('message', (m: LaneToMain) => {
    if (m.stats !== undefined) stats.push(m.stats);
    for (const p of m.parts) live.get(p.id)?.onResults(p.batch);
    for (const d of m.done) {
      live.get(d.id)?.resolve({ dropped: false, started: d.started, finished: d.finished, cancelled: d.cancelled });
      live.delete(d.id);
    }
  });
  return {
    stats,
    close: () => port1.close(),
    runShard(shard, onResults) {
      const id = nextId++;
      let settingsId = settingsIds.get(shard.settings);
      const fresh = settingsId === undefined;
      if (settingsId === undefined) settingsIds.set(shard.settings, (settingsId = settingsIds.size + 1));
      return new Promise((resolve) => {
        live.set(id, { onResults, resolve });
        if (shard.kind !== 'probe') throw new Error('probe shards only');
        port1.postMessage({
          t: 'run',
          settings: fresh ? [{ id: settingsId, settings: shard.settings }] : [],
          forget: [],
          shards: [{ id, kind: 'probe', tasks: packTasks(shard.tasks), settingsId }],
        } satisfies MainToLane);
      });
    },
  };
}

function ledger() {
  const calls: { op: string; [k: string]: unknown }[] = [];
  const port: LedgerPort = {
    async reserve(i) {
      calls.push({ op: 'reserve', units: i.units });
      return { ok: true, unlimited: false, user: { email: 'a@b.c', checks_used: i.units, remaining_checks: 1000, subscription_detail: { UnlimitedPro: false } } };
    },
    async complete(i) {
      calls.push({ op: 'complete', checked: i.checked, working: i.working, refund: i.refund });
    },
    async fail(i) {
      calls.push({ op: 'fail', checked: i.checked, refund: i.refund, error: i.error });
    },
    async userInfo() {
      return { email: 'a@b.c', checks_used: 2, remaining_checks: 1000, subscription_detail: { UnlimitedPro: false } };
    },
  };
  return { port, calls };
}

test('timed out during injected lag: tried again, not judged; the second tries give the real verdicts; each proxy charged once; counted', async () => {
  const workers = laneWorkers();
  const l = ledger();
  const retried: [string, number][] = [];
  const judgeTarget = { url: judge.url, protocol: 'http:' as const, host: '127.0.0.1', port: judge.port, path: '/judge' };
  const deps: JobDeps = {
    ledger: l.port,
    retrySettlement: () => {},
    execution: localExecution(new RegionScheduler(() => 16, { onDispatchError: () => {} }), workers),
    geo: { lookup: () => ({ country: 'US', country_name: 'United States', location: 'X', isp: 'Example AS', asn: 64500, coordinates: { lat: 1, lon: 2 } }) },
    settings: (type, timeoutMs) => ({ type, timeoutMs, judge: judgeTarget, checkerIps: [], baselineHeaders: [], allowPrivateTargets: true }),
    openWriter: (id) => openResultWriter(resultFilePath(dir, id)),
    newResultId,
    signLink: (id) => `http://x/result/${id}.json`,
    publish: () => {},
    log: memoryLogger(),
    now: () => new Date(),
    counters: { probeResults: () => {}, jobEnded: () => {}, probesRetried: (reason, n) => retried.push([reason, n]) },
  };
  const list = parseProxyList([`127.0.0.1:${portA}`, `127.0.0.1:${portB}`]);
  const req: CheckRequest = { route: 'check', proxies: list.proxies, totalInvalid: 0, invalidLines: list.invalidLines, totalDuplicates: 0, region: 'us1', type: 'http', timeoutMs: 1000, samples: 1, https: false, jobId: null, customUrls: [] };
  // the lane set its meter as the source; while the first tries wait, the thread is 300 ms late
  let late = 300;
  setLatenessSource(() => late);
  const actor = new JobActor('job-lag', 'acc', req, deps);
  const run = actor.run();
  while (workers.stats.reduce((n, s) => n + s.lagRetries, 0) < 2) await Bun.sleep(5);
  late = 0; // caught up: the second tries are judged
  const res = await run;
  workers.close();
  expect(seen.a).toBe(2); // tried again once, then working
  expect(seen.b).toBe(2); // tried again once, then its own timeout
  expect(res.metadata.retried_checker_lag).toBe(2);
  expect(retried).toEqual([
    ['checker_lag', 1],
    ['checker_lag', 1],
  ]);
  expect(res.summary.total_working).toBe(1);
  expect(res.summary.errors).toEqual({ timeout: 1 });
  expect(l.calls).toEqual([
    { op: 'reserve', units: 2 },
    { op: 'complete', checked: 2, working: 1, refund: 0 },
  ]);
  // the lane said so too: two probes failed for lateness
  expect(workers.stats.reduce((n, s) => n + s.lagRetries, 0)).toBe(2);
}, 30_000);
