/**
 * The result store port: where finished result documents live, keyed by
 * result id. Everything that writes, reads, sweeps or measures result
 * documents goes through it: the job layer (create, via server.ts), the
 * download route (open), retention (sweep). Adapters: the data directory
 * (src/results/dir-store.ts); a cluster-wide store can be another.
 *
 * Contract (test/helpers/result-store-contract.ts checks it on every adapter):
 * - `create(id)` returns a ResultWriter (src/results/writer.ts); the result is
 *   visible to `open` only once `finish()` has resolved, never partially; an
 *   aborted or failed writer leaves nothing. `id` must be a result id
 *   (src/results/links.ts `isResultId`), else `result_bad_id`.
 * - `open(id)` resolves null for an id with no finished result (never
 *   written, aborted, swept, or not a result id at all).
 * - `sweep(cutoffMs)` deletes what was last written before `cutoffMs` (ms
 *   since the epoch), newer results stay; resolves with the number deleted.
 * - `size()` counts finished results and their bytes.
 * - `close()` is idempotent: writers still open are aborted, later calls
 *   reject with `result_store_closed`.
 */
import type { ResultWriter } from './writer';

export type { ResultWriter } from './writer';

/** A finished result document, as `ResultStore.open` found it. */
export interface StoredResult {
  readonly resultId: string;
  /** Size of the JSON document in bytes. */
  readonly bytes: number;
  /** The JSON document from its first byte; each call is a new stream. */
  stream(): ReadableStream<Uint8Array>;
}

export interface ResultStoreSize {
  /** Finished result documents. */
  results: number;
  /** Their total size in bytes. */
  bytes: number;
}

export interface ResultStore {
  /** A writer for the new result `resultId`. */
  create(resultId: string): Promise<ResultWriter>;
  /** The finished result `resultId`, or null when there is none. */
  open(resultId: string): Promise<StoredResult | null>;
  /** Deletes results last written before `cutoffMs`; resolves with how many. */
  sweep(cutoffMs: number): Promise<number>;
  size(): Promise<ResultStoreSize>;
  close(): Promise<void>;
}
