/**
 * The job actor's public vocabulary (src/jobs/actor.ts): what it returns and
 * what it needs (its ports). Its states are in job-states.ts, its errors in
 * job-errors.ts.
 */
import type { CheckUserInfo } from '../accounts/plan';
import type { Logger } from '../log';
import type { InvalidLine } from '../proxy/invalid-lines';
import type { CheckSummary } from '../results/summary';
import type { ResultWriter } from '../results/writer';
import type { JobWarning } from './judge-warnings';
import type { ProgressState } from './progress';
import type { CheckRequest } from './request';
import type { GeoPort, JobCounters, LedgerPort, ProbeExecution, SettingsFactory } from './ports';

export { JOB_STATES, PHASE_OF, type JobState } from './job-states';

/** The metadata block shared by the check response and the result file. */
export interface JobMetadata {
  region_used: string;
  region_name: string;
  proxy_type: string;
  timeout_used: string;
  total_checked: number;
  total_invalid: number;
  total_duplicates: number;
  /** Proxies refused before any connection (refused-targets.ts): not checked, not charged. */
  total_blocked: number;
  /** The first INVALID_LINES_SHOWN invalid lines (the result file's `invalid_lines` has all). */
  invalid_lines: InvalidLine[];
  processing_time: string;
  job_id: string;
  /** What the check should know about its own results (judge-warnings.ts); present only when there is one. */
  warnings?: JobWarning[];
  /** Probes tried again because they timed out while the checker itself was late (issue 30); present only when there was one. */
  retried_checker_lag?: number;
}

export interface CheckResponse {
  summary: CheckSummary;
  metadata: { user: CheckUserInfo } & JobMetadata;
  result_url: string | null;
  /** Addition (issue 6): the same signed link for each download form. */
  result_urls: { json: string; csv: string; txt: string } | null;
}

export interface JobDeps {
  ledger: LedgerPort;
  /** Where probes run (local-execution.ts in this process). */
  execution: ProbeExecution;
  geo: GeoPort;
  settings: SettingsFactory;
  /** Opens the streaming writer of a new result file. */
  openWriter: (resultId: string) => Promise<ResultWriter>;
  newResultId: () => string;
  /** Signed link of a result file (12 h). */
  signLink: (resultId: string) => string;
  /** Receives every progress state; the hub throttles and fans out. */
  publish: (state: ProgressState, final: { resultUrl: string | null } | null) => void;
  log: Logger;
  /** A settlement that failed is handed here to be tried again (settlements.ts). */
  retrySettlement: (label: string, attempt: () => Promise<void>) => void;
  /** The one clock: every time the actor reads or records comes from here. */
  now: () => Date;
  /** Counters for `/metrics` (per batch and per job; absent: nothing counted). */
  counters?: JobCounters;
  /** The check's warnings, asked once as it starts (judge-warnings.ts); absent: none. */
  warnings?: (request: CheckRequest) => JobWarning[];
}
