/**
 * The AgentRunner's result batches (src/cluster/agent-runner.ts "Result
 * batches") on a private nats-server: a shard whose pool reports its results
 * one per turn of the event loop goes out in far fewer `batch` messages than
 * results, every result exactly once, all of them before the shard's `done`;
 * with resultFlushMs 0 every report is its own message; a shard of more than
 * SHARD_MAX_TASKS results never sends a message over that size.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { AgentRunner } from '../../src/cluster/agent-runner';
import { connectNats, ensureWork, openAgentsBucket, workTransport } from '../../src/cluster/nats';
import { decodeResults, encode, PROTOCOL_VERSION, resultsSubject, SHARD_MAX_TASKS, type ResultsMessage } from '../../src/cluster/protocol';
import type { PoolPort, ResultBatch, Shard } from '../../src/jobs/ports';
import { memoryLogger } from '../../src/log';
import type { ProbeResult } from '../../src/probe/types';
import { HAVE_NATS_SERVER, startNatsServer, type NatsServer } from '../helpers/nats-server';

const failed = (index: number): ProbeResult => ({ index, status: 'failed', statusCode: null, responseTimeMs: 1, anonymity: null, origin: null, error: { code: 'connect_refused', message: 'refused' } });

/** Reports one result per turn of the event loop. */
const onePerTurn: PoolPort = {
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

describe.skipIf(!HAVE_NATS_SERVER)('AgentRunner result batches', () => {
  let nats: NatsServer;
  beforeAll(async () => {
    nats = await startNatsServer();
  });
  afterAll(async () => {
    await nats?.stop();
  });

  /** Runs one shard of n tasks through a runner; returns the messages its owner received, in order. */
  async function oneShard(region: string, n: number, resultFlushMs?: number): Promise<ResultsMessage[]> {
    const log = memoryLogger('warn');
    const nc = await connectNats(nats.url, `test-${region}`, log);
    try {
      await ensureWork(nc, [region], 5000, log);
      const kv = await openAgentsBucket(nc, 5000);
      const node = `owner_${region}`;
      const got: ResultsMessage[] = [];
      const done = new Promise<void>((resolve) => {
        nc.subscribe(resultsSubject(node), {
          callback: (_err, msg) => {
            const m = decodeResults(msg.data);
            got.push(m);
            if (m.t === 'done') {
              msg.respond(encode({ ok: true }));
              resolve();
            }
          },
        });
      });
      const runner = new AgentRunner({
        nc,
        kv,
        region,
        agentId: 'a1',
        slots: 10_000,
        version: 'test',
        pool: onePerTurn,
        settingsFor: (w) => ({ type: w.type, timeoutMs: w.timeoutMs }) as never,
        identity: () => ({ judgeUrl: 'http://127.0.0.1:1/judge', exitIps: [] }),
        ackWaitMs: 5000,
        heartbeatMs: 1000,
        log,
        ...(resultFlushMs !== undefined ? { resultFlushMs } : {}),
      });
      await runner.start();
      // the shard in parts of at most SHARD_MAX_TASKS tasks, as the NatsPool sends them
      const transport = workTransport(nc);
      for (let first = 0, part = 0; first < n; first += SHARD_MAX_TASKS, part++) {
        const tasks = Array.from({ length: Math.min(SHARD_MAX_TASKS, n - first) }, (_, i) => ({ index: first + i, proxy: { host: '127.0.0.1', port: 1 } }));
        await transport.publishWork(region, { v: PROTOCOL_VERSION, node, job: 'j1', shard: `1-${part}`, kind: 'probe', type: 'http', timeoutMs: 1000, tasks }, `${node}.1-${part}`);
      }
      await done;
      // the other parts' done
      const end = Date.now() + 10_000;
      while (got.filter((m) => m.t === 'done').length < Math.ceil(n / SHARD_MAX_TASKS) && Date.now() < end) await Bun.sleep(20);
      await runner.stop(1000);
      return got;
    } finally {
      await nc.drain().catch(() => nc.close());
    }
  }

  const batches = (ms: ResultsMessage[]) => ms.filter((m): m is Extract<ResultsMessage, { t: 'batch' }> => m.t === 'batch');

  test('results reported one by one go out in a few batches, each once, all before done', async () => {
    const got = await oneShard('rb1', 200);
    const b = batches(got);
    const indexes = b.flatMap((m) => (m.results as ProbeResult[]).map((r) => r.index));
    expect(indexes.sort((x, y) => x - y)).toEqual(Array.from({ length: 200 }, (_, i) => i));
    expect(b.length).toBeLessThan(20);
    // on one subject from one connection: every batch before the done
    const doneAt = got.findIndex((m) => m.t === 'done');
    expect(got.slice(doneAt + 1).some((m) => m.t === 'batch')).toBe(false);
    expect(got[0]!.t).toBe('start');
  }, 30_000);

  test('resultFlushMs 0: one message per report', async () => {
    const b = batches(await oneShard('rb2', 30, 0));
    expect(b.length).toBe(30);
  }, 30_000);

  test('no batch message holds more than SHARD_MAX_TASKS results', async () => {
    const n = SHARD_MAX_TASKS * 2 + 10;
    const b = batches(await oneShard('rb3', n, 60_000));
    expect(b.reduce((s, m) => s + m.results.length, 0)).toBe(n);
    for (const m of b) expect(m.results.length).toBeLessThanOrEqual(SHARD_MAX_TASKS);
  }, 30_000);
});
