/**
 * The job actor's public vocabulary (src/jobs/actor.ts): what it returns and
 * what it needs (its ports). Its states are in job-states.ts, its errors in
 * job-errors.ts.
 */
import type { CheckMetadataBody, CheckResponseBody } from '../contract/checks';
import type { Logger } from '../log';
import type { ResultWriter } from '../results/writer';
import type { JobWarning } from './judge-warnings';
import type { ProgressState } from './progress';
import type { CheckRequest } from './request';
import type { GeoPort, JobCounters, LedgerPort, ProbeExecution, SettingsFactory } from './ports';

export { JOB_STATES, PHASE_OF, type JobState } from './job-states';

/** The metadata block shared by the check response and the result file (the contract's CheckMetadata but `user`). */
export type JobMetadata = Omit<CheckMetadataBody, 'user'>;

/** The check response: the contract's (src/contract/checks.ts CheckResponse). */
export type CheckResponse = CheckResponseBody;

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
