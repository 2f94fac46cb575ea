/**
 * The built-in judge's TLS listener in a worker thread of its own
 * (JUDGE_TLS_THREAD=worker, the default; tls-thread.ts is the thread's
 * entry, tls-thread-protocol.ts its messages). What it serves is exactly
 * startJudgeServer's TLS judge; the handshake counts land in this thread's
 * (server.ts judgeTlsHandshakes, shared memory), so /metrics is unchanged.
 * Why: see tls-thread.ts (TLS handshakes stalled for seconds on a busy main
 * thread, and working proxies were reported `https: false` for it).
 *
 * ## States
 *
 *   starting ──listening──> listening ──close()──> closing ──> closed
 *      │                       │  ↑
 *      │           the thread exits (a crash)
 *      │                       ↓  │ listening (the same port)
 *      │                    restarting ──close()──> closing
 *      └──failed / exit / no answer in startTimeoutMs──> closed (start() rejects)
 *
 * A crashed thread is started again on the port it had, after restartDelayMs
 * (doubling up to MAX_RESTART_DELAY_MS while starts keep failing): a judge
 * that is gone would make every https step fail (`https: false`) rather
 * than wait. close() is safe twice: it asks the thread to close its listener
 * (CLOSE_TIMEOUT_MS at most), then ends the thread.
 */
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { DOMAIN_ERROR_CODES } from '../error-codes';
import { fromWireError, ServiceError } from '../errors';
import type { Logger } from '../log';
import { handshakeCounts, judgeUrl, type JudgeServer } from './server';
import type { FromThread, TlsThreadData, ToThread } from './tls-thread-protocol';

export const THREAD_FILE = fileURLToPath(new URL('./tls-thread.ts', import.meta.url));
/** A thread that has not said `listening` or `failed` by then has failed. */
export const START_TIMEOUT_MS = 10_000;
/** What close() waits for the thread to close its listener before ending it anyway. */
export const CLOSE_TIMEOUT_MS = 2_000;
/** The first wait before a crashed thread is started again. */
export const RESTART_DELAY_MS = 200;
export const MAX_RESTART_DELAY_MS = 10_000;

export interface JudgeTlsThreadOptions {
  host: string;
  /** 0: a free port (the one bound is kept across restarts) */
  port: number;
  key: string | undefined;
  tls: { key: string; cert: string };
  idleMs?: number;
  /** the thread's entry (tests) */
  filename?: string;
  startTimeoutMs?: number;
  restartDelayMs?: number;
  log?: Pick<Logger, 'warn' | 'info'>;
}

type State = 'starting' | 'listening' | 'restarting' | 'closing' | 'closed';

export interface JudgeTlsThread extends JudgeServer {
  /** Times the thread was started again after a crash. */
  readonly restarts: number;
  /** Ends the thread at once, as a crash would (tests). */
  terminateThread(): Promise<void>;
}

/** Starts the thread; resolves once its listener is bound (rejects with the bind's error: EADDRINUSE keeps its code). */
export async function startJudgeTlsThread(o: JudgeTlsThreadOptions): Promise<JudgeTlsThread> {
  const t = new TlsThreadHost(o);
  await t.start();
  return t;
}

class TlsThreadHost implements JudgeTlsThread {
  #state: State = 'starting';
  #worker: Worker | null = null;
  #port: number;
  #restarts = 0;
  #delay: number;
  #restartTimer: ReturnType<typeof setTimeout> | null = null;
  #closing: Promise<void> | null = null;
  #stopped: (() => void) | null = null;
  readonly #o: JudgeTlsThreadOptions;

  constructor(o: JudgeTlsThreadOptions) {
    this.#o = o;
    this.#port = o.port;
    this.#delay = o.restartDelayMs ?? RESTART_DELAY_MS;
  }

  get port(): number {
    return this.#port;
  }

  get url(): string {
    return judgeUrl(this.#o.host, this.#port, true);
  }

  get restarts(): number {
    return this.#restarts;
  }

  /** The first start (state starting). */
  async start(): Promise<void> {
    this.#assert('starting');
    try {
      this.#port = await this.#spawn(this.#o.port);
      this.#state = 'listening';
    } catch (err) {
      this.#state = 'closed';
      throw err;
    }
  }

  close(): Promise<void> {
    return (this.#closing ??= this.#shutDown());
  }

  async terminateThread(): Promise<void> {
    await this.#worker?.terminate();
  }

  #assert(...from: State[]): void {
    if (!from.includes(this.#state)) throw new Error(`judge TLS thread: ${this.#state}, expected ${from.join(' or ')}`);
  }

  /** A thread listening on `port`: resolves with the bound port; rejects (the thread ended) when it cannot. */
  #spawn(port: number): Promise<number> {
    const data: TlsThreadData = { host: this.#o.host, port, key: this.#o.key, tls: this.#o.tls, counts: handshakeCounts(), ...(this.#o.idleMs !== undefined ? { idleMs: this.#o.idleMs } : {}) };
    const w = new Worker(this.#o.filename ?? THREAD_FILE, { workerData: data });
    w.unref();
    this.#worker = w;
    return new Promise<number>((resolve, reject) => {
      let settled = false;
      let thrown: unknown;
      const fail = (err: Error): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        void w.terminate();
        reject(err);
      };
      const timer = setTimeout(
        () => fail(new ServiceError(DOMAIN_ERROR_CODES.JUDGE_THREAD_FAILED, `the judge's TLS thread did not start within ${this.#o.startTimeoutMs ?? START_TIMEOUT_MS} ms`)),
        this.#o.startTimeoutMs ?? START_TIMEOUT_MS,
      );
      w.on('message', (m: FromThread) => {
        if (m.kind === 'listening' && !settled) {
          settled = true;
          clearTimeout(timer);
          resolve(m.port);
        } else if (m.kind === 'failed') fail(fromWireError(m.error));
        else if (m.kind === 'stopped') this.#stopped?.();
      });
      w.on('error', (err) => (thrown = err));
      w.on('exit', (code) => {
        if (!settled) {
          fail(new ServiceError(DOMAIN_ERROR_CODES.JUDGE_THREAD_FAILED, `the judge's TLS thread exited (code ${code}) before it listened`, { cause: thrown }));
          return;
        }
        if (this.#worker === w) this.#crashed(code, thrown);
      });
    });
  }

  /** The listening thread ended without close(): start another on the same port. */
  #crashed(code: number, thrown: unknown): void {
    this.#worker = null;
    if (this.#state !== 'listening') return;
    this.#state = 'restarting';
    this.#o.log?.warn('the judge\'s TLS thread exited; starting it again', { code, error: thrown instanceof Error ? thrown.message : undefined, port: this.#port, in_ms: this.#delay });
    this.#scheduleRestart();
  }

  #scheduleRestart(): void {
    this.#restartTimer = setTimeout(() => {
      this.#restartTimer = null;
      if (this.#state !== 'restarting') return;
      this.#spawn(this.#port).then(
        () => {
          if (this.#state !== 'restarting') return void this.#worker?.terminate(); // closed meanwhile
          this.#state = 'listening';
          this.#restarts++;
          this.#delay = this.#o.restartDelayMs ?? RESTART_DELAY_MS;
          this.#o.log?.info('the judge\'s TLS thread is listening again', { port: this.#port });
        },
        (err: unknown) => {
          if (this.#state !== 'restarting') return;
          this.#delay = Math.min(MAX_RESTART_DELAY_MS, this.#delay * 2);
          this.#o.log?.warn('the judge\'s TLS thread did not start again; trying later', { error: err instanceof Error ? err.message : String(err), in_ms: this.#delay });
          this.#scheduleRestart();
        },
      );
    }, this.#delay);
  }

  async #shutDown(): Promise<void> {
    if (this.#state === 'closed') return;
    this.#state = 'closing';
    if (this.#restartTimer !== null) clearTimeout(this.#restartTimer);
    const w = this.#worker;
    this.#worker = null;
    if (w === null) {
      this.#state = 'closed';
      return;
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      await new Promise<void>((resolve) => {
        this.#stopped = resolve;
        timer = setTimeout(resolve, CLOSE_TIMEOUT_MS);
        w.once('exit', () => resolve());
        w.postMessage({ kind: 'stop' } satisfies ToThread);
      });
    } finally {
      clearTimeout(timer);
      this.#stopped = null;
      await w.terminate();
      this.#state = 'closed';
    }
  }
}
