/**
 * The writers a result store handed out, for its sweeps and its close: which
 * result ids are still being written (or opened, before the writer exists),
 * so a sweep never deletes them, and which writers to abort on close. Shared
 * by the store adapters (dir-store.ts, pg-store.ts).
 */
import { WRITER_STATES, type ResultWriter } from './writer';

const isLive = (w: ResultWriter) => w.state === WRITER_STATES.OPEN || w.state === WRITER_STATES.FINISHING;

export class LiveWriters<W extends ResultWriter = ResultWriter> {
  /** Writers handed out and maybe not settled yet, with their result ids (pruned on each open). */
  readonly #writers = new Map<W, string>();
  /** Result ids whose writer is being opened (its files exist before it is in `#writers`). */
  readonly #creating = new Map<string, number>();

  /** Opens a writer for `resultId` with `make`, counting the id as live from the first moment. */
  async open(resultId: string, make: () => Promise<W>): Promise<W> {
    for (const w of this.#writers.keys()) if (!isLive(w)) this.#writers.delete(w);
    this.#creating.set(resultId, (this.#creating.get(resultId) ?? 0) + 1);
    try {
      const writer = await make();
      this.#writers.set(writer, resultId);
      return writer;
    } finally {
      const n = (this.#creating.get(resultId) ?? 1) - 1;
      if (n === 0) this.#creating.delete(resultId);
      else this.#creating.set(resultId, n);
    }
  }

  /** Result ids a writer is still writing (or finishing, or opening). */
  ids(): Set<string> {
    const ids = new Set(this.#creating.keys());
    for (const [w, id] of this.#writers) if (isLive(w)) ids.add(id);
    return ids;
  }

  /** Aborts every writer handed out (the store closes); forgets them. */
  async abortAll(): Promise<void> {
    const live = [...this.#writers.keys()];
    this.#writers.clear();
    await Promise.allSettled(live.map((w) => w.abort()));
  }
}
