/**
 * The region agent's composition root (ROLE=agent, or the agent half of
 * ROLE=all): the probe pool of one region (REGION), fed from the region's
 * work queue on NATS (src/cluster/agent-runner.ts). No database, no public
 * API: its one listener (HOST/PORT; in ROLE=all a free port on HOST) serves
 * GET /judge (the judge its proxies reach, unless JUDGE_URL names another),
 * GET /health and GET /metrics.
 *
 * Start order (each step undone by stop(), in reverse):
 *   probe pool -> listener (/judge, /health, /metrics) -> the judge's TLS
 *   listener (JUDGE_TLS without JUDGE_TLS_URL) -> judge calibration (this
 *   agent's own exit addresses, as its judge sees them) -> NATS connection
 *   -> work stream + the region's consumer + the agents' bucket (ensured) ->
 *   runner (heartbeat, then pulls)
 *
 * ## stop()
 *
 *   running ──stop()──> the runner drains (no more pulls; running shards get
 *   SHUTDOWN_GRACE_MS, then go back to the queue), its heartbeat deleted ->
 *   NATS drained -> calibration, listeners, pool ──> stopped
 *
 * stop() is safe to call twice (one shared promise) and never rejects.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { AgentRunner } from './cluster/agent-runner';
import { connectNats, ensureWork, openAgentsBucket } from './cluster/nats';
import { toSubjectToken } from './cluster/protocol';
import { reachableHost, type Config } from './config';
import { errorText } from './errors';
import { parseJudgeUrl, startCalibration, type CalibrationHandle } from './judge/calibrate';
import { judgeResponseFor, startJudgeServer } from './judge/server';
import { readOrCreateJudgeCertificate } from './judge/tls-cert';
import { DescriptorGuard } from './fd-guard';
import { maxInFlightFor, openFilesLimit } from './limits';
import type { Logger } from './log';
import { stopSteps } from './stop-steps';
import { AgentMetrics } from './metrics/agent-metrics';
import { ProbeWorkers } from './probe/workers/probe-workers';
import { probeSettings } from './probe/settings';
import type { ProbeSettings, TlsJudgeTarget } from './probe/types';
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
}

/** An agent id for one start: the host name's first label and 8 random hex digits, subject-safe. */
export function generateAgentId(host: string = hostname()): string {
  const label = toSubjectToken((host.split('.')[0] ?? '').slice(0, 40)).replace(/^_+$/, '');
  return `${label === '' ? 'agent' : label}-${randomBytes(4).toString('hex')}`;
}

export async function startAgent(config: Config, opts: AgentStartOptions): Promise<RunningAgent> {
  const { log } = opts;
  if (config.natsUrl === undefined || config.region === undefined) {
    throw new Error('an agent needs NATS_URL and REGION');
  }
  const region = config.region;
  const agentId = config.agentId ?? generateAgentId();
  const judgeInProcess = config.judgeUrl === undefined;
  // as one process: with its own judge, 90 % of the descriptor budget under the descriptor guard (src/fd-guard.ts)
  const openFiles = openFilesLimit();
  const slots = config.agentSlots ?? maxInFlightFor(openFiles, judgeInProcess ? 'guarded' : 'elsewhere');

  const { undo, unwind } = stopSteps(log, 'agent stop step failed');

  try {
    const pool = await ProbeWorkers.start({ threads: opts.threads ?? config.probeThreads });
    undo.push(() => pool.close());

    const ownJudgeKey = config.judgeKey ?? randomBytes(32).toString('base64url');
    const judgeKey = judgeInProcess ? ownJudgeKey : config.judgeKey;
    if (judgeKey === undefined) log.warn('JUDGE_URL without JUDGE_KEY: judge answers are not signed, integrity is not checked', { judge: config.judgeUrl });

    let runner: AgentRunner | null = null;
    let guard: DescriptorGuard | null = null;
    let nc: Awaited<ReturnType<typeof connectNats>> | null = null;
    const metrics = new AgentMetrics({ slots, inFlight: () => runner?.inFlight ?? 0, shardsRunning: () => runner?.shardsRunning ?? 0 });
    const server = Bun.serve({
      hostname: config.host,
      port: opts.port ?? config.port,
      async fetch(request, srv) {
        const path = new URL(request.url).pathname;
        if (request.method !== 'GET' && request.method !== 'HEAD') return new Response('method not allowed', { status: 405 });
        if (path === '/judge') return judgeResponseFor(request, srv.requestIP(request)?.address ?? '', ownJudgeKey);
        if (path === '/health') {
          const up = nc !== null && !nc.isClosed();
          return Response.json({ status: 'ok', role: 'agent', version: VERSION, region, agent: agentId, slots, inFlight: runner?.inFlight ?? 0, nats: up ? 'ok' : 'down' });
        }
        if (path === '/metrics') return new Response(await metrics.render(), { headers: { 'content-type': metrics.contentType } });
        return Response.json({ error: 'Not found', message: `No route ${request.method} ${path}` }, { status: 404 });
      },
    });
    undo.push(() => server.stop(true));
    const port = server.port!;
    const url = `http://${reachableHost(config.host)}:${port}`;

    const judge = parseJudgeUrl(config.judgeUrl ?? `${url}/judge`);
    const tlsCa = config.tlsCaFile === undefined ? undefined : readFileSync(config.tlsCaFile, 'utf8');
    let tlsJudge: TlsJudgeTarget | undefined;
    if (config.judgeTls && config.judgeTlsUrl !== undefined && config.judgeTlsFingerprint !== undefined) {
      tlsJudge = { ...parseJudgeUrl(config.judgeTlsUrl), protocol: 'https:', fingerprint: config.judgeTlsFingerprint, ...(config.judgeKey !== undefined ? { key: config.judgeKey } : {}) };
    } else if (config.judgeTls && judgeInProcess) {
      mkdirSync(config.dataDir, { recursive: true });
      const cert = await readOrCreateJudgeCertificate(config.dataDir);
      const tlsServer = await startJudgeServer({ host: config.host, port: config.judgeTlsPort, key: ownJudgeKey, tls: { key: cert.key, cert: cert.cert } });
      undo.push(() => tlsServer.close());
      tlsJudge = { ...parseJudgeUrl(`https://${judge.host.includes(':') ? `[${judge.host}]` : judge.host}:${tlsServer.port}/judge`), protocol: 'https:', fingerprint: cert.fingerprint, key: ownJudgeKey };
    }

    let calibrated = { ips: [...config.checkerIps], baselineHeaders: [] as string[] };
    // One ProbeSettings object per (type, timeout) until calibration changes: the pool sends a
    // settings object to a lane once and refers to it after (lane-protocol.ts), by identity.
    const settingsCache = new Map<string, ProbeSettings>();
    const calibration: CalibrationHandle = startCalibration({
      judge,
      extraIps: config.checkerIps,
      intervalMs: config.calibrationIntervalMs,
      onUpdate: (r) => {
        calibrated = r;
        settingsCache.clear();
        log.debug('calibrated', { ips: r.ips });
      },
      ...(tlsCa !== undefined ? { tlsCa } : {}),
      ...(judgeKey !== undefined ? { judgeKey } : {}),
      onError: (err) => log.warn('judge calibration failed; using CHECKER_IPS only', { judge: judge.url, err }),
    });
    undo.push(() => calibration.stop());
    await calibration.ready;

    nc = await connectNats(config.natsUrl, `proxycheck-agent-${agentId}`, log);
    const conn = nc;
    undo.push(async () => {
      await conn.drain().catch(() => conn.close());
    });
    await ensureWork(conn, [region], config.clusterAckWaitMs, log);
    const kv = await openAgentsBucket(conn, config.agentTtlMs);

    runner = new AgentRunner({
      nc: conn,
      kv,
      region,
      agentId,
      slots,
      // the API nodes lend their newcomers' headroom above a region's slots (scheduler.ts "Headroom"): take it
      lendSlots: slots - Math.floor((slots * config.maxJobSharePercent) / 100),
      version: VERSION,
      workers: pool,
      settingsFor: (w) => {
        const key = `${w.type}:${w.timeoutMs}`;
        let s = settingsCache.get(key);
        if (s === undefined) {
          if (settingsCache.size >= 256) settingsCache.clear();
          s = probeSettings({ type: w.type, timeoutMs: w.timeoutMs, judge, calibrated, allowPrivateTargets: config.allowPrivateTargets, tlsCa, judgeKey, tlsJudge });
          settingsCache.set(key, s);
        }
        return s;
      },
      identity: () => ({ judgeUrl: judge.url, exitIps: calibrated.ips }),
      ackWaitMs: config.clusterAckWaitMs,
      heartbeatMs: config.agentHeartbeatMs,
      log,
      counters: metrics,
      onBusy: () => guard?.wake(),
    });
    const active = runner;
    if (judgeInProcess && openFiles !== null && Number.isFinite(openFiles)) {
      const g = new DescriptorGuard({
        openFiles,
        cap: slots + Math.max(0, slots - Math.floor((slots * config.maxJobSharePercent) / 100)),
        probesInFlight: () => active.inFlight,
        setCapacity: (n) => active.setGuardCapacity(n),
        setStartBudget: (n) => active.setStartBudget(n),
      }).start();
      guard = g;
      if (!g.running) log.warn('open descriptors are not readable (/proc/self/fd, Linux >= 6.2): the judge keeps only its static share', { slots });
      undo.push(() => g.stop());
    }
    await active.start();
    undo.push(() => active.stop(config.shutdownGraceMs));

    log.info('ready', { role: 'agent', agent: agentId, region, url, port, slots, judge: judge.url, exitIps: calibrated.ips, nats: config.natsUrl });

    let stopping: Promise<void> | null = null;
    const stop = () =>
      (stopping ??= (async () => {
        log.info('agent stopping', { agent: agentId, inFlight: active.inFlight });
        await unwind();
        log.info('agent stopped', { agent: agentId });
      })());
    return { url, port, agentId, region, slots, runner: active, stop };
  } catch (err) {
    log.error('agent start failed', { err: errorText(err) });
    await unwind();
    throw err;
  }
}
