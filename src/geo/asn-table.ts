/**
 * The ASN table: address ranges -> (AS number, AS organisation), compacted
 * from @ip-location-db/asn's CSV (`start,end,asn,"org"`) into sorted typed
 * arrays that a binary search reads (pure: text/bytes in, table out, no I/O).
 *
 * Layout: entry i covers [start_i, start_{i+1}) and holds asn_i and org_i;
 * gaps between CSV ranges become entries with asn 0 / org NO_ORG, adjacent
 * ranges of the same AS are merged. IPv4 starts are one 32-bit word, IPv6
 * starts four words (most significant first), so one search serves both.
 * `serializeAsnTable` / `deserializeAsnTable` give the cache file the geo
 * loader keeps, so the 60 MB of CSV is parsed once per package version.
 */
import { ServiceError } from '../errors';
import { LEAF_ERROR_CODES } from '../error-codes';
import { parseIpv6Groups } from './ip-words';

export const NO_ORG = 0xffffffff;

export interface AsnRanges {
  /** words per start: 1 (IPv4) or 4 (IPv6) */
  stride: 1 | 4;
  starts: Uint32Array; // count * stride
  asns: Uint32Array; // count
  orgs: Uint32Array; // count, index into the org names or NO_ORG
}

export interface AsnTable {
  v4: AsnRanges;
  v6: AsnRanges;
  orgNames: string[];
}

const badAsnData = (message: string) => new ServiceError(LEAF_ERROR_CODES.GEO_BAD_ASN_DATA, message);

/** Compare stride-word keys: a at index ai of `a`, b given as words. */
function cmpKey(a: Uint32Array, ai: number, b: ArrayLike<number>, stride: number): number {
  for (let k = 0; k < stride; k++) {
    const x = a[ai * stride + k]!;
    const y = b[k]!;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/** Index of the entry covering `key`, or -1 when it lies before the first one. */
export function findRange(r: AsnRanges, key: ArrayLike<number>): number {
  let lo = 0;
  let hi = r.asns.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (cmpKey(r.starts, mid, key, r.stride) <= 0) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return found;
}

/** Fast path for IPv4 (stride 1). */
export function findRangeV4(r: AsnRanges, n: number): number {
  const s = r.starts;
  let lo = 0;
  let hi = s.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (s[mid]! <= n) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return found;
}

const utf8 = new TextDecoder();

/** Decoded organisation field: CSV quotes removed, newlines flattened. */
function parseCsvOrg(field: string): string {
  let s = field.endsWith('\r') ? field.slice(0, -1) : field;
  if (s.charCodeAt(0) === 34 && s.charCodeAt(s.length - 1) === 34) s = s.slice(1, -1).replaceAll('""', '"');
  return s.replaceAll('\n', ' ');
}

/** Dotted quad in b[start, end) -> uint32, or -1 (same rules as parseIpv4). */
function ipv4At(b: Uint8Array, start: number, end: number): number {
  let value = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = start; i < end; i++) {
    const c = b[i]!;
    if (c >= 48 && c <= 57) {
      if (digits > 0 && octet === 0) return -1;
      octet = octet * 10 + (c - 48);
      if (octet > 255) return -1;
      digits++;
    } else if (c === 46 && digits > 0 && dots < 3) {
      value = value * 256 + octet;
      octet = 0;
      digits = 0;
      dots++;
    } else {
      return -1;
    }
  }
  return digits === 0 || dots !== 3 ? -1 : value * 256 + octet;
}

const latin1 = new TextDecoder('latin1');

/** IPv6 text in b[start, end) -> four words, or null. */
function ipv6At(b: Uint8Array, start: number, end: number): number[] | null {
  if (end - start > 45) return null;
  const g = parseIpv6Groups(latin1.decode(b.subarray(start, end)));
  if (!g) return null;
  return [g[0]! * 65536 + g[1]!, g[2]! * 65536 + g[3]!, g[4]! * 65536 + g[5]!, g[6]! * 65536 + g[7]!];
}

/** Unsigned decimal in b[start, end), or -1. */
function uintAt(b: Uint8Array, start: number, end: number): number {
  if (start >= end || end - start > 10) return -1;
  let n = 0;
  for (let i = start; i < end; i++) {
    const c = b[i]! - 48;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
  }
  return n;
}

/** words + 1 with carry; null on overflow (the end was the last address). */
function plusOne(w: number[]): number[] | null {
  const out = w.slice();
  for (let k = out.length - 1; k >= 0; k--) {
    if (out[k]! === 0xffffffff) out[k] = 0;
    else {
      out[k] = out[k]! + 1;
      return out;
    }
  }
  return null;
}

function cmpWords(a: number[], b: number[]): number {
  for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return a[k]! < b[k]! ? -1 : 1;
  return 0;
}

function sameBytes(b: Uint8Array, start: number, end: number, raw: Uint8Array): boolean {
  if (end - start !== raw.length) return false;
  for (let k = 0; k < raw.length; k++) if (b[start + k] !== raw[k]) return false;
  return true;
}

/**
 * Interns organisation names across the v4 and v6 builds. Rows are grouped by
 * AS number first (an AS almost always has one name) and the raw field bytes
 * are compared in place, so a name is decoded and hashed once, not per row.
 */
export class OrgInterner {
  readonly names: string[] = [];
  private readonly byAsn = new Map<number, { raw: Uint8Array; id: number }[]>();
  private readonly index = new Map<string, number>();
  id(name: string): number {
    if (name === '') return NO_ORG;
    let i = this.index.get(name);
    if (i === undefined) {
      i = this.names.length;
      this.names.push(name);
      this.index.set(name, i);
    }
    return i;
  }
  /** The id of the raw CSV field b[start, end) seen on a row of `asn`. */
  idAt(b: Uint8Array, start: number, end: number, asn: number): number {
    let seen = this.byAsn.get(asn);
    if (seen) {
      for (const c of seen) if (sameBytes(b, start, end, c.raw)) return c.id;
    } else {
      seen = [];
      this.byAsn.set(asn, seen);
    }
    const raw = b.slice(start, end);
    const id = this.id(parseCsvOrg(utf8.decode(raw)));
    seen.push({ raw, id });
    return id;
  }
}

/** A growable Uint32Array (the build touches ~0.5 M rows; plain arrays of numbers cost 4x the memory). */
class U32Builder {
  private buf = new Uint32Array(1 << 16);
  length = 0;
  push(x: number): void {
    if (this.length === this.buf.length) {
      const next = new Uint32Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.length++] = x;
  }
  at(i: number): number {
    return this.buf[i]!;
  }
  done(): Uint32Array {
    return this.buf.slice(0, this.length);
  }
}

/**
 * Build ranges from CSV bytes with address columns (`1.0.0.0,1.0.0.255,13335,org`).
 * Rows must be sorted by start; overlaps are clipped (first row wins).
 */
export function buildAsnRanges(csv: Uint8Array, version: 4 | 6, orgs: OrgInterner): AsnRanges {
  const stride = version === 4 ? 1 : 4;
  const starts = new U32Builder();
  const asns = new U32Builder();
  const orgIds = new U32Builder();
  let nextFree: number[] | null = version === 4 ? [0] : [0, 0, 0, 0]; // first address not yet covered
  let lineStart = 0;
  let lineNo = 0;
  const push = (start: number[], asn: number, org: number) => {
    const n = asns.length;
    if (n > 0 && asns.at(n - 1) === asn && orgIds.at(n - 1) === org) return; // merge with the previous entry
    for (const w of start) starts.push(w);
    asns.push(asn);
    orgIds.push(org);
  };
  const len = csv.length;
  while (lineStart < len && nextFree) {
    let lineEnd = csv.indexOf(10, lineStart);
    if (lineEnd === -1) lineEnd = len;
    const from = lineStart;
    lineStart = lineEnd + 1;
    lineNo++;
    let stop = lineEnd;
    if (stop > from && csv[stop - 1] === 13) stop--;
    if (stop === from) continue;
    const c1 = csv.indexOf(44, from);
    const c2 = c1 < 0 ? -1 : csv.indexOf(44, c1 + 1);
    const c3 = c2 < 0 ? -1 : csv.indexOf(44, c2 + 1);
    if (c1 < 0 || c2 < 0 || c3 < 0 || c3 > stop) throw badAsnData(`ASN CSV line ${lineNo}: expected 4 fields`);
    let start: number[] | null;
    let end: number[] | null;
    if (version === 4) {
      const s = ipv4At(csv, from, c1);
      const e = ipv4At(csv, c1 + 1, c2);
      start = s < 0 ? null : [s];
      end = e < 0 ? null : [e];
    } else {
      start = ipv6At(csv, from, c1);
      end = ipv6At(csv, c1 + 1, c2);
    }
    const asn = uintAt(csv, c2 + 1, c3);
    if (!start || !end || asn < 0 || asn > 0xffffffff || cmpWords(end, start) < 0) {
      throw badAsnData(`ASN CSV line ${lineNo}: bad range or AS number`);
    }
    if (cmpWords(end, nextFree) < 0) continue; // fully covered by earlier rows
    if (cmpWords(start, nextFree) < 0) start = nextFree; // clip overlap
    if (cmpWords(start, nextFree) > 0) push(nextFree, 0, NO_ORG); // a gap: unknown
    push(start, asn, orgs.idAt(csv, c3 + 1, stop, asn));
    nextFree = plusOne(end);
  }
  if (nextFree) push(nextFree, 0, NO_ORG);
  return { stride, starts: starts.done(), asns: asns.done(), orgs: orgIds.done() };
}

export function buildAsnTable(v4Csv: Uint8Array, v6Csv: Uint8Array): AsnTable {
  const orgs = new OrgInterner();
  const v4 = buildAsnRanges(v4Csv, 4, orgs);
  const v6 = buildAsnRanges(v6Csv, 6, orgs);
  return { v4, v6, orgNames: orgs.names };
}

const MAGIC = 0x41534e31; // "ASN1"

/** Table -> bytes: [magic, keyLen, n4, n6, orgBytes] header, key, arrays (4-byte aligned), org names joined by '\n'. */
export function serializeAsnTable(t: AsnTable, key: string): Uint8Array {
  const enc = new TextEncoder();
  const keyBytes = enc.encode(key);
  const orgBytes = enc.encode(t.orgNames.join('\n'));
  const keyPadded = (keyBytes.length + 3) & ~3;
  const n4 = t.v4.asns.length;
  const n6 = t.v6.asns.length;
  const words = 5 + keyPadded / 4 + n4 * 3 + n6 * 6;
  const out = new Uint8Array(words * 4 + orgBytes.length);
  const u32 = new Uint32Array(out.buffer, 0, words);
  u32[0] = MAGIC;
  u32[1] = keyBytes.length;
  u32[2] = n4;
  u32[3] = n6;
  u32[4] = orgBytes.length;
  out.set(keyBytes, 20);
  let w = 5 + keyPadded / 4;
  for (const arr of [t.v4.starts, t.v4.asns, t.v4.orgs, t.v6.starts, t.v6.asns, t.v6.orgs]) {
    u32.set(arr, w);
    w += arr.length;
  }
  out.set(orgBytes, words * 4);
  return out;
}

/** Bytes -> table, or null when the bytes are not a table built for `key` (stale or foreign cache). */
export function deserializeAsnTable(bytes: Uint8Array, key: string): AsnTable | null {
  if (bytes.byteLength < 20 || bytes.byteOffset % 4 !== 0) return null;
  const head = new Uint32Array(bytes.buffer, bytes.byteOffset, 5);
  if (head[0] !== MAGIC) return null;
  const keyLen = head[1]!;
  const n4 = head[2]!;
  const n6 = head[3]!;
  const orgLen = head[4]!;
  const keyPadded = (keyLen + 3) & ~3;
  const words = 5 + keyPadded / 4 + n4 * 3 + n6 * 6;
  if (bytes.byteLength !== words * 4 + orgLen) return null;
  if (new TextDecoder().decode(bytes.subarray(20, 20 + keyLen)) !== key) return null;
  const u32 = new Uint32Array(bytes.buffer, bytes.byteOffset, words);
  let w = 5 + keyPadded / 4;
  const take = (n: number) => {
    const a = u32.slice(w, w + n);
    w += n;
    return a;
  };
  const v4: AsnRanges = { stride: 1, starts: take(n4), asns: take(n4), orgs: take(n4) };
  const v6: AsnRanges = { stride: 4, starts: take(n6 * 4), asns: take(n6), orgs: take(n6) };
  const orgText = new TextDecoder().decode(bytes.subarray(words * 4));
  const orgNames = orgText === '' ? [] : orgText.split('\n');
  return { v4, v6, orgNames };
}
