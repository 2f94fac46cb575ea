/**
 * Progress of a check as the CLI shows it. Pure: state in, strings out.
 *
 * `ProgressTracker` folds WebSocket progress messages (and clock ticks) into
 * a `ProgressView`: phase, checked/total, working so far, rate (proxies per
 * second since probing began) and ETA (the server's, else from the rate).
 * `renderBar(view, opts)` is the one-line TTY bar, fitted to `width`
 * columns; `renderPlain(view)` is the line for logs (no TTY), and
 * `PlainThrottle` decides when such a line is due: on a phase change, each
 * further 10 % checked, or every 10 s.
 */

export const PHASES = Object.freeze({
  CONNECTING: 'connecting',
  VALIDATING: 'validating',
  BALANCE: 'checking_balance',
  PROBING: 'probing',
  CUSTOM_URLS: 'custom_urls',
  WRITING: 'writing',
  DONE: 'done',
  FAILED: 'failed',
} as const);
export type Phase = (typeof PHASES)[keyof typeof PHASES];

export interface ProgressView {
  phase: Phase;
  checked: number;
  total: number;
  working: number;
  /** Proxies per second since probing began; null until known. */
  rate: number | null;
  /** Seconds left; null when unknown. */
  eta: number | null;
  /** The server's overall progress, 0..100. */
  serverProgress: number;
  /** Since the tracker started. */
  elapsedMs: number;
}

/** The fields of a progress message the tracker reads. */
export interface ProgressInput {
  status: string;
  currentStep: string;
  progress: number;
  eta: number | null;
  details: { checked: number; total: number; working_so_far: number };
}

export function phaseOf(m: Pick<ProgressInput, 'status' | 'currentStep'>): Phase {
  if (m.status === 'completed') return PHASES.DONE;
  if (m.status === 'failed') return PHASES.FAILED;
  if (m.currentStep.startsWith('proxy_check_batch_')) return PHASES.PROBING;
  switch (m.currentStep) {
    case 'validating':
      return PHASES.VALIDATING;
    case 'checking_balance':
      return PHASES.BALANCE;
    case 'custom_url_validation':
      return PHASES.CUSTOM_URLS;
    case 'writing_results':
      return PHASES.WRITING;
    default:
      return PHASES.VALIDATING;
  }
}

const finite = (n: unknown, dflt = 0) => (typeof n === 'number' && Number.isFinite(n) ? n : dflt);

export class ProgressTracker {
  #view: ProgressView;
  readonly #startedAt: number;
  #probeStartedAt: number | null = null;
  #probeStartChecked = 0;
  #serverEta: number | null = null;
  #serverEtaAt = 0;

  constructor(nowMs: number) {
    this.#startedAt = nowMs;
    this.#view = { phase: PHASES.CONNECTING, checked: 0, total: 0, working: 0, rate: null, eta: null, serverProgress: 0, elapsedMs: 0 };
  }

  get view(): ProgressView {
    return this.#view;
  }

  update(m: ProgressInput, nowMs: number): ProgressView {
    const phase = phaseOf(m);
    const total = Math.max(0, finite(m.details.total));
    const checked = Math.min(total, Math.max(0, finite(m.details.checked)));
    if (phase === PHASES.PROBING && this.#probeStartedAt === null) {
      this.#probeStartedAt = nowMs;
      this.#probeStartChecked = checked;
    }
    if (phase === PHASES.PROBING && m.eta !== null && Number.isFinite(m.eta)) {
      this.#serverEta = Math.max(0, m.eta);
      this.#serverEtaAt = nowMs;
    } else if (phase !== PHASES.PROBING) {
      this.#serverEta = null;
    }
    this.#view = {
      ...this.#view,
      phase,
      total,
      checked: phase === PHASES.DONE ? total : checked,
      working: Math.max(0, finite(m.details.working_so_far)),
      serverProgress: Math.min(100, Math.max(0, finite(m.progress))),
    };
    return this.tick(nowMs);
  }

  /** Re-derives the time-based fields (elapsed, rate, ETA) for `nowMs`. */
  tick(nowMs: number): ProgressView {
    const v = this.#view;
    let rate = v.rate;
    let eta: number | null = null;
    if (this.#probeStartedAt !== null) {
      const secs = (nowMs - this.#probeStartedAt) / 1000;
      const done = v.checked - this.#probeStartChecked;
      if (secs >= 0.2 && done > 0 && v.phase === PHASES.PROBING) rate = done / secs;
    }
    if (v.phase === PHASES.DONE && v.total > 0) {
      // finished: the run's real average since probing began (else over the whole run), never the
      // last live rate (it went stale: seen 303 done in 4.04 s shown as 0.3/s)
      const from = this.#probeStartedAt ?? this.#startedAt;
      const done = v.total - (this.#probeStartedAt !== null ? this.#probeStartChecked : 0);
      rate = done / Math.max(0.001, (nowMs - from) / 1000);
    }
    if (v.phase === PHASES.PROBING) {
      if (this.#serverEta !== null) eta = Math.max(0, this.#serverEta - Math.floor((nowMs - this.#serverEtaAt) / 1000));
      else if (rate !== null && rate > 0) eta = Math.ceil((v.total - v.checked) / rate);
    } else if (v.phase === PHASES.DONE) {
      eta = 0;
    }
    this.#view = { ...v, rate, eta, elapsedMs: Math.max(0, nowMs - this.#startedAt) };
    return this.#view;
  }
}

// ---- formatting --------------------------------------------------------------

export const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');

/** 0:07, 1:05, 1:02:03 */
export function fmtClock(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

export function fmtRate(rate: number | null, ascii = false): string {
  if (rate === null) return ascii ? '-/s' : '–/s';
  return rate >= 100 ? `${fmtInt(rate)}/s` : `${rate.toFixed(1)}/s`;
}

export function percentOf(v: Pick<ProgressView, 'checked' | 'total' | 'phase'>): number {
  if (v.phase === PHASES.DONE) return 100;
  return v.total > 0 ? (100 * v.checked) / v.total : 0;
}

const PHASE_LABEL: Record<Phase, string> = {
  connecting: 'Starting the check',
  validating: 'Validating the list',
  checking_balance: 'Reserving checks',
  probing: 'Checking',
  custom_urls: 'Trying custom URLs',
  writing: 'Writing the result file',
  done: 'Done',
  failed: 'Failed',
};

export const SPINNER = Object.freeze(['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏']);
const SPINNER_ASCII = Object.freeze(['|', '/', '-', '\\']);
const EIGHTHS = ['', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];

export interface BarOptions {
  /** Terminal columns; the line never exceeds width - 1. */
  width: number;
  color: boolean;
  /** Plain ASCII (no block characters), for terminals without UTF-8. */
  ascii: boolean;
  /** Animation frame (any integer). */
  frame: number;
}

const paint = (on: boolean, code: string, s: string) => (on ? `\x1b[${code}m${s}\x1b[0m` : s);

/** The bar itself, `cells` wide: filled / partial / empty. */
export function barCells(fraction: number, cells: number, ascii: boolean): { filled: string; empty: string } {
  const f = Math.min(1, Math.max(0, Number.isFinite(fraction) ? fraction : 0));
  const exact = f * cells;
  const full = Math.floor(exact);
  if (ascii) return { filled: '#'.repeat(full), empty: '-'.repeat(cells - full) };
  const part = full < cells ? EIGHTHS[Math.floor((exact - full) * 8)]! : '';
  return { filled: '█'.repeat(full) + part, empty: ' '.repeat(cells - full - (part === '' ? 0 : 1)) };
}

/** The one-line TTY rendering (no cursor control; the caller adds \r and erase). */
export function renderBar(v: ProgressView, o: BarOptions): string {
  const spin = (o.ascii ? SPINNER_ASCII : SPINNER)[Math.abs(o.frame) % (o.ascii ? SPINNER_ASCII.length : SPINNER.length)]!;
  const max = Math.max(20, o.width - 1);
  if (v.phase !== PHASES.PROBING && v.phase !== PHASES.DONE) {
    const tail = v.phase === PHASES.CUSTOM_URLS ? `  ${v.serverProgress.toFixed(0)}%` : '';
    const work = v.total > 0 ? `  ${fmtInt(v.total)} ${v.total === 1 ? 'proxy' : 'proxies'}, ${fmtInt(v.working)} working` : '';
    const text = `${spin} ${PHASE_LABEL[v.phase]}…${tail}${work}  ${fmtClock(v.elapsedMs / 1000)}`;
    return text.length > max ? text.slice(0, max) : text;
  }
  const pct = percentOf(v);
  const stats = [
    `${pct.toFixed(1).padStart(5)}%`,
    `${fmtInt(v.checked)}/${fmtInt(v.total)}`,
    `${paint(o.color, '32', fmtInt(v.working))} working`,
    fmtRate(v.rate, o.ascii),
    v.phase === PHASES.DONE ? `in ${fmtClock(v.elapsedMs / 1000)}` : `ETA ${v.eta === null ? (o.ascii ? '-:--' : '–:––') : fmtClock(v.eta)}`,
  ];
  // drop the least important stats until a bar of >= 10 cells fits
  const visible = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, '').length;
  const head = `${v.phase === PHASES.DONE ? (o.ascii ? '*' : '✔') : spin} ${PHASE_LABEL[v.phase]} `;
  let parts = stats;
  const line = (cells: number) => {
    const { filled, empty } = barCells(pct / 100, cells, o.ascii);
    return `${head}${o.ascii ? '[' : '▕'}${paint(o.color, '32', filled)}${empty}${o.ascii ? ']' : '▏'} ${parts.join('  ')}`;
  };
  for (;;) {
    const cells = Math.min(40, max - visible(line(0)));
    if (cells >= 10) return line(cells);
    if (parts.length <= 1) break;
    parts = parts.slice(0, -1);
  }
  // too narrow for a bar: the percentage (and what else fits), uncoloured
  let compact = head.trimEnd();
  for (const st of stats.map((x) => x.replace(/\x1b\[[0-9;]*m/g, ''))) {
    if (compact.length + 2 + st.length > max) break;
    compact += `  ${st}`;
  }
  return compact.length > max ? compact.slice(0, max) : compact;
}

/** One line for logs: "progress  62.5%  625/1,000 checked  148 working  412/s  ETA 0:01". */
export function renderPlain(v: ProgressView): string {
  if (v.phase === PHASES.PROBING) {
    return `progress ${percentOf(v).toFixed(1).padStart(5)}%  ${fmtInt(v.checked)}/${fmtInt(v.total)} checked  ${fmtInt(v.working)} working  ${fmtRate(v.rate, true)}  ETA ${v.eta === null ? '?' : fmtClock(v.eta)}`;
  }
  if (v.phase === PHASES.DONE) {
    return `progress 100.0%  ${fmtInt(v.total)}/${fmtInt(v.total)} checked  ${fmtInt(v.working)} working  done in ${fmtClock(v.elapsedMs / 1000)}`;
  }
  const extra = v.phase === PHASES.CUSTOM_URLS ? ` (${v.serverProgress.toFixed(0)}%)` : '';
  return `progress ${PHASE_LABEL[v.phase].toLowerCase()}${extra}`;
}

/** When a plain progress line is due. */
export class PlainThrottle {
  #phase: Phase | null = null;
  #decile = -1;
  #at = 0;
  readonly #everyMs: number;
  constructor(everyMs = 10_000) {
    this.#everyMs = everyMs;
  }

  due(v: ProgressView, nowMs: number): boolean {
    // 0..9: the 100 % line is the `done` one
    const decile = v.phase === PHASES.PROBING ? Math.min(9, Math.floor(percentOf(v) / 10)) : -1;
    const yes = v.phase !== this.#phase || decile > this.#decile || (v.phase === PHASES.PROBING && nowMs - this.#at >= this.#everyMs);
    if (yes) {
      this.#phase = v.phase;
      this.#decile = Math.max(this.#decile, decile);
      this.#at = nowMs;
    }
    return yes;
  }
}
