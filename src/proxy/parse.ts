/**
 * Pure parser for proxy address lists (DECISIONS "Input"). No I/O, no regexes on
 * the hot path: every line is scanned once, char by char, so a 16 MiB body of
 * hostile input costs linear time.
 *
 * Accepted line forms (after trimming surrounding white space with String#trim:
 * ASCII and Unicode spaces, CR, a BOM):
 *   standard     host:port                 (a single trailing "/" is allowed)
 *   url_auth     user:pass@host:port       (split at the LAST "@"; user and pass
 *                                           percent-decoded; "/" allowed at the end)
 *   colon_auth   host:port:user:pass       (pass = everything after the 3rd colon;
 *                                           NOT percent-decoded)
 * with an optional leading scheme http:// https:// socks4:// socks4a:// socks5://
 * socks5h:// (any case), which is stripped (the request's `type` decides).
 *
 * Choices (documented for the README):
 * - Form detection is structural: a line that STARTS with a valid `host:port:` is
 *   the colon form (no fallback), so a colon-form password may contain "@". A
 *   URL-form line whose username is a valid host name and whose raw password
 *   starts with `<digits>:` reads as the colon form; percent-encode that ":".
 * - host: IPv6 only in brackets (`[2001:db8::1]`, no zone id), stored without
 *   brackets in canonical compressed lower-case form; IPv4 dotted quad with every
 *   octet 0..255 and NO leading zeros (`010.0.0.1` is invalid: octal in some
 *   resolvers); host names per DNS (labels 1-63 of [a-z0-9-], not starting or
 *   ending with "-", total <= 253, no trailing dot), lower-cased. A name whose last
 *   label is numeric (`123`, `1.2.3`, `0x7f000001`, `a.0x1`) is treated as an IPv4
 *   attempt and must be a strict dotted quad: inet_aton shorthands never reach DNS.
 * - port: 1..65535, decimal digits only (at most 5; leading zeros allowed).
 * - credentials: username non-empty; `user@host:port` (no colon) means an empty
 *   password; a credential containing a control char (U+0000-U+001F, U+007F) or an
 *   unpaired surrogate is invalid, as is a bad percent-escape in the URL form.
 *   Credential length is not limited here (SOCKS5's 255-byte limit is the probe's).
 * - ignored (not invalid): blank lines and lines whose first non-blank char is "#".
 *   Lines are split at "\n", "\r\n" and a lone "\r".
 * - duplicates: same host (normalised), port, username and password (see dedupe.ts);
 *   the first occurrence is kept.
 */
import { ProxySet } from './dedupe';
import { COLON, DOT, HYPHEN, canonicalIPv6, hostNameAt, ipv4At, isDigit } from './host';
import type { AddressFormat, ProxyAddress } from './types';

export interface ParsedProxy extends ProxyAddress {
  format: AddressFormat;
  /** The original trimmed text, to echo the caller's form in .txt downloads. */
  raw: string;
}

export interface ParsedList {
  /** Unique valid proxies, in order of first appearance. */
  proxies: ParsedProxy[];
  /** Lines/elements that are neither valid, blank nor comments. */
  invalid: number;
  /** Valid lines dropped because an equal proxy came earlier. */
  duplicates: number;
  /** Blank and comment lines (not counted anywhere in the API). */
  ignored: number;
  /** True when parsing stopped early because unique proxies exceeded `maxUnique`. */
  limitExceeded: boolean;
}

export interface ParseListOptions {
  /** Stop as soon as there are more than this many unique proxies (the 413 check). */
  maxUnique?: number;
}

// ---- small char helpers ------------------------------------------------------

const SLASH = 47;

/** Index just past a supported scheme prefix ("socks5://"), or 0. */
function schemeEnd(s: string): number {
  const i = s.indexOf(':');
  if (i < 4 || i > 7 || s.charCodeAt(i + 1) !== SLASH || s.charCodeAt(i + 2) !== SLASH) return 0;
  switch (s.slice(0, i).toLowerCase()) {
    case 'http':
    case 'https':
    case 'socks4':
    case 'socks4a':
    case 'socks5':
    case 'socks5h':
      return i + 3;
    default:
      return 0;
  }
}

/** Port number of s[a, b), or -1 when not 1..65535 in 1-5 decimal digits. */
function portAt(s: string, a: number, b: number): number {
  if (b <= a || b - a > 5) return -1;
  let v = 0;
  for (let i = a; i < b; i++) {
    const c = s.charCodeAt(i);
    if (!isDigit(c)) return -1;
    v = v * 10 + (c - 48);
  }
  return v >= 1 && v <= 65535 ? v : -1;
}


// Host scanner output (module scratch: the scanner is synchronous and not re-entrant).
let scannedHost = '';
/** IPv4 value of `scannedHost`, or -1 (a name or IPv6): saves the dedupe hash a pass. */
let scannedV4 = -1;

/**
 * Scan a host starting at `start`. On success sets `scannedHost` and returns the
 * index just past the host; returns -1 when the host is invalid. An unbracketed
 * host ends at the first char outside [A-Za-z0-9.-].
 */
function scanHost(s: string, start: number): number {
  if (s.charCodeAt(start) === 91 /* [ */) {
    const close = s.indexOf(']', start + 1);
    if (close < 0) return -1;
    const h = canonicalIPv6(s.slice(start + 1, close));
    if (h === null) return -1;
    scannedHost = h;
    scannedV4 = -1;
    return close + 1;
  }
  let i = start;
  const n = s.length;
  for (; i < n; i++) {
    const c = s.charCodeAt(i);
    if (!((c >= 97 && c <= 122) || (c >= 65 && c <= 90) || isDigit(c) || c === DOT || c === HYPHEN)) break;
  }
  const h = hostNameAt(s, start, i);
  if (h === null) return -1;
  scannedHost = h;
  scannedV4 = isDigit(h.charCodeAt(h.length - 1)) ? ipv4At(h, 0, h.length) : -1;
  return i;
}

/** No C0 control chars, no DEL, no unpaired surrogates. */
function credentialOk(s: string): boolean {
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return false;
    if (c >= 0xd800 && c <= 0xdfff) {
      if (c >= 0xdc00) return false; // lone low surrogate
      const d = s.charCodeAt(i + 1);
      if (!(d >= 0xdc00 && d <= 0xdfff)) return false;
      i++;
    }
  }
  return true;
}

function decode(s: string): string | null {
  if (!s.includes('%')) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}

function make(
  host: string,
  port: number,
  username: string | undefined,
  password: string | undefined,
  format: AddressFormat,
  raw: string,
): ParsedProxy {
  return username === undefined ? { host, port, format, raw } : { host, port, username, password, format, raw };
}

/** Parse one trimmed, non-blank, non-comment line. */
function parseTrimmed(t: string): ParsedProxy | null {
  const skip = schemeEnd(t);
  const s = skip === 0 ? t : t.slice(skip);
  const n = s.length;
  if (n === 0) return null;

  // 1. standard / colon form: the line starts with host:port
  const hEnd = scanHost(s, 0);
  if (hEnd > 0 && s.charCodeAt(hEnd) === COLON) {
    let p = hEnd + 1;
    while (p < n && isDigit(s.charCodeAt(p))) p++;
    const port = portAt(s, hEnd + 1, p);
    if (port > 0) {
      const host = scannedHost;
      if (p === n || (p === n - 1 && s.charCodeAt(p) === SLASH)) return make(host, port, undefined, undefined, 'standard', t);
      if (s.charCodeAt(p) === COLON) {
        const uEnd = s.indexOf(':', p + 1);
        if (uEnd < 0 || uEnd === p + 1) return null;
        const username = s.slice(p + 1, uEnd);
        const password = s.slice(uEnd + 1);
        if (!credentialOk(username) || !credentialOk(password)) return null;
        return make(host, port, username, password, 'colon_auth', t);
      }
    }
  }

  // 2. URL form: userinfo@host:port
  const at = s.lastIndexOf('@');
  if (at <= 0) return null;
  const e = scanHost(s, at + 1);
  if (e < 0 || s.charCodeAt(e) !== COLON) return null;
  let p = e + 1;
  while (p < n && isDigit(s.charCodeAt(p))) p++;
  const port = portAt(s, e + 1, p);
  if (port < 0 || !(p === n || (p === n - 1 && s.charCodeAt(p) === SLASH))) return null;
  const host = scannedHost;
  const c = s.indexOf(':');
  const userRaw = c >= 0 && c < at ? s.slice(0, c) : s.slice(0, at);
  const passRaw = c >= 0 && c < at ? s.slice(c + 1, at) : '';
  if (userRaw.length === 0) return null;
  const username = decode(userRaw);
  const password = decode(passRaw);
  if (username === null || password === null || username.length === 0) return null;
  if (!credentialOk(username) || !credentialOk(password)) return null;
  return make(host, port, username, password, 'url_auth', t);
}

/** True for lines the list parser skips without counting them invalid. */
export function isIgnorableLine(line: string): boolean {
  const t = line.trim();
  return t.length === 0 || t.charCodeAt(0) === 35; /* # */
}

/**
 * Parse one line. Returns null for an invalid line AND for a blank/comment line
 * (use isIgnorableLine to tell them apart).
 */
export function parseProxyLine(line: string): ParsedProxy | null {
  const t = line.trim();
  if (t.length === 0 || t.charCodeAt(0) === 35) return null;
  return parseTrimmed(t);
}

/**
 * Parse a whole list: a text body (split into lines) or a JSON array (each
 * element is one line; a non-string element counts as invalid).
 * Never throws. Without `maxUnique`, every line lands in exactly one of
 * proxies / duplicates / invalid / ignored.
 */
export function parseProxyList(input: string | readonly unknown[], opts: ParseListOptions = {}): ParsedList {
  const max = opts.maxUnique ?? Number.POSITIVE_INFINITY;
  const seen = new ProxySet<ParsedProxy>();
  let invalid = 0;
  let duplicates = 0;
  let ignored = 0;
  let limitExceeded = false;

  const take = (line: unknown): boolean => {
    if (typeof line !== 'string') {
      invalid++;
      return true;
    }
    const t = line.trim();
    if (t.length === 0 || t.charCodeAt(0) === 35) {
      ignored++;
      return true;
    }
    const p = parseTrimmed(t);
    if (p === null) {
      invalid++;
      return true;
    }
    if (!seen.add(p, scannedV4)) {
      duplicates++;
      return true;
    }
    if (seen.size > max) {
      limitExceeded = true;
      return false;
    }
    return true;
  };

  if (typeof input === 'string') {
    // Lines end at "\n", "\r\n" or a lone "\r" (native indexOf does the scanning).
    const n = input.length;
    let start = 0;
    for (;;) {
      const nl = input.indexOf('\n', start);
      const stop = nl < 0 ? n : nl > start && input.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
      const line = input.slice(start, stop);
      if (!line.includes('\r')) {
        if (!take(line)) break;
      } else if (!line.split('\r').every(take)) {
        break;
      }
      if (nl < 0) break;
      start = nl + 1;
    }
  } else {
    for (const el of input) if (!take(el)) break;
  }
  return { proxies: seen.values(), invalid, duplicates, ignored, limitExceeded };
}
