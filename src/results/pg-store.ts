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
 * A writer is the streaming writer of src/results/writer.ts (its one state
 * machine) with its files in `<stagingDir>` (`<resultId>.json.<tag>...tmp`,
 * as in the directory store; no fsync: the commit is what makes it durable)
 * and this store's publish step (`uploadInto`), so `finish()` resolves only
 * once the document is in the database. The publish is the upload: in ONE
 * transaction, any older row of that id is deleted, the `result_files` row
 * inserted, and the finished local file read and inserted `chunkBytes` at a
 * time (one chunk in memory); then the local file is deleted. `open` sees
 * the document only after the commit, whole; a failure or an abort rolls it
 * back (the abort is noticed between chunks; an abort that comes while the
 * commit runs retracts it: the row is deleted after). A failure rejects
 * `finish()` with `result_write_failed` (cause: the I/O or database error),
 * an abort with `writer_aborted`; the writer removes its local files in
 * every case.
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
 * the writers still open and refuses later calls (store-base.ts, shared
 * with the directory store); the database is the caller's (it is not
 * closed here).
 */
import { mkdir, open as openFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
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
import { ResultStoreBase } from './store-base';
import type { Publish, ResultWriterOptions } from './writer';

export interface PgResultStoreOptions {
  /** The service's database (db/client.ts); PostgreSQL in a cluster, PGlite works too. Not closed by the store. */
  db: Db;
  /**
   * A local directory only this process writes: the writers' spill and temp
   * files, each finished document until it is uploaded (e.g.
   * `<DATA_DIR>/results-staging`). Created when missing.
   */
  stagingDir: string;
  /** Size of one `result_chunks` row. Default 1 MiB. */
  chunkBytes?: number;
  /** Writer tuning (tests): sort memory and spill buffer sizes. */
  writer?: Omit<ResultWriterOptions, 'fsync' | 'publish'>;
}

export const DEFAULT_CHUNK_BYTES = 1 << 20;

/**
 * A file of the staging directory that belongs to a writer of `resultId`:
 * its spill and temp files (and `<resultId>.json`, a finished document an
 * older version of this store left before its upload).
 */
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

/** This store's publish step: upload the finished file in one transaction, then delete it; retract deletes the row. */
function uploadInto(db: Db, id: string, chunkBytes: number): Publish {
  return {
    async publish(tmpPath, checkAborted) {
      try {
        await upload(db, id, tmpPath, chunkBytes, checkAborted);
      } catch (err) {
        if (isServiceError(err)) throw err; // writer_aborted, or result_write_failed already
        throw new ServiceError(DOMAIN_ERROR_CODES.RESULT_WRITE_FAILED, `storing result ${id} in the database failed`, { cause: err });
      }
      await unlink(tmpPath).catch(() => undefined);
    },
    async retract() {
      await db.execute(deleteResultStatement({ id }));
    },
  };
}

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

class PgResultStore extends ResultStoreBase {
  readonly #db: Db;
  readonly #stagingDir: string;
  readonly #chunkBytes: number;

  constructor(db: Db, stagingDir: string, chunkBytes: number, writerOptions: Omit<ResultWriterOptions, 'publish'>) {
    super(writerOptions);
    this.#db = db;
    this.#stagingDir = stagingDir;
    this.#chunkBytes = chunkBytes;
  }

  protected localPath(resultId: string): string {
    return join(this.#stagingDir, `${resultId}.json`);
  }

  protected publisher(resultId: string): Publish {
    return uploadInto(this.#db, resultId, this.#chunkBytes);
  }

  async open(resultId: string): Promise<StoredResult | null> {
    this.assertOpen();
    if (!isResultId(resultId)) return null;
    let row: { bytes: number; chunks: number } | undefined;
    try {
      row = first(await this.#db.execute(findResultStatement({ id: resultId })));
    } catch (err) {
      throw new ServiceError(DOMAIN_ERROR_CODES.RESULT_READ_FAILED, `cannot read result ${resultId}`, { cause: err });
    }
    if (row === undefined) return null;
    const chunks = Number(row.chunks);
    return { resultId, bytes: Number(row.bytes), stream: () => chunkStream(this.#db, resultId, chunks) };
  }

  async sweep(rule: SweepRule): Promise<SweepReport> {
    this.assertOpen();
    const report: SweepReport = { expired: 0, overCap: 0, orphans: 0, bytes: 0 };
    const maxBytes = rule.maxBytes ?? 0;
    await this.#db.transaction(async (tx) => {
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
    await this.sweepLeftovers(this.#stagingDir, stagedOf, rule.orphanCutoffMs ?? rule.cutoffMs, report);
    return report;
  }

  async size(): Promise<ResultStoreSize> {
    this.assertOpen();
    const row = first<NumberRow>(await this.#db.execute(sizeStatement()));
    return { results: Number(row?.n ?? 0), bytes: Number(row?.bytes ?? 0) };
  }
}

/** The store over the database's `result_files` / `result_chunks`, creating `stagingDir`. */
export async function openPgResultStore(opts: PgResultStoreOptions): Promise<ResultStore> {
  const chunkBytes = opts.chunkBytes ?? DEFAULT_CHUNK_BYTES;
  if (!Number.isSafeInteger(chunkBytes) || chunkBytes < 1) throw new ServiceError(DOMAIN_ERROR_CODES.RESULT_STORE_BAD_OPTION, `chunkBytes must be a positive integer, got ${chunkBytes}`);
  await mkdir(opts.stagingDir, { recursive: true });
  return new PgResultStore(opts.db, opts.stagingDir, chunkBytes, { ...opts.writer, fsync: false });
}
