/**
 * The PostgreSQL adapter of the result store (src/results/store.ts): the one
 * store of a cluster's API nodes, so a result link minted by node A
 * downloads from node B, and retention applies to all of them at once.
 * Tables `result_files` (one row per finished document: id, bytes, chunks,
 * last_written on the database's clock) and `result_chunks` (result_id, seq,
 * data bytea of `chunkBytes`, 1 MiB by default) of db/schema.ts; the
 * statements are src/results/pg-store-sql.ts. Embedded mode keeps its results
 * in the data directory (src/results/dir-store.ts) and never uses them.
 *
 * ## Writing: a local file first, one transaction into the database
 *
 * A writer is the streaming writer of src/results/writer.ts on a local file
 * `<stagingDir>/<resultId>.json` (its spill and temp files beside it, as in
 * the directory store; no fsync: the commit is what makes it durable),
 * wrapped so that `finish()` resolves only once the document is in the
 * database:
 *
 *   OPEN ──finish()──> FINISHING ──(local file written, uploaded, committed)──> FINISHED
 *                          └──(an error)──> FAILED
 *   OPEN | FINISHING | FAILED ──abort()──> ABORTED
 *
 * FINISHING is the inner writer's finish (the sorted document written
 * locally) then the upload: in ONE transaction, any older row of that id is
 * deleted, the `result_files` row inserted, and the local file read and
 * inserted `chunkBytes` at a time (one chunk in memory). `open` sees the
 * document only after the commit, whole; a failure or an abort rolls it
 * back (the abort is noticed between chunks; an abort that comes while the
 * commit runs deletes the row after it). The local file goes in every case.
 * FAILED rejects `finish()` with `result_write_failed` (cause: the I/O or
 * database error); an abort makes it reject with `writer_aborted`.
 *
 * ## Reading
 *
 * `open(id)` reads the `result_files` row; each `stream()` then fetches the
 * chunks one statement at a time, in order, with the next one already asked
 * for while the consumer takes the current one (at most two chunks in memory).
 * A result swept while it is being read ends the stream with
 * `result_read_failed`.
 *
 * ## Sweeping, across the cluster
 *
 * `sweep(rule)`: in one transaction holding the cluster-wide advisory lock
 * (pg-store-sql.ts RESULT_SWEEP_LOCK, try-lock): the age rule on
 * `last_written`, then the byte cap (the newest results that fit stay, every
 * older one goes, in one statement). Several nodes sweeping at once: one
 * holds the lock and applies the rule; the others delete nothing in the
 * database (the rule is the cluster's, shared settings) and report only
 * their local leftovers. Nothing partial can exist in the database (one
 * transaction per upload), so the orphans are local: files in `stagingDir`
 * (spill and temp files, a finished local document not uploaded) of a writer
 * that is gone (a crash), last written before `orphanCutoffMs`; never those
 * of a writer this store handed out that is still open or finishing.
 * `stagingDir` must therefore be this process's own (two nodes on one
 * machine: two directories).
 *
 * `size()` counts the `result_files` rows and their bytes. `close()` aborts
 * the writers still open and refuses later calls; the database is the
 * caller's (it is not closed here).
 */
import { mkdir, open as openFile, readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { LiveWriters } from './live-writers';
import { rowsOf, type Db } from '../../db/client';
import { isServiceError, ServiceError } from '../errors';
import { DOMAIN_ERROR_CODES } from '../error-codes';
import { leftoverOf } from './dir-store';
import { isResultId } from './links';
import {
  deleteExpiredStatement,
  deleteOverCapStatement,
  deleteResultStatement,
  findResultStatement,
  insertChunkStatement,
  insertResultStatement,
  readChunkStatement,
  sizeStatement,
  trySweepLockStatement,
} from './pg-store-sql';
import type { ResultStore, ResultStoreSize, StoredResult, SweepReport, SweepRule } from './store';
import {
  openResultWriter,
  WRITER_STATES,
  type FinishInput,
  type FinishStats,
  type ResultWriter,
  type ResultWriterOptions,
  type WriterState,
} from './writer';

export interface PgResultStoreOptions {
  /** The service's database (db/client.ts); PostgreSQL in a cluster, PGlite works too. Not closed by the store. */
  db: Db;
  /**
   * A local directory only this process writes: the writers' spill and temp
   * files and each finished document until it is uploaded (e.g.
   * `<DATA_DIR>/results-staging`). Created when missing.
   */
  stagingDir: string;
  /** Size of one `result_chunks` row. Default 1 MiB. */
  chunkBytes?: number;
  /** Writer tuning (tests): sort memory and spill buffer sizes. */
  writer?: Omit<ResultWriterOptions, 'fsync'>;
}

export const DEFAULT_CHUNK_BYTES = 1 << 20;

const { OPEN, FINISHING, FINISHED, FAILED, ABORTED } = WRITER_STATES;
const RESOLVED: Promise<void> = Promise.resolve();
const unlinkQuietly = (path: string): Promise<void> => unlink(path).catch(() => undefined);

/** A file of the staging directory that belongs to a writer of `resultId`: its spill and temp files, its finished document. */
function stagedOf(name: string): string | null {
  const leftover = leftoverOf(name);
  if (leftover !== null) return leftover;
  const id = name.endsWith('.json') ? name.slice(0, -'.json'.length) : '';
  return isResultId(id) ? id : null;
}

interface NumberRow {
  n: number;
  bytes: number;
}
const first = <T>(res: unknown): T | undefined => rowsOf<T>(res)[0];

/** The upload of one finished local document: everything in one transaction. */
async function upload(db: Db, id: string, path: string, chunkBytes: number, checkAborted: () => void): Promise<void> {
  const fh = await openFile(path, 'r');
  try {
    const { size } = await fh.stat();
    const chunks = Math.ceil(size / chunkBytes);
    const buf = Buffer.allocUnsafe(Math.min(chunkBytes, Math.max(size, 1)));
    await db.transaction(async (tx) => {
      await tx.execute(deleteResultStatement({ id }));
      await tx.execute(insertResultStatement({ id, bytes: size, chunks }));
      for (let seq = 0; seq < chunks; seq++) {
        checkAborted();
        const want = Math.min(chunkBytes, size - seq * chunkBytes);
        let got = 0;
        while (got < want) {
          const { bytesRead } = await fh.read(buf, got, want - got, seq * chunkBytes + got);
          if (bytesRead === 0) throw new ServiceError(DOMAIN_ERROR_CODES.RESULT_WRITE_FAILED, `${path} ended at ${seq * chunkBytes + got} of ${size} bytes`);
          got += bytesRead;
        }
        await tx.execute(insertChunkStatement({ id, seq, data: buf.subarray(0, want) }));
      }
      checkAborted();
    });
  } finally {
    await fh.close().catch(() => undefined);
  }
}

class PgWriter implements ResultWriter {
  state: WriterState = OPEN;
  private finishing: Promise<FinishStats> | undefined;
  private aborting: Promise<void> | undefined;

  constructor(
    private readonly inner: ResultWriter,
    private readonly id: string,
    private readonly db: Db,
    private readonly chunkBytes: number,
  ) {}

  /** The local file the document is written to before its upload. */
  get path(): string {
    return this.inner.path;
  }
  get working(): number {
    return this.inner.working;
  }
  get failed(): number {
    return this.inner.failed;
  }

  addProxy(record: Parameters<ResultWriter['addProxy']>[0]): Promise<void> {
    if (this.state !== OPEN) return Promise.reject(this.closed());
    return this.inner.addProxy(record);
  }

  finish(input: FinishInput): Promise<FinishStats> {
    if (this.state !== OPEN) return Promise.reject(this.closed());
    this.to(FINISHING, OPEN);
    this.finishing = this.doFinish(input).catch(async (err: unknown) => {
      await unlinkQuietly(this.inner.path);
      if (this.state === ABORTED) throw isAbort(err) ? err : new ServiceError(DOMAIN_ERROR_CODES.WRITER_ABORTED, 'result writer was aborted', { cause: err });
      this.to(FAILED, FINISHING);
      throw isServiceError(err) && err.code === DOMAIN_ERROR_CODES.RESULT_WRITE_FAILED
        ? err
        : new ServiceError(DOMAIN_ERROR_CODES.RESULT_WRITE_FAILED, `storing result ${this.id} in the database failed`, { cause: err });
    });
    return this.finishing;
  }

  private async doFinish(input: FinishInput): Promise<FinishStats> {
    const stats = await this.inner.finish(input);
    this.checkAborted();
    await upload(this.db, this.id, this.inner.path, this.chunkBytes, this.checkAborted);
    if (this.state === ABORTED) {
      // abort() came while the commit ran: abort wins, the result goes
      await this.db.execute(deleteResultStatement({ id: this.id }));
      this.checkAborted();
    }
    this.to(FINISHED, FINISHING);
    await unlinkQuietly(this.inner.path);
    return stats;
  }

  abort(): Promise<void> {
    if (this.state === FINISHED) return RESOLVED;
    this.aborting ??= (async () => {
      this.to(ABORTED, OPEN, FINISHING, FAILED);
      await this.inner.abort();
      if (this.finishing !== undefined) await this.finishing.catch(() => undefined);
      await unlinkQuietly(this.inner.path);
    })();
    return this.aborting;
  }

  private checkAborted = (): void => {
    if (this.state === ABORTED) throw new ServiceError(DOMAIN_ERROR_CODES.WRITER_ABORTED, 'result writer was aborted');
  };

  private to(next: WriterState, ...from: WriterState[]): void {
    if (!from.includes(this.state)) {
      throw new ServiceError(DOMAIN_ERROR_CODES.WRITER_BAD_TRANSITION, `result writer: ${this.state} -> ${next} (expected from ${from.join('|')})`);
    }
    this.state = next;
  }

  private closed(): ServiceError {
    return new ServiceError(DOMAIN_ERROR_CODES.WRITER_CLOSED, `result writer is ${this.state}`);
  }
}

const isAbort = (err: unknown) => isServiceError(err) && err.code === DOMAIN_ERROR_CODES.WRITER_ABORTED;

/** The chunks of result `id`, fetched one statement at a time with one asked for ahead. */
function chunkStream(db: Db, id: string, chunks: number): ReadableStream<Uint8Array> {
  let seq = 0;
  const fetchChunk = async (n: number): Promise<Uint8Array> => {
    const row = first<{ data: Uint8Array }>(await db.execute(readChunkStatement({ id, seq: n })));
    if (row === undefined) throw new ServiceError(DOMAIN_ERROR_CODES.RESULT_READ_FAILED, `result ${id} was deleted while being read (chunk ${n} of ${chunks})`);
    return row.data;
  };
  let next: Promise<Uint8Array> | undefined;
  const ahead = () => {
    next = seq < chunks ? fetchChunk(seq++) : undefined;
    next?.catch(() => undefined); // surfaced by pull; never unhandled when the stream is cancelled
  };
  return new ReadableStream<Uint8Array>({
    start() {
      ahead();
    },
    async pull(controller) {
      if (next === undefined) {
        controller.close();
        return;
      }
      try {
        const data = await next;
        ahead();
        controller.enqueue(data);
      } catch (err) {
        controller.error(isServiceError(err) ? err : new ServiceError(DOMAIN_ERROR_CODES.RESULT_READ_FAILED, `cannot read result ${id}`, { cause: err }));
      }
    },
    cancel() {
      next = undefined;
    },
  });
}

class PgResultStore implements ResultStore {
  private closed = false;
  /** The writers handed out: what a sweep must leave alone, what close() aborts. */
  private readonly live = new LiveWriters();

  constructor(
    private readonly db: Db,
    private readonly stagingDir: string,
    private readonly chunkBytes: number,
    private readonly writerOptions: ResultWriterOptions,
  ) {}

  async create(resultId: string): Promise<ResultWriter> {
    this.checkOpen();
    if (!isResultId(resultId)) throw new ServiceError(DOMAIN_ERROR_CODES.RESULT_BAD_ID, `not a result id: ${JSON.stringify(resultId)}`);
    return this.live.open(resultId, async () => {
      const inner = await openResultWriter(join(this.stagingDir, `${resultId}.json`), this.writerOptions);
      return new PgWriter(inner, resultId, this.db, this.chunkBytes);
    });
  }

  async open(resultId: string): Promise<StoredResult | null> {
    this.checkOpen();
    if (!isResultId(resultId)) return null;
    let row: { bytes: number; chunks: number } | undefined;
    try {
      row = first(await this.db.execute(findResultStatement({ id: resultId })));
    } catch (err) {
      throw new ServiceError(DOMAIN_ERROR_CODES.RESULT_READ_FAILED, `cannot read result ${resultId}`, { cause: err });
    }
    if (row === undefined) return null;
    const chunks = Number(row.chunks);
    return { resultId, bytes: Number(row.bytes), stream: () => chunkStream(this.db, resultId, chunks) };
  }

  async sweep(rule: SweepRule): Promise<SweepReport> {
    this.checkOpen();
    const report: SweepReport = { expired: 0, overCap: 0, orphans: 0, bytes: 0 };
    const maxBytes = rule.maxBytes ?? 0;
    await this.db.transaction(async (tx) => {
      const lock = first<{ locked: boolean }>(await tx.execute(trySweepLockStatement()));
      if (lock?.locked !== true) return; // another node is sweeping the same results now
      const expired = first<NumberRow>(await tx.execute(deleteExpiredStatement({ cutoffMs: rule.cutoffMs })));
      report.expired = Number(expired?.n ?? 0);
      report.bytes += Number(expired?.bytes ?? 0);
      if (maxBytes > 0) {
        const over = first<NumberRow>(await tx.execute(deleteOverCapStatement({ maxBytes })));
        report.overCap = Number(over?.n ?? 0);
        report.bytes += Number(over?.bytes ?? 0);
      }
    });
    await this.sweepStaging(rule.orphanCutoffMs ?? rule.cutoffMs, report);
    return report;
  }

  /** Local files of writers that are gone, last written before `cutoffMs`. */
  private async sweepStaging(cutoffMs: number, report: SweepReport): Promise<void> {
    let names: string[];
    try {
      names = await readdir(this.stagingDir);
    } catch {
      return;
    }
    const live = this.live.ids();
    for (const name of names) {
      const owner = stagedOf(name);
      if (owner === null || live.has(owner)) continue;
      const path = join(this.stagingDir, name);
      try {
        const st = await stat(path);
        if (!st.isFile() || st.mtimeMs >= cutoffMs) continue;
        await unlink(path);
        report.orphans++;
        report.bytes += st.size;
      } catch {
        // gone meanwhile
      }
    }
  }

  async size(): Promise<ResultStoreSize> {
    this.checkOpen();
    const row = first<NumberRow>(await this.db.execute(sizeStatement()));
    return { results: Number(row?.n ?? 0), bytes: Number(row?.bytes ?? 0) };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.live.abortAll();
  }

  private checkOpen(): void {
    if (this.closed) throw new ServiceError(DOMAIN_ERROR_CODES.RESULT_STORE_CLOSED, 'the result store is closed');
  }
}

/** The store over the database's `result_files` / `result_chunks`, creating `stagingDir`. */
export async function openPgResultStore(opts: PgResultStoreOptions): Promise<ResultStore> {
  const chunkBytes = opts.chunkBytes ?? DEFAULT_CHUNK_BYTES;
  if (!Number.isSafeInteger(chunkBytes) || chunkBytes < 1) throw new ServiceError(DOMAIN_ERROR_CODES.RESULT_STORE_BAD_OPTION, `chunkBytes must be a positive integer, got ${chunkBytes}`);
  await mkdir(opts.stagingDir, { recursive: true });
  return new PgResultStore(opts.db, opts.stagingDir, chunkBytes, { ...opts.writer, fsync: false });
}
