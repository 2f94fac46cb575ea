/**
 * The job actor's public vocabulary (src/jobs/actor.ts): its states and their
 * progress phases, its error, what it returns, and what it needs (its ports).
 */
import type { CheckUserInfo } from '../accounts/plan';
import type { Logger } from '../log';
import type { CheckSummary } from '../results/summary';
import type { ResultWriter } from '../results/writer';
import { PROGRESS_PHASES, type ProgressPhase, type ProgressState } from './progress';
import type { RegionScheduler } from './scheduler';
import type { GeoPort, LedgerPort, PoolPort, SettingsFactory } from './ports';

export const JOB_STATES = Object.freeze({
  VALIDATING: 'validating',
  RESERVING: 'reserving',
  PROBING: 'probing',
  VALIDATING_URLS: 'validating_urls',
  WRITING: 'writing',
  COMPLETED: 'completed',
  FAILED: 'failed',
} as const);
export type JobState = (typeof JOB_STATES)[keyof typeof JOB_STATES];

/** The progress phase a job in each state reports. */
export const PHASE_OF: Readonly<Record<JobState, ProgressPhase>> = {
  validating: PROGRESS_PHASES.VALIDATING,
  reserving: PROGRESS_PHASES.CHECKING_BALANCE,
  probing: PROGRESS_PHASES.PROBING,
  validating_urls: PROGRESS_PHASES.CUSTOM_URLS,
  writing: PROGRESS_PHASES.WRITING,
  completed: PROGRESS_PHASES.COMPLETED,
  failed: PROGRESS_PHASES.FAILED,
};

export class JobError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'JobError';
    this.code = code;
  }
}

/** The metadata block shared by the check response and the result file. */
export interface JobMetadata {
  region_used: string;
  region_name: string;
  proxy_type: string;
  timeout_used: string;
  total_checked: number;
  total_invalid: number;
  total_duplicates: number;
  processing_time: string;
  job_id: string;
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
  pool: PoolPort;
  geo: GeoPort;
  scheduler: RegionScheduler;
  settings: SettingsFactory;
  /** Opens the streaming writer of a new result file. */
  openWriter: (resultId: string) => Promise<ResultWriter>;
  newResultId: () => string;
  /** Signed link of a result file (12 h). */
  signLink: (resultId: string) => string;
  /** Receives every progress state; the hub throttles and fans out. */
  publish: (state: ProgressState, final: { resultUrl: string | null } | null) => void;
  log: Logger;
  now: () => Date;
}
