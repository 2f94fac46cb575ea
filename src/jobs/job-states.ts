/**
 * The job actor's states and the transitions between them (pure). The actor
 * (src/jobs/actor.ts) moves only through its StateMachine
 * (src/state-machine.ts), which asserts the state it leaves
 * (graphile-worker's setModeX is the model): a transition that is not in the
 * table below is a bug, and it throws `illegal_transition` instead of
 * silently corrupting a job. completed and failed are final.
 *
 *   validating ──> reserving ──> probing ──> validating_urls ──> writing ──> completed
 *        │             │            │  └───────────────────────────>┤
 *        └─────────────┴────────────┴───────────────┴───────────────┴──────> failed
 *
 * - validating: the HTTP layer has already validated the request (pure
 *   validators); the actor only announces it on the progress channel.
 * - reserving: one atomic reservation of the job's units (a unit is a probe
 *   task: unique valid proxies x samples) and the scan row
 *   (LedgerPort.reserve). Short quota -> failed with InsufficientQuotaError,
 *   nothing charged, no history row.
 * - probing: the job opens itself on the probe execution (ProbeExecution:
 *   local-execution.ts in this process); every grant of n slots becomes one
 *   shard of the next n probe tasks (shards.ts). Results stream back in
 *   batches and are folded at once: geo lookup, result record, summary fold,
 *   spill to the result writer, progress. Nothing keeps a second list of all
 *   results: the actor keeps the parsed proxies, a byte per task (seen) and
 *   the indices of working proxies. A probe the checker itself could not
 *   run (`checker_overloaded`: this process out of file descriptors) is tried
 *   again later (retries.ts) and, if it never runs, reported but not charged.
 * - validating_urls (only with customUrls and at least one working proxy):
 *   (working proxy x URL) pairs through the same execution.
 * - writing: the result file is finished (summary, metadata, proxies, custom
 *   URL validation), the scan closed, unchecked units refunded.
 * - completed: the check response is returned and the final progress message
 *   (with the signed result link for authenticated subscribers) is published.
 * - failed: any error, a failed shard or cancel lands here. The refund rule
 *   (`#refundOnFailure`, one place): a job that fails delivers no results, so
 *   every reserved unit comes back, whatever failed (shutdown, a shard, a
 *   crash: the orphan sweep refunds everything too); only a job the client
 *   cancelled (it closed the connection) pays for the probes already made.
 *   The scan is closed as failed (cancelled) with the error's stable code,
 *   the partial result file is removed, subscribers get the final `failed`
 *   message. `run()` rejects with the error: a domain error (job-errors.ts)
 *   that the HTTP layer maps to a status, never an HTTP error itself.
 */
import { isFinalState, transitionTable, type TransitionTable } from '../state-machine';
import { PROGRESS_PHASES, type ProgressPhase } from './progress';

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

/** For each state, the states it may move to. */
export const JOB_TRANSITIONS: TransitionTable<JobState> = transitionTable<JobState>({
  validating: ['reserving', 'failed'],
  reserving: ['probing', 'failed'],
  probing: ['validating_urls', 'writing', 'failed'],
  validating_urls: ['writing', 'failed'],
  writing: ['completed', 'failed'],
  completed: [],
  failed: [],
});

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

export function isFinal(state: JobState): boolean {
  return isFinalState(JOB_TRANSITIONS, state);
}
