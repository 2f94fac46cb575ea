/**
 * The owner's side of a listing read by another node (the wire:
 * ./pool-listing-wire.ts): the listings open here, each the pool's one-pass
 * snapshot (src/pools/proxy-listing.ts) and how far it was sent, cut into
 * chunks of at most the budget.
 *
 * Each open listing lives from its `listing` request until its last chunk
 * is sent, a `close`, or LISTING_IDLE_MS without a pull (the asker died or
 * its reader stalled: its text then fails on the asker, which is told NONE
 * for a listing it no longer has). At most MAX_OPEN_LISTINGS at once: one
 * more is refused (NONE: the asker reads the durable copy instead).
 *
 * A chunk is the listing's next pieces (each a bounded piece of work) with a
 * macrotask before each but the first, so a 1 000 000-proxy listing never
 * holds the event loop for longer than one piece; a piece larger than the
 * room left is split, its rest the next chunk's start. One chunk at a time
 * per listing: a `more` is answered only for the chunk that comes next
 * (`seq`), never twice and never skipping one.
 */
import { randomUUID } from 'node:crypto';
import type { ListingText, ServedPools } from '../pools/ports';
import type { ProxyListing } from '../pools/proxy-listing';
import type { PoolProxiesQuery } from '../pools/query';
import type { TextPageOptions } from '../pools/render';
import type { ListingFrame } from './pool-listing-wire';
import { nextTurn } from '../clock';

/** An open listing no pull came for in this long is dropped. */
export const LISTING_IDLE_MS = 30_000;
/** Listings open at once on one node. */
export const MAX_OPEN_LISTINGS = 64;

interface Open {
  listing: ProxyListing;
  opts: TextPageOptions;
  /** The number of the chunk a `more` may ask next. */
  seq: number;
  /** Bytes of a piece that did not fit in the last chunk. */
  carry: Uint8Array | null;
  touched: number;
  /** A chunk is being made (a second `more` meanwhile is refused). */
  busy: boolean;
}

const NONE: ListingFrame = { kind: 'none' };
export class ServedListings {
  readonly #open = new Map<string, Open>();
  readonly #budget: () => number;
  readonly #now: () => number;
  readonly #idleMs: number;
  #sweeper: ReturnType<typeof setInterval> | null = null;

  /** `budget`: bytes of text a chunk may hold (pool-listing-wire.ts chunkBudget of the server's max_payload). */
  constructor(budget: () => number, o: { now?: () => number; idleMs?: number } = {}) {
    this.#budget = budget;
    this.#now = o.now ?? Date.now;
    this.#idleMs = o.idleMs ?? LISTING_IDLE_MS;
  }

  /** Listings open now. */
  get size(): number {
    return this.#open.size;
  }

  /** A new listing of the pool this node holds, answered with its first chunk; NONE when the pool is not held here or too many are open. */
  async open(pools: ServedPools, pool: string, query: PoolProxiesQuery, text: ListingText): Promise<ListingFrame> {
    this.#sweep();
    if (this.#open.size >= MAX_OPEN_LISTINGS || query.format === 'json') return NONE;
    const listing = pools.listing(pool, query);
    if (listing === null) return NONE;
    const id = randomUUID().replaceAll('-', '');
    const o: Open = { listing, opts: { format: query.format, scheme: query.scheme === true, ...text }, seq: 0, carry: null, touched: this.#now(), busy: true };
    this.#open.set(id, o);
    this.#sweepLater();
    return this.#chunk(id, o);
  }

  /** Chunk `seq` of listing `id`; NONE when it is not open here or that is not the chunk that comes next. */
  async more(id: string, seq: number): Promise<ListingFrame> {
    this.#sweep();
    const o = this.#open.get(id);
    if (o === undefined || o.busy || seq !== o.seq) return NONE;
    o.busy = true;
    return this.#chunk(id, o);
  }

  close(id: string): void {
    this.#open.delete(id);
  }

  /** Every open listing dropped (the node stops answering). */
  clear(): void {
    this.#open.clear();
    if (this.#sweeper !== null) clearInterval(this.#sweeper);
    this.#sweeper = null;
  }

  async #chunk(id: string, o: Open): Promise<ListingFrame> {
    const budget = this.#budget();
    const parts: Uint8Array[] = [];
    let n = 0;
    let ended = false;
    let first = true;
    try {
      while (n < budget) {
        let piece = o.carry;
        o.carry = null;
        if (piece === null) {
          if (!first) await nextTurn();
          first = false;
          if (!this.#open.has(id)) return NONE; // closed meanwhile
          piece = o.listing.next(o.opts);
          if (piece === null) {
            ended = true;
            break;
          }
        }
        const room = budget - n;
        if (piece.length > room) {
          o.carry = piece.subarray(room);
          piece = piece.subarray(0, room);
        }
        if (piece.length === 0) continue;
        parts.push(piece);
        n += piece.length;
      }
    } catch (err) {
      this.#open.delete(id);
      throw err;
    }
    o.busy = false;
    o.seq++;
    o.touched = this.#now();
    if (ended) this.#open.delete(id);
    return { kind: ended ? 'end' : 'more', id, bytes: parts.length === 1 ? parts[0]! : concat(parts, n) };
  }

  #sweep(): void {
    const old = this.#now() - this.#idleMs;
    for (const [id, o] of this.#open) if (!o.busy && o.touched < old) this.#open.delete(id);
    if (this.#open.size === 0 && this.#sweeper !== null) {
      clearInterval(this.#sweeper);
      this.#sweeper = null;
    }
  }

  /** While listings are open, a look every half idle time (no request may come to sweep them). */
  #sweepLater(): void {
    if (this.#sweeper !== null) return;
    this.#sweeper = setInterval(() => this.#sweep(), Math.max(10, this.#idleMs / 2));
    this.#sweeper.unref?.();
  }
}

function concat(parts: readonly Uint8Array[], n: number): Uint8Array {
  const out = new Uint8Array(n);
  let p = 0;
  for (const b of parts) {
    out.set(b, p);
    p += b.length;
  }
  return out;
}
