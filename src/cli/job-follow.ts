/**
 * Following a check job to its end (`proxycheck wait`, and `proxycheck
 * check` of a big list, which submits asynchronously): the live bar from the
 * WebSocket progress channel, GET /checks/{jobId} to know the end, and
 * polling when the socket is gone.
 *
 *   following: WebSocket open ── a final message, or the socket closes ──> GET
 *      GET: running ── socket open ──> wait for the socket (at most SOCKET_POLL_MS), GET again
 *                   └─ no socket ───> bar from GET's progress, POLL_MS, GET again
 *                                     (the socket is opened again at most every REOPEN_MS)
 *      GET: completed | failed | cancelled ──> the job (done)
 *
 * The job runs on the server whatever happens here: a dropped socket or a
 * failed GET (network, 5xx) is retried every POLL_MS (a GET that answers 4xx
 * ends the follow: the job is gone or the key is refused); Ctrl-C ends the
 * follow, not the job.
 *
 * LiveBar draws on standard error what check-command.ts drew for a
 * synchronous check: a redrawn bar on a TTY, plain lines otherwise.
 */
import type { ApiClient, CheckResponseBody, JobBody, ProgressChannel, ProgressMessage } from './api-client';
import { CliError, EXIT } from './exit-codes';
import { terminalTraits, type CliIo } from './io';
import { PlainThrottle, ProgressTracker, renderBar, renderPlain, type ProgressInput } from './progress-bar';

const HIDE_CURSOR = '\x1b[?25l';
const SHOW_CURSOR = '\x1b[?25h';
const CLEAR_LINE = '\r\x1b[2K';
const REDRAW_MS = 100;

/** Between two GETs while there is no socket. */
export const POLL_MS = 2_000;
/** Between two GETs while the socket is open (it says when the job ends; this is a safety net). */
export const SOCKET_POLL_MS = 15_000;
/** Between two attempts to open the socket again. */
export const REOPEN_MS = 10_000;

/** Pure: a job's progress (GET /checks/{jobId}) as the tracker reads a progress message. */
export function progressOfJob(job: Pick<JobBody, 'status' | 'progress'>): ProgressInput {
  const { checked, total, working_so_far } = job.progress;
  const status = job.status === 'running' ? 'in_progress' : job.status === 'completed' ? 'completed' : 'failed';
  const probing = checked < total || total === 0;
  return {
    status,
    currentStep: status === 'completed' ? 'completed' : probing ? 'proxy_check_batch_1_of_1' : 'writing_results',
    progress: total > 0 ? 5 + (90 * checked) / total : 5,
    eta: null,
    details: { checked, total, working_so_far },
  };
}

/** The live progress display on standard error. */
export class LiveBar {
  readonly #io: CliIo;
  readonly #quiet: boolean;
  readonly #live: boolean;
  readonly #term: ReturnType<typeof terminalTraits>;
  readonly #tracker: ProgressTracker;
  readonly #plain = new PlainThrottle();
  #frame = 0;
  #shown = false;
  #ticker: ReturnType<typeof setInterval> | undefined;

  /** `quiet`: --json (no plain lines; a TTY still gets the bar). */
  constructor(io: CliIo, opts: { quiet: boolean; noColor: boolean }) {
    this.#io = io;
    this.#quiet = opts.quiet;
    this.#live = io.stderr.isTTY;
    this.#term = terminalTraits(io.stderr, io.env, opts.noColor);
    this.#tracker = new ProgressTracker(io.now());
  }

  start(): void {
    if (!this.#live) return;
    this.#io.stderr.write(HIDE_CURSOR);
    this.#draw();
    this.#ticker = setInterval(() => this.#draw(), REDRAW_MS);
  }

  update(m: ProgressInput): void {
    this.#tracker.update(m, this.#io.now());
    if (!this.#live && !this.#quiet) this.#draw();
  }

  /** The check answered: the bar at 100 % (and a newline on a TTY). */
  complete(r: CheckResponseBody): void {
    const n = r.metadata.total_checked;
    this.#tracker.update({ status: 'completed', currentStep: 'writing_results', progress: 100, eta: 0, details: { checked: n, total: n, working_so_far: r.summary.total_working } }, this.#io.now());
    if (this.#live) {
      this.#draw();
      this.#io.stderr.write('\n');
      this.#shown = false;
    } else if (!this.#quiet && this.#plain.due(this.#tracker.view, this.#io.now())) {
      this.#io.stderr.write(`${renderPlain(this.#tracker.view)}\n`);
    }
  }

  /** Stops redrawing and gives the terminal back. Safe twice. */
  stop(): void {
    if (this.#ticker !== undefined) clearInterval(this.#ticker);
    this.#ticker = undefined;
    if (this.#live) this.#io.stderr.write(`${this.#shown ? CLEAR_LINE : ''}${SHOW_CURSOR}`);
    this.#shown = false;
  }

  #draw(): void {
    const now = this.#io.now();
    const v = this.#tracker.tick(now);
    if (this.#live) {
      this.#io.stderr.write(`${CLEAR_LINE}${renderBar(v, { width: this.#term.columns, color: this.#term.color, ascii: this.#term.ascii, frame: this.#frame++ })}`);
      this.#shown = true;
    } else if (this.#plain.due(v, now)) {
      this.#io.stderr.write(`${renderPlain(v)}\n`);
    }
  }
}

/**
 * A progress subscription that tells when it ends (a final message, or the
 * socket closed): `ended` resolves then. open() returns null when the socket
 * did not open.
 */
export async function openFollow(client: ApiClient, jobId: string, onMessage: (m: ProgressMessage) => void): Promise<{ channel: ProgressChannel; ended: Promise<void> } | null> {
  let end: () => void = () => {};
  const ended = new Promise<void>((resolve) => (end = resolve));
  const channel = await client.progress(
    jobId,
    (m) => {
      onMessage(m);
      if (m.status !== 'in_progress') end();
    },
    5000,
    () => end(),
  );
  return channel === null ? null : { channel, ended };
}

/** A pause that Ctrl-C cuts short (it then rejects with the signal's reason); `also` ends it early. */
export function pause(ms: number, signal: AbortSignal, also?: Promise<void>): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve();
    };
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(done, ms);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    void also?.then(done);
  });
}

/**
 * Follows job `jobId` until it ends and returns its last GET. `follow`: a
 * subscription opened before the job was submitted (no message missed);
 * absent: one is opened here.
 */
export async function followJob(
  client: ApiClient,
  jobId: string,
  io: CliIo,
  bar: LiveBar,
  follow?: { channel: ProgressChannel; ended: Promise<void> } | null,
): Promise<JobBody> {
  const onMessage = (m: ProgressMessage) => bar.update(m);
  let sub = follow === undefined ? await openFollow(client, jobId, onMessage) : follow;
  let openedAt = io.now();
  let socketEnded = false;
  const watch = (s: typeof sub) => void s?.ended.then(() => (socketEnded = true));
  watch(sub);
  try {
    for (;;) {
      let job: JobBody | null = null;
      try {
        job = await client.job(jobId, io.signal);
      } catch (err) {
        if (io.signal.aborted) throw err;
        // a 4xx: the job is not (or no longer) there for this key; network and 5xx: try again
        if (err instanceof CliError && err.exitCode !== EXIT.NETWORK) throw err;
      }
      if (job !== null && job.status !== 'running') return job;
      if (sub !== null && !socketEnded) {
        await pause(SOCKET_POLL_MS, io.signal, sub.ended);
        continue;
      }
      if (job !== null) bar.update(progressOfJob(job));
      await pause(POLL_MS, io.signal);
      if (io.now() - openedAt >= REOPEN_MS) {
        sub?.channel.close();
        socketEnded = false;
        sub = await openFollow(client, jobId, onMessage);
        openedAt = io.now();
        watch(sub);
      }
    }
  } finally {
    sub?.channel.close();
  }
}
