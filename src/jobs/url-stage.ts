/**
 * The custom-URL stage's bookkeeping: (working proxy x URL) pairs folded
 * into the per-URL summary, and how many are done. The actor owns one while
 * it is in `validating_urls`; pairs are dispatched by shards.ts.
 */
import type { CustomUrlResult, CustomUrlRule } from '../probe/types';
import { CustomUrlFold } from '../results/custom-url-summary';

export class UrlStage {
  readonly #fold: CustomUrlFold;
  readonly total: number;
  readonly startedAt: number;
  done = 0;

  constructor(rules: readonly CustomUrlRule[], working: number, startedAt: number) {
    this.#fold = new CustomUrlFold(rules.map((r) => r.url));
    this.total = working * rules.length;
    this.startedAt = startedAt;
  }

  /** Folds a shard's batch (its rule is the job's `urlIndex`); true once every pair is in. */
  add(batch: readonly CustomUrlResult[], urlIndex: number): boolean {
    // Each shard carries one rule, so the worker's urlIndex is 0: put the job's index back.
    for (const r of batch) this.#fold.add({ ...r, urlIndex });
    this.done += batch.length;
    return this.done >= this.total;
  }

  /** The result file's custom_url_validation block, streamed piecewise (per-URL proxy lists can be long). */
  validation(proxyAt: (index: number) => { host: string; port: number }, now: number) {
    const ms = now - this.startedAt;
    return { toJsonChunks: () => this.#fold.jsonChunks(proxyAt, ms) };
  }
}
