/**
 * Result throughput through NATS on this machine: how many probe results per
 * second can arrive at an API node, with probing taken out (the agent's probe workers
 * answer at once: bench/cluster/instant-agent.ts, its own process).
 *
 * The API side runs here, in the runner's process, with the production
 * pieces: a NatsWorkers (JetStream publish of each shard, de-duplication by task
 * index, `done` replies) fed by subscribeResults (decode of every results
 * message). A driver keeps `window` tasks outstanding in shards of
 * `shardTasks` (the scheduler's maxGrant is 64), like the RegionScheduler
 * does, until `total` results arrived. Reported: results/s at the API node
 * and the CPU of each side (this process, the agent, the nats-server) per
 * result.
 */
import { fileURLToPath } from 'node:url';
import { connectNats, ensureWork, subscribeResults, workTransport } from '../../src/cluster/nats';
import { NatsWorkers } from '../../src/cluster/nats-workers';
import type { Shard } from '../../src/jobs/ports';
import { createLogger } from '../../src/log';
import { cpuMs, nextJson, spawnChild } from '../e2e/proc';

const AGENT = fileURLToPath(new URL('./instant-agent.ts', import.meta.url));

export interface ThroughputResult {
  total: number;
  window: number;
  shardTasks: number;
  resultBatch: number;
  wallMs: number;
  resultsPerS: number;
  shardsPerS: number;
  /** CPU µs per result: the API side (this process), the agent, nats-server */
  cpuUsPerResult: { api: number; agent: number; nats: number };
}

export async function measureThroughput(o: {
  natsUrl: string;
  natsPid: number;
  total: number;
  window: number;
  shardTasks: number;
  resultBatch: number;
  region: string;
}): Promise<ThroughputResult> {
  const log = createLogger('warn');
  const node = `benchtp${Date.now().toString(36)}`;
  const nc = await connectNats(o.natsUrl, `bench-throughput-${node}`, log);
  await ensureWork(nc, [o.region], 15_000, log);
  const workers = new NatsWorkers({ node, transport: workTransport(nc), deadlineMs: 60_000, log });
  const sub = subscribeResults(nc, node, workers, log);
  const agent = spawnChild('instant-agent', [process.execPath, AGENT], {
    NATS_URL: o.natsUrl,
    REGION: o.region,
    AGENT_SLOTS: String(o.window * 2),
    RESULT_BATCH: String(o.resultBatch),
  });
  try {
    const { pid: agentPid } = await nextJson<{ pid: number }>(agent, 20_000);
    let next = 0;
    let received = 0;
    let shards = 0;
    const ctx = { runId: `tp-${node}`, region: o.region };
    const settings = { type: 'http', timeoutMs: 2000 } as unknown as Shard['settings'];
    const a0 = cpuMs(agentPid).total;
    const n0 = cpuMs(o.natsPid).total;
    const me0 = cpuMs(process.pid).total;
    const t0 = performance.now();
    await new Promise<void>((resolve, reject) => {
      const launch = () => {
        if (next >= o.total) return;
        const tasks = [];
        const end = Math.min(o.total, next + o.shardTasks);
        for (; next < end; next++) tasks.push({ index: next, proxy: { host: `127.1.${(next >> 8) & 255}.${1 + (next % 254)}`, port: 8080 } });
        shards++;
        workers
          .runShard({ kind: 'probe', tasks, settings } as Shard, (b) => {
            received += b.length;
            if (received >= o.total) resolve();
          }, undefined, ctx)
          .then(launch, reject);
      };
      for (let w = 0; w < o.window; w += o.shardTasks) launch();
    });
    const wallMs = performance.now() - t0;
    const a1 = cpuMs(agentPid).total;
    const n1 = cpuMs(o.natsPid).total;
    const me1 = cpuMs(process.pid).total;
    const per = (ms: number) => (ms * 1000) / o.total;
    return {
      total: o.total,
      window: o.window,
      shardTasks: o.shardTasks,
      resultBatch: o.resultBatch,
      wallMs,
      resultsPerS: o.total / (wallMs / 1000),
      shardsPerS: shards / (wallMs / 1000),
      cpuUsPerResult: { api: per(me1 - me0), agent: per(a1 - a0), nats: per(n1 - n0) },
    };
  } finally {
    await agent.stop(3000);
    sub.unsubscribe();
    workers.close();
    await nc.drain().catch(() => nc.close());
  }
}
