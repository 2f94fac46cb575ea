/**
 * The data-directory adapter of the result store (src/results/store.ts):
 * one file per result, `<DATA_DIR>/results/<resultId>.json`, written by the
 * streaming writer (src/results/writer.ts: spill files and a temp file
 * beside the target, renamed over it when finished). This file is the only
 * place that knows those paths.
 *
 * - `sweep(cutoff)` deletes every regular file in the directory whose mtime
 *   is before the cutoff: results, and spill or temp files a crash left
 *   behind; subdirectories are never touched; a missing directory is 0.
 * - `size()` counts `<resultId>.json` files only (not a running writer's
 *   spill files).
 * - `open(id)` stats the file; the stream reads it lazily (a file swept in
 *   between ends the stream with an error).
 * - `fsync` (default true) is the writer's: fsync the file before the rename.
 */
import { mkdir, readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { errorCode, ServiceError } from '../errors';
import { isResultId } from './links';
import type { ResultStore, ResultStoreSize, StoredResult } from './store';
import { openResultWriter, WRITER_STATES, type ResultWriter, type ResultWriterOptions } from './writer';

export interface DirResultStoreOptions {
  /** DATA_DIR; results live in DATA_DIR/results. */
  dataDir: string;
  /** fsync each result file before it is renamed into place. Default true. */
  fsync?: boolean;
  /** Writer tuning (tests): sort memory and spill buffer sizes. */
  writer?: Omit<ResultWriterOptions, 'fsync'>;
}

/** `<dataDir>/results/<resultId>.json`; refuses anything that is not a result id. */
export function resultFilePath(dataDir: string, resultId: string): string {
  if (!isResultId(resultId)) throw new ServiceError('result_bad_id', `not a result id: ${JSON.stringify(resultId)}`);
  return join(dataDir, 'results', `${resultId}.json`);
}

const SUFFIX = '.json';
const missing = (err: unknown) => errorCode(err) === 'ENOENT' || errorCode(err) === 'ENOTDIR';

class DirResultStore implements ResultStore {
  private closed = false;
  /** Writers handed out and maybe not settled yet (pruned on each create). */
  private writers = new Set<ResultWriter>();

  constructor(
    private readonly dataDir: string,
    private readonly dir: string,
    private readonly writerOptions: ResultWriterOptions,
  ) {}

  async create(resultId: string): Promise<ResultWriter> {
    this.checkOpen();
    const path = resultFilePath(this.dataDir, resultId);
    for (const w of this.writers) if (!isLive(w)) this.writers.delete(w);
    const writer = await openResultWriter(path, this.writerOptions);
    this.writers.add(writer);
    return writer;
  }

  async open(resultId: string): Promise<StoredResult | null> {
    this.checkOpen();
    if (!isResultId(resultId)) return null;
    const path = resultFilePath(this.dataDir, resultId);
    let bytes: number;
    try {
      const st = await stat(path);
      if (!st.isFile()) return null;
      bytes = st.size;
    } catch (err) {
      if (missing(err)) return null;
      throw new ServiceError('result_read_failed', `cannot read result ${resultId}`, { cause: err });
    }
    return { resultId, bytes, stream: () => Bun.file(path).stream() };
  }

  async sweep(cutoffMs: number): Promise<number> {
    this.checkOpen();
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return 0;
    }
    let deleted = 0;
    for (const name of names) {
      const path = join(this.dir, name);
      try {
        const st = await stat(path);
        if (st.isFile() && st.mtimeMs < cutoffMs) {
          await unlink(path);
          deleted++;
        }
      } catch {
        // vanished meanwhile: nothing to do
      }
    }
    return deleted;
  }

  async size(): Promise<ResultStoreSize> {
    this.checkOpen();
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (err) {
      if (missing(err)) return { results: 0, bytes: 0 };
      throw new ServiceError('result_read_failed', `cannot list ${this.dir}`, { cause: err });
    }
    const size = { results: 0, bytes: 0 };
    for (const name of names) {
      if (!name.endsWith(SUFFIX) || !isResultId(name.slice(0, -SUFFIX.length))) continue;
      try {
        const st = await stat(join(this.dir, name));
        if (!st.isFile()) continue;
        size.results++;
        size.bytes += st.size;
      } catch {
        // swept meanwhile
      }
    }
    return size;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const live = [...this.writers];
    this.writers.clear();
    await Promise.allSettled(live.map((w) => w.abort()));
  }

  private checkOpen(): void {
    if (this.closed) throw new ServiceError('result_store_closed', 'the result store is closed');
  }
}

const isLive = (w: ResultWriter) => w.state === WRITER_STATES.OPEN || w.state === WRITER_STATES.FINISHING;

/** The store over `<dataDir>/results`, creating that directory. */
export async function openDirResultStore(opts: DirResultStoreOptions): Promise<ResultStore> {
  const dir = join(opts.dataDir, 'results');
  await mkdir(dir, { recursive: true });
  return new DirResultStore(opts.dataDir, dir, { ...opts.writer, fsync: opts.fsync ?? true });
}
