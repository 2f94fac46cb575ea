/**
 * The result store port: where finished result documents live, keyed by
 * result id. Everything that writes, reads, sweeps or measures result
 * documents goes through it: the job layer (create, via server.ts), the
 * download route (open), retention (sweep). Adapters: the data directory
 * (src/results/dir-store.ts: embedded mode, one process) and PostgreSQL
 * (src/results/pg-store.ts: the one store of a cluster's API nodes, tables
 * result_files + result_chunks, so a link minted on one node downloads from
 * any other and one sweep applies to all).
 *
 * Contract (test/helpers/result-store-contract.ts checks it on every adapter):
 * - `create(id)` returns a ResultWriter (src/results/writer.ts); the result is
 *   visible to `open` only once `finish()` has resolved, never partially; an
 *   aborted or failed writer leaves nothing. `id` must be a result id
 *   (src/results/links.ts `isResultId`), else `result_bad_id`.
 * - `open(id)` resolves null for an id with no finished result (never
 *   written, aborted, swept, or not a result id at all).
 * - `sweep(rule)` (SweepRule) deletes, in this order: what was last written
 *   before `rule.cutoffMs` (ms since the epoch; newer results stay); then,
 *   when `rule.maxBytes` > 0 and the finished results left still hold more
 *   bytes than that, the oldest results (last written first) until they fit;
 *   and leftovers of writers that are gone (a crash mid-write) last written
 *   before `rule.orphanCutoffMs` (default: `cutoffMs`). It never touches what
 *   a writer this store handed out is still writing. Resolves with a
 *   SweepReport of what it deleted.
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

/** What one sweep deletes (see the contract above). */
export interface SweepRule {
  /** Results last written before this (ms since the epoch) are deleted. */
  cutoffMs: number;
  /** Disk cap on finished results, in bytes: over it the oldest go first. 0 or absent: no cap. */
  maxBytes?: number;
  /** Leftovers of dead writers last written before this are deleted. Default: `cutoffMs`. */
  orphanCutoffMs?: number;
}

/** What one sweep deleted. */
export interface SweepReport {
  /** Results past the age cutoff. */
  expired: number;
  /** Results deleted, oldest first, to get under `maxBytes`. */
  overCap: number;
  /** Leftovers of writers that are gone (spill and temp files). */
  orphans: number;
  /** Bytes those deletions freed. */
  bytes: number;
}

export interface ResultStore {
  /** A writer for the new result `resultId`. */
  create(resultId: string): Promise<ResultWriter>;
  /** The finished result `resultId`, or null when there is none. */
  open(resultId: string): Promise<StoredResult | null>;
  /** Deletes by age, by disk cap and crash leftovers (SweepRule); resolves with what it deleted. */
  sweep(rule: SweepRule): Promise<SweepReport>;
  size(): Promise<ResultStoreSize>;
  close(): Promise<void>;
}
