/**
 * Identity of a proxy for de-duplication (DECISIONS "Input": same host, port,
 * user, password = one proxy, checked and charged once). Pure.
 *
 * - A proxy's own protocol (its line's scheme, ProxyAddress.protocol) is part
 *   of it: "socks5://h:1" and "http://h:1" are two proxies (DECISIONS "Mixed
 *   lists").
 * - proxyKey: an unambiguous string key (a normalised host never contains a
 *   space, the port is decimal, the username is length-prefixed).
 * - ProxySet: the same identity in an open-addressing hash table over the
 *   address fields. Used by the list parser: building a string key and hashing
 *   it in a Set cost more than parsing the line itself on large lists.
 * A username with no password and a username with an empty password are the same
 * proxy (the parser always yields both fields together).
 */
import { ipv4At } from './host';
import { PROXY_TYPES, type ProxyAddress, type ProxyType } from './types';

export function proxyKey(p: ProxyAddress): string {
  // a host never holds a "/": the protocol's prefix cannot be confused with one
  const pre = p.protocol === undefined ? '' : `${p.protocol}/`;
  if (p.username === undefined) return `${pre}${p.host} ${p.port}`;
  return `${pre}${p.host} ${p.port} ${p.username.length} ${p.username}${p.password ?? ''}`;
}

/**
 * What proxyHash mixes in for a proxy's own protocol (ProxyAddress.protocol):
 * above every UTF-16 code unit, so it never reads as one more char of a
 * password. 0: no protocol of its own, nothing mixed in.
 */
export function protocolMix(protocol: ProxyType | undefined): number {
  return protocol === undefined ? 0 : 0x10000 + PROXY_TYPES.indexOf(protocol) + 1;
}

/** The last step of proxyHash: the protocol mixed in (protocolMix, 0 = none), then hashFinal. */
export function hashWithProtocol(h: number, mix: number): number {
  return hashFinal(mix === 0 ? h : hashInt(h, mix));
}

// Building blocks of proxyHash, exported so the list parser can hash the fields
// straight from its input text (same value, no field strings touched).

/**
 * The start of every proxy hash: random per process (per thread, in fact:
 * hashes never cross a thread). With a constant one, FNV-1a's offset basis,
 * anyone could craft a list offline whose entries all land in one run of
 * ProxySet's table, and every insert would walk it (hash flooding): 100 000
 * such lines held the main thread 4.3 s in the parser, against 40 ms with
 * this seed. Unknown to the sender, the seed makes that guesswork.
 */
export const HASH_SEED = crypto.getRandomValues(new Int32Array(1))[0]!;

/** One FNV-1a step with a whole number (an IPv4 value, a port, a length). */
export function hashInt(h: number, x: number): number {
  return Math.imul(h ^ x, 0x01000193);
}

/** FNV-1a over the UTF-16 code units of s[a, b). */
export function hashChars(h: number, s: string, a = 0, b = s.length): number {
  for (let i = a; i < b; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h;
}

/** Final avalanche (murmur3 fmix32) so the low bits used as the slot are mixed. */
export function hashFinal(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) | 0;
}

/**
 * 32-bit hash of the identity fields: FNV-1a over the text, except that an IPv4
 * host hashes as its numeric value (cheaper; the list parser already has it).
 * `v4` is the host's IPv4 value when the caller knows it (-1 = not IPv4).
 */
export function proxyHash(p: ProxyAddress, v4 = ipv4At(p.host, 0, p.host.length)): number {
  let h = v4 >= 0 ? hashInt(HASH_SEED, v4) : hashChars(HASH_SEED, p.host);
  h = hashInt(h, p.port);
  if (p.username !== undefined) {
    h = hashInt(h, p.username.length + 1);
    h = hashChars(h, p.username);
    h = hashChars(h, p.password ?? '');
  }
  return hashWithProtocol(h, protocolMix(p.protocol));
}

export function sameProxy(a: ProxyAddress, b: ProxyAddress): boolean {
  return (
    a.port === b.port &&
    a.host === b.host &&
    a.protocol === b.protocol &&
    a.username === b.username &&
    (a.username === undefined || (a.password ?? '') === (b.password ?? ''))
  );
}

/**
 * Insert-only set of proxies (identity as above), linear probing, at most half
 * full. A slot is one int: 0 when empty, else the item's index + 1 in the low
 * `bits` bits (2^bits = slot count) and, above them, a tag of the hash bits the
 * slot index does not use, so a probe rarely has to look past the table. 4 bytes
 * a slot keep the table small enough to stay in cache on large lists; the full
 * hashes live in a per-item array (read on a tag match and when growing).
 */
export class ProxySet<T extends ProxyAddress = ProxyAddress> {
  private items: T[] = [];
  private hashes: Int32Array;
  private table: Int32Array;
  private bits: number;

  /** `expected`: how many proxies are likely (a sizing hint; the set grows as needed). */
  constructor(expected = 0) {
    let bits = 10;
    while (1 << bits < expected * 2 && bits < 30) bits++;
    this.bits = bits;
    this.table = new Int32Array(1 << bits);
    this.hashes = new Int32Array(Math.max(512, Math.min(expected, 1 << 29)));
  }

  get size(): number {
    return this.items.length;
  }

  /** Adds p; false when an equal proxy is already in the set. `v4` as for proxyHash. */
  add(p: T, v4?: number): boolean {
    return this.addHashed(p, proxyHash(p, v4));
  }

  /** Adds p, whose proxyHash the caller already computed (it MUST be proxyHash(p)). */
  addHashed(p: T, h: number): boolean {
    const table = this.table;
    const bits = this.bits;
    const mask = (1 << bits) - 1;
    const tag = (h >>> bits) & (0x7fffffff >>> bits);
    let i = h & mask;
    for (;;) {
      const s = table[i] ?? 0;
      if (s === 0) break;
      if (s >>> bits === tag) {
        const k = (s & mask) - 1;
        if (this.hashes[k] === h && sameProxy(this.items[k] as T, p)) return false;
      }
      i = (i + 1) & mask;
    }
    const n = this.items.length;
    if (n === this.hashes.length) {
      const more = new Int32Array(n * 2);
      more.set(this.hashes);
      this.hashes = more;
    }
    this.items.push(p);
    this.hashes[n] = h;
    table[i] = (tag << bits) | (n + 1);
    if ((n + 1) * 2 > mask) this.grow();
    return true;
  }

  /** The unique proxies in insertion order (the set's own array: do not mutate). */
  values(): T[] {
    return this.items;
  }

  private grow(): void {
    const bits = this.bits + 1;
    const mask = (1 << bits) - 1;
    const table = new Int32Array(1 << bits);
    const hashes = this.hashes;
    for (let k = 0; k < this.items.length; k++) {
      const h = hashes[k] ?? 0;
      let i = h & mask;
      while ((table[i] ?? 0) !== 0) i = (i + 1) & mask;
      table[i] = (((h >>> bits) & (0x7fffffff >>> bits)) << bits) | (k + 1);
    }
    this.table = table;
    this.bits = bits;
  }
}
