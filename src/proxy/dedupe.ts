/**
 * Identity of a proxy for de-duplication (DECISIONS "Input": same host, port,
 * user, password = one proxy, checked and charged once). Pure.
 *
 * - proxyKey: an unambiguous string key (a normalised host never contains a
 *   space, the port is decimal, the username is length-prefixed).
 * - ProxySet: the same identity in an open-addressing hash table over the
 *   address fields. Used by the list parser: building a string key and hashing
 *   it in a Set cost more than parsing the line itself on large lists.
 * A username with no password and a username with an empty password are the same
 * proxy (the parser always yields both fields together).
 */
import { ipv4At } from './host';
import type { ProxyAddress } from './types';

export function proxyKey(p: ProxyAddress): string {
  if (p.username === undefined) return `${p.host} ${p.port}`;
  return `${p.host} ${p.port} ${p.username.length} ${p.username}${p.password ?? ''}`;
}

function hashString(h: number, s: string): number {
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h;
}

/**
 * 32-bit hash of the identity fields: FNV-1a over the text, except that an IPv4
 * host hashes as its numeric value (cheaper; the list parser already has it).
 * `v4` is the host's IPv4 value when the caller knows it (-1 = not IPv4).
 */
export function proxyHash(p: ProxyAddress, v4 = ipv4At(p.host, 0, p.host.length)): number {
  let h = v4 >= 0 ? Math.imul(0x811c9dc5 ^ v4, 0x01000193) : hashString(0x811c9dc5, p.host);
  h = Math.imul(h ^ p.port, 0x01000193);
  if (p.username !== undefined) {
    h = Math.imul(h ^ (p.username.length + 1), 0x01000193);
    h = hashString(h, p.username);
    h = hashString(h, p.password ?? '');
  }
  // final avalanche (murmur3 fmix32) so the low bits used as the slot are mixed
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) | 0;
}

export function sameProxy(a: ProxyAddress, b: ProxyAddress): boolean {
  return (
    a.port === b.port &&
    a.host === b.host &&
    a.username === b.username &&
    (a.username === undefined || (a.password ?? '') === (b.password ?? ''))
  );
}

/** Insert-only set of proxies (identity as above), linear probing. */
export class ProxySet<T extends ProxyAddress = ProxyAddress> {
  private items: T[] = [];
  private slots = new Int32Array(1024); // index + 1 into items; 0 = empty
  private hashes = new Int32Array(1024);
  private mask = 1023;

  get size(): number {
    return this.items.length;
  }

  /** Adds p; false when an equal proxy is already in the set. `v4` as for proxyHash. */
  add(p: T, v4?: number): boolean {
    const h = proxyHash(p, v4);
    let i = h & this.mask;
    for (;;) {
      const s = this.slots[i] ?? 0;
      if (s === 0) break;
      if (this.hashes[i] === h && sameProxy(this.items[s - 1] as T, p)) return false;
      i = (i + 1) & this.mask;
    }
    this.items.push(p);
    this.slots[i] = this.items.length;
    this.hashes[i] = h;
    if (this.items.length * 2 > this.mask) this.grow();
    return true;
  }

  /** The unique proxies in insertion order (the set's own array: do not mutate). */
  values(): T[] {
    return this.items;
  }

  private grow(): void {
    const size = (this.mask + 1) * 2;
    const slots = new Int32Array(size);
    const hashes = new Int32Array(size);
    const mask = size - 1;
    for (let j = 0; j <= this.mask; j++) {
      const s = this.slots[j] ?? 0;
      if (s === 0) continue;
      const h = this.hashes[j] ?? 0;
      let i = h & mask;
      while ((slots[i] ?? 0) !== 0) i = (i + 1) & mask;
      slots[i] = s;
      hashes[i] = h;
    }
    this.slots = slots;
    this.hashes = hashes;
    this.mask = mask;
  }
}
