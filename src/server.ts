/**
 * The composition root: builds the running service from a Config. Used by
 * src/main.ts (the process) and by end-to-end tests (in-process, port 0).
 *
 * Start order (each step undone by stop(), in reverse):
 *   secrets -> data-dir lock (embedded only) -> database + migrations ->
 *   node lease (NODE_ID or generated; renewed every NODE_LEASE_MS / 3) ->
 *   orphan sweep at start (embedded: every running scan, the lock proves no
 *   other process; PostgreSQL: scans of expired leases and of this NODE_ID's
 *   previous run) + the periodic sweep (ORPHAN_SWEEP_MS, expired leases of
 *   other nodes) -> demo account -> geo + probe pool -> result store ->
 *   scheduler (+ with the built-in judge, the descriptor guard: src/fd-guard.ts) ->
 *   the judge's TLS listener (built-in judge: certificate from DATA_DIR,
 *   JUDGE_TLS_PORT on HOST) -> HTTP server -> admin server (its own
 *   listener: ADMIN_HOST/ADMIN_PORT, with GET /metrics) -> judge calibration (+ the TLS judge
 *   asked directly: a certificate other than the pinned one stops the start)
 *   -> retention sweep -> lock points at our admin API.
 *
 * ## stop()
 *
 *   running ──stop()──> stopping: checks answer 503, running jobs get
 *   SHUTDOWN_GRACE_MS to finish, then are failed and refunded; then the
 *   reverse of the start: retention sweep, calibration, admin server, HTTP
 *   server, settlement retries (one last try), WebSockets, result store,
 *   pool, periodic orphan sweep, node lease released (its row deleted: a
 *   job it could not settle is an orphan for the other nodes at once),
 *   database, lock released ──> stopped
 *
 * stop() is safe to call twice (one shared promise), never rejects, and
 * releases everything in `finally` even when a step fails.
 *
 * ## A cluster's API node (NATS_URL, ROLE=api|all)
 *
 * RESULT_SECRET and ADMIN_TOKEN must come from the environment (every API
 * node signs and checks the same links). No probe pool, no judge calibration:
 * after the database, the node connects to NATS, ensures the work stream and
 * every region's consumer and the agents' bucket, watches the live agents
 * (src/cluster/registry.ts: a region's capacity = its agents' slots, a rise
 * pokes the scheduler), shares a region's slots with the other API nodes by
 * their demand (src/cluster/demand.ts: the scheduler's capacity is this
 * node's fair share) and probes through the NatsWorkers (src/cluster/nats-workers.ts)
 * behind the same RegionScheduler (no process-wide cap: each agent bounds
 * itself). A check to a region without a live agent is refused before the
 * reservation (503 Region unavailable). Stop: after the jobs, the registry,
 * the pool (waiting shards fail) and the NATS connection (drained).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Database } from '../db/client';
import { findAccountByApiKey } from './accounts/accounts';
import { KeyCache } from './accounts/key-cache';
import { ensureBootstrapAccount, type BootstrapResult } from './accounts/bootstrap';
import { getAccountOverview } from './accounts/overview';
import { OrphanScope, sweepOrphans, type RefundedOrphan } from './accounts/orphans';
import { acquireDataDirLock, type DataDirLock } from './admin/lock';
import { createAdminApp } from './admin/app';
import { reachableHost, withBoundPort, type Config } from './config';
import { ServiceError } from './errors';
import { ENTRY_ERROR_CODES, HTTP_ERROR_CODES } from './error-codes';
import { NatsWorkers } from './cluster/nats-workers';
import { CLUSTER_MIN_GRANT } from './cluster/protocol';
import type { NatsConnection } from '@nats-io/transport-node';
import { connectNats, ensureWork, openAgentsBucket, openDemandBucket, subscribeResults, workTransport } from './cluster/nats';
import { AgentRegistry } from './cluster/registry';
import { DemandBoard, nudgingExecution } from './cluster/demand';
import { consumerReader, QueueDepth } from './cluster/queue-depth';
import { openGeo, type Geo } from './geo/geo';
import { readTemplate } from '../db/pglite-template';
import { createApp } from './http/app';
import { databaseLedger } from './jobs/ledger';
import { ProgressHub } from './jobs/progress-hub';
import type { ProgressPort } from './jobs/ports';
import { ClusterProgress, createClusterProgress } from './cluster/progress';
import { RegionScheduler } from './jobs/scheduler';
import { CheckService } from './jobs/service';
import { CheckJobs } from './jobs/check-jobs';
import { findJobScan } from './accounts/job-scans';
import { jobControlClient, serveJobControl } from './cluster/job-control';
import { localExecution } from './jobs/local-execution';
import { generateNodeId, NodeLease } from './jobs/node-lease';
import { startOrphanSweep } from './jobs/orphan-sweep';
import { SettlementRetry } from './jobs/settlements';
import { parseJudgeUrl, startCalibration, type CalibrationHandle } from './judge/calibrate';
import { startJudgeServer } from './judge/server';
import { readOrCreateJudgeCertificate } from './judge/tls-cert';
import { checkTlsJudge } from './judge/tls-judge-check';
import type { Logger } from './log';
import { stopSteps } from './stop-steps';
import { ProbeWorkers } from './probe/workers/probe-workers';
import { probeSettings } from './probe/settings';
import type { ProbeSettings, TlsJudgeTarget } from './probe/types';
import { ACCEPTED_REGIONS, findRegion, REGIONS } from './regions';
import { maxInFlightFor, openFilesLimit } from './limits';
import { DescriptorGuard } from './fd-guard';
import { ServiceMetrics } from './metrics/service-metrics';
import { linkExpiry, newResultId, signResultLink } from './results/links';
import { openDirResultStore } from './results/dir-store';
import { openPgResultStore } from './results/pg-store';
import { startRetentionSweep, type RetentionSweep } from './results/retention';
import { resolveSecrets } from './secrets';
import { VERSION } from './version';

export interface RunningService {
  url: string;
  port: number;
  /** The admin API's listener (ADMIN_HOST/ADMIN_PORT), e.g. http://127.0.0.1:41234 */
  adminUrl: string;
  config: Config;
  database: Database;
  /** This API node's id (NODE_ID or generated per start). */
  nodeId: string;
  checks: CheckService;
  /** The demo account created on this start (first start only). */
  bootstrap: BootstrapResult | null;
  /** Milliseconds from startService() to ready. */
  startupMs: number;
  stop(): Promise<void>;
}

export interface StartOptions {
  log: Logger;
  /** Override the probe pool's threads (tests use 1). */
  threads?: number;
  /** An already open, migrated database to use instead of opening one from the config (tests); the caller closes it. */
  database?: Database;
}

export async function startService(rawConfig: Config, opts: StartOptions): Promise<RunningService> {
  // `config` is replaced once the server is bound (PORT=0 -> the real port in BASE_URL/CONTENT_URL).
  const t0 = performance.now();
  const { log } = opts;
  const cluster = rawConfig.natsUrl !== undefined && (rawConfig.role === 'api' || rawConfig.role === 'all');
  if (cluster && (rawConfig.resultSecret === undefined || rawConfig.adminToken === undefined)) {
    // generated per DATA_DIR they would differ per node: a link minted on one would fail on another
    throw new ServiceError(ENTRY_ERROR_CODES.CLUSTER_SECRETS_MISSING, 'an API node of a cluster needs RESULT_SECRET and ADMIN_TOKEN in its environment, the same on every node');
  }
  mkdirSync(rawConfig.dataDir, { recursive: true });
  let config = await resolveSecrets(rawConfig);
  const secret = config.resultSecret;
  if (secret === undefined || secret === '') {
    throw new ServiceError(HTTP_ERROR_CODES.RESULT_SECRET_MISSING, 'no result-link secret (RESULT_SECRET or DATA_DIR/result-secret, src/secrets.ts)');
  }

  const { undo, unwind } = stopSteps(log, 'stop step failed');

  let engine: Promise<[Geo, ProbeWorkers | null]> | null = null;
  try {
    let lock: DataDirLock | null = null;
    if (config.databaseUrl === undefined) {
      lock = await acquireDataDirLock(config.dataDir);
      const held = lock;
      undo.push(() => held.release());
    }

    // The engine (geo + worker threads) loads while the database opens.
    // (a cluster's API node probes through its agents: no threads)
    engine = Promise.all([openGeo(), cluster ? null : ProbeWorkers.start({ threads: opts.threads ?? config.probeThreads })]);
    const database =
      opts.database ??
      (await openDatabase({
        databaseUrl: config.databaseUrl,
        dataDir: config.dataDir,
        statementTimeoutMs: config.dbStatementTimeoutMs,
        // a new embedded data dir starts from the install's template when there is one (db/pglite-template.ts)
        pgliteTemplate: () => readTemplate(),
      }));
    if (opts.database === undefined) undo.push(() => database.close());
    const db = database.db;

    // This node's lease; released after its jobs settled (undone after the settlement retries, before the database closes).
    const nodeId = config.nodeId ?? generateNodeId();
    const embedded = config.databaseUrl === undefined;
    const { lease, registration } = await NodeLease.start({
      db,
      node: { id: nodeId, version: VERSION, host: hostname(), pid: process.pid },
      leaseMs: config.nodeLeaseMs,
      log,
    });
    undo.push(() => lease.release());
    if (registration.wasLive && !embedded) {
      log.warn('this node id held a live lease: its running jobs are taken as interrupted (NODE_ID must be unique per running process)', { node: nodeId });
    }
    // Orphans before the first check: embedded, every running scan (the data-dir lock proves no other process);
    // PostgreSQL, those of expired leases and of this NODE_ID's previous run (a new random id waits for the old lease).
    // A cluster tells the region agents of every orphan it refunds (pc.cancel), so they drop the dead
    // node's shards of it at once instead of probing them to their timeout for nobody; the orphans
    // refunded before NATS is connected are told once it is.
    const refundedEarly: RefundedOrphan[] = [];
    let tellAgents: (o: RefundedOrphan) => void = (o) => void (cluster && refundedEarly.push(o));
    const onRefunded = (o: RefundedOrphan) => tellAgents(o);
    await sweepOrphans(db, log, { self: nodeId, scope: embedded ? OrphanScope.all : OrphanScope.own }, undefined, { onRefunded });
    const orphanSweep = startOrphanSweep({ db, self: nodeId, intervalMs: config.orphanSweepMs, log, onRefunded });
    undo.push(() => orphanSweep.stop());
    const bootstrap = await ensureBootstrapAccount(
      db,
      { checks: config.bootstrapChecks, apiKey: config.bootstrapApiKey, baseUrl: config.baseUrl },
      log,
    );

    const [geo, localPool] = await engine;
    if (localPool !== null) undo.push(() => localPool.close());

    // A cluster: NATS, the work queue, the live agents and the pool that publishes shards.
    let registry: AgentRegistry | null = null;
    let natsPool: NatsWorkers | null = null;
    let poke: (region: string) => void = () => {};
    let board: DemandBoard | null = null;
    let queueDepth: QueueDepth | null = null;
    let demandOf: (region: string) => number = () => 0;
    let natsConn: NatsConnection | null = null;
    if (cluster) {
      const nc = await connectNats(config.natsUrl!, `proxycheck-api-${nodeId}`, log);
      natsConn = nc;
      undo.push(async () => {
        await nc.drain().catch(() => nc.close());
      });
      const jsm = await ensureWork(
        nc,
        REGIONS.map((r) => r.code),
        config.clusterAckWaitMs,
        log,
      );
      const kv = await openAgentsBucket(nc, config.agentTtlMs);
      const reg = await AgentRegistry.start({ kv, ttlMs: config.agentTtlMs, log, onChange: (region) => poke(region) });
      registry = reg;
      undo.push(() => reg.stop());
      queueDepth = new QueueDepth({ regions: ACCEPTED_REGIONS, read: consumerReader(jsm) });
      // fairness across API nodes: this node's scheduler takes its share of a region's slots (cluster/demand.ts)
      const b = await DemandBoard.start({
        kv: await openDemandBucket(nc, config.agentTtlMs),
        node: nodeId,
        ttlMs: config.agentTtlMs,
        heartbeatMs: config.agentHeartbeatMs,
        regions: ACCEPTED_REGIONS,
        demandOf: (region) => demandOf(region),
        capacity: (region) => reg.capacity(region),
        onChange: (region) => poke(region),
        log,
      });
      board = b;
      undo.push(() => b.stop());
      const transport = workTransport(nc);
      tellAgents = (o) => {
        if (o.nodeId === null) return;
        try {
          transport.publishCancel(o.nodeId, o.runId);
        } catch (err) {
          log.warn('telling the agents of a refunded orphan failed (they probe its shards to their timeout)', { runId: o.runId, err });
        }
      };
      for (const o of refundedEarly.splice(0)) tellAgents(o);
      const np = new NatsWorkers({
        node: nodeId,
        transport,
        deadlineMs: config.clusterShardDeadlineMs,
        log,
        counters: { shardsRedelivered: (n) => metrics.shardsRedelivered(n), duplicateResults: (n) => metrics.duplicateResults(n) },
      });
      natsPool = np;
      const sub = subscribeResults(nc, nodeId, np, log);
      undo.push(() => {
        np.close();
        sub.unsubscribe();
      });
    }
    const pool = (natsPool ?? localPool)!;

    const retentionMs = config.resultRetentionDays * 86_400_000;
    const nowS = () => Math.floor(Date.now() / 1000);
    const signLink = (resultId: string) =>
      signResultLink({ contentUrl: config.contentUrl, resultId, secret, expiresAt: linkExpiry(nowS()), ext: 'json' });

    const tlsCa = config.tlsCaFile === undefined ? undefined : readFileSync(config.tlsCaFile, 'utf8');
    // Integrity: our own /judge signs with JUDGE_KEY, or a random key of this service (never written
    // anywhere: a restart is a new key); an external judge is verified only with JUDGE_KEY
    // (without it, it does not sign).
    const ownJudgeKey = config.judgeKey ?? randomBytes(32).toString('base64url');
    const judgeKey = config.judgeUrl === undefined ? ownJudgeKey : config.judgeKey;
    if (judgeKey === undefined) log.warn('JUDGE_URL without JUDGE_KEY: judge answers are not signed, integrity is not checked', { judge: config.judgeUrl });
    let calibrated = { ips: [...config.checkerIps], baselineHeaders: [] as string[] };
    // The judge URL needs the bound port when it is this server's own /judge.
    let judge = parseJudgeUrl(config.judgeUrl ?? `${config.baseUrl}/judge`);
    // calibrated.ips already holds CHECKER_IPS (startCalibration merges them in)
    // The https check's TLS judge (pinned): an external one (JUDGE_TLS_URL + JUDGE_TLS_FINGERPRINT), or the
    // built-in judge's own TLS listener when the judge is ours (JUDGE_URL unset); JUDGE_TLS=false: none.
    let tlsJudge: TlsJudgeTarget | undefined;
    if (config.judgeTls && config.judgeTlsUrl !== undefined && config.judgeTlsFingerprint !== undefined) {
      tlsJudge = {
        ...parseJudgeUrl(config.judgeTlsUrl),
        protocol: 'https:',
        fingerprint: config.judgeTlsFingerprint,
        ...(config.judgeKey !== undefined ? { key: config.judgeKey } : {}),
      };
    } else if (config.judgeTls && config.judgeUrl === undefined && !cluster) {
      const cert = await readOrCreateJudgeCertificate(config.dataDir);
      if (cert.created) log.info('made the judge TLS certificate', { path: cert.path, fingerprint: cert.fingerprint });
      const tlsServer = await startJudgeServer({ host: config.host, port: config.judgeTlsPort, key: ownJudgeKey, tls: { key: cert.key, cert: cert.cert } });
      undo.push(() => tlsServer.close());
      // reachable the way the HTTP judge is: BASE_URL's host (brackets kept for IPv6), the listener's own port
      const reachable = `https://${new URL(config.baseUrl).hostname}:${tlsServer.port}/judge`;
      tlsJudge = { ...parseJudgeUrl(reachable), protocol: 'https:', fingerprint: cert.fingerprint, key: ownJudgeKey };
    }
    const settings = (type: ProbeSettings['type'], timeoutMs: number): ProbeSettings =>
      probeSettings({ type, timeoutMs, judge, calibrated, allowPrivateTargets: config.allowPrivateTargets, tlsCa, judgeKey, tlsJudge });

    // No fsync: a written file survives a process crash (page cache); only an
    // OS crash or power loss right after a job could lose it (then its link
    // answers 404). The fsync cost ~2.5 ms per job, a quarter of a small check.
    // Result files: the data directory; a cluster's API nodes share one store in PostgreSQL
    // (src/results/pg-store.ts: a link minted by one node downloads from any other).
    const results = cluster
      ? await openPgResultStore({ db, stagingDir: join(config.dataDir, 'results-staging', nodeId) }) // one staging dir per node id (NODE_ID is unique per running process)
      : await openDirResultStore({ dataDir: config.dataDir, fsync: false });
    undo.push(() => results.close()); // after the HTTP server (undone in reverse)

    // Progress: this node's hub; in a cluster the same hub per node, fed over NATS (src/cluster/progress.ts),
    // so a subscriber on any API node follows any job. Undone before the NATS drain (finals go out first).
    const hubOptions = { maxPerAccount: config.wsMaxPerAccount, maxPerAddress: config.wsMaxPerAddress };
    const hub: ProgressPort & { readonly subscribers: number } =
      natsConn === null ? new ProgressHub(hubOptions) : await createClusterProgress({ nc: natsConn, nodeId, log, hubOptions });
    undo.push(async () => {
      hub.closeAll();
      if (hub instanceof ClusterProgress) await hub.settled();
    });
    // The probes' cap from the open-file limit (src/limits.ts); with the built-in judge a guard lowers it
    // while the descriptors actually open leave too few free for the judge's accepts (src/fd-guard.ts).
    const openFiles = openFilesLimit();
    const ownJudge = config.judgeUrl === undefined;
    const maxInFlight = config.maxInFlight ?? maxInFlightFor(openFiles, ownJudge ? 'guarded' : 'elsewhere');
    const liveAgents = registry;
    const share = board;
    let guard: DescriptorGuard | null = null;
    const scheduler = new RegionScheduler(
      share !== null ? (code) => share.share(code) : (code) => (findRegion(code)?.endpoints ?? 0) * config.slotsPerEndpoint,
      {
      // a cluster's node has no process-wide cap: each agent bounds its own probes
      // a cluster's node sends shards of at least CLUSTER_MIN_GRANT probes (each shard costs messages)
      // a cluster: the newcomers' headroom is lent above the agents' slots as in one process (agents take it: agent-runner.ts lendSlots)
      ...(liveAgents === null ? { globalCapacity: maxInFlight } : { minGrant: CLUSTER_MIN_GRANT }),
      jobShare: config.maxJobSharePercent / 100,
      // the job itself hears of it too (local-execution.ts) and fails with refunds
      onDispatchError: (err, jobId) => log.error('scheduler dispatch failed; the job fails', { jobId, err }),
      // the descriptor guard samples every 25 ms only while probes are in flight (src/fd-guard.ts)
      onBusy: () => guard?.wake(),
      },
    );
    if (liveAgents === null && ownJudge && openFiles !== null && Number.isFinite(openFiles)) {
      const g = new DescriptorGuard({
        openFiles,
        cap: maxInFlight,
        probesInFlight: () => scheduler.totalInFlight,
        setCapacity: (n) => scheduler.setGlobalCapacity(n),
        setStartBudget: (n) => scheduler.setStartBudget(n),
      }).start();
      guard = g;
      if (!g.running) log.warn('open descriptors are not readable (/proc/self/fd, Linux >= 6.2): the built-in judge keeps only its static share', { maxInFlight });
      undo.push(() => g.stop());
    }
    poke = (region) => scheduler.poke(region);
    demandOf = (region) => scheduler.demand(region);
    // failed settlements tried again while we run; stopped (one last try) before the database closes
    const settlements = new SettlementRetry({ log });
    undo.push(() => settlements.stop());
    // /metrics on the admin listener: gauges read these at scrape time; `checks` is made just below (read only once serving)
    const metrics = new ServiceMetrics({
      regions: ACCEPTED_REGIONS,
      scheduler,
      maxInFlight,
      workers: pool,
      runningJobs: () => checks.runningJobs,
      hub,
      lease,
      ...(queueDepth !== null ? { queue: queueDepth } : {}),
    });
    const checks = new CheckService({
      ledger: databaseLedger(db, { node: lease }),
      retrySettlement: (label, attempt) => settlements.add(label, attempt),
      execution: share === null ? localExecution(scheduler, pool) : nudgingExecution(localExecution(scheduler, pool), share),
      geo: geo as Geo,
      settings,
      openWriter: (resultId) => results.create(resultId),
      newResultId,
      signLink,
      hub,
      limits: { maxJobs: config.maxJobsPerAccount, maxProxiesInFlight: config.maxProxiesInFlightPerAccount },
      ...(liveAgents !== null ? { regionAvailable: (region: string) => liveAgents.capacity(region) > 0 } : {}),
      log,
      now: () => new Date(),
      counters: metrics,
    });

    // Jobs as resources (GET / DELETE /checks/{jobId}); a cluster's node answers for its runs on pc.control.<node>
    // and asks the others there (src/cluster/job-control.ts)
    if (natsConn !== null) {
      const control = serveJobControl(natsConn, nodeId, checks, log);
      undo.push(() => control.unsubscribe());
    }
    const jobs = new CheckJobs({
      findScan: (accountId, jobId) => findJobScan(db, accountId, jobId),
      local: checks,
      remote: natsConn === null ? null : jobControlClient(natsConn, log),
      nodeId,
      signLink,
      retentionMs,
    });

    const keys = new KeyCache<Awaited<ReturnType<typeof findAccountByApiKey>>>();
    const startedAt = Date.now();
    const app = createApp(
      {
        config,
        log,
        version: VERSION,
        startedAt,
        now: () => new Date(),
        database,
        accounts: {
          findByApiKey: (key) => keys.get(key, (k) => findAccountByApiKey(db, k)),
          overview: (accountId, now) =>
            getAccountOverview(db, accountId, now, (ref, createdAt) =>
              now.getTime() - createdAt.getTime() > retentionMs ? null : signLink(ref),
            ),
        },
        checks,
        jobs,
        results: { secret, store: results },
        progress: hub,
        judgeKey: ownJudgeKey,
        ...(liveAgents !== null
          ? {
              liveRegions: {
                region: (code: string) => ({ agents: liveAgents.agentCount(code), capacity: liveAgents.capacity(code) }),
                agents: () => {
                  const now = Date.now();
                  return liveAgents.list().map((a) => ({
                    region: a.region,
                    agent: a.agent,
                    slots: a.slots,
                    inFlight: a.inFlight,
                    exitIps: a.exitIps,
                    version: a.version,
                    lastSeenMs: Math.max(0, now - a.seenAt),
                  }));
                },
              },
            }
          : {}),
      },
    );
    const server = app.listen({
      port: config.port,
      hostname: config.host,
      // Our own reader enforces MAX_BODY_BYTES with the JSON 413 (Content-Length
      // first, then counted bytes); Bun's own limit only backs it up.
      maxRequestBodySize: Math.max(config.maxBodyBytes * 4, 1024 * 1024 * 1024),
      // idle and half-open connections go after HTTP_IDLE_TIMEOUT_S; a running check lifts it for its own request
      idleTimeout: config.httpIdleTimeoutS,
    });
    const port = server.server!.port!;
    undo.push(async () => {
      await server.stop(true);
    });
    // The admin API on its own listener (loopback by default), never on the public one.
    const adminServer = createAdminApp({ database, adminToken: config.adminToken!, log, onChange: () => keys.clear(), metrics }).listen({
      port: config.adminPort,
      hostname: config.adminHost,
    });
    undo.push(async () => {
      await adminServer.stop(true);
    });
    const adminUrl = `http://${reachableHost(config.adminHost)}:${adminServer.server!.port!}`;
    config = withBoundPort(config, port);
    if (config.judgeUrl === undefined) judge = parseJudgeUrl(`${config.baseUrl}/judge`);

    // A cluster's API node sends no probe: its agents calibrate against their own judges.
    const calibration: CalibrationHandle | null = cluster ? null : startCalibration({
      judge,
      extraIps: config.checkerIps,
      intervalMs: config.calibrationIntervalMs,
      onUpdate: (r) => {
        calibrated = r;
        log.debug('calibrated', { ips: r.ips, baselineHeaders: r.baselineHeaders });
      },
      ...(tlsCa !== undefined ? { tlsCa } : {}),
      ...(judgeKey !== undefined ? { judgeKey } : {}),
      onError: (err) => log.warn('judge calibration failed; using CHECKER_IPS only', { judge: judge.url, err }),
    });
    undo.push(() => calibration?.stop());
    const tlsCheck = tlsJudge === undefined ? null : await checkTlsJudge(tlsJudge); // rejects on another certificate: a start error
    if (tlsCheck !== null && !tlsCheck.ok) log.warn('the TLS judge did not answer directly; https checks may all be false (JUDGE_TLS_URL, JUDGE_TLS_FINGERPRINT; JUDGE_TLS=false turns them off)', { judgeTls: tlsJudge?.url, reason: tlsCheck.reason });
    await calibration?.ready;

    const sweep: RetentionSweep = startRetentionSweep({
      store: results,
      maxAgeMs: retentionMs,
      maxBytes: config.resultMaxBytes,
      log,
    });
    undo.push(() => sweep.stop());

    lock?.update({ adminUrl });

    const startupMs = Math.round(performance.now() - t0);
    log.info('ready', {
      url: config.baseUrl,
      node: nodeId,
      port,
      adminUrl,
      driver: database.driver,
      database: database.origin,
      judge: judge.url,
      ...(tlsJudge !== undefined ? { judgeTls: tlsJudge.url, judgeTlsFingerprint: tlsJudge.fingerprint } : {}),
      checkerIps: calibrated.ips,
      threads: opts.threads ?? config.probeThreads,
      slotsPerEndpoint: config.slotsPerEndpoint,
      maxInFlight,
      startupMs,
    });

    let stopping: Promise<void> | null = null;
    const stop = () => {
      if (stopping !== null) return stopping;
      stopping = (async () => {
        try {
          log.info('stopping', { runningJobs: checks.runningJobs, graceMs: config.shutdownGraceMs });
          await checks.stop(config.shutdownGraceMs);
        } catch (err) {
          log.error('stopping jobs failed', { err });
        } finally {
          await unwind();
          log.info('stopped');
        }
      })();
      return stopping;
    };
    return { url: config.baseUrl, port, adminUrl, config, database, nodeId, checks, bootstrap, startupMs, stop };
  } catch (err) {
    await unwind();
    // a start that failed before awaiting the engine must still close its threads (close() is idempotent)
    await engine?.then(([, pool]) => pool?.close()).catch(() => {});
    throw err;
  }
}
