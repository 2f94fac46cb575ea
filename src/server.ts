/**
 * The composition root of the service: builds the running service from a
 * Config, step by step (src/compose/: each step returns what the next
 * needs and pushes its undo). Used by src/main.ts (the process) and by
 * end-to-end tests (in-process, port 0).
 *
 * The start and stop order, and what differs in a cluster's API node, are in
 * docs/DESIGN.md "Start and stop" (one place).
 *
 * stop() is safe to call twice (one shared promise), never rejects, and
 * releases everything even when a step fails.
 */
import type { Database } from '../db/client';
import type { BootstrapResult } from './accounts/bootstrap';
import { listenScope, withBoundPort, type Config, type StorageConfig } from './config';
import { chooseBackend } from './compose/choose-backend';
import { startChecks } from './compose/checks';
import { startListeners } from './compose/listeners';
import { startPoolOwner } from './compose/pool-owner';
import { startPools } from './compose/pool-sources';
import { judgeBase, judgeKeys, logJudgePlace, placeJudge, ProbeJudge, serveJudgeTls } from './compose/own-judge';
import { linkSigner, PublicUrls } from './compose/public-urls';
import { serviceSecrets } from './compose/service-secrets';
import { openStorage, sweepOrphansEvery } from './compose/storage';
import { startWebhooks, type WebhookSchedule } from './compose/webhooks';
import { openGeo } from './geo/geo';
import { judgeWarnings } from './jobs/judge-warnings';
import type { CheckRequest } from './jobs/request';
import type { CheckService } from './jobs/service';
import type { PoolOwner } from './jobs/pool-owner';
import { alsoTo, type PoolEventsPort } from './pools/ports';
import { localAddresses, ownAddresses } from './judge/local-addresses';
import type { Logger } from './log';
import { ServiceMetrics } from './metrics/service-metrics';
import type { ResultStore } from './results/store';
import { startRetentionSweep } from './results/retention';
import { stopSteps, type StopStep } from './stop-steps';

export interface RunningService {
  url: string;
  port: number;
  /** The admin API's listener (ADMIN_HOST/ADMIN_PORT), e.g. http://127.0.0.1:41234 */
  adminUrl: string;
  /** The gateway's port (GATEWAY_PORT; 0 there: the one bound), null when it is off. */
  gatewayPort: number | null;
  /** The config as running: BASE_URL / CONTENT_URL with the bound port. */
  config: Config;
  database: Database;
  /** This API node's id (NODE_ID or generated per start). */
  nodeId: string;
  checks: CheckService;
  /** Pool events (the pools' owners publish here; /ws?pool= and the gateway follow it). */
  poolEvents: PoolEventsPort;
  /** The pools' owner (compose/pool-owner.ts): the PoolRecheckPort the gateway takes. */
  poolOwner: PoolOwner;
  /** The demo account created on this start (first start only). */
  bootstrap: BootstrapResult | null;
  /** Milliseconds from startService() to ready. */
  startupMs: number;
  stop(): Promise<void>;
}

export interface StartOptions {
  log: Logger;
  /** Override the probe workers' threads (tests use 1). */
  threads?: number;
  /** An already open, migrated database to use instead of opening one from the config (tests); the caller closes it. */
  database?: Database;
  /** Also told every pool event the backend's hub is told (tests record them). */
  poolEvents?: PoolEventsPort;
  /** The webhooks' retry schedule and poll interval (tests shorten them). */
  webhookSchedule?: WebhookSchedule;
}

export async function startService(rawConfig: Config, opts: StartOptions): Promise<RunningService> {
  const t0 = performance.now();
  const { log } = opts;
  const { undo, unwind } = stopSteps(log, 'stop step failed');
  try {
    // chosen first: the embedded backend's threads load while the database opens
    const openBackend = chooseBackend(rawConfig, { threads: opts.threads, undo });
    const { config, secret } = await serviceSecrets(rawConfig);
    const geo = openGeo();
    geo.catch(() => {}); // awaited below; a start that fails before must not leave it unhandled
    const storage = await openStorage(config, { log, undo, database: opts.database });
    const metrics = new ServiceMetrics();
    const local = localAddresses();
    const place = placeJudge(config, { url: config.http.baseUrl, urlSet: config.http.baseUrlSet }, local);
    logJudgePlace(place, log);
    const keys = judgeKeys(config.judge);
    const ownTls = await serveJudgeTls(config, { key: keys.sign, port: config.judge.tlsPort, log, undo });
    const judge = new ProbeJudge({ config, keys, ownTls, log });
    const backend = await openBackend({ config, storage, metrics, log, undo });
    // check.completed is written by the orphan sweep and the settlements, made before the webhooks' loop (step 8b),
    // which does not poll embedded: they poke it through this once it exists (its first look covers the time before)
    let pokeWebhooks = (): void => {};
    const webhookWritten = (): void => pokeWebhooks();
    sweepOrphansEvery(config.storage, storage, {
      log,
      undo,
      onRefunded: (r) => {
        backend.orphanRefunded(r);
        webhookWritten();
      },
    });
    const urls = new PublicUrls(config.http);
    const signLink = linkSigner(urls, secret);
    const own = ownAddresses(local);
    const warnings = (req: CheckRequest) => judgeWarnings({ url: judge.url, reach: place.reach }, req.proxies.map((p) => p.host), own);
    const geoDb = await geo;
    const { checks, jobs, base } = startChecks(config, { storage, backend, judge, geo: geoDb, metrics, signLink, warnings, log, undo, onWebhookWritten: webhookWritten });
    const { pools } = startPools(config, { storage, log, undo });
    const webhooks = startWebhooks(config, { storage, secret, metrics, log, undo, ...(opts.webhookSchedule !== undefined ? { schedule: opts.webhookSchedule } : {}) });
    pokeWebhooks = () => webhooks.loop.poke();
    const events = alsoTo(alsoTo(backend.poolEvents, webhooks.poolEvents), opts.poolEvents);
    const poolOwner = await startPoolOwner(config, { storage, backend, base, pools, judge, geo: geoDb, events, outbox: webhooks.outbox, metrics, log, undo });
    const listeners = startListeners(config, { storage, backend, checks, pools, owner: poolOwner, jobs, webhooks: webhooks.service, metrics, urls, results: { secret, signLink }, judgeKey: keys.sign, judgeReach: place.reach, log, undo });
    await judge.start(judgeBase(place, urls.base), { calibrate: backend.calibrates, undo });
    sweepResults(config.storage, backend.results, log, undo);
    storage.lock?.update({ adminUrl: listeners.adminUrl });
    const running = { ...listeners, url: urls.base, config: { ...config, http: withBoundPort(config.http, listeners.port) }, nodeId: storage.nodeId, checks, poolEvents: backend.poolEvents, poolOwner };
    const startupMs = Math.round(performance.now() - t0);
    log.info('ready', {
      url: running.url,
      node: running.nodeId,
      port: running.port,
      // where the listeners are bound (HOST: all interfaces by default), the judge's TLS port included
      listens: listenScope(config.http.host),
      adminUrl: running.adminUrl,
      ...(running.gatewayPort !== null ? { gatewayPort: running.gatewayPort } : {}),
      driver: storage.database.driver,
      database: storage.database.origin,
      judge: judge.url,
      judgeFrom: place.from,
      ...(place.reach !== null ? { judgeReachable: place.reach } : {}),
      ...(judge.tls !== undefined ? { judgeTls: judge.tls.url, judgeTlsFingerprint: judge.tls.fingerprint } : {}),
      checkerIps: judge.exitIps,
      threads: backend.workers.threads,
      slotsPerEndpoint: config.probes.slotsPerEndpoint,
      maxInFlight: backend.maxInFlight,
      startupMs,
    });
    return { ...running, database: storage.database, bootstrap: storage.bootstrap, startupMs, stop: stopper(running, unwind, log) };
  } catch (err) {
    await unwind();
    throw err;
  }
}

/** Result files past RESULT_RETENTION_DAYS or over RESULT_MAX_BYTES, swept while the service runs. */
function sweepResults(config: StorageConfig, store: ResultStore, log: Logger, undo: StopStep[]): void {
  const sweep = startRetentionSweep({ store, maxAgeMs: config.resultRetentionDays * 86_400_000, maxBytes: config.resultMaxBytes, log });
  undo.push(() => sweep.stop());
}

/** checks answer 503, running jobs get SHUTDOWN_GRACE_MS, then the start is undone in reverse. */
function stopper(s: { checks: CheckService; config: Config }, unwind: () => Promise<void>, log: Logger): () => Promise<void> {
  let stopping: Promise<void> | null = null;
  return () =>
    (stopping ??= (async () => {
      try {
        const graceMs = s.config.process.shutdownGraceMs;
        log.info('stopping', { runningJobs: s.checks.runningJobs, graceMs });
        await s.checks.stop(graceMs);
      } catch (err) {
        log.error('stopping jobs failed', { err });
      } finally {
        await unwind();
        log.info('stopped');
      }
    })());
}

