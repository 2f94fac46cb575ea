/**
 * An unlimited txt / csv listing of a pool asked of its owner (pure: the
 * reply frame and its codec; no I/O). The requests are pool-reads-wire.ts
 * JSON (`listing`, `more`, `close`), on the owner's `pc.pools.<node>`; the
 * owner takes its one-pass snapshot (src/pools/proxy-listing.ts) at the
 * `listing` request and answers each request with one chunk of the text,
 * the asker pulling the next (`more`, with the chunk's number) only when it
 * wants it, so neither side holds more than a chunk or two of a reader that
 * is slow (the owner holds the snapshot until the end, a `close`, or
 * LISTING_IDLE_MS without a pull):
 *
 *   asker -> {v, op: "listing", pool, query, pool_type, now_ms}
 *         <- frame MORE  id, chunk 0            (or END: the whole text in one)
 *   asker -> {v, op: "more", pool, listing: id, seq: 1}
 *         <- frame MORE  id, chunk 1
 *   ...   <- frame END   id, the last chunk     (the snapshot dropped)
 *         <- frame NONE                         (not held here, no such listing, or
 *                                                not the chunk it expected: the asker
 *                                                fails the text, it never skips)
 *   asker -> {v, op: "close", pool, listing: id} (no reply: the reader went away)
 *
 * A frame, bytes, so the text travels as it is (no JSON string, no base64):
 *
 *   [0] version (1)   [1] kind: 0 NONE, 1 MORE, 2 END
 *   [2] n, the listing id's length (0 with NONE)   [3 .. 3+n) the id (ASCII)
 *   [3+n ..) the chunk's bytes (none with NONE)
 *
 * A chunk is at most the owner's budget (chunkBudget: under the NATS server's
 * max_payload). decodeListingFrame returns null for anything encodeListingFrame
 * does not produce.
 */

export const LISTING_WIRE_VERSION = 1;

export type ListingFrame = { kind: 'none' } | { kind: 'more' | 'end'; id: string; bytes: Uint8Array };

const KINDS = ['none', 'more', 'end'] as const;
const HEAD = 3;

/** An id the owner makes: 1..64 of [A-Za-z0-9_-] (a NATS-safe token, one byte a character). */
export const isListingId = (v: unknown): v is string => typeof v === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(v);

/** A chunk of text goes under `maxPayload` with this room for the frame's head. */
export const FRAME_ROOM = 256;
/** The largest chunk, whatever the server allows: a larger one only delays the first byte. */
export const MAX_CHUNK_BYTES = 1024 * 1024;

/** Bytes of text per chunk for a server of `maxPayload` (NATS's default 1 MiB: 1 MiB less FRAME_ROOM). */
export function chunkBudget(maxPayload: number): number {
  return Math.max(1024, Math.min(MAX_CHUNK_BYTES, maxPayload) - FRAME_ROOM);
}

export function encodeListingFrame(f: ListingFrame): Uint8Array {
  if (f.kind === 'none') return Uint8Array.of(LISTING_WIRE_VERSION, 0, 0);
  if (!isListingId(f.id)) throw new Error(`not a listing id: ${JSON.stringify(f.id)}`);
  const out = new Uint8Array(HEAD + f.id.length + f.bytes.length);
  out[0] = LISTING_WIRE_VERSION;
  out[1] = KINDS.indexOf(f.kind);
  out[2] = f.id.length;
  for (let i = 0; i < f.id.length; i++) out[HEAD + i] = f.id.charCodeAt(i);
  out.set(f.bytes, HEAD + f.id.length);
  return out;
}

export function decodeListingFrame(b: Uint8Array): ListingFrame | null {
  if (b.length < HEAD || b[0] !== LISTING_WIRE_VERSION) return null;
  const kind = KINDS[b[1]!];
  const n = b[2]!;
  if (kind === undefined) return null;
  if (kind === 'none') return n === 0 && b.length === HEAD ? { kind } : null;
  if (b.length < HEAD + n) return null;
  const id = String.fromCharCode(...b.subarray(HEAD, HEAD + n));
  if (!isListingId(id)) return null;
  return { kind, id, bytes: b.subarray(HEAD + n) };
}
