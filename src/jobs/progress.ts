/**
 * WebSocket progress: the message builder (pure) and a per-job throttle.
 *
 * `progressMessage(state)` turns a job's progress state into the exact
 * message of DECISIONS "Progress (WebSocket)":
 *   {jobId, status, currentStep, stepsCompleted, progress, eta, details:
 *    {message, batches_done, working_so_far, checked, total}, timestamp}
 * Steps, in order: `validating`, `checking_balance`,
 * `proxy_check_batch_<i>_of_<n>` (n progress batches, see progressBatchSize),
 * `custom_url_validation` (only when the job has custom URLs),
 * `writing_results`. `stepsCompleted` counts finished steps; a completed job
 * has finished all of them. `progress` is 0..100 (two decimals): validating 0,
 * checking_balance 2, probing 5 -> 95 (5 -> 85 with custom URLs, then custom
 * URLs 85 -> 95), writing 95, completed 100; a failed job keeps the value of
 * the step it failed in. `eta` is whole seconds left in the current counted
 * phase, extrapolated from its rate so far (null when unknown, 0 when
 * completed, null when failed). The final `completed` message may carry
 * `result_url`: the caller adds it per subscriber.
 *
 * `ProgressThrottle` passes at most one message per `intervalMs` (default
 * 100 ms, i.e. ~10/s) per job. Messages offered in between are coalesced: only
 * the latest is kept and sent when the interval has passed (one timer, armed
 * only while something is waiting). A final message (`completed`/`failed`) is
 * always sent at once, drops anything waiting, clears the timer and closes the
 * throttle; later offers are ignored. The clock and timer are injected.
 */
import { systemClock, type Clock } from '../clock';
import type { ProgressMessageBody } from '../contract/ws';

export const PROGRESS_PHASES = Object.freeze({
  VALIDATING: 'validating',
  CHECKING_BALANCE: 'checking_balance',
  PROBING: 'probing',
  CUSTOM_URLS: 'custom_url_validation',
  WRITING: 'writing_results',
  COMPLETED: 'completed',
  FAILED: 'failed',
} as const);
export type ProgressPhase = (typeof PROGRESS_PHASES)[keyof typeof PROGRESS_PHASES];
/** The phases a job can fail in. */
export type WorkPhase = Exclude<ProgressPhase, 'completed' | 'failed'>;

export type ProgressStatus = 'in_progress' | 'completed' | 'failed';

export interface ProgressState {
  jobId: string;
  phase: ProgressPhase;
  /** For phase `failed`: the phase the job was in when it failed (default `validating`). */
  failedIn?: WorkPhase;
  /** Unique valid proxies of the job (0 while still validating). */
  total: number;
  /** Probes finished so far. */
  checked: number;
  /** Working proxies so far. */
  working: number;
  /** Proxies per progress batch; default progressBatchSize(total). */
  batchSize?: number;
  hasCustomUrls: boolean;
  /** (proxy, URL) pairs finished / planned in the custom-URL phase. */
  customChecked?: number;
  customTotal?: number;
  /** Epoch ms the probing phase began (for the eta). */
  probeStartedAt?: number | null;
  /** Epoch ms the custom-URL phase began (for the eta). */
  customStartedAt?: number | null;
  /** Epoch ms of this message. */
  now: number;
  /** Overrides details.message (e.g. the failure reason for `failed`). */
  message?: string;
}

/** The message of /ws: the contract's (src/contract/ws.ts). */
export type ProgressMessage = ProgressMessageBody;

/** Proxies per progress batch: at most 50 batches, at least 50 proxies each. */
export function progressBatchSize(total: number): number {
  return Math.max(50, Math.ceil(total / 50));
}

const round2 = (x: number) => Math.round(x * 100) / 100;

function etaSeconds(done: number, total: number, startedAt: number | null | undefined, now: number): number | null {
  if (startedAt == null || done <= 0 || total <= 0) return null;
  if (done >= total) return 0;
  const elapsed = Math.max(0, now - startedAt);
  return Math.ceil(((total - done) * elapsed) / done / 1000);
}

/** The message for one state. Pure. */
export function progressMessage(state: ProgressState): ProgressMessage {
  const total = Math.max(0, state.total);
  const checked = Math.min(Math.max(0, state.checked), total);
  const working = Math.max(0, state.working);
  const size = Math.max(1, state.batchSize ?? progressBatchSize(total));
  const n = Math.max(1, Math.ceil(total / size));
  const batchesDone = checked >= total && total > 0 ? n : Math.min(n, Math.floor(checked / size));
  const probeEnd = state.hasCustomUrls ? 85 : 95;
  const customTotal = Math.max(0, state.customTotal ?? 0);
  const customChecked = Math.min(Math.max(0, state.customChecked ?? 0), customTotal);
  const allSteps = 3 + n + (state.hasCustomUrls ? 1 : 0);

  const status: ProgressStatus =
    state.phase === PROGRESS_PHASES.COMPLETED ? 'completed' : state.phase === PROGRESS_PHASES.FAILED ? 'failed' : 'in_progress';
  const work: WorkPhase | 'completed' =
    state.phase === PROGRESS_PHASES.FAILED
      ? (state.failedIn ?? PROGRESS_PHASES.VALIDATING)
      : state.phase;

  let currentStep: string;
  let stepsCompleted: number;
  let progress: number;
  let eta: number | null = null;
  let message: string;
  switch (work) {
    case PROGRESS_PHASES.VALIDATING:
      currentStep = 'validating';
      stepsCompleted = 0;
      progress = 0;
      message = total > 0 ? `Validating ${total} proxies` : 'Validating proxy list';
      break;
    case PROGRESS_PHASES.CHECKING_BALANCE:
      currentStep = 'checking_balance';
      stepsCompleted = 1;
      progress = 2;
      message = `Checking balance for ${total} proxies`;
      break;
    case PROGRESS_PHASES.PROBING: {
      const i = Math.min(batchesDone + 1, n);
      currentStep = `proxy_check_batch_${i}_of_${n}`;
      stepsCompleted = 2 + batchesDone;
      progress = 5 + (probeEnd - 5) * (total > 0 ? checked / total : 0);
      eta = etaSeconds(checked, total, state.probeStartedAt, state.now);
      message = `Checking proxies: ${checked}/${total} done, ${working} working (batch ${i} of ${n})`;
      break;
    }
    case PROGRESS_PHASES.CUSTOM_URLS:
      currentStep = 'custom_url_validation';
      stepsCompleted = 2 + n;
      progress = 85 + 10 * (customTotal > 0 ? customChecked / customTotal : 0);
      eta = etaSeconds(customChecked, customTotal, state.customStartedAt, state.now);
      message = `Validating custom URLs: ${customChecked}/${customTotal} checks through ${working} working proxies`;
      break;
    case PROGRESS_PHASES.WRITING:
      currentStep = 'writing_results';
      stepsCompleted = allSteps - 1;
      progress = 95;
      message = `Writing results: ${working} of ${total} proxies working`;
      break;
    default:
      currentStep = 'completed';
      stepsCompleted = allSteps;
      progress = 100;
      eta = 0;
      message = `Completed: ${working} of ${total} proxies working`;
  }
  if (status === 'failed') {
    eta = null;
    message = `Failed during ${currentStep}`;
  }
  if (state.message !== undefined) message = state.message;

  return {
    jobId: state.jobId,
    status,
    currentStep,
    stepsCompleted,
    progress: round2(Math.min(100, Math.max(0, progress))),
    eta,
    details: {
      message,
      batches_done: batchesDone,
      working_so_far: working,
      checked,
      total,
    },
    timestamp: new Date(state.now).toISOString(),
  };
}

export interface ThrottleOptions<T> {
  /** Receives the messages that pass. Should not throw (see onError). */
  emit: (msg: T) => void;
  /** Minimum ms between two messages. Default 100 (~10 per second). */
  intervalMs?: number;
  /** The interval's clock (default systemClock; tests pass a fake one). */
  clock?: Clock;
  /** An emit that threw from the timer. Default console.error. */
  onError?: (err: unknown) => void;
}

export class ProgressThrottle<T extends { status: string }> {
  private readonly emitFn: (msg: T) => void;
  private readonly intervalMs: number;
  private readonly clock: Clock;
  private readonly onError: (err: unknown) => void;
  private lastEmit = Number.NEGATIVE_INFINITY;
  private waiting: T | undefined;
  /** cancels the armed timer; null when none is armed */
  private timer: (() => void) | null = null;
  private isClosed = false;

  constructor(opts: ThrottleOptions<T>) {
    this.emitFn = opts.emit;
    this.intervalMs = opts.intervalMs ?? 100;
    this.clock = opts.clock ?? systemClock;
    this.onError = opts.onError ?? ((err) => console.error('progress: emit threw', err));
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** Offer a message: sent now, kept as the latest waiting one, or (final) sent and closing. */
  offer(msg: T): void {
    if (this.isClosed) return;
    if (msg.status !== 'in_progress') {
      this.close();
      this.emitFn(msg);
      return;
    }
    const t = this.clock.now();
    if (this.timer === null && t - this.lastEmit >= this.intervalMs) {
      this.lastEmit = t;
      this.waiting = undefined;
      this.emitFn(msg);
      return;
    }
    this.waiting = msg;
    this.timer ??= this.clock.after(Math.max(0, this.lastEmit + this.intervalMs - t), this.fire);
  }

  /** Stop: clears the timer and drops anything waiting (idempotent). */
  close(): void {
    this.isClosed = true;
    this.waiting = undefined;
    this.timer?.();
    this.timer = null;
  }

  private readonly fire = (): void => {
    this.timer = null;
    const msg = this.waiting;
    this.waiting = undefined;
    if (this.isClosed || msg === undefined) return;
    this.lastEmit = this.clock.now();
    try {
      this.emitFn(msg);
    } catch (err) {
      this.onError(err);
    }
  };
}
