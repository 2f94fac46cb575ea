/**
 * PgliteThread: the embedded database in its own worker thread
 * (db/pglite-host.ts owns the PGlite instance), seen from the main thread as
 * the part of PGlite's client that drizzle-orm/pglite and its migrator call:
 * query(sql, params, {rowMode, parsers}), exec, transaction(cb) (whose cb
 * gets {query, exec, rollback, closed}), dumpDataDir, close, waitReady,
 * closed. PGlite runs PostgreSQL on the thread that calls it: on the main
 * thread each statement held up the HTTP answers (issue 29: a pool's flush
 * chunk ~20 ms, txt listings' p99 66-139 ms). `PGliteWorker` of
 * @electric-sql/pglite/worker needs `navigator.locks`, which Bun has not.
 *
 * The messages are db/pglite-protocol.ts. A transaction runs over them: the
 * host opens PGlite's transaction, the cb's queries carry its id, and when cb
 * settles the host commits (cb resolved) or rolls back (cb threw, or called
 * rollback()). While it is open PGlite holds every other statement, as it
 * did on the main thread.
 *
 * Errors come back as PgliteThreadError with PostgreSQL's fields (`code`,
 * `constraint`, `detail`, ...). The thread is unref'd while nothing waits on
 * it (a forgotten close does not keep a process alive) and ref'd while a
 * request is out (a script awaiting only the database is not ended early).
 *
 * ## States
 *
 *   starting ──open answered──> open ──close()──> closing ──> closed
 *       │                         │
 *       └──open failed──> closed  └──the thread exits (a crash, terminate())──> dead
 *
 * dead: every waiting and later request rejects with ServiceError
 * DB_THREAD_EXITED; close() then only resolves. close() is safe to call more
 * than once and in any state; after CLOSE_TIMEOUT_MS without PGlite's answer
 * the thread is terminated anyway (a stop must end).
 */
import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import type { QueryOptions, Results } from '@electric-sql/pglite';
import { ServiceError } from '../src/errors';
import { DB_ERROR_CODES } from '../src/error-codes';
import { identityParserOids, PgliteThreadError, type DumpValue, type OpenSpec, type Reply, type Request } from './pglite-protocol';

export const HOST_FILE = fileURLToPath(new URL('./pglite-host.ts', import.meta.url));

/** How long close() waits for PGlite to shut down (a checkpoint of a big data dir) before it ends the thread. */
export const CLOSE_TIMEOUT_MS = 30_000;

type Payload<T> = T extends unknown ? Omit<T, 'id'> : never;

interface Waiting {
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

/** What a transaction's callback gets: the same calls, bound to the transaction. */
export interface ThreadTransaction {
  query<T>(sql: string, params?: unknown[], options?: QueryOptions): Promise<Results<T>>;
  exec(sql: string): Promise<Results[]>;
  rollback(): Promise<void>;
  readonly closed: boolean;
}

function requestOf(sql: string, params: unknown[] | undefined, options: QueryOptions | undefined, tx: number): Payload<Request> {
  if (options?.serializers !== undefined || options?.blob !== undefined || options?.onNotice !== undefined) {
    throw new TypeError('PGlite thread: serializers, blob and onNotice cannot cross to the database thread');
  }
  return {
    op: 'query',
    tx,
    sql,
    params: params ?? [],
    rowMode: options?.rowMode ?? 'object',
    identityParsers: identityParserOids(options?.parsers),
    ...(options?.paramTypes !== undefined ? { paramTypes: options.paramTypes } : {}),
  };
}

export class PgliteThread {
  readonly waitReady: Promise<void>;
  private readonly worker: Worker;
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 1;
  private state: 'starting' | 'open' | 'closing' | 'closed' | 'dead' = 'starting';
  private deadError: ServiceError | null = null;
  private closing: Promise<void> | null = null;

  /** Starts the thread and opens PGlite in it (await waitReady). `spec.template` is moved to the thread. */
  constructor(spec: OpenSpec, o: { filename?: string } = {}) {
    this.worker = new Worker(o.filename ?? HOST_FILE);
    this.worker.unref();
    this.worker.on('message', (r: Reply) => this.onReply(r));
    let thrown: unknown;
    this.worker.on('error', (err) => (thrown = err));
    this.worker.on('exit', (code) => this.onExit(code, thrown));
    this.waitReady = this.call({ op: 'open', spec }, spec.template !== null ? [spec.template] : []).then(
      () => {
        if (this.state === 'starting') this.state = 'open';
      },
      (err: unknown) => {
        void this.close();
        throw err;
      },
    );
  }

  get closed(): boolean {
    return this.state === 'closing' || this.state === 'closed' || this.state === 'dead';
  }

  query<T>(sql: string, params?: unknown[], options?: QueryOptions): Promise<Results<T>> {
    return this.queryIn(0, sql, params, options);
  }

  exec(sql: string): Promise<Results[]> {
    return this.call({ op: 'exec', tx: 0, sql }) as Promise<Results[]>;
  }

  /** cb's statements in one transaction: committed when cb resolves, rolled back when it throws (the error rethrown). */
  async transaction<T>(cb: (tx: ThreadTransaction) => Promise<T>): Promise<T> {
    const id = (await this.call({ op: 'begin' })) as number;
    let ended = false;
    const end = async (commit: boolean): Promise<void> => {
      if (ended) return;
      ended = true;
      await this.call({ op: 'end', tx: id, commit });
    };
    const check = (): void => {
      if (ended) throw new Error('Transaction is closed');
    };
    const tx: ThreadTransaction = {
      query: <R>(sql: string, params?: unknown[], options?: QueryOptions) => (check(), this.queryIn<R>(id, sql, params, options)),
      exec: (sql: string) => (check(), this.call({ op: 'exec', tx: id, sql }) as Promise<Results[]>),
      rollback: () => (check(), end(false)),
      get closed() {
        return ended;
      },
    };
    let result: T;
    try {
      result = await cb(tx);
    } catch (err) {
      // PGlite's own transaction() rethrows the callback's error after ROLLBACK; so does this
      await end(false).catch(() => undefined);
      throw err;
    }
    await end(true);
    return result;
  }

  /** The database as a tarball (PGlite's dumpDataDir). */
  async dumpDataDir(compression: 'none' | 'gzip' = 'none'): Promise<Blob> {
    const d = (await this.call({ op: 'dump', compression })) as DumpValue;
    return new Blob([d.bytes], { type: d.type });
  }

  /** Closes PGlite in the thread (its postgres shuts down cleanly), then ends the thread. Safe twice, and after a crash. */
  close(): Promise<void> {
    return (this.closing ??= this.shutDown());
  }

  /** Ends the thread at once, PGlite not closed: what a crash of the thread looks like (tests). */
  async terminate(): Promise<void> {
    await this.worker.terminate();
  }

  private async shutDown(): Promise<void> {
    if (this.state === 'dead' || this.state === 'closed') return;
    this.state = 'closing';
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_TIMEOUT_MS)));
    try {
      await Promise.race([this.send({ op: 'close' }).catch(() => undefined), timeout]);
    } finally {
      clearTimeout(timer);
      this.state = 'closed';
      await this.worker.terminate();
      this.failAll(new ServiceError(DB_ERROR_CODES.DB_THREAD_EXITED, 'the embedded database is closed'));
    }
  }

  private queryIn<T>(tx: number, sql: string, params: unknown[] | undefined, options: QueryOptions | undefined): Promise<Results<T>> {
    let req: Payload<Request>;
    try {
      req = requestOf(sql, params, options, tx);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.call(req) as Promise<Results<T>>;
  }

  /** A request of the open database (refused once it is closing, closed or dead). */
  private call(req: Payload<Request>, transfer: ArrayBuffer[] = []): Promise<unknown> {
    if (this.state === 'dead') return Promise.reject(this.deadError);
    if (this.state === 'closing' || this.state === 'closed') {
      return Promise.reject(new ServiceError(DB_ERROR_CODES.DB_THREAD_EXITED, 'the embedded database is closed'));
    }
    return this.send(req, transfer);
  }

  private send(req: Payload<Request>, transfer: ArrayBuffer[] = []): Promise<unknown> {
    if (this.state === 'dead') return Promise.reject(this.deadError);
    const id = this.nextId++;
    return new Promise<unknown>((resolve, reject) => {
      if (this.waiting.size === 0) this.worker.ref();
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ ...req, id } as Request, transfer);
    });
  }

  private onReply(r: Reply): void {
    const w = this.waiting.get(r.id);
    if (w === undefined) return;
    this.waiting.delete(r.id);
    if (this.waiting.size === 0) this.worker.unref();
    if (r.ok) w.resolve(r.value);
    else w.reject(new PgliteThreadError(r.error));
  }

  private onExit(code: number, thrown: unknown): void {
    if (this.state === 'closed' || this.state === 'closing') return;
    const why = thrown instanceof Error ? `: ${thrown.message}` : '';
    this.deadError = new ServiceError(DB_ERROR_CODES.DB_THREAD_EXITED, `the embedded database's thread exited (code ${code})${why}`, thrown !== undefined ? { cause: thrown } : undefined);
    this.state = 'dead';
    this.failAll(this.deadError);
  }

  private failAll(err: ServiceError): void {
    const all = [...this.waiting.values()];
    this.waiting.clear();
    for (const w of all) w.reject(err);
  }
}
