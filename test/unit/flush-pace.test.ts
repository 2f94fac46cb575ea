import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { FLUSH_SPAN_SHARE, flushGapMs, MAX_GAP_MS } from '../../src/pools/flush-pace';

describe('flushGapMs: the pause between two chunks of a flush', () => {
  test('with time to spare: as long as the chunk took (half of the thread), at most MAX_GAP_MS', () => {
    expect(flushGapMs({ chunkMs: 20, elapsedMs: 0, chunksLeft: 10, flushMs: 10_000 })).toBe(20);
    expect(flushGapMs({ chunkMs: 500, elapsedMs: 0, chunksLeft: 2, flushMs: 10_000 })).toBe(MAX_GAP_MS);
  });

  test('no pause after the last chunk, for an empty or instant chunk', () => {
    expect(flushGapMs({ chunkMs: 20, elapsedMs: 0, chunksLeft: 0, flushMs: 10_000 })).toBe(0);
    expect(flushGapMs({ chunkMs: 20, elapsedMs: 0, chunksLeft: -1, flushMs: 10_000 })).toBe(0);
    expect(flushGapMs({ chunkMs: 0, elapsedMs: 0, chunksLeft: 5, flushMs: 10_000 })).toBe(0);
  });

  test('behind: shorter, then none, so the flush ends within its span', () => {
    // 100 chunks of 40 ms left with 4 s of the 8 s span used: 40 ms each at most, the chunk itself included
    expect(flushGapMs({ chunkMs: 40, elapsedMs: 4_000, chunksLeft: 100, flushMs: 10_000 })).toBe(0);
    expect(flushGapMs({ chunkMs: 30, elapsedMs: 4_000, chunksLeft: 100, flushMs: 10_000 })).toBe(10);
    expect(flushGapMs({ chunkMs: 30, elapsedMs: 9_000, chunksLeft: 3, flushMs: 10_000 })).toBe(0);
  });

  test('a flush of chunks of one duration, paced by it, ends within the span whenever it could without pauses', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 400 }), fc.double({ min: 1, max: 200, noNaN: true }), fc.integer({ min: 1000, max: 60_000 }), (chunks, chunkMs, flushMs) => {
        let t = 0;
        for (let left = chunks - 1; left >= 0; left--) {
          t += chunkMs;
          const gap = flushGapMs({ chunkMs, elapsedMs: t, chunksLeft: left, flushMs });
          expect(gap).toBeGreaterThanOrEqual(0);
          expect(gap).toBeLessThanOrEqual(Math.min(MAX_GAP_MS, chunkMs) + 1e-9);
          t += gap;
        }
        // the pauses never push a flush past its span; one that could not fit anyway gets none
        if (chunks * chunkMs <= FLUSH_SPAN_SHARE * flushMs) expect(t).toBeLessThanOrEqual(FLUSH_SPAN_SHARE * flushMs + 1e-6);
        else expect(t).toBeCloseTo(chunks * chunkMs, 6);
      }),
    );
  });
});
