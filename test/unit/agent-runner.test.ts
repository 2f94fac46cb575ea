import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { shardsToFetch } from '../../src/cluster/agent-runner';
import { SHARD_MAX_TASKS } from '../../src/cluster/protocol';

describe('shardsToFetch: an agent takes about as many probes as it has free slots', () => {
  test('full-size shards: one per SHARD_MAX_TASKS free slots, so two agents of a region share a window', () => {
    // 9 500 free slots and a window of 19 000 probes in 512-task shards: 18 shards, not the whole queue
    expect(shardsToFetch(9_500, SHARD_MAX_TASKS)).toBe(18);
    expect(shardsToFetch(100, SHARD_MAX_TASKS)).toBe(1);
  });
  test('small shards: more per fetch, at most 64', () => {
    expect(shardsToFetch(1_000, 32)).toBe(31);
    expect(shardsToFetch(100_000, 4)).toBe(64);
  });
  test('always 1..64, and never more probes than free slots plus one shard', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), fc.double({ min: 0, max: 10_000, noNaN: true }), (free, per) => {
        const n = shardsToFetch(free, per);
        expect(n).toBeGreaterThanOrEqual(1);
        expect(n).toBeLessThanOrEqual(64);
        if (n > 1) expect(n * Math.max(1, per)).toBeLessThanOrEqual(free);
      }),
    );
  });
});
