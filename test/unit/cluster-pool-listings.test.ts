/**
 * The owner's side of a listing read by another node (src/cluster/pool-listings.ts):
 * chunks of at most the budget that put the text back together whole and
 * in order (a piece larger than the room split), a `more` answered only for
 * the chunk that comes next, the listing dropped at its end, on `close`,
 * after its idle time, and no more than MAX_OPEN_LISTINGS at once.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { MAX_OPEN_LISTINGS, ServedListings } from '../../src/cluster/pool-listings';
import type { ListingFrame } from '../../src/cluster/pool-listing-wire';
import type { ServedPools } from '../../src/pools/ports';
import type { ProxyListing } from '../../src/pools/proxy-listing';
import { DEFAULT_PROXIES_QUERY } from '../../src/pools/query';

/** A listing of `pieces` (an empty one: work done, nothing to write yet), then null. */
function listingOf(pieces: readonly Uint8Array[]): ProxyListing {
  let i = 0;
  return { next: () => (i < pieces.length ? pieces[i++]! : null) };
}

function poolsOf(make: () => ProxyListing): ServedPools {
  return {
    localChanged: async () => false,
    localStats: () => null,
    localPage: () => null,
    localRecheck: () => false,
    memory: () => undefined,
    listing: (pool) => (pool === 'owned' ? make() : null),
  };
}

const Q = { ...DEFAULT_PROXIES_QUERY, format: 'txt' as const, all: true };
const TEXT = { poolType: 'http' as const, nowMs: 0 };
const bytesOf = (f: ListingFrame) => ('bytes' in f ? Uint8Array.from(f.bytes) : null);

describe('served listings', () => {
  test('chunks of at most the budget, whole and in order, the listing dropped at its end', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 12 }), fc.integer({ min: 1, max: 50 }), async (pieces, budget) => {
        const served = new ServedListings(() => budget);
        let f = await served.open(poolsOf(() => listingOf(pieces)), 'owned', Q, TEXT);
        const out: number[] = [];
        for (let seq = 1; ; seq++) {
          expect(f.kind).not.toBe('none');
          const b = bytesOf(f)!;
          expect(b.length).toBeLessThanOrEqual(budget);
          out.push(...b);
          if (f.kind === 'end') break;
          expect(b.length).toBe(budget); // a chunk that is not the last is full
          f = await served.more((f as { id: string }).id, seq);
        }
        expect(out).toEqual(pieces.flatMap((p) => [...p]));
        expect(served.size).toBe(0);
      }),
    );
  });

  test('a pool not held here, or json: NONE; a chunk asked twice, out of turn, or of a listing closed: NONE', async () => {
    const served = new ServedListings(() => 2);
    const pools = poolsOf(() => listingOf([Uint8Array.of(1, 2, 3, 4, 5)]));
    expect(await served.open(pools, 'elsewhere', Q, TEXT)).toEqual({ kind: 'none' });
    expect(await served.open(pools, 'owned', { ...Q, format: 'json' }, TEXT)).toEqual({ kind: 'none' });
    const f = await served.open(pools, 'owned', Q, TEXT);
    const id = (f as { id: string }).id;
    expect(bytesOf(f)).toEqual(Uint8Array.of(1, 2));
    expect(await served.more(id, 2)).toEqual({ kind: 'none' });
    expect(bytesOf(await served.more(id, 1))).toEqual(Uint8Array.of(3, 4));
    expect(await served.more(id, 1)).toEqual({ kind: 'none' });
    served.close(id);
    expect(await served.more(id, 2)).toEqual({ kind: 'none' });
    expect(served.size).toBe(0);
  });

  test('a listing nobody pulls for its idle time is dropped; no more than MAX_OPEN_LISTINGS open', async () => {
    let now = 0;
    const served = new ServedListings(() => 1, { now: () => now, idleMs: 1000 });
    const pools = poolsOf(() => listingOf([Uint8Array.of(1, 2, 3)]));
    const ids: string[] = [];
    for (let i = 0; i < MAX_OPEN_LISTINGS; i++) ids.push(((await served.open(pools, 'owned', Q, TEXT)) as { id: string }).id);
    expect(await served.open(pools, 'owned', Q, TEXT)).toEqual({ kind: 'none' });
    now = 600;
    expect((await served.more(ids[0]!, 1)).kind).toBe('more');
    now = 1200;
    expect((await served.open(pools, 'owned', Q, TEXT)).kind).toBe('more');
    expect(served.size).toBe(2);
    expect(await served.more(ids[1]!, 1)).toEqual({ kind: 'none' });
    expect(bytesOf(await served.more(ids[0]!, 2))).toEqual(Uint8Array.of(3));
    expect(await served.more(ids[0]!, 3)).toMatchObject({ kind: 'end', bytes: new Uint8Array(0) });
    served.clear();
    expect(served.size).toBe(0);
  });
});
