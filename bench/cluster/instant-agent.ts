/**
 * A region agent whose probes take no time, for the result-throughput
 * measurement (bench/cluster/throughput.ts): the real AgentRunner (pulls
 * shards from the region's work queue, `start` / result batches / `done`
 * request, ack) on a real nats-server, in its own process, with probe workers that
 * answer every task at once in the real result shape (ProbeResult: one in
 * ten `working` with an origin and anonymity, the rest `connect_refused`),
 * RESULT_BATCH results per batch message.
 *
 * Env: NATS_URL, REGION, AGENT_SLOTS, RESULT_BATCH. Prints one JSON line
 * {"pid"} once pulling; exits when stdin closes or on SIGTERM / SIGINT.
 */
import { AgentRunner } from '../../src/cluster/agent-runner';
import { connectNats, ensureWork, openAgentsBucket } from '../../src/cluster/nats';
import type { WorkerPort, ResultBatch, Shard } from '../../src/jobs/ports';
import { createLogger } from '../../src/log';
import type { ProbeResult } from '../../src/probe/types';

const natsUrl = process.env.NATS_URL!;
const region = process.env.REGION ?? 'benchtp';
const slots = Number(process.env.AGENT_SLOTS ?? 50_000);
const batchSize = Math.max(1, Number(process.env.RESULT_BATCH ?? 64));
const log = createLogger('warn');

function result(index: number): ProbeResult {
  if (index % 10 === 0) {
    return { index, status: 'working', statusCode: 200, responseTimeMs: 183.4, anonymity: 'elite', origin: `127.1.${(index >> 8) & 255}.${1 + (index % 254)}`, error: null };
  }
  return { index, status: 'failed', statusCode: null, responseTimeMs: 0.8, anonymity: null, origin: null, error: { code: 'connect_refused', message: 'connection refused' } };
}

const workers: WorkerPort = {
  runShard(shard: Shard, onResults: (b: ResultBatch) => void): Promise<void> {
    return new Promise((resolve) => {
      let i = 0;
      const step = () => {
        // one batch per turn of the event loop, as a probe lane reports
        const end = Math.min(shard.tasks.length, i + batchSize);
        const b: ProbeResult[] = [];
        for (; i < end; i++) b.push(result(shard.tasks[i]!.index));
        onResults(b);
        if (i < shard.tasks.length) setImmediate(step);
        else resolve();
      };
      setImmediate(step);
    });
  },
};

const nc = await connectNats(natsUrl, 'bench-instant-agent', log);
await ensureWork(nc, [region], 15_000, log);
const kv = await openAgentsBucket(nc, 10_000);
const runner = new AgentRunner({
  nc,
  kv,
  region,
  agentId: 'bench-instant',
  slots,
  version: 'bench',
  workers,
  settingsFor: (w) => ({ type: w.type, timeoutMs: w.timeoutMs }) as never,
  identity: () => ({ judgeUrl: 'http://127.0.0.1:1/judge', exitIps: [] }),
  ackWaitMs: 15_000,
  heartbeatMs: 1_000,
  log,
});
await runner.start();
process.stdout.write(JSON.stringify({ pid: process.pid }) + '\n');

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  void runner
    .stop(1000)
    .then(() => nc.drain())
    .finally(() => process.exit(0));
  setTimeout(() => process.exit(0), 3000).unref();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.resume();
