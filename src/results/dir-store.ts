/**
 * The data-directory adapter of the result store (src/results/store.ts):
 * one file per result, `<DATA_DIR>/results/<resultId>.json`, written by the
 * streaming writer (src/results/writer.ts: spill files and a temp file
 * beside the target; its publish step renames the finished temp file over
 * it). This file is the only place that knows those paths; what both stores
 * share (create, close, the writers handed out, the leftovers' sweep) is
 * store-base.ts.
 *
 * - `sweep(rule)`, by mtime ("last written"): (1) every regular file but
 *   writer leftovers whose mtime is before `cutoffMs` (results, and stray
 *   files); (2) with `maxBytes` > 0, while the `<resultId>.json` files left
 *   hold more than `maxBytes`, the one with the oldest mtime (ties: by name);
 *   (3) writer leftovers (`<resultId>.json.<tag>[.working|.failed].tmp`, the
 *   spill and temp files of src/results/writer.ts) whose mtime is before
 *   `orphanCutoffMs`, unless a writer this store handed out for that
 *   resultId is still open or finishing (or being created): a running job's
 *   files are never touched. Subdirectories never are; a missing directory
 *   is an empty report.
 * - `size()` counts `<resultId>.json` files only (not a running writer's
 *   spill files).
 * - `open(id)` stats the file; the stream reads it lazily (a file swept in
 *   between ends the stream with an error).
 * - `fsync` (default true) is the writer's: fsync the file before the rename.
 */
import { mkdir, readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { errorCode, ServiceError } from '../errors';
import { DOMAIN_ERROR_CODES } from '../error-codes';
import { isResultId } from './links';
import type { ResultStore, ResultStoreSize, StoredResult, SweepReport, SweepRule } from './store';
import { ResultStoreBase } from './store-base';
import { renameInto, type Publish, type ResultWriterOptions } from './writer';

export interface DirResultStoreOptions {
  /** DATA_DIR; results live in DATA_DIR/results. */
  dataDir: string;
  /** fsync each result file before it is renamed into place. Default true. */
  fsync?: boolean;
  /** Writer tuning (tests): sort memory and spill buffer sizes. */
  writer?: Omit<ResultWriterOptions, 'fsync' | 'publish'>;
}

/** `<dataDir>/results/<resultId>.json`; refuses anything that is not a result id. */
export function resultFilePath(dataDir: string, resultId: string): string {
  if (!isResultId(resultId)) throw new ServiceError(DOMAIN_ERROR_CODES.RESULT_BAD_ID, `not a result id: ${JSON.stringify(resultId)}`);
  return join(dataDir, 'results', `${resultId}.json`);
}

const SUFFIX = '.json';
/** A writer's spill and temp files: `<resultId>.json.<tag>.tmp`, `.working.tmp`, `.failed.tmp`. */
const LEFTOVER = /^(.+)\.json\.[0-9a-f]+\.(?:working\.|failed\.)?tmp$/;

/** The resultId whose writer left this file, or null when the name is not a writer's. */
export function leftoverOf(name: string): string | null {
  const m = LEFTOVER.exec(name);
  return m !== null && isResultId(m[1] as string) ? (m[1] as string) : null;
}

interface Entry {
  path: string;
  name: string;
  mtimeMs: number;
  bytes: number;
}
const missing = (err: unknown) => errorCode(err) === 'ENOENT' || errorCode(err) === 'ENOTDIR';

class DirResultStore extends ResultStoreBase {
  readonly #dataDir: string;
  readonly #dir: string;

  constructor(dataDir: string, dir: string, writerOptions: Omit<ResultWriterOptions, 'publish'>) {
    super(writerOptions);
    this.#dataDir = dataDir;
    this.#dir = dir;
  }

  protected localPath(resultId: string): string {
    return resultFilePath(this.#dataDir, resultId);
  }

  /** The finished file is renamed over `<resultId>.json`. */
  protected publisher(resultId: string): Publish {
    return renameInto(resultFilePath(this.#dataDir, resultId));
  }

  async open(resultId: string): Promise<StoredResult | null> {
    this.assertOpen();
    if (!isResultId(resultId)) return null;
    const path = resultFilePath(this.#dataDir, resultId);
    let bytes: number;
    try {
      const st = await stat(path);
      if (!st.isFile()) return null;
      bytes = st.size;
    } catch (err) {
      if (missing(err)) return null;
      throw new ServiceError(DOMAIN_ERROR_CODES.RESULT_READ_FAILED, `cannot read result ${resultId}`, { cause: err });
    }
    return { resultId, bytes, stream: () => Bun.file(path).stream() };
  }

  async sweep(rule: SweepRule): Promise<SweepReport> {
    this.assertOpen();
    const report: SweepReport = { expired: 0, overCap: 0, orphans: 0, bytes: 0 };
    let names: string[];
    try {
      names = await readdir(this.#dir);
    } catch {
      return report;
    }
    const results: Entry[] = [];
    for (const name of names) {
      if (leftoverOf(name) !== null) continue; // step 3
      const entry = await this.#entry(name);
      if (entry === null) continue;
      if (entry.mtimeMs < rule.cutoffMs) {
        if (await remove(entry)) {
          report.expired++;
          report.bytes += entry.bytes;
        }
      } else if (name.endsWith(SUFFIX) && isResultId(name.slice(0, -SUFFIX.length))) results.push(entry);
    }
    const maxBytes = rule.maxBytes ?? 0;
    if (maxBytes > 0) {
      let total = results.reduce((sum, e) => sum + e.bytes, 0);
      results.sort((a, b) => a.mtimeMs - b.mtimeMs || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const e of results) {
        if (total <= maxBytes) break;
        total -= e.bytes; // gone either way: deleted now, or by someone else meanwhile
        if (await remove(e)) {
          report.overCap++;
          report.bytes += e.bytes;
        }
      }
    }
    await this.sweepLeftovers(this.#dir, leftoverOf, rule.orphanCutoffMs ?? rule.cutoffMs, report);
    return report;
  }

  /** A regular file of the directory, or null (a subdirectory, or gone meanwhile). */
  async #entry(name: string): Promise<Entry | null> {
    const path = join(this.#dir, name);
    try {
      const st = await stat(path);
      return st.isFile() ? { path, name, mtimeMs: st.mtimeMs, bytes: st.size } : null;
    } catch {
      return null;
    }
  }

  async size(): Promise<ResultStoreSize> {
    this.assertOpen();
    let names: string[];
    try {
      names = await readdir(this.#dir);
    } catch (err) {
      if (missing(err)) return { results: 0, bytes: 0 };
      throw new ServiceError(DOMAIN_ERROR_CODES.RESULT_READ_FAILED, `cannot list ${this.#dir}`, { cause: err });
    }
    const size = { results: 0, bytes: 0 };
    for (const name of names) {
      if (!name.endsWith(SUFFIX) || !isResultId(name.slice(0, -SUFFIX.length))) continue;
      try {
        const st = await stat(join(this.#dir, name));
        if (!st.isFile()) continue;
        size.results++;
        size.bytes += st.size;
      } catch {
        // swept meanwhile
      }
    }
    return size;
  }
}

/** Deletes the file; false when it was gone already (or cannot be deleted). */
async function remove(e: Entry): Promise<boolean> {
  try {
    await unlink(e.path);
    return true;
  } catch {
    return false;
  }
}

/** The store over `<dataDir>/results`, creating that directory. */
export async function openDirResultStore(opts: DirResultStoreOptions): Promise<ResultStore> {
  const dir = join(opts.dataDir, 'results');
  await mkdir(dir, { recursive: true });
  return new DirResultStore(opts.dataDir, dir, { ...opts.writer, fsync: opts.fsync ?? true });
}
