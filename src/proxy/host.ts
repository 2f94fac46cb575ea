/**
 * Host literals of proxy addresses (pure): strict IPv4 dotted quads, DNS host
 * names, and IPv6 validation + canonical text. Used by parse.ts.
 *
 * - IPv4: exactly 4 octets 0..255 with NO leading zeros (`010.0.0.1` is
 *   rejected: octal in some resolvers).
 * - Host names: labels 1-63 of [a-z0-9-] (any case in, lower-case out), not
 *   starting or ending with "-", total <= 253, no trailing dot. A name whose last
 *   label is numeric (WHATWG "ends in a number": digits, or 0x + hex) must be a
 *   strict IPv4, so inet_aton shorthands (`127.1`, `0x7f000001`) never reach DNS.
 * - IPv6: RFC 4291 text (embedded IPv4 tail allowed, no zone id), canonicalised
 *   as WHATWG URL serialises it (RFC 5952 style compression, lower-case).
 */

export const DOT = 46;
export const HYPHEN = 45;
export const COLON = 58;

export const isDigit = (c: number) => c >= 48 && c <= 57;
const isHex = (c: number) => isDigit(c) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);

/** Value of the strict dotted quad s[a, b) (4 octets 0..255, no leading zeros), or -1. */
export function ipv4At(s: string, a: number, b: number): number {
  let value = 0;
  let i = a;
  for (let part = 0; part < 4; part++) {
    if (part > 0) {
      if (i >= b || s.charCodeAt(i) !== DOT) return -1;
      i++;
    }
    const start = i;
    let v = 0;
    while (i < b && isDigit(s.charCodeAt(i)) && i - start < 3) {
      v = v * 10 + (s.charCodeAt(i) - 48);
      i++;
    }
    const len = i - start;
    if (len === 0 || v > 255 || (len > 1 && s.charCodeAt(start) === 48)) return -1;
    value = value * 256 + v;
  }
  return i === b ? value : -1;
}

/** Strict dotted quad: 4 octets, 0..255, no leading zeros. */
export function isStrictIPv4(s: string): boolean {
  return ipv4At(s, 0, s.length) >= 0;
}

/** WHATWG "ends in a number": the last label is all digits, or 0x followed by hex. */
function numericLabel(s: string, a: number, b: number): boolean {
  if (b - a >= 2 && s.charCodeAt(a) === 48 && (s.charCodeAt(a + 1) | 0x20) === 120) {
    for (let i = a + 2; i < b; i++) if (!isHex(s.charCodeAt(i))) return false;
    return true;
  }
  for (let i = a; i < b; i++) if (!isDigit(s.charCodeAt(i))) return false;
  return true;
}

/** hostKindAt results other than an IPv4 value (which is >= 0). */
export const HOST_INVALID = -1;
/** A valid DNS name, already lower-case. */
export const HOST_NAME = -2;
/** A valid DNS name with upper-case letters (normalised by lower-casing). */
export const HOST_NAME_UPPER = -3;

/**
 * Classify the unbracketed host s[a, b) without allocating: the IPv4 value
 * (>= 0) of a strict dotted quad, HOST_NAME / HOST_NAME_UPPER for a valid DNS
 * name, HOST_INVALID otherwise (including a numeric last label that is not a
 * strict dotted quad).
 */
export function hostKindAt(s: string, a: number, b: number): number {
  if (b <= a || b - a > 253) return HOST_INVALID;
  let labelStart = a;
  let lastLabelStart = a;
  let upper = false;
  for (let i = a; i <= b; i++) {
    const c = i === b ? DOT : s.charCodeAt(i);
    if (c === DOT) {
      const len = i - labelStart;
      if (len === 0 || len > 63) return HOST_INVALID;
      if (s.charCodeAt(labelStart) === HYPHEN || s.charCodeAt(i - 1) === HYPHEN) return HOST_INVALID;
      lastLabelStart = labelStart;
      labelStart = i + 1;
    } else if (c >= 65 && c <= 90) {
      upper = true;
    } else if (!((c >= 97 && c <= 122) || isDigit(c) || c === HYPHEN)) {
      return HOST_INVALID;
    }
  }
  if (numericLabel(s, lastLabelStart, b)) {
    const v4 = ipv4At(s, a, b);
    return v4 >= 0 ? v4 : HOST_INVALID;
  }
  return upper ? HOST_NAME_UPPER : HOST_NAME;
}

/**
 * Validate the unbracketed host s[a, b): an IPv4 literal or a DNS name.
 * Returns the normalised (lower-cased) host or null.
 */
export function hostNameAt(s: string, a: number, b: number): string | null {
  const kind = hostKindAt(s, a, b);
  if (kind === HOST_INVALID) return null;
  const host = s.slice(a, b);
  return kind === HOST_NAME_UPPER ? host.toLowerCase() : host;
}

const v6 = new Uint16Array(8); // scratch for canonicalIPv6

const HEX_DIGIT = '0123456789abcdef';

/**
 * Whether `s` is exactly the canonical text of the groups in `v6` with the run
 * [bestStart, bestStart + bestLen) compressed (bestStart -1: none), i.e. what
 * canonicalIPv6 would build: compared char by char, nothing allocated.
 */
function isCanonicalText(s: string, bestStart: number, bestLen: number): boolean {
  const n = s.length;
  let i = 0;
  for (let k = 0; k < 8; k++) {
    if (k === bestStart) {
      if (k === 0) {
        if (s.charCodeAt(i++) !== COLON) return false;
      }
      if (s.charCodeAt(i++) !== COLON) return false;
      k += bestLen - 1;
      continue;
    }
    const v = v6[k] ?? 0;
    for (let shift = v >= 0x1000 ? 12 : v >= 0x100 ? 8 : v >= 0x10 ? 4 : 0; shift >= 0; shift -= 4) {
      if (s.charCodeAt(i++) !== HEX_DIGIT.charCodeAt((v >> shift) & 15)) return false;
    }
    if (k !== 7 && s.charCodeAt(i++) !== COLON) return false;
  }
  return i === n;
}

/**
 * Validate an IPv6 literal (no brackets, no zone id) and return its canonical
 * text: lower-case hex without leading zeros, the longest run (>= 2, first on a
 * tie) of zero groups compressed to "::", an embedded IPv4 tail rendered as hex,
 * exactly as WHATWG URL serialises it. Returns null when invalid.
 */
export function canonicalIPv6(s: string): string | null {
  const n = s.length;
  if (n < 2 || n > 45) return null;
  let count = 0;
  let compress = -1;
  let i = 0;
  if (s.charCodeAt(0) === COLON) {
    if (s.charCodeAt(1) !== COLON) return null;
    compress = 0;
    i = 2;
  }
  while (i < n) {
    if (count === 8) return null;
    const start = i;
    let v = 0;
    while (i < n && i - start < 4) {
      const c = s.charCodeAt(i);
      if (isDigit(c)) v = v * 16 + (c - 48);
      else if ((c | 0x20) >= 97 && (c | 0x20) <= 102) v = v * 16 + ((c | 0x20) - 87);
      else break;
      i++;
    }
    if (i < n && s.charCodeAt(i) === DOT) {
      // embedded IPv4 tail: takes two groups and ends the address
      if (count > 6) return null;
      const q = ipv4At(s, start, n);
      if (q < 0) return null;
      v6[count++] = Math.floor(q / 65536);
      v6[count++] = q % 65536;
      i = n;
      break;
    }
    if (i === start) return null;
    v6[count++] = v;
    if (i === n) break;
    if (s.charCodeAt(i) !== COLON) return null;
    i++;
    if (s.charCodeAt(i) === COLON) {
      if (compress >= 0) return null;
      compress = count;
      i++;
    } else if (i === n) {
      return null; // a single trailing ":"
    }
  }
  if (compress < 0) {
    if (count !== 8) return null;
  } else {
    if (count > 7) return null;
    const move = count - compress;
    for (let k = 1; k <= move; k++) v6[8 - k] = v6[count - k] ?? 0;
    for (let k = compress; k < 8 - move; k++) v6[k] = 0;
  }
  // longest run of zero groups, length >= 2
  let bestStart = -1;
  let bestLen = 1;
  for (let k = 0; k < 8; ) {
    if (v6[k] !== 0) {
      k++;
      continue;
    }
    let e = k;
    while (e < 8 && v6[e] === 0) e++;
    if (e - k > bestLen) {
      bestStart = k;
      bestLen = e - k;
    }
    k = e;
  }
  // Most literals arrive already canonical: then the input itself is the answer.
  if (isCanonicalText(s, bestStart, bestLen)) return s;
  let out = '';
  for (let k = 0; k < 8; k++) {
    if (k === bestStart) {
      out += k === 0 ? '::' : ':';
      k += bestLen - 1;
      continue;
    }
    out += (v6[k] ?? 0).toString(16);
    if (k !== 7) out += ':';
  }
  return out;
}
