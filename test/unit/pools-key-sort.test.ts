/**
 * The listing's stable radix sort (src/pools/key-sort.ts) against a
 * comparator sort: random keys with many ties, ranges of one pass to past
 * 2^32 (the high word) and near 2^53, negative keys (uptime's -1), and keys
 * that are not integers (the comparator fallback), both directions.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { sortByKey } from '../../src/pools/key-sort';

/** The positions in order by a comparator (stable: ties by position). */
const reference = (keys: readonly number[], desc: boolean): number[] =>
  keys.map((_, i) => i).sort((a, b) => (desc ? keys[b]! - keys[a]! : keys[a]! - keys[b]!) || a - b);

const keysArb = fc.oneof(
  fc.array(fc.integer({ min: -1, max: 20 }), { maxLength: 200 }),
  fc.array(fc.integer({ min: 0, max: 2_147_483_647 }), { maxLength: 200 }),
  fc.array(fc.constantFrom(0, 1, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 1, 2 ** 43 + 7, 1_780_000_000_000_000, 2 ** 52), { maxLength: 100 }),
  fc.array(fc.maxSafeInteger().map((k) => Math.abs(k) % 2 ** 52), { maxLength: 100 }),
  fc.array(fc.constantFrom(0.5, 1, 1.25, -1, 3), { maxLength: 50 }),
);

describe('sortByKey', () => {
  test('property: the positions a stable comparator sort gives, ascending and descending', () => {
    fc.assert(
      fc.property(keysArb, fc.boolean(), (keys, desc) => {
        expect([...sortByKey(Float64Array.from(keys), desc)]).toEqual(reference(keys, desc));
      }),
      { numRuns: 500 },
    );
  });

  test('no key and one key', () => {
    expect([...sortByKey(new Float64Array(0), false)]).toEqual([]);
    expect([...sortByKey(Float64Array.of(7), true)]).toEqual([0]);
  });
});
