/**
 * The owner's due-time heap (src/pools/due-heap.ts): pops in due order (ties
 * by slot), updates and removals keep the order, and a fast-check model (a
 * sorted list) agrees after any sequence of pushes, updates, removals and
 * pops; a fake clock's due times only (pure).
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { DueHeap } from '../../src/pools/due-heap';

const drain = (h: DueHeap): number[] => {
  const out: number[] = [];
  for (let s = h.pop(); s >= 0; s = h.pop()) out.push(s);
  return out;
};

describe('DueHeap', () => {
  test('pops in due order, ties by the lower slot; empty: -1 and Infinity', () => {
    const due = Float64Array.from([50, 10, 30, 10, 20]);
    const h = new DueHeap(due);
    for (let s = 0; s < due.length; s++) h.push(s);
    expect(h.peek()).toBe(1);
    expect(h.peekDue()).toBe(10);
    expect(drain(h)).toEqual([1, 3, 4, 2, 0]);
    expect([h.pop(), h.peek(), h.peekDue(), h.size]).toEqual([-1, -1, Infinity, 0]);
  });

  test('a due time changed in place: update moves it; remove takes it out; push of a present slot updates', () => {
    const due = Float64Array.from([5, 6, 7, 8]);
    const h = new DueHeap(due);
    for (let s = 0; s < 4; s++) h.push(s);
    due[3] = 1;
    h.update(3);
    h.remove(0);
    expect(h.has(0)).toBe(false);
    due[1] = 100;
    h.push(1);
    expect(h.size).toBe(3);
    expect(drain(h)).toEqual([3, 2, 1]);
  });

  test('resize: a grown table\'s due times, room for more slots, the order kept', () => {
    let due = Float64Array.from([3, 1]);
    const h = new DueHeap(due, 2);
    h.push(0);
    h.push(1);
    const grown = new Float64Array(8);
    grown.set(due);
    grown[5] = 0;
    due = grown;
    h.resize(due, 8);
    h.push(5);
    expect(drain(h)).toEqual([5, 1, 0]);
  });

  test('property: agrees with a sorted model after any operations', () => {
    const N = 24;
    const op = fc.oneof(
      fc.record({ k: fc.constant('push' as const), slot: fc.nat(N - 1), at: fc.integer({ min: 0, max: 50 }) }),
      fc.record({ k: fc.constant('update' as const), slot: fc.nat(N - 1), at: fc.integer({ min: 0, max: 50 }) }),
      fc.record({ k: fc.constant('remove' as const), slot: fc.nat(N - 1) }),
      fc.record({ k: fc.constant('pop' as const) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const due = new Float64Array(N);
        const h = new DueHeap(due);
        const model = new Set<number>();
        const first = () => [...model].sort((a, b) => due[a]! - due[b]! || a - b)[0] ?? -1;
        for (const o of ops) {
          if (o.k === 'push') {
            due[o.slot] = o.at;
            h.push(o.slot);
            model.add(o.slot);
          } else if (o.k === 'update') {
            if (!model.has(o.slot)) continue;
            due[o.slot] = o.at;
            h.update(o.slot);
          } else if (o.k === 'remove') {
            h.remove(o.slot);
            model.delete(o.slot);
          } else {
            const want = first();
            expect(h.pop()).toBe(want);
            model.delete(want);
          }
          expect(h.size).toBe(model.size);
          expect(h.peek()).toBe(first());
        }
      }),
      { numRuns: 200 },
    );
  });
});
