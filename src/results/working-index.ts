/**
 * The in-memory index of a writer's working records: for each, its response
 * time, and its offset and length in the working spill file (typed arrays,
 * 20 bytes per record). Pure: it plans the sorted copy, the writer does the
 * reading (src/results/spill.ts).
 *
 * Sorting is stable: equal times keep arrival order; the time is the
 * record's own `responseTime` string parsed, so the order is exactly what
 * readers see (a time that is not a number sorts last).
 *
 * `batches(budget)` splits the sorted order into runs whose output (each
 * record plus its separator) fits in `budget` bytes (at least one
 * record per batch): for each run, where every record goes in the run's
 * buffer (`dest`) and the order to read them in (`byFile`: arrival order,
 * which is ascending spill offset, so one sequential pass over the spill fills the buffer).
 */
import { RECORD_SEPARATOR } from './result-json';

/** One batch of the sorted copy. */
export interface CopyBatch {
  /** Output bytes of the batch: every record's length + 2 (its separator). */
  bytes: number;
  /** Record numbers (arrival order) of the batch, in output order. */
  records: Uint32Array;
  /** dest[j]: where output record j starts in the batch buffer (its separator first). */
  dest: Float64Array;
  /** Indexes j into `records`, in arrival (= spill offset) order. */
  byFile: Uint32Array;
}

/** Bytes before each record in the output: its separator (`,\n`). */
export const SEPARATOR_BYTES = Buffer.byteLength(RECORD_SEPARATOR);

export class WorkingIndex {
  private times = new Float64Array(1024);
  private offsets = new Float64Array(1024);
  private lengths = new Uint32Array(1024);
  count = 0;

  /** Records one working record: its `responseTime` text, spill offset and byte length. */
  add(responseTime: string, offset: number, length: number): void {
    const i = this.count++;
    if (i === this.times.length) this.grow();
    const t = Number.parseFloat(responseTime);
    this.times[i] = Number.isFinite(t) ? t : Number.POSITIVE_INFINITY;
    this.offsets[i] = offset;
    this.lengths[i] = length;
  }

  offset(record: number): number {
    return this.offsets[record]!;
  }

  length(record: number): number {
    return this.lengths[record]!;
  }

  /** Record numbers in (time, arrival) order. */
  sortedOrder(): Uint32Array {
    const n = this.count;
    const times = this.times;
    const perm = new Uint32Array(n);
    for (let i = 0; i < n; i++) perm[i] = i;
    return perm.sort((a, b) => times[a]! - times[b]! || a - b);
  }

  /** The sorted order in batches of at most `budget` output bytes (at least one record each). */
  *batches(budget: number): Generator<CopyBatch> {
    const n = this.count;
    const lengths = this.lengths;
    const perm = this.sortedOrder();
    let pos = 0;
    while (pos < n) {
      let end = pos;
      let bytes = 0;
      while (end < n) {
        const need = lengths[perm[end]!]! + SEPARATOR_BYTES;
        if (end > pos && bytes + need > budget) break;
        bytes += need;
        end++;
      }
      const records = perm.subarray(pos, end);
      const k = records.length;
      const dest = new Float64Array(k);
      for (let j = 0, at = 0; j < k; j++) {
        dest[j] = at;
        at += lengths[records[j]!]! + SEPARATOR_BYTES;
      }
      const byFile = new Uint32Array(k);
      for (let j = 0; j < k; j++) byFile[j] = j;
      byFile.sort((a, b) => records[a]! - records[b]!);
      yield { bytes, records, dest, byFile };
      pos = end;
    }
  }

  private grow(): void {
    const n = this.times.length * 2;
    this.times = grown(this.times, new Float64Array(n));
    this.offsets = grown(this.offsets, new Float64Array(n));
    this.lengths = grown(this.lengths, new Uint32Array(n));
  }
}

function grown<T extends Float64Array | Uint32Array>(from: T, to: T): T {
  to.set(from);
  return to;
}
