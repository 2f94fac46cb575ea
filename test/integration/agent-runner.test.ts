/**
 * The AgentRunner's reports (src/cluster/agent-runner.ts "Reports") on a
 * private nats-server: shards whose workers report results one per turn of the
 * event loop go out in far fewer reports than results, several shards in one
 * report, every result exactly once, `start` first and `done` after all of a
 * shard's results; with resultFlushMs 0 every report of the workers is its own message;
 * no report holds more than REPORT_FLUSH_RESULTS results; on a server with a
 * small max_payload, reports are split below it and still arrive whole and in
 * order. And the runner's states: start once, stop drains, a stopped agent
 * fetches nothing and leaves no heartbeat.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { connectNats, ensureWork, openAgentsBucket, workTransport } from '../../src/cluster/nats';
import { AgentRunner, REPORT_FLUSH_RESULTS } from '../../src/cluster/agent-runner';
import { decodeResults, encode, PROTOCOL_VERSION, resultsSubject, SHARD_MAX_TASKS, WORK_STREAM, workConsumer, type ResultsReport, type ShardNews, type WorkShard } from '../../src/cluster/protocol';
import type { WorkerPort, ResultBatch, Shard } from '../../src/jobs/ports';
import { memoryLogger, type Logger } from '../../src/log';
import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import type { ProbeResult } from '../../src/probe/types';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HAVE_NATS_SERVER, startNatsServer, type NatsServer } from '../helpers/nats-server';

const failed = (index: number): ProbeResult => ({ index, status: 'failed', statusCode: null, responseTimeMs: 1, anonymity: null, origin: null, error: { code: 'connect_refused', message: 'refused' } });

/** Reports one result per turn of the event loop. */
const onePerTurn: WorkerPort = {
  runShard(shard: Shard, onResults: (b: ResultBatch) => void): Promise<void> {
    return new Promise((resolve) => {
      let i = 0;
      const step = () => {
        if (i >= shard.tasks.length) return resolve();
        onResults([failed(shard.tasks[i++]!.index)]);
        setImmediate(step);
      };
      setImmediate(step);
    });
  },
};

/** What every runner of these tests shares: the fake workers, settings and identity. */
function runnerOptions(nc: NatsConnection, kv: KV, region: string, agentId: string, log: Logger) {
  return {
    nc,
    kv,
    region,
    agentId,
    version: 'test',
    workers: onePerTurn,
    settingsFor: (w: WorkShard) => ({ type: w.type, timeoutMs: w.timeoutMs }) as never,
    identity: () => ({ judgeUrl: 'http://127.0.0.1:1/judge', exitIps: [] }),
    ackWaitMs: 5000,
    log,
  };
}

interface Received {
  m: ResultsReport;
  bytes: number;
}

describe.skipIf(!HAVE_NATS_SERVER)('AgentRunner reports', () => {
  let nats: NatsServer;
  let small: NatsServer;
  const confDir = mkdtempSync(join(tmpdir(), 'pc-nats-conf-'));
  beforeAll(async () => {
    writeFileSync(join(confDir, 'small.conf'), 'max_payload: 8192\n');
    [nats, small] = await Promise.all([startNatsServer(), startNatsServer({ args: ['-c', join(confDir, 'small.conf')] })]);
  });
  afterAll(async () => {
    await Promise.all([nats?.stop(), small?.stop()]);
    rmSync(confDir, { recursive: true, force: true });
  });

  /** Runs `shards` shards of n tasks each through a runner; returns the reports their owner received, in order. */
  async function run(o: { server?: () => NatsServer; region: string; n: number; shards?: number; resultFlushMs?: number }): Promise<Received[]> {
    const log = memoryLogger('warn');
    const nc = await connectNats((o.server?.() ?? nats).url, `test-${o.region}`, log);
    const shards = o.shards ?? 1;
    try {
      await ensureWork(nc, [o.region], 5000, log);
      const kv = await openAgentsBucket(nc, 5000);
      const node = `owner_${o.region}`;
      const got: Received[] = [];
      const parts = shards * Math.ceil(o.n / SHARD_MAX_TASKS);
      let ended = 0;
      const done = new Promise<void>((resolve) => {
        nc.subscribe(resultsSubject(node), {
          callback: (_err, msg) => {
            const m = decodeResults(msg.data);
            got.push({ m, bytes: msg.data.length });
            const ends = m.shards.filter((e) => e.done === true).length;
            if (ends > 0) {
              expect(msg.reply).toBeTruthy();
              msg.respond(encode({ missing: [] }));
            }
            ended += ends;
            if (ended === parts) resolve();
          },
        });
      });
      const runner = new AgentRunner({
        ...runnerOptions(nc, kv, o.region, 'a1', log),
        slots: 100_000,
        heartbeatMs: 1000,
        onBusy: () => busyCalls++,
        ...(o.resultFlushMs !== undefined ? { resultFlushMs: o.resultFlushMs } : {}),
      });
      await runner.start();
      // each shard in parts of at most SHARD_MAX_TASKS tasks, as the NatsWorkers sends them
      const transport = workTransport(nc);
      for (let s = 0; s < shards; s++) {
        for (let first = 0, part = 0; first < o.n; first += SHARD_MAX_TASKS, part++) {
          const tasks = Array.from({ length: Math.min(SHARD_MAX_TASKS, o.n - first) }, (_, i) => ({ index: s * o.n + first + i, proxy: { host: '127.0.0.1', port: 1 } }));
          await transport.publishWork(o.region, { v: PROTOCOL_VERSION, node, run: 'r1', shard: `${s}-${part}`, kind: 'probe', type: 'http', timeoutMs: 1000, tasks }, `${node}.${s}-${part}`);
        }
      }
      await Promise.race([done, Bun.sleep(20_000)]);
      await runner.stop(1000);
      return got;
    } finally {
      await nc.drain().catch(() => nc.close());
    }
  }

  let busyCalls = 0;
  const entries = (got: Received[]): ShardNews[] => got.flatMap((r) => r.m.shards);
  const indexes = (got: Received[]) => entries(got).flatMap((e) => (e.results as ProbeResult[] | undefined)?.map((r) => r.index) ?? []).sort((x, y) => x - y);
  const range = (n: number) => Array.from({ length: n }, (_, i) => i);
  /** Per shard: `start` in its first entry, `done` in its last and only there, each exactly once. */
  function inOrder(got: Received[]): void {
    const byShard = new Map<string, ShardNews[]>();
    for (const e of entries(got)) byShard.set(e.shard, [...(byShard.get(e.shard) ?? []), e]);
    for (const es of byShard.values()) {
      expect(es[0]!.start).toBe(true);
      expect(es.filter((e) => e.start === true)).toHaveLength(1);
      expect(es.at(-1)!.done).toBe(true);
      expect(es.filter((e) => e.done === true)).toHaveLength(1);
    }
  }

  test('results reported one by one go out in a few reports, several shards in one, each result once, done after them', async () => {
    busyCalls = 0;
    const got = await run({ region: 'rb1', n: 200, shards: 3 });
    // onBusy (the descriptor guard's wake): once when the first shard starts, again only after none was in flight
    expect(busyCalls).toBeGreaterThanOrEqual(1);
    expect(busyCalls).toBeLessThanOrEqual(3);
    expect(indexes(got)).toEqual(range(600));
    expect(got.length).toBeLessThan(20);
    expect(got.some((r) => r.m.shards.length > 1)).toBe(true);
    inOrder(got);
  }, 30_000);

  test('resultFlushMs 0: one message per report of the workers', async () => {
    const got = await run({ region: 'rb2', n: 30, resultFlushMs: 0 });
    expect(indexes(got)).toEqual(range(30));
    // start, 30 single results, done
    expect(got.length).toBe(32);
    inOrder(got);
  }, 30_000);

  test('a report goes out at once with REPORT_FLUSH_RESULTS results, never more', async () => {
    const n = REPORT_FLUSH_RESULTS + 500;
    const got = await run({ region: 'rb3', n, resultFlushMs: 2000 });
    expect(indexes(got)).toEqual(range(n));
    const counts = got.map((r) => r.m.shards.reduce((s, e) => s + (e.results?.length ?? 0), 0));
    expect(Math.max(...counts)).toBe(REPORT_FLUSH_RESULTS);
    inOrder(got);
  }, 30_000);

  test('a report over the server max_payload is split below it, whole and in order', async () => {
    // shards of 100 tasks (a shard message fits the small payload too), all in one flush
    const got = await run({ server: () => small, region: 'rb4', n: 100, shards: 7, resultFlushMs: 1000 });
    expect(indexes(got)).toEqual(range(700));
    expect(got.length).toBeGreaterThan(2);
    for (const r of got) expect(r.bytes).toBeLessThanOrEqual(8192);
    inOrder(got);
  }, 30_000);

  test('states: created -> running -> draining -> stopped; start once and never after stop; a stopped agent takes no shard and leaves no heartbeat', async () => {
    const log = memoryLogger('warn');
    const nc = await connectNats(nats.url, 'test-states', log);
    try {
      await ensureWork(nc, ['rs1'], 5000, log);
      const kv = await openAgentsBucket(nc, 5000);
      const make = (agentId: string) => new AgentRunner({ ...runnerOptions(nc, kv, 'rs1', agentId, log), slots: 100, heartbeatMs: 60_000 });
      const codeOf = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => (e as { code?: string }).code);
      const runner = make('a1');
      expect(runner.state).toBe('created');
      await runner.start();
      expect(runner.state).toBe('running');
      expect((await kv.get(runner.key))?.operation).toBe('PUT');
      expect(await codeOf(runner.start())).toBe('illegal_transition');
      const stopping = runner.stop(1000);
      expect(runner.state).toBe('draining');
      expect(runner.stop(1)).toBe(stopping);
      await stopping;
      expect(runner.state).toBe('stopped');
      expect((await kv.get(runner.key))?.operation).not.toBe('PUT');
      expect(await codeOf(runner.start())).toBe('illegal_transition');
      // nothing of this agent fetches any more: a shard published now stays in the queue
      const tasks = [{ index: 0, proxy: { host: '127.0.0.1', port: 1 } }];
      await workTransport(nc).publishWork('rs1', { v: PROTOCOL_VERSION, node: 'owner_rs1', run: 'r1', shard: 's0', kind: 'probe', type: 'http', timeoutMs: 1000, tasks }, 'owner_rs1.s0');
      await Bun.sleep(200);
      const info = await (await jetstreamManager(nc)).consumers.info(WORK_STREAM, workConsumer('rs1'));
      expect(info.num_pending + info.num_ack_pending).toBe(1);
      expect(info.num_ack_pending).toBe(0);
      // a runner never started stops at once
      const idle = make('a2');
      await idle.stop(1000);
      expect(idle.state).toBe('stopped');
      expect(await codeOf(idle.start())).toBe('illegal_transition');
    } finally {
      await nc.drain().catch(() => nc.close());
    }
  }, 30_000);
});
