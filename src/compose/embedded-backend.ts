/**
 * The embedded probe backend: one process probes every region with its own
 * worker threads (src/probe/workers/probe-workers.ts), under a process-wide cap from the
 * open-file limit (MAX_IN_FLIGHT, src/limits.ts) that, with the built-in
 * judge, the descriptor guard follows (src/fd-guard.ts), and below that an
 * adaptive limit from the checker's own lag (ADAPTIVE_LIMIT, src/jobs/lag-limiter.ts); result files in
 * DATA_DIR; progress and pool events from this process's hubs.
 */
import type { Config } from '../config';
import { ProgressHub } from '../jobs/progress-hub';
import { PoolEventsHub } from '../pools/events-hub';
import { maxInFlightFor, openFilesLimit } from '../limits';
import { setSocketDriver } from '../probe/net/exchange';
import { ProbeWorkers } from '../probe/workers/probe-workers';
import { regionCapacity } from '../regions';
import { openDirResultStore } from '../results/dir-store';
import type { StopStep } from '../stop-steps';
import { LagLimiter } from '../jobs/lag-limiter';
import { isOwnJudge, judgeGuard, startGuard } from './own-judge';
import type { BackendContext, OpenBackend, ProbeBackend } from './probe-backend';

/** Starts loading the worker threads now (they load while the database opens); the opener finishes the rest. */
export function embeddedBackend(config: Config, o: { threads?: number | undefined; undo: StopStep[] }): OpenBackend {
  setSocketDriver(config.probes.socketDriver); // this thread's exchanges (calibration, the TLS judge's start check)
  const threads = ProbeWorkers.start({ threads: o.threads ?? config.probes.threads, socketDriver: config.probes.socketDriver });
  // closed whether the start gets as far as using them or not (close() is idempotent)
  o.undo.push(() => threads.then((workers) => workers.close(), () => {}));
  return async (ctx) => openEmbedded(await threads, ctx);
}

async function openEmbedded(workers: ProbeWorkers, { config, log, undo }: BackendContext): Promise<ProbeBackend> {
  undo.push(() => workers.close());
  // No fsync: a written file survives a process crash (page cache); only an OS crash or power loss
  // right after a job could lose it (then its link answers 404). The fsync cost ~2.5 ms per job.
  const results = await openDirResultStore({ dataDir: config.storage.dataDir, fsync: false });
  undo.push(() => results.close());
  const hub = new ProgressHub({ maxPerAccount: config.limits.wsMaxPerAccount, maxPerAddress: config.limits.wsMaxPerAddress });
  undo.push(() => hub.closeAll());
  const poolEvents = new PoolEventsHub({ maxPerAccount: config.limits.wsMaxPerAccount });
  undo.push(() => poolEvents.closeAll());
  // The probes' cap from the open-file limit; with the built-in judge a guard lowers it while the
  // descriptors actually open leave too few free for the judge's accepts.
  const openFiles = openFilesLimit();
  const maxInFlight = config.probes.maxInFlight ?? maxInFlightFor(openFiles, isOwnJudge(config.judge) ? 'guarded' : 'elsewhere');
  const guard = judgeGuard(config.judge, openFiles, maxInFlight);
  const capacity = (code: string) => regionCapacity(code, config.probes.slotsPerEndpoint);
  const limiter = config.probes.adaptiveLimit ? new LagLimiter({ max: maxInFlight }) : null;
  return {
    workers,
    capacity,
    // the guard samples every 25 ms only while probes are in flight: the scheduler's first grant after none wakes it
    schedulerOptions: {
      globalCapacity: maxInFlight,
      onBusy: () => {
        guard?.wake();
        limiter?.wake();
      },
    },
    maxInFlight,
    execution: (local) => local,
    follow: (scheduler) => {
      startGuard(
        guard,
        { probesInFlight: () => scheduler.totalInFlight, setCapacity: (n) => scheduler.setGlobalCapacity(n), setStartBudget: (n) => scheduler.setStartBudget(n) },
        { log, undo, cap: maxInFlight },
      );
      if (limiter !== null) {
        limiter.start(scheduler, workers);
        undo.push(() => limiter.stop());
      }
    },
    hub,
    poolEvents,
    results,
    // this process is every region's one agent
    regions: { region: (code) => ({ agents: 1, capacity: capacity(code) }) },
    orphanRefunded: () => {},
    calibrates: true,
    jobControl: () => null, // every run is this process's
    poolReads: () => null, // every pool is this process's
  };
}
