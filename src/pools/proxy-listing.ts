/**
 * An unlimited txt / csv listing (`query.all`, DECISIONS "Mixed lists") from
 * a pool owner's memory in one pass, instead of page after page of
 * memoryPage (each a whole scan of the table). Pure.
 *
 * The snapshot (listingOrder), taken at once: the slots that match the query
 * and come after its cursor (proxy-page.ts's selector: one scan of the
 * table, the keys of the matches only) and their order (one stable radix
 * sort of the matches, key-sort.ts; the scan goes in id order, or backwards
 * for the descending sorts, so equal keys keep the id order the listing
 * wants). Typed arrays, no object per proxy.
 *
 * The text (MemoryListing.next, each call a bounded piece of work so the
 * caller can let the event loop go between two):
 *   - txt: first the lines, LINE_STEP matches a call, written in the scan's
 *     order into one byte buffer (the table's columns and strings are read
 *     in memory order, not at random places: bench/RESULTS.md "Working txt
 *     from memory (issue 29)"), then copied out in the listing's order,
 *     TXT_CHUNK lines a call. The line is the proxy's as of the snapshot
 *     (its address never changes; with `scheme=true` its protocol then).
 *   - csv: CSV_CHUNK rows a call, each read from the table as it is written.
 * Each slot of the snapshot once; one whose proxy was removed from the pool
 * meanwhile (a dead slot) is left out, a proxy added meanwhile is not in
 * it, and `gone` (the pool deleted) ends the text where it is. Slots are
 * never reused (proxy-table.ts), so a slot still names its proxy.
 */
import { sortByKey } from './key-sort';
import { selector } from './proxy-page';
import type { PoolProxiesQuery } from './query';
import type { ProxyTable } from './proxy-table';
import { poolCsvRow, rowProtocol, txtLine, type TextPageOptions } from './render';
import { poolProxyObject } from './shape';

/** txt lines written into the snapshot's buffer per call. */
export const LINE_STEP = 16_384;
/** txt lines copied out per call (~20 bytes each). */
export const TXT_CHUNK = 16_384;
/** csv rows per call (each a row object and 28 cells: fewer than txt lines for the same few ms). */
export const CSV_CHUNK = 256;

/** A listing's matches: `scan` their slots in the scan's order, `order` the positions in `scan` in the listing's order. */
export interface ListingOrder {
  scan: Int32Array;
  order: Int32Array;
}

/** Every match of `q` (filters, after its cursor) and its order. RangeError: a cursor of another sort. */
export function listingOrder(t: ProxyTable, q: PoolProxiesQuery): ListingOrder {
  const pick = selector(t, q);
  const desc = q.sort !== 'latency';
  let scan = new Int32Array(Math.min(t.size, 1024));
  let keys = new Float64Array(scan.length);
  let m = 0;
  // whether the scan met the ids in its order (the table's rule: ids ascend with the slot)
  let inOrder = true;
  let lastId = desc ? Infinity : -Infinity;
  for (let i = 0; i < t.size; i++) {
    const s = desc ? t.size - 1 - i : i;
    const key = pick(s);
    if (key !== key) continue; // NaN: not listed
    if (m === scan.length) {
      const n = Math.min(t.size, m * 2);
      scan = grown(scan, new Int32Array(n));
      keys = grown(keys, new Float64Array(n));
    }
    const id = t.id[s]!;
    if (desc ? id >= lastId : id <= lastId) inOrder = false;
    lastId = id;
    scan[m] = s;
    keys[m++] = key;
  }
  scan = scan.subarray(0, m);
  keys = keys.subarray(0, m);
  if (!inOrder) {
    // never with the owner's tables; kept so that equal keys stay in id order if ids ever came out of order
    const byId = Int32Array.from({ length: m }, (_, i) => i).sort((a, b) => (desc ? -1 : 1) * (t.id[scan[a]!]! - t.id[scan[b]!]!));
    scan = byId.map((i) => scan[i]!);
    keys = Float64Array.from(byId, (i) => keys[i]!);
  }
  return { scan, order: sortByKey(keys, desc) };
}

function grown<A extends Int32Array | Float64Array>(old: A, next: A): A {
  next.set(old as never);
  return next;
}

/** A listing read a piece at a time (what store.ts hands the route for `query.all`). */
export interface ProxyListing {
  /**
   * The next bytes of the text written as `o` says (the same `o` every call:
   * the query's format and scheme, the pool's type, the listing's clock):
   * UTF-8, no csv header; empty: work done, nothing to write yet; null at its
   * end, or once the pool is gone.
   */
  next(o: TextPageOptions): Uint8Array | null;
}

/** One row of the table as a listing's line (render.ts's txtLine / poolCsvRow of the row). */
export function slotText(t: ProxyTable, s: number, o: TextPageOptions): string {
  if (o.format === 'csv') return poolCsvRow(poolProxyObject(t.rowOf(s), o.poolType, o.nowMs));
  const address = { ...t.addressAt(s), format: t.formatOf(s) };
  return txtLine(address, o.scheme ? rowProtocol({ type: t.typeOf(s), protocol: t.protocolOf(s) }, o.poolType) : null);
}

/** Bytes written in place: `p` of `buf` used. */
interface Bytes {
  buf: Uint8Array;
  p: number;
}

const encoder = new TextEncoder();

function room(b: Bytes, n: number): void {
  if (b.buf.length - b.p >= n) return;
  const next = new Uint8Array(Math.max(b.buf.length * 2, b.p + n));
  next.set(b.buf.subarray(0, b.p));
  b.buf = next;
}

/** UTF-8 of `s`: ASCII a byte at a time, the rest through TextEncoder. */
function putText(b: Bytes, s: string): void {
  room(b, s.length * 3);
  const buf = b.buf;
  let p = b.p;
  for (let j = 0; j < s.length; j++) {
    const c = s.charCodeAt(j);
    if (c >= 0x80) {
      b.p = p + encoder.encodeInto(s.slice(j), buf.subarray(p)).written;
      return;
    }
    buf[p++] = c;
  }
  b.p = p;
}

/** `host:port` and LF written from the table's columns, no string made for it: a proxy without credentials (formatHost: an IPv6 host in brackets). */
/** Decimal digits of `n` (0..65535) at `p` of `buf`; the position after them. */
function putDecimal(buf: Uint8Array, p: number, n: number): number {
  for (let d = n >= 10_000 ? 10_000 : n >= 1_000 ? 1_000 : n >= 100 ? 100 : n >= 10 ? 10 : 1; d >= 1; d = (d / 10) | 0) buf[p++] = 0x30 + (((n / d) | 0) % 10);
  return p;
}

/** `a.b.c.d:port\n` of an IPv4 address held as its 32-bit number (text-columns.ts ipv4Number). */
function putV4Port(b: Bytes, v: number, port: number): void {
  room(b, 22);
  const buf = b.buf;
  let p = putDecimal(buf, b.p, v >>> 24);
  buf[p++] = 0x2e;
  p = putDecimal(buf, p, (v >>> 16) & 255);
  buf[p++] = 0x2e;
  p = putDecimal(buf, p, (v >>> 8) & 255);
  buf[p++] = 0x2e;
  p = putDecimal(buf, p, v & 255);
  buf[p++] = 0x3a;
  p = putDecimal(buf, p, port);
  buf[p++] = 0x0a;
  b.p = p;
}

function putHostPort(b: Bytes, host: string, port: number): void {
  const n = host.length;
  room(b, 3 * n + 9);
  const buf = b.buf;
  let p = b.p;
  const v6 = host.includes(':');
  if (v6) buf[p++] = 0x5b;
  for (let j = 0; j < n; j++) {
    const c = host.charCodeAt(j);
    if (c >= 0x80) {
      // not a host the parser gives (IDN hosts are punycode), written right all the same
      b.p = b.p + encoder.encodeInto(`${v6 ? '[' : ''}${host}`, buf.subarray(b.p)).written;
      p = b.p;
      break;
    }
    buf[p++] = c;
  }
  if (v6) buf[p++] = 0x5d;
  buf[p++] = 0x3a;
  p = putDecimal(buf, p, port);
  buf[p++] = 0x0a;
  b.p = p;
}

/** The snapshot of table `t` written as text (module header); `gone`: the pool was deleted. */
export class MemoryListing implements ProxyListing {
  readonly #t: ProxyTable;
  readonly #scan: Int32Array;
  readonly #order: Int32Array;
  readonly #gone: () => boolean;
  /** txt: the lines in the scan's order, line i at offsets[i] .. offsets[i + 1] (made at the first call). */
  #lines: Bytes | null = null;
  #offsets = new Int32Array(0);
  /** txt: lines written so far (all of them: the copying starts). */
  #linesDone = 0;
  /** The next position of `order` to write. */
  #next = 0;

  constructor(t: ProxyTable, snapshot: ListingOrder, gone: () => boolean) {
    this.#t = t;
    this.#scan = snapshot.scan;
    this.#order = snapshot.order;
    this.#gone = gone;
  }

  next(o: TextPageOptions): Uint8Array | null {
    if (this.#gone() || this.#next >= this.#order.length) return null;
    if (o.format === 'csv') return this.#rows(CSV_CHUNK, o);
    if (this.#linesDone < this.#scan.length) {
      this.#writeLines(LINE_STEP, o);
      return new Uint8Array(0);
    }
    return this.#copyLines(TXT_CHUNK);
  }

  #writeLines(n: number, o: TextPageOptions): void {
    const t = this.#t;
    if (this.#lines === null) {
      this.#lines = { buf: new Uint8Array(this.#scan.length * 22), p: 0 };
      this.#offsets = new Int32Array(this.#scan.length + 1);
    }
    const b = this.#lines;
    const plain = !o.scheme;
    const { port } = t;
    const v4 = t.hosts.v4;
    const scan = this.#scan;
    const offsets = this.#offsets;
    const end = Math.min(scan.length, this.#linesDone + n);
    for (let i = this.#linesDone; i < end; i++) {
      const s = scan[i]!;
      offsets[i] = b.p;
      if (plain && t.usernameOf(s) === '') {
        // an IPv4 host is a number in the table (text-columns.ts): its digits written straight from it
        const v = v4[s]!;
        if (v !== 0) putV4Port(b, v, port[s]!);
        else putHostPort(b, t.hostOf(s), port[s]!);
      } else putText(b, slotText(t, s, o));
    }
    offsets[end] = b.p;
    this.#linesDone = end;
  }

  #copyLines(n: number): Uint8Array | null {
    const live = this.#t.live;
    const lines = this.#lines!.buf;
    const offsets = this.#offsets;
    const out: Bytes = { buf: new Uint8Array(n * 24), p: 0 };
    let written = 0;
    while (written < n && this.#next < this.#order.length) {
      const i = this.#order[this.#next++]!;
      if (live[this.#scan[i]!] !== 1) continue;
      const from = offsets[i]!;
      const to = offsets[i + 1]!;
      room(out, to - from);
      const buf = out.buf;
      let p = out.p;
      for (let k = from; k < to; k++) buf[p++] = lines[k]!;
      out.p = p;
      written++;
    }
    return written === 0 ? null : out.buf.subarray(0, out.p);
  }

  #rows(n: number, o: TextPageOptions): Uint8Array | null {
    const t = this.#t;
    const out: Bytes = { buf: new Uint8Array(n * 256), p: 0 };
    let written = 0;
    while (written < n && this.#next < this.#order.length) {
      const s = this.#scan[this.#order[this.#next++]!]!;
      if (t.live[s] !== 1) continue;
      putText(out, slotText(t, s, o));
      written++;
    }
    return written === 0 ? null : out.buf.subarray(0, out.p);
  }
}
