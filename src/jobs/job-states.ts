/**
 * The job actor's states and the transitions between them (pure). The actor
 * (src/jobs/actor.ts) moves only through `transition`, which asserts the
 * state it leaves (graphile-worker's setModeX is the model): a transition
 * that is not in the table below is a bug, and it throws instead of
 * silently corrupting a job.
 *
 *   validating ──> reserving ──> probing ──> validating_urls ──> writing ──> completed
 *        │             │            │  └───────────────────────────>┤
 *        └─────────────┴────────────┴───────────────┴───────────────┴──────> failed
 *
 * completed and failed are final: nothing leaves them.
 */
import { ServiceError } from '../errors';
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
export const JOB_TRANSITIONS: Readonly<Record<JobState, readonly JobState[]>> = Object.freeze({
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
  return JOB_TRANSITIONS[state].length === 0;
}

/**
 * `to`, when a job in `from` may move there and `from` is one of `expected`
 * (the states the caller believes it leaves); otherwise throws
 * `illegal_transition`.
 */
export function transition(from: JobState, expected: readonly JobState[], to: JobState): JobState {
  if (!expected.includes(from) || !JOB_TRANSITIONS[from].includes(to)) {
    throw new ServiceError('illegal_transition', `job state ${from} -> ${to} (expected to leave ${expected.join(' | ')})`);
  }
  return to;
}
