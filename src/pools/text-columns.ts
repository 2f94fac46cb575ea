/**
 * Per-slot text columns of a pool owner's table (proxy-table.ts) that cost
 * no string per proxy in the usual case (issue 29: a million proxies in at
 * most 300 bytes each; bench/micro-pool-memory.ts measures them):
 *
 * - AddressColumn: a host (or an exit address) that is an IPv4 literal in
 *   its canonical form as 4 bytes (Uint32Array); anything else (a hostname,
 *   IPv6, a literal with leading zeros, 0.0.0.0) as its own string in a
 *   sparse Map. 0 in the array means "see the Map", absent there = null.
 * - TextColumn: texts of few distinct values (error messages, credentials)
 *   as a 2-byte code of the column's own list (0 = null); past MAX_TEXTS
 *   distinct texts a new one is kept as the slot's own string in a sparse
 *   Map (code OWN), so the list never outgrows the codes.
 *
 * Pure data; a slot's value reads back exactly as it was written.
 */

/** The IPv4 literal `s` as an unsigned 32-bit number when it is canonical (no leading zeros), else -1. */
export function ipv4Number(s: string): number {
  const n = s.length;
  if (n < 7 || n > 15) return -1;
  let value = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c === 46) {
      if (digits === 0 || dots === 3) return -1;
      value = value * 256 + octet;
      octet = 0;
      digits = 0;
      dots++;
    } else if (c >= 48 && c <= 57) {
      if (digits > 0 && octet === 0) return -1; // a leading zero
      octet = octet * 10 + (c - 48);
      if (octet > 255) return -1;
      digits++;
    } else return -1;
  }
  if (digits === 0 || dots !== 3) return -1;
  return value * 256 + octet;
}

/** The dotted form of an unsigned 32-bit IPv4 number. */
export const ipv4Text = (v: number): string => `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;

export class AddressColumn {
  v4: Uint32Array;
  /** Slots whose address is not a canonical IPv4 literal (or is 0.0.0.0). */
  readonly other = new Map<number, string>();

  constructor(capacity: number) {
    this.v4 = new Uint32Array(capacity);
  }

  get(slot: number): string | null {
    const v = this.v4[slot]!;
    return v === 0 ? (this.other.get(slot) ?? null) : ipv4Text(v);
  }

  set(slot: number, s: string | null): void {
    const v = s === null ? -1 : ipv4Number(s);
    if (v > 0) {
      this.v4[slot] = v;
      this.other.delete(slot);
      return;
    }
    this.v4[slot] = 0;
    if (s === null) this.other.delete(slot);
    else this.other.set(slot, s);
  }

  /** Room for `capacity` slots (more or fewer; the first `capacity` kept). */
  resize(capacity: number): void {
    const a = new Uint32Array(capacity);
    a.set(this.v4.subarray(0, Math.min(capacity, this.v4.length)));
    this.v4 = a;
    for (const k of this.other.keys()) if (k >= capacity) this.other.delete(k);
  }
}

/** Distinct texts a TextColumn codes; the next ones are kept per slot. */
export const MAX_TEXTS = 0xfffe;
const OWN = 0xffff;

export class TextColumn {
  codes: Uint16Array;
  /** Code c's text at c - 1. */
  readonly #texts: string[] = [];
  readonly #index = new Map<string, number>();
  /** The slots with code OWN: their own text. */
  readonly own = new Map<number, string>();

  constructor(capacity: number) {
    this.codes = new Uint16Array(capacity);
  }

  get(slot: number): string | null {
    const c = this.codes[slot]!;
    if (c === 0) return null;
    if (c === OWN) return this.own.get(slot) ?? null;
    return this.#texts[c - 1] ?? null;
  }

  set(slot: number, s: string | null): void {
    if (this.codes[slot] === OWN) this.own.delete(slot);
    if (s === null) {
      this.codes[slot] = 0;
      return;
    }
    let c = this.#index.get(s);
    if (c === undefined && this.#texts.length < MAX_TEXTS) {
      this.#texts.push(s);
      c = this.#texts.length;
      this.#index.set(s, c);
    }
    if (c === undefined) {
      this.codes[slot] = OWN;
      this.own.set(slot, s);
    } else this.codes[slot] = c;
  }

  /** Distinct texts coded so far. */
  get distinct(): number {
    return this.#texts.length;
  }

  resize(capacity: number): void {
    const a = new Uint16Array(capacity);
    a.set(this.codes.subarray(0, Math.min(capacity, this.codes.length)));
    this.codes = a;
    for (const k of this.own.keys()) if (k >= capacity) this.own.delete(k);
  }
}
