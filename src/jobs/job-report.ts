/**
 * What a job reports about itself (pure): the metadata block shared by the
 * check response and the result file, and the state it hands to progress.
 */
import { INVALID_LINES_SHOWN } from '../proxy/invalid-lines';
import { regionName } from '../regions';
import { formatProcessingTime, formatTimeout } from '../results/summary';
import type { JobMetadata } from './job-types';
import type { JobWarning } from './judge-warnings';
import type { ProgressPhase, ProgressState } from './progress';
import type { CheckRequest } from './request';

/** `blocked`: proxies refused before any connection (refused-targets.ts); `warnings`: the check's (judge-warnings.ts). */
export function jobMetadata(jobId: string, req: CheckRequest, checked: number, elapsedMs: number, blocked = 0, warnings: readonly JobWarning[] = [], retriedCheckerLag = 0): JobMetadata {
  return {
    region_used: req.region,
    region_name: regionName(req.region) ?? req.region,
    proxy_type: req.type,
    timeout_used: formatTimeout(req.timeoutMs),
    total_checked: checked,
    total_invalid: req.totalInvalid,
    total_duplicates: req.totalDuplicates,
    total_blocked: blocked,
    invalid_lines: req.invalidLines.first(INVALID_LINES_SHOWN),
    processing_time: formatProcessingTime(elapsedMs),
    job_id: jobId,
    ...(warnings.length > 0 ? { warnings: [...warnings] } : {}),
    ...(retriedCheckerLag > 0 ? { retried_checker_lag: retriedCheckerLag } : {}),
  };
}

/** The progress state of a job in `phase` (the actor adds `failedIn` when it failed). */
export function progressStateOf(
  jobId: string,
  req: CheckRequest,
  phase: ProgressPhase,
  at: { checked: number; working: number; urls: { done: number; total: number; startedAt: number } | null; probeStartedAt: number | null; now: number },
): ProgressState {
  return {
    jobId,
    phase,
    total: req.proxies.length,
    checked: at.checked,
    working: at.working,
    hasCustomUrls: req.customUrls.length > 0,
    customChecked: at.urls?.done ?? 0,
    customTotal: at.urls?.total ?? 0,
    probeStartedAt: at.probeStartedAt,
    customStartedAt: at.urls?.startedAt ?? null,
    now: at.now,
  };
}
