/**
 * Streaming result-file writer: `{summary, metadata, proxies,
 * custom_url_validation?}` for jobs of up to 100 000+ proxies, in bounded
 * memory (DECISIONS "Responses and files": `proxies` = working ones by
 * response time ascending, then failed ones).
 *
 * ## How
 *
 * While the job runs, `addProxy(record)` appends each record's JSON to one of
 * two spill files beside the target (buffered, `flushBytes` at a time):
 * - working: `<json>\n`, and in memory only {responseTime, offset, length}
 *   (typed arrays, 20 bytes per working record);
 * - failed:  `,\n<json>`, in arrival order (never sorted, never read back
 *   into memory as a whole).
 * `finish({summary, metadata, invalid_lines?, custom_url_validation?})` then
 * writes `<path>.<rand>.tmp`: the header, the working records in sorted
 * order, the failed spill copied as bytes, the invalid lines, the custom-URL
 * block and `}`; fsyncs it (option), hands it to the store's publish step and
 * deletes the spill files.
 * The publish step (`Publish`, supplied by the store) makes the finished
 * file the stored result, all or nothing, and consumes it: the directory
 * store renames it over `path` (`renameInto`, the default); the PostgreSQL
 * store uploads it in one transaction and deletes it (pg-store.ts).
 *
 * Sorting: the working index is sorted (stable: equal times keep arrival
 * order; the time is the record's own `responseTime` string, so the order is
 * exactly what readers see). Records are then copied out in batches of at
 * most `sortMemoryBytes` (default 32 MiB): for each batch the working spill is
 * read sequentially in 1 MiB chunks and the batch's records are placed at
 * their output positions in one buffer. One batch (one read of the spill)
 * covers ~80 000 typical records; more working data costs extra sequential
 * passes, never more memory. Memory bound of a writer: 20 B x working records
 * + sortMemoryBytes + 2 MiB of I/O buffers + the pending spill buffer.
 *
 * `custom_url_validation` may be a plain value (JSON.stringify) or a
 * `JsonChunkSource` (`toJsonChunks()` yielding the JSON text in pieces, see
 * CustomUrlFold.jsonChunks) so huge per-URL lists are never one string.
 *
 * Where: the document's layout (head, separators, tail) is
 * src/results/result-json.ts (pure); the working index and the batch plan of
 * the sort are src/results/working-index.ts (pure); the spill files and the
 * copies out of them are src/results/spill.ts. This file is the state
 * machine, the one of every store. Where files live and how a finished one
 * is published is the store's business (store-base.ts: `path` and `publish`).
 *
 * ## States (WRITER_STATES, moved through src/state-machine.ts)
 *
 *   OPEN ──finish()──> FINISHING ──(written, published)──> FINISHED
 *                          └──(an I/O or publish error)──> FAILED
 *   OPEN | FINISHING | FAILED ──abort()──> ABORTED
 *
 * FINISHING writes the sorted document to the temp file, then runs the
 * store's publish step. FAILED: every file of the writer is removed, the
 * error is rethrown as a ServiceError with code `result_write_failed` and
 * `cause` (a publish error that already carries that code passes as it is).
 * ABORTED: `abort()`, idempotent: waits for in-flight writes, closes,
 * removes spill and temp files; a `finish()` still running then rejects
 * with `writer_aborted` and leaves nothing (publish checks for the abort
 * between its steps; an abort that comes while a publish succeeds makes the
 * writer retract it: abort wins); once `finish()` has resolved, abort is a
 * no-op and the result stays. `addProxy`/`finish` outside OPEN reject with
 * `writer_closed`. Every transition asserts the state it leaves
 * (`illegal_transition` would be a bug here, never an I/O condition).
 *
 * Backpressure: `addProxy` returns a promise that resolves at once unless it
 * started a spill write, then when that write is done; await it and a slow
 * disk slows the producer instead of growing memory.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { isServiceError, ServiceError } from '../errors';
import { DOMAIN_ERROR_CODES, LEAF_ERROR_CODES } from '../error-codes';
import { StateMachine, transitionTable } from '../state-machine';
import type { ProxyRecord } from './record';
import { headText, RECORD_SEPARATOR, tailPieces } from './result-json';
import { closeQuietly, copyBytes, copySorted, Out, Spill, unlinkQuietly } from './spill';
import { WorkingIndex } from './working-index';

export type { JsonChunkSource } from './result-json';

export const WRITER_STATES = Object.freeze({
  OPEN: 'open',
  FINISHING: 'finishing',
  FINISHED: 'finished',
  FAILED: 'failed',
  ABORTED: 'aborted',
} as const);
export type WriterState = (typeof WRITER_STATES)[keyof typeof WRITER_STATES];

const { OPEN, FINISHING, FINISHED, FAILED, ABORTED } = WRITER_STATES;

export const WRITER_TRANSITIONS = transitionTable<WriterState>({
  open: [FINISHING, ABORTED],
  finishing: [FINISHED, FAILED, ABORTED],
  failed: [ABORTED],
  finished: [],
  aborted: [],
});

/**
 * The store's last step of `finish()`: make the finished document the
 * stored result, all or nothing, and consume its file.
 */
export interface Publish {
  /**
   * `tmpPath` holds the whole document (closed; fsynced when asked). Publish
   * it and take the file away (rename it, or upload and delete it). Call
   * `checkAborted` between steps: it throws `writer_aborted` once abort()
   * was called, and the publish must then leave nothing.
   */
  publish(tmpPath: string, checkAborted: () => void): Promise<void>;
  /** abort() came while a publish that then succeeded ran: take the result back. */
  retract(): Promise<void>;
}

/** The directory store's publish: rename the finished file over `path` (atomic on one filesystem). */
export function renameInto(path: string): Publish {
  return {
    publish: (tmpPath) => rename(tmpPath, path),
    retract: () => unlinkQuietly(path),
  };
}

export interface FinishInput {
  summary: unknown;
  metadata: unknown;
  /** After `proxies`: a plain value or a JsonChunkSource (src/results/result-json.ts invalidLinesJson). */
  invalid_lines?: unknown;
  /** A plain value or a JsonChunkSource (src/results/result-json.ts). */
  custom_url_validation?: unknown;
}

export interface ResultWriterOptions {
  /** Largest batch of working records placed in memory while sorting. Default 32 MiB. */
  sortMemoryBytes?: number;
  /** Spill buffer size before a write. Default 256 KiB. */
  flushBytes?: number;
  /** fsync the finished file before it is published. Default true. */
  fsync?: boolean;
  /** The store's publish step. Default: renameInto(path). */
  publish?: Publish;
}

export interface FinishStats {
  working: number;
  failed: number;
  bytes: number;
}

export interface ResultWriter {
  /** Where the writer's local files go: `<path>.<tag>[.working|.failed].tmp` (the directory store's result file). */
  readonly path: string;
  readonly state: WriterState;
  readonly working: number;
  readonly failed: number;
  addProxy(record: ProxyRecord): Promise<void>;
  finish(input: FinishInput): Promise<FinishStats>;
  abort(): Promise<void>;
}

const RESOLVED: Promise<void> = Promise.resolve();
/** The codes this writer throws itself; anything else is wrapped as `result_write_failed`. */
const OWN_CODES: ReadonlySet<string> = new Set([
  DOMAIN_ERROR_CODES.RESULT_WRITE_FAILED,
  DOMAIN_ERROR_CODES.WRITER_CLOSED,
  DOMAIN_ERROR_CODES.WRITER_ABORTED,
  LEAF_ERROR_CODES.ILLEGAL_TRANSITION,
]);

class Writer implements ResultWriter {
  private readonly machine = new StateMachine<WriterState>('result writer', WRITER_TRANSITIONS, OPEN);
  failed = 0;
  private readonly index = new WorkingIndex();
  private readonly work: Spill;
  private readonly fail: Spill;
  private readonly tmpPath: string;
  private outFh: FileHandle | undefined;
  private finishing: Promise<FinishStats> | undefined;
  private aborting: Promise<void> | undefined;
  private ioError: unknown;

  constructor(
    readonly path: string,
    private readonly opts: Required<Omit<ResultWriterOptions, 'publish'>>,
    private readonly publisher: Publish,
  ) {
    const tag = randomBytes(6).toString('hex');
    this.work = new Spill(`${path}.${tag}.working.tmp`);
    this.fail = new Spill(`${path}.${tag}.failed.tmp`);
    this.tmpPath = `${path}.${tag}.tmp`;
  }

  get state(): WriterState {
    return this.machine.state;
  }

  get working(): number {
    return this.index.count;
  }

  async init(): Promise<void> {
    try {
      await mkdir(dirname(this.path), { recursive: true });
      await this.work.open();
      await this.fail.open();
    } catch (err) {
      await this.cleanup(false);
      throw new ServiceError(DOMAIN_ERROR_CODES.RESULT_WRITE_FAILED, `cannot open spill files for ${this.path}`, { cause: err });
    }
  }

  addProxy(record: ProxyRecord): Promise<void> {
    if (this.state !== OPEN) return Promise.reject(this.closed());
    if (this.ioError !== undefined) return Promise.reject(this.wrap(this.ioError));
    const json = JSON.stringify(record);
    let started: Promise<void> | undefined;
    if (record.status === 'working') {
      const len = Buffer.byteLength(json);
      this.index.add(record.responseTime, this.work.size, len);
      started = this.work.append(`${json}\n`, len + 1, this.opts.flushBytes);
    } else {
      this.failed++;
      const text = `${RECORD_SEPARATOR}${json}`;
      started = this.fail.append(text, Buffer.byteLength(text), this.opts.flushBytes);
    }
    if (started === undefined) return RESOLVED;
    return started.catch((err) => {
      this.ioError ??= err;
      throw this.wrap(err);
    });
  }

  finish(input: FinishInput): Promise<FinishStats> {
    if (this.state !== OPEN) return Promise.reject(this.closed());
    this.machine.move(OPEN, FINISHING);
    this.finishing = this.doFinish(input).catch(async (err) => {
      const aborted = this.state === ABORTED;
      if (!aborted) this.machine.move(FINISHING, FAILED);
      await this.cleanup(false);
      if (aborted) throw new ServiceError(DOMAIN_ERROR_CODES.WRITER_ABORTED, 'result writer was aborted', { cause: err });
      throw this.wrap(err);
    });
    return this.finishing;
  }

  abort(): Promise<void> {
    if (this.state === FINISHED) return RESOLVED;
    this.aborting ??= (async () => {
      const wasFailed = this.state === FAILED;
      this.machine.move([OPEN, FINISHING, FAILED], ABORTED);
      if (this.finishing !== undefined) await this.finishing.catch(() => undefined);
      if (!wasFailed) await this.cleanup(false);
    })();
    return this.aborting;
  }

  private closed(): ServiceError {
    return new ServiceError(DOMAIN_ERROR_CODES.WRITER_CLOSED, `result writer is ${this.state}`);
  }

  private wrap(err: unknown): ServiceError {
    if (isServiceError(err) && OWN_CODES.has(err.code)) return err;
    return new ServiceError(DOMAIN_ERROR_CODES.RESULT_WRITE_FAILED, `writing ${this.path} failed`, { cause: err });
  }

  private checkAborted = (): void => {
    if (this.state === ABORTED) throw new ServiceError(DOMAIN_ERROR_CODES.WRITER_ABORTED, 'result writer was aborted');
  };

  private async doFinish(input: FinishInput): Promise<FinishStats> {
    await this.work.flush();
    await this.fail.flush();
    this.checkAborted();
    this.outFh = await open(this.tmpPath, 'w');
    const out = new Out(this.outFh);
    await out.put(headText(input.summary, input.metadata));
    await copySorted(out, this.work, this.index, this.opts.sortMemoryBytes, this.checkAborted);
    // the failed spill is `<separator><json>` each: the first one's comma goes when no working record precedes it
    if (this.failed > 0) await copyBytes(out, this.fail, this.working === 0 ? 1 : 0, this.checkAborted);
    const fields = { invalid_lines: input.invalid_lines, custom_url_validation: input.custom_url_validation };
    for (const piece of tailPieces(this.working + this.failed, fields)) {
      await out.put(piece);
      this.checkAborted();
    }
    await out.flush();
    if (this.opts.fsync) await this.outFh.sync();
    await this.outFh.close();
    this.outFh = undefined;
    this.checkAborted();
    await this.publisher.publish(this.tmpPath, this.checkAborted);
    if (this.state === ABORTED) {
      // abort() was called while the publish ran: abort wins, the result goes
      await this.publisher.retract();
      this.checkAborted();
    }
    this.machine.move(FINISHING, FINISHED);
    await this.cleanup(true);
    return { working: this.working, failed: this.failed, bytes: out.bytes };
  }

  /** Closes and removes the writer's files; the temp file too unless it was published (consumed). */
  private async cleanup(published: boolean): Promise<void> {
    await Promise.all([this.work.settled(), this.fail.settled()]);
    await Promise.all([closeQuietly(this.work.fh), closeQuietly(this.fail.fh), closeQuietly(this.outFh)]);
    this.work.fh = undefined;
    this.fail.fh = undefined;
    this.outFh = undefined;
    const paths = [this.work.path, this.fail.path];
    if (!published) paths.push(this.tmpPath);
    await Promise.all(paths.map(unlinkQuietly));
  }
}

/**
 * Opens the spill files (creating the directory of `path`) and returns a
 * writer whose files go beside `path` and whose finished document goes to
 * `options.publish` (default: renamed to `path`). Callers outside a store
 * adapter go through ResultStore.create (src/results/store.ts).
 */
export async function openResultWriter(path: string, options: ResultWriterOptions = {}): Promise<ResultWriter> {
  const opts: Required<Omit<ResultWriterOptions, 'publish'>> = {
    sortMemoryBytes: Math.max(1, options.sortMemoryBytes ?? 32 << 20),
    flushBytes: Math.max(1, options.flushBytes ?? 256 << 10),
    fsync: options.fsync ?? true,
  };
  const w = new Writer(path, opts, options.publish ?? renameInto(path));
  await w.init();
  return w;
}
