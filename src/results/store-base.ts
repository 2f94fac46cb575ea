/**
 * What the two result store adapters share (dir-store.ts, pg-store.ts).
 * Both write through the one streaming writer (writer.ts) into a local
 * directory; they differ only in where a finished document goes (the
 * writer's publish step), and in how results are read back, swept and
 * measured. This class holds the rest, once:
 *
 * - `create(id)`: refuses what is not a result id (`result_bad_id`), opens a
 *   writer whose files go to the adapter's `localPath(id)` and whose publish
 *   step is the adapter's `publisher(id)`;
 * - the writers handed out (live-writers.ts): a sweep never touches the
 *   files of one still open or finishing, close() aborts them;
 * - the store's life: open until `close()` (idempotent), then every call
 *   rejects with `result_store_closed` (`assertOpen`);
 * - `sweepLeftovers`: the crash leftovers of writers that are gone, in the
 *   local directory, by age.
 */
import { readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { ServiceError } from '../errors';
import { DOMAIN_ERROR_CODES } from '../error-codes';
import { isResultId } from './links';
import { LiveWriters } from './live-writers';
import type { ResultStore, ResultStoreSize, StoredResult, SweepReport, SweepRule } from './store';
import { openResultWriter, type Publish, type ResultWriter, type ResultWriterOptions } from './writer';

export abstract class ResultStoreBase implements ResultStore {
  #closed = false;
  /** The writers handed out: what a sweep must leave alone, what close() aborts. */
  readonly #live = new LiveWriters();
  readonly #writerOptions: Omit<ResultWriterOptions, 'publish'>;

  protected constructor(writerOptions: Omit<ResultWriterOptions, 'publish'>) {
    this.#writerOptions = writerOptions;
  }

  /** Where the writer of `resultId` puts its files (the writer's `path`). */
  protected abstract localPath(resultId: string): string;
  /** The publish step of the writer of `resultId` (writer.ts Publish). */
  protected abstract publisher(resultId: string): Publish;

  abstract open(resultId: string): Promise<StoredResult | null>;
  abstract sweep(rule: SweepRule): Promise<SweepReport>;
  abstract size(): Promise<ResultStoreSize>;

  async create(resultId: string): Promise<ResultWriter> {
    this.assertOpen();
    if (!isResultId(resultId)) throw new ServiceError(DOMAIN_ERROR_CODES.RESULT_BAD_ID, `not a result id: ${JSON.stringify(resultId)}`);
    return this.#live.open(resultId, () => openResultWriter(this.localPath(resultId), { ...this.#writerOptions, publish: this.publisher(resultId) }));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#live.abortAll();
  }

  protected assertOpen(): void {
    if (this.#closed) throw new ServiceError(DOMAIN_ERROR_CODES.RESULT_STORE_CLOSED, 'the result store is closed');
  }

  /**
   * Deletes the regular files of `dir` that belong to a writer that is gone
   * (`ownerOf(name)`: the result id a file is a writer's leftover of, null
   * for any other file) and were last written before `cutoffMs`; never a
   * file of a writer this store handed out that is still live. Counts them
   * in `report.orphans` and `report.bytes`. A missing directory holds none.
   */
  protected async sweepLeftovers(dir: string, ownerOf: (name: string) => string | null, cutoffMs: number, report: SweepReport): Promise<void> {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      return;
    }
    const live = this.#live.ids();
    for (const name of names) {
      const owner = ownerOf(name);
      if (owner === null || live.has(owner)) continue;
      const path = join(dir, name);
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
}
