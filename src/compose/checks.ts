/**
 * The job layer of a service, built over its storage, probe backend and
 * judge: the region scheduler (the backend's capacities and options), the
 * settlement retries, the CheckService (the ChecksPort the HTTP layer
 * calls), the check jobs as resources (CheckJobs: GET / DELETE
 * /checks/{jobId}), and the gauges of /metrics over all of them.
 */
import type { Geo } from '../geo/geo';
import type { Config } from '../config';
import { databaseLedger } from '../jobs/ledger';
import { localExecution } from '../jobs/local-execution';
import { RegionScheduler } from '../jobs/scheduler';
import { CheckService } from '../jobs/service';
import { CheckJobs } from '../jobs/check-jobs';
import { findJobScan } from '../accounts/job-scans';
import { SettlementRetry } from '../jobs/settlements';
import type { JobWarning } from '../jobs/judge-warnings';
import type { LedgerPort, ProbeExecution } from '../jobs/ports';
import type { CheckRequest } from '../jobs/request';
import type { Logger } from '../log';
import type { ServiceMetrics } from '../metrics/service-metrics';
import { ACCEPTED_REGIONS } from '../regions';
import { newResultId } from '../results/links';
import type { StopStep } from '../stop-steps';
import type { ProbeJudge } from './own-judge';
import type { ProbeBackend } from './probe-backend';
import type { Storage } from './storage';

export interface ChecksParts {
  storage: Storage;
  backend: ProbeBackend;
  judge: ProbeJudge;
  geo: Geo;
  metrics: ServiceMetrics;
  /** A result link for a finished job's result id. */
  signLink: (resultId: string) => string;
  /** A check's warnings, asked as it starts (the judge's reach: src/jobs/judge-warnings.ts). */
  warnings: (request: CheckRequest) => JobWarning[];
  log: Logger;
  undo: StopStep[];
  /** An async check's settlement wrote check.completed (the webhooks' delivery loop looks now). */
  onWebhookWritten?: () => void;
}

/** What the checks are built on, for whatever else probes the same way (the pools' owner: pool-owner.ts). */
export interface ChecksBase {
  execution: ProbeExecution;
  ledger: LedgerPort;
  retrySettlement: (label: string, attempt: () => Promise<void>) => void;
}

export function startChecks(config: Config, p: ChecksParts): { checks: CheckService; jobs: CheckJobs; scheduler: RegionScheduler; base: ChecksBase } {
  const { storage, backend, log } = p;
  const scheduler = new RegionScheduler(backend.capacity, {
    ...backend.schedulerOptions,
    jobShare: config.probes.maxJobSharePercent / 100,
    // the job itself hears of it too (local-execution.ts) and fails with refunds
    onDispatchError: (err, jobId) => log.error('scheduler dispatch failed; the job fails', { jobId, err }),
  });
  backend.follow(scheduler);
  // failed settlements tried again while we run; stopped (one last try) before the database closes
  const settlements = new SettlementRetry({ log });
  p.undo.push(() => settlements.stop());
  const base: ChecksBase = {
    execution: backend.execution(localExecution(scheduler, backend.workers)),
    ledger: databaseLedger(storage.database.db, { node: storage.lease, ...(p.onWebhookWritten !== undefined ? { onWebhookWritten: p.onWebhookWritten } : {}) }),
    retrySettlement: (label, attempt) => settlements.add(label, attempt),
  };
  const checks = new CheckService({
    ...base,
    geo: p.geo,
    settings: (type, timeoutMs) => p.judge.settings(type, timeoutMs),
    openWriter: (resultId) => backend.results.create(resultId),
    newResultId,
    signLink: p.signLink,
    hub: backend.hub,
    limits: { maxJobs: config.limits.maxJobsPerAccount, maxProxiesInFlight: config.limits.maxProxiesInFlightPerAccount },
    ...(backend.regionAvailable !== undefined ? { regionAvailable: backend.regionAvailable } : {}),
    log,
    now: () => new Date(),
    counters: p.metrics,
    warnings: p.warnings,
  });
  p.metrics.watch({
    regions: ACCEPTED_REGIONS,
    scheduler,
    maxInFlight: backend.maxInFlight,
    workers: backend.workers,
    runningJobs: () => checks.runningJobs,
    hub: backend.hub,
    poolEvents: backend.poolEvents,
    lease: storage.lease,
    ...(backend.queue !== undefined ? { queue: backend.queue } : {}),
  });
  // jobs as resources (GET / DELETE /checks/{jobId}): the scan rows, this node's runs, a cluster's other nodes
  const db = storage.database.db;
  const jobs = new CheckJobs({
    findScan: (accountId, jobId) => findJobScan(db, accountId, jobId),
    local: checks,
    remote: backend.jobControl(checks),
    nodeId: storage.nodeId,
    signLink: p.signLink,
    retentionMs: config.storage.resultRetentionDays * 86_400_000,
  });
  return { checks, jobs, scheduler, base };
}
