/**
 * The region agent's composition root (ROLE=agent, or the agent half of
 * ROLE=all): the probe workers of one region (REGION), fed from the region's
 * work queue on NATS (src/cluster/agent-runner.ts), its own judge and
 * calibration (src/compose/own-judge.ts, as the service's), its listener
 * (src/compose/agent-listener.ts). No database, no public API.
 *
 * The start and stop order are in docs/DESIGN.md "Start and stop".
 * stop() is safe to call twice (one shared promise) and never rejects.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { NatsConnection } from '@nats-io/transport-node';
import type { KV } from '@nats-io/kv';
import { AgentRunner } from './cluster/agent-runner';
import { connectNats, ensureWork, openAgentsBucket } from './cluster/nats';
import { toSubjectToken } from './cluster/protocol';
import { serveAgent } from './compose/agent-listener';
import { isOwnJudge, judgeBase, judgeGuard, judgeKeys, logJudgePlace, placeJudge, ProbeJudge, serveJudgeTls, startGuard } from './compose/own-judge';
import type { Config } from './config';
import { errorText } from './errors';
import { localAddresses } from './judge/local-addresses';
import { maxInFlightFor, openFilesLimit } from './limits';
import type { Logger } from './log';
import { AgentMetrics } from './metrics/agent-metrics';
import { ProbeWorkers } from './probe/workers/probe-workers';
import { stopSteps, type StopStep } from './stop-steps';
import { VERSION } from './version';

export interface RunningAgent {
  /** The listener: http://host:port */
  url: string;
  port: number;
  agentId: string;
  region: string;
  slots: number;
  runner: AgentRunner;
  stop(): Promise<void>;
}

export interface AgentStartOptions {
  log: Logger;
  /** Probe threads (tests use 1); default PROBE_THREADS. */
  threads?: number;
  /** The listener's port; default PORT (ROLE=all passes 0: PORT is the API's). */
  port?: number;
  /** The own judge's TLS listener port; default JUDGE_TLS_PORT (ROLE=all passes 0: it is the API's). */
  judgeTlsPort?: number;
}

/** An agent id for one start: the host name's first label and 8 random hex digits, subject-safe. */
export function generateAgentId(host: string = hostname()): string {
  const label = toSubjectToken((host.split('.')[0] ?? '').slice(0, 40)).replace(/^_+$/, '');
  return `${label === '' ? 'agent' : label}-${randomBytes(4).toString('hex')}`;
}

/** An agent's slots (AGENT_SLOTS, or as one process: with its own judge 90 % of the descriptor budget) and what it may hold above them. */
function agentSlots(config: Config, openFiles: number | null): { slots: number; lend: number } {
  const { agentSlots: fixed } = config.cluster;
  const slots = fixed ?? maxInFlightFor(openFiles, isOwnJudge(config.judge) ? 'guarded' : 'elsewhere');
  // the API nodes lend their newcomers' headroom above a region's slots (scheduler.ts "Headroom"): take it
  return { slots, lend: slots - Math.floor((slots * config.probes.maxJobSharePercent) / 100) };
}

export async function startAgent(config: Config, opts: AgentStartOptions): Promise<RunningAgent> {
  const { log } = opts;
  // parseConfig guarantees both for ROLE=agent|all; a precondition, not a mode
  const { natsUrl: servers, region, agentId: fixedId } = config.cluster;
  if (servers === undefined || region === undefined) throw new Error('an agent needs NATS_URL and REGION');
  const agentId = fixedId ?? generateAgentId();
  const openFiles = openFilesLimit();
  const { slots, lend } = agentSlots(config, openFiles);
  const guardCap = slots + Math.max(0, lend);
  const { undo, unwind } = stopSteps(log, 'agent stop step failed');
  try {
    const workers = await ProbeWorkers.start({ threads: opts.threads ?? config.probes.threads });
    undo.push(() => workers.close());
    const keys = judgeKeys(config.judge);
    const ownTls = await serveJudgeTls(config, { key: keys.sign, port: opts.judgeTlsPort ?? config.judge.tlsPort, log, undo });
    const judge = new ProbeJudge({ config, keys, ownTls, log });
    const guard = judgeGuard(config.judge, openFiles, guardCap);
    const metrics = new AgentMetrics(slots);
    const { nc, kv } = await joinRegion(config, { servers, region, agentId, log, undo });
    const runner = new AgentRunner({
      nc,
      kv,
      region,
      agentId,
      slots,
      lendSlots: lend,
      version: VERSION,
      workers,
      settingsFor: (w) => judge.settings(w.type, w.timeoutMs),
      identity: () => ({ judgeUrl: judge.url, exitIps: judge.exitIps }),
      ackWaitMs: config.cluster.ackWaitMs,
      heartbeatMs: config.cluster.heartbeatMs,
      log,
      counters: metrics,
      onBusy: () => guard?.wake(),
    });
    metrics.watch(runner);
    const natsState = () => (nc.isClosed() ? 'down' : 'ok');
    const health = () => ({ status: 'ok', role: 'agent', version: VERSION, region, agent: agentId, slots, inFlight: runner.inFlight, nats: natsState() });
    const listener = serveAgent({ host: config.http.host, port: opts.port ?? config.http.port, judgeKey: keys.sign, health, metrics, undo });
    const place = placeJudge(config, { url: listener.url, urlSet: false }, localAddresses());
    logJudgePlace(place, log);
    await judge.start(judgeBase(place, listener.url), { calibrate: true, undo });
    const target = { probesInFlight: () => runner.inFlight, setCapacity: (n: number) => runner.setGuardCapacity(n), setStartBudget: (n: number) => runner.setStartBudget(n) };
    startGuard(guard, target, { log, undo, cap: guardCap });
    await runner.start();
    undo.push(() => runner.stop(config.process.shutdownGraceMs));
    log.info('ready', { role: 'agent', agent: agentId, region, ...listener, slots, judge: judge.url, exitIps: judge.exitIps, nats: servers });
    return { ...listener, agentId, region, slots, runner, stop: agentStopper(agentId, runner, unwind, log) };
  } catch (err) {
    log.error('agent start failed', { err: errorText(err) });
    await unwind();
    throw err;
  }
}

/** NATS, the work stream with this region's consumer, and the agents' bucket (ensured). */
async function joinRegion(config: Config, o: { servers: string; region: string; agentId: string; log: Logger; undo: StopStep[] }): Promise<{ nc: NatsConnection; kv: KV }> {
  const nc = await connectNats(o.servers, `proxycheck-agent-${o.agentId}`, o.log);
  o.undo.push(async () => {
    await nc.drain().catch(() => nc.close());
  });
  await ensureWork(nc, [o.region], config.cluster.ackWaitMs, o.log);
  return { nc, kv: await openAgentsBucket(nc, config.cluster.agentTtlMs) };
}

/** The runner drains (running shards get SHUTDOWN_GRACE_MS, then go back to the queue), then the start is undone in reverse. */
function agentStopper(agentId: string, runner: AgentRunner, unwind: () => Promise<void>, log: Logger): () => Promise<void> {
  let stopping: Promise<void> | null = null;
  return () =>
    (stopping ??= (async () => {
      log.info('agent stopping', { agent: agentId, inFlight: runner.inFlight });
      await unwind();
      log.info('agent stopped', { agent: agentId });
    })());
}
