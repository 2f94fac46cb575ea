/**
 * The listing's reply frame (src/cluster/pool-listing-wire.ts) is pure:
 * every frame the encoder makes decodes to itself, bytes as they were; any
 * other bytes decode to null or to a frame the encoder could have made; a
 * chunk's budget stays under the server's max_payload with the frame's head.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { chunkBudget, decodeListingFrame, encodeListingFrame, FRAME_ROOM, isListingId, MAX_CHUNK_BYTES, type ListingFrame } from '../../src/cluster/pool-listing-wire';

const id = fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/);
const frame: fc.Arbitrary<ListingFrame> = fc.oneof(
  fc.constant({ kind: 'none' as const }),
  fc.record({ kind: fc.constantFrom('more' as const, 'end' as const), id, bytes: fc.uint8Array({ maxLength: 300 }) }),
);

describe('pool listing wire', () => {
  test('every frame round-trips, its bytes as they were', () => {
    fc.assert(
      fc.property(frame, (f) => {
        const back = decodeListingFrame(encodeListingFrame(f));
        expect(back === null ? null : { ...back, ...('bytes' in back ? { bytes: Uint8Array.from(back.bytes) } : {}) }).toEqual(f);
      }),
    );
  });

  test('any bytes: null, or a frame that encodes back to them', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (b) => {
        const f = decodeListingFrame(b);
        if (f !== null) expect(encodeListingFrame(f)).toEqual(b);
      }),
      { numRuns: 2000 },
    );
  });

  test('refused: another version, another kind, an id cut short or not the owner\'s kind, a NONE with more', () => {
    const ok = encodeListingFrame({ kind: 'more', id: 'abc', bytes: Uint8Array.of(65) });
    expect(decodeListingFrame(ok)).not.toBeNull();
    expect(decodeListingFrame(Uint8Array.of(2, ...ok.subarray(1)))).toBeNull();
    expect(decodeListingFrame(Uint8Array.of(1, 3, ...ok.subarray(2)))).toBeNull();
    expect(decodeListingFrame(Uint8Array.of(1, 1, 9, 97, 98))).toBeNull();
    expect(decodeListingFrame(Uint8Array.of(1, 1, 1, 46, 65))).toBeNull();
    expect(decodeListingFrame(Uint8Array.of(1, 1, 0, 65))).toBeNull();
    expect(decodeListingFrame(Uint8Array.of(1, 0, 0, 65))).toBeNull();
    expect(decodeListingFrame(Uint8Array.of(1, 0))).toBeNull();
    expect(() => encodeListingFrame({ kind: 'end', id: 'a.b', bytes: new Uint8Array(0) })).toThrow();
    expect(isListingId('x'.repeat(65))).toBe(false);
  });

  test("a chunk's budget: under max_payload with the head's room, at most MAX_CHUNK_BYTES", () => {
    expect(chunkBudget(1024 * 1024)).toBe(1024 * 1024 - FRAME_ROOM);
    expect(chunkBudget(8 * 1024 * 1024)).toBe(MAX_CHUNK_BYTES - FRAME_ROOM);
    fc.assert(
      fc.property(fc.integer({ min: 2048, max: 64 * 1024 * 1024 }), id, (max, i) => {
        const b = chunkBudget(max);
        expect(encodeListingFrame({ kind: 'more', id: i, bytes: new Uint8Array(b) }).length).toBeLessThanOrEqual(max);
      }),
    );
  });
});
