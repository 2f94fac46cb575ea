/**
 * Tests for src/results/working-index.ts: the stable (time, arrival) order,
 * times that are not numbers last, growth past the first arrays, and the
 * batch plan: every record once, in order, each batch within the budget
 * (or a single record), destinations packed, reads in spill order.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { SEPARATOR_BYTES, WorkingIndex } from '../../src/results/working-index';

function indexOf(entries: [string, number][]): WorkingIndex {
  const ix = new WorkingIndex();
  let offset = 0;
  for (const [time, length] of entries) {
    ix.add(time, offset, length);
    offset += length + 1;
  }
  return ix;
}

describe('WorkingIndex', () => {
  test('sorted by time, ties in arrival order, non-numbers last', () => {
    const ix = indexOf([['5.00 ms', 10], ['1.00 ms', 10], ['n/a', 10], ['5.00 ms', 10], ['0.50 ms', 10]]);
    expect([...ix.sortedOrder()]).toEqual([4, 1, 0, 3, 2]);
    expect(ix.offset(3)).toBe(33);
    expect(ix.length(3)).toBe(10);
  });

  test('grows past 1024 records and keeps every entry', () => {
    const n = 5000;
    const ix = indexOf(Array.from({ length: n }, (_, i) => [`${n - i}.00 ms`, 1 + (i % 7)] as [string, number]));
    expect(ix.count).toBe(n);
    expect(ix.sortedOrder()[0]).toBe(n - 1);
    expect(ix.length(4999)).toBe(1 + (4999 % 7));
  });

  test('property: batches cover the sorted order once, within budget, packed, read in spill order', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 1, max: 300 })), { maxLength: 200 }),
        fc.integer({ min: 1, max: 2000 }),
        (raw, budget) => {
          const ix = indexOf(raw.map(([t, len]) => [`${t}.00 ms`, len]));
          const seen: number[] = [];
          for (const b of ix.batches(budget)) {
            const recs = [...b.records];
            expect(recs.length).toBeGreaterThan(0);
            const need = recs.reduce((s, r) => s + ix.length(r) + SEPARATOR_BYTES, 0);
            expect(b.bytes).toBe(need);
            if (recs.length > 1) expect(b.bytes).toBeLessThanOrEqual(budget);
            let at = 0;
            recs.forEach((r, j) => {
              expect(b.dest[j]).toBe(at);
              at += ix.length(r) + SEPARATOR_BYTES;
            });
            const reads = [...b.byFile].map((j) => ix.offset(recs[j]!));
            expect(reads).toEqual([...reads].sort((x, y) => x - y));
            seen.push(...recs);
          }
          expect(seen).toEqual([...ix.sortedOrder()]);
        },
      ),
      { numRuns: 200 },
    );
  });
});
