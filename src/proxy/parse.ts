/**
 * Pure parser for proxy address lists (DECISIONS "Input"). No I/O, no regexes on
 * the hot path: every line is scanned char by char a bounded number of times, so
 * a 16 MiB body of hostile input costs linear time.
 *
 * Speed (100 000-line bodies, bench/micro-parse.ts): lines are read in place as
 * [start, end) ranges of the body (no per-line substrings, no String#trim); a
 * line allocates only its result (the object, its field strings and `raw`); a
 * strict dotted quad is validated and valued in one pass; the dedupe hash is
 * computed from the text (dedupe.ts ProxySet.addHashed), not from the fields.
 *
 * Accepted line forms (after trimming surrounding white space with String#trim:
 * ASCII and Unicode spaces, CR, a BOM):
 *   standard     host:port                 (a single trailing "/" is allowed)
 *   url_auth     user:pass@host:port       (split at the LAST "@"; user and pass
 *                                           percent-decoded; "/" allowed at the end)
 *   colon_auth   host:port:user:pass       (pass = everything after the 3rd colon;
 *                                           NOT percent-decoded)
 * with an optional leading scheme http:// https:// socks4:// socks4a:// socks5://
 * socks5h:// (any case): it names the proxy's own protocol (`protocol`: http,
 * socks4, socks5; DECISIONS "Mixed lists"), which the check uses whatever the
 * request's `type`; a line without one takes the request's `type`. Given that
 * type (ParseListOptions.type), a scheme naming it is dropped: it adds
 * nothing, and "http://h:1" and "h:1" stay one proxy of an http check.
 *
 * Choices (documented in docs/API.md):
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
 * - duplicates: same host (normalised), port, username, password and own
 *   protocol (see dedupe.ts); the first occurrence is kept.
 */
import { HASH_SEED, ProxySet, hashChars, hashInt, hashWithProtocol, protocolMix } from './dedupe';
import { COLON, DOT, HOST_INVALID, HOST_NAME_UPPER, canonicalIPv6, hostKindAt, ipv4At, isDigit } from './host';
import {
  AT,
  CLOSE_BRACKET,
  CR,
  HASH,
  IPV6_MAX,
  LF,
  OPEN_BRACKET,
  PERCENT,
  SLASH,
  digitsEnd,
  isHostChar,
  isTrimSpace,
  portAt,
  schemeEnd,
  schemeProtocol,
} from './line-scan';
import { INVALID_REASON, InvalidLines, type InvalidReason } from './invalid-lines';
import type { AddressFormat, CheckType, ProxyAddress, ProxyType } from './types';

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
  /** The same lines with their number, text (cut) and reason, packed (invalid-lines.ts). */
  invalidLines: InvalidLines;
  /** Valid lines dropped because an equal proxy came earlier. */
  duplicates: number;
  /** Blank and comment lines (not counted anywhere in the API). */
  ignored: number;
  /** True when parsing stopped early because unique proxies exceeded `maxUnique`. */
  limitExceeded: boolean;
  /**
   * Valid lines (unique or duplicate) whose scheme named each protocol, kept
   * or not (`type`, ignoreSchemes): what a pool, which keeps none, warns of.
   */
  schemes: Record<ProxyType, number>;
}

export interface ParseListOptions {
  /** Stop as soon as there are more than this many unique proxies (the 413 check). */
  maxUnique?: number;
  /**
   * The request's (or pool's) `type`: a line whose scheme names this very
   * protocol gets no `protocol` of its own (it would be checked so anyway).
   * Absent: every scheme is kept.
   */
  type?: CheckType;
  /**
   * Strip schemes as the parser did before lines had protocols of their own:
   * no `protocol`, and the same address under two schemes is one proxy. For
   * lists whose proxies cannot keep a protocol of their own (pools, today).
   */
  ignoreSchemes?: boolean;
}

/** hostKindAt of the scanned host (its IPv4 value, HOST_NAME, HOST_NAME_UPPER) or HOST_V6. */
let hostKind = HOST_INVALID;
let hostStart = 0;
let hostEnd = 0;
/** The canonical text and hash of a scanned IPv6 host (built while validating it). */
let v6Host = '';
let v6Hash = 0;
/** proxyHash of the proxy parseSpan returned last (the ProxySet key, computed from the text). */
let lineHash = 0;
/** The `type` the list is parsed for (ParseListOptions.type); set by parseProxyList for its run. */
let listType: CheckType | undefined;
/** ParseListOptions.ignoreSchemes of the run. */
let ignoreSchemes = false;
/** The own protocol of the line parseSpan is on (undefined: none) and its protocolMix. */
let lineProtocol: ProxyType | undefined;
/** The protocol the line's scheme named, kept or not (undefined: no scheme). */
let lineScheme: ProxyType | undefined;
let lineMix = 0;

/** Why parseSpan returned null last (invalid-lines.ts INVALID_REASON); set only on that path. */
let failReason: InvalidReason = INVALID_REASON.UNRECOGNISED;

const HOST_V6 = -4;

/** hashChars of s[a, b) lower-cased (a host name is ASCII, so A-Z is all there is to fold). */
function hashLowerAscii(h: number, s: string, a: number, b: number): number {
  for (let i = a; i < b; i++) {
    const c = s.charCodeAt(i);
    h = hashInt(h, c >= 65 && c <= 90 ? c + 32 : c);
  }
  return h;
}

/**
 * Validate a host starting at `start`, not past `b`: returns the index just past
 * it (and sets hostKind / hostStart / hostEnd), or -1 when the host is invalid.
 * An unbracketed host ends at the first char outside [A-Za-z0-9.-].
 */
function scanHost(s: string, start: number, b: number): number {
  if (start >= b) return -1;
  const c0 = s.charCodeAt(start);
  if (c0 === OPEN_BRACKET) {
    const lim = Math.min(b, start + 2 + IPV6_MAX);
    let close = start + 1;
    while (close < lim && s.charCodeAt(close) !== CLOSE_BRACKET) close++;
    if (close >= lim) return -1;
    const text = s.slice(start + 1, close);
    const h = canonicalIPv6(text);
    if (h === null) return -1;
    hostKind = HOST_V6;
    v6Host = h;
    // usually the literal was canonical already: then hash the text it came from
    v6Hash = h === text ? hashChars(HASH_SEED, s, start + 1, close) : hashChars(HASH_SEED, h);
    return close + 1;
  }
  hostStart = start;
  if (isDigit(c0)) {
    // fast path for the common IPv4 host: the run of digits and dots, if it ends the host, is
    // valued by the one strict dotted-quad parser (host.ts ipv4At)
    let e = start + 1;
    while (e < b) {
      const c = s.charCodeAt(e);
      if (!isDigit(c) && c !== DOT) break;
      e++;
    }
    if (e === b || !isHostChar(s.charCodeAt(e))) {
      const v4 = ipv4At(s, start, e);
      if (v4 >= 0) {
        hostKind = v4;
        hostEnd = e;
        return e;
      }
    }
  }
  let i = start;
  while (i < b && isHostChar(s.charCodeAt(i))) i++;
  const kind = hostKindAt(s, start, i);
  if (kind === HOST_INVALID) return -1;
  hostKind = kind;
  hostEnd = i;
  return i;
}

/** The normalised text of the host scanHost validated last in `s`. */
function hostText(s: string): string {
  if (hostKind === HOST_V6) return v6Host;
  const h = s.slice(hostStart, hostEnd);
  return hostKind === HOST_NAME_UPPER ? h.toLowerCase() : h;
}

/** proxyHash's running value after the host scanHost validated last in `s`. */
function hostHash(s: string): number {
  if (hostKind >= 0) return hashInt(HASH_SEED, hostKind);
  if (hostKind === HOST_V6) return v6Hash;
  return hashLowerAscii(HASH_SEED, s, hostStart, hostEnd);
}

/** s[a, b) has no C0 control chars, no DEL, no unpaired surrogates. */
function credentialOk(s: string, a = 0, b = s.length): boolean {
  for (let i = a; i < b; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return false;
    if (c >= 0xd800 && c <= 0xdfff) {
      if (c >= 0xdc00) return false; // lone low surrogate
      const d = i + 1 < b ? s.charCodeAt(i + 1) : 0;
      if (!(d >= 0xdc00 && d <= 0xdfff)) return false;
      i++;
    }
  }
  return true;
}

/**
 * The URL-form credential s[a, b), percent-decoded, or null when it has a bad
 * escape or decodes to something credentialOk refuses.
 */
function urlCredential(s: string, a: number, b: number): string | null {
  let i = a;
  while (i < b && s.charCodeAt(i) !== PERCENT) i++;
  if (i === b) return credentialOk(s, a, b) ? s.slice(a, b) : null;
  let decoded: string;
  try {
    decoded = decodeURIComponent(s.slice(a, b));
  } catch {
    return null;
  }
  return credentialOk(decoded) ? decoded : null;
}

/**
 * hashChars of `value`, which urlCredential made of s[a, b): the text itself when
 * the lengths agree (decoding shortens: every escape is 3 chars for at most one
 * UTF-16 unit, or 12 for two), else the decoded string.
 */
function hashCredential(h: number, value: string, s: string, a: number, b: number): number {
  return value.length === b - a ? hashChars(h, s, a, b) : hashChars(h, value);
}

/**
 * Parse the trimmed, non-blank, non-comment line s[a, b) (`s` may hold more
 * lines: nothing outside [a, b) is read). Allocates only for a valid line, and
 * then sets `lineHash` to its proxyHash, computed from the text; for an
 * invalid one it sets `failReason` (only on that path: a valid line pays
 * nothing for it). When neither form fits, the reason is the URL form's
 * when the line has an "@" after its first char, else the host:port form's.
 */
function parseSpan(s: string, a: number, b: number): ParsedProxy | null {
  const from = schemeEnd(s, a, b);
  if (from === b) return fail(INVALID_REASON.UNRECOGNISED);
  lineScheme = from === a ? undefined : schemeProtocol(s, a);
  lineProtocol = ignoreSchemes || lineScheme === listType ? undefined : lineScheme;
  lineMix = protocolMix(lineProtocol);

  // 1. standard / colon form: the line starts with host:port
  const hEnd = scanHost(s, from, b);
  if (hEnd > 0 && hEnd < b && s.charCodeAt(hEnd) === COLON) {
    const p = digitsEnd(s, hEnd + 1, b);
    const port = portAt(s, hEnd + 1, p);
    if (port > 0) {
      if (p === b || (p === b - 1 && s.charCodeAt(p) === SLASH)) {
        lineHash = hashWithProtocol(hashInt(hostHash(s), port), lineMix);
        return own({ host: hostText(s), port, format: 'standard', raw: s.slice(a, b) });
      }
      if (s.charCodeAt(p) === COLON) {
        let uEnd = p + 1;
        while (uEnd < b && s.charCodeAt(uEnd) !== COLON) uEnd++;
        if (uEnd === p + 1) return fail(INVALID_REASON.EMPTY_USERNAME);
        if (uEnd === b) return fail(INVALID_REASON.NO_PASSWORD);
        if (!credentialOk(s, p + 1, uEnd) || !credentialOk(s, uEnd + 1, b)) return fail(INVALID_REASON.BAD_CREDENTIALS);
        const host = hostText(s);
        const username = s.slice(p + 1, uEnd);
        const password = s.slice(uEnd + 1, b);
        const h = hashInt(hashInt(hostHash(s), port), username.length + 1);
        lineHash = hashWithProtocol(hashChars(hashChars(h, s, p + 1, uEnd), s, uEnd + 1, b), lineMix);
        return own({ host, port, username, password, format: 'colon_auth', raw: s.slice(a, b) });
      }
    }
  }

  // 2. URL form: userinfo@host:port (split at the line's last "@")
  let at = b - 1;
  while (at > from && s.charCodeAt(at) !== AT) at--;
  if (at <= from) return fail(at === from && s.charCodeAt(at) === AT ? INVALID_REASON.EMPTY_USERNAME : hostPortReason(s, a, from, b, hEnd));
  const e = scanHost(s, at + 1, b);
  if (e < 0) return fail(INVALID_REASON.BAD_HOST);
  if (e >= b) return fail(INVALID_REASON.NO_PORT);
  if (s.charCodeAt(e) !== COLON) return fail(INVALID_REASON.UNRECOGNISED);
  const q = digitsEnd(s, e + 1, b);
  const urlPort = portAt(s, e + 1, q);
  if (urlPort < 0 || !(q === b || (q === b - 1 && s.charCodeAt(q) === SLASH))) return fail(INVALID_REASON.BAD_PORT);
  let c = from;
  while (c < at && s.charCodeAt(c) !== COLON) c++;
  if (c === from) return fail(INVALID_REASON.EMPTY_USERNAME);
  const username = urlCredential(s, from, c);
  if (username === null) return fail(INVALID_REASON.BAD_CREDENTIALS);
  if (username.length === 0) return fail(INVALID_REASON.EMPTY_USERNAME);
  const password = c < at ? urlCredential(s, c + 1, at) : '';
  if (password === null) return fail(INVALID_REASON.BAD_CREDENTIALS);
  const host = hostText(s);
  const h = hashCredential(hashInt(hashInt(hostHash(s), urlPort), username.length + 1), username, s, from, c);
  lineHash = hashWithProtocol(c < at ? hashCredential(h, password, s, c + 1, at) : h, lineMix);
  return own({ host, port: urlPort, username, password, format: 'url_auth', raw: s.slice(a, b) });
}

/** p with the line's own protocol (lineProtocol), when it has one. */
function own(p: ParsedProxy): ParsedProxy {
  if (lineProtocol !== undefined) p.protocol = lineProtocol;
  return p;
}

function fail(reason: InvalidReason): null {
  failReason = reason;
  return null;
}

/**
 * Why the line s[a, b) (scheme stripped up to `from`, no "@") is not
 * host:port, from where the host:port scan of parseSpan stopped: `hEnd`,
 * just past the host, or -1 when the host is invalid.
 */
function hostPortReason(s: string, a: number, from: number, b: number, hEnd: number): InvalidReason {
  // "ftp://..." and the like: a scheme the parser does not strip
  if (from === a && hEnd > a && hEnd + 2 < b && s.charCodeAt(hEnd) === COLON && s.charCodeAt(hEnd + 1) === SLASH && s.charCodeAt(hEnd + 2) === SLASH) {
    return INVALID_REASON.BAD_SCHEME;
  }
  if (hEnd < 0) return INVALID_REASON.BAD_HOST;
  if (hEnd === b) return INVALID_REASON.NO_PORT;
  if (s.charCodeAt(hEnd) !== COLON) {
    // a char no host has, then a ":" ("a_b.com:80", "exämple.com:80"); else no host:port at all ("a b c")
    for (let i = hEnd + 1; i < b; i++) if (s.charCodeAt(i) === COLON) return INVALID_REASON.BAD_HOST;
    return INVALID_REASON.UNRECOGNISED;
  }
  // no digits, out of range, or digits followed by something that is neither ":", "/" nor the end
  return INVALID_REASON.BAD_PORT;
}

// Trimmed bounds of the last span given to trimSpan (module scratch, as above).
let spanStart = 0;
let spanEnd = 0;

/** Trim s[a, b) as String#trim would; false when the rest is blank or a comment. */
function trimSpan(s: string, a: number, b: number): boolean {
  while (a < b && isTrimSpace(s.charCodeAt(a))) a++;
  while (b > a && isTrimSpace(s.charCodeAt(b - 1))) b--;
  spanStart = a;
  spanEnd = b;
  return a < b && s.charCodeAt(a) !== HASH;
}

/** True for lines the list parser skips without counting them invalid. */
export function isIgnorableLine(line: string): boolean {
  return !trimSpan(line, 0, line.length);
}

/**
 * Parse one line. Returns null for an invalid line AND for a blank/comment line
 * (use isIgnorableLine to tell them apart).
 */
export function parseProxyLine(line: string, type?: CheckType): ParsedProxy | null {
  if (!trimSpan(line, 0, line.length)) return null;
  listType = type;
  ignoreSchemes = false;
  return parseSpan(line, spanStart, spanEnd);
}

/**
 * Parse a whole list: a text body (split into lines) or a JSON array (each
 * element is one line; a non-string element counts as invalid).
 * Never throws. Without `maxUnique`, every line lands in exactly one of
 * proxies / duplicates / invalid / ignored. Invalid lines are also kept with
 * their line number (from 1: a text body's lines, blank and comment lines
 * counted; an array's elements), text and reason (`invalidLines`).
 */
export function parseProxyList(input: string | readonly unknown[], opts: ParseListOptions = {}): ParsedList {
  const max = opts.maxUnique ?? Number.POSITIVE_INFINITY;
  listType = opts.type;
  ignoreSchemes = opts.ignoreSchemes === true;
  // Size the table for the likely count (a host:port line is ~16 chars) so it rarely grows.
  const guess = typeof input === 'string' ? Math.ceil(input.length / 16) : input.length;
  const seen = new ProxySet<ParsedProxy>(Math.min(guess, max + 1, 1 << 20));
  const invalidLines = new InvalidLines();
  let duplicates = 0;
  let ignored = 0;
  let limitExceeded = false;
  let lineNo = 0;
  const schemes: Record<ProxyType, number> = { http: 0, socks4: 0, socks5: 0 };

  /** One line s[a, b), number `lineNo`; false once the unique limit is exceeded. */
  const take = (s: string, a: number, b: number): boolean => {
    if (!trimSpan(s, a, b)) {
      ignored++;
      return true;
    }
    const p = parseSpan(s, spanStart, spanEnd);
    if (p === null) {
      invalidLines.add(lineNo, failReason, s, spanStart, spanEnd);
      return true;
    }
    if (lineScheme !== undefined) schemes[lineScheme]++;
    if (!seen.addHashed(p, lineHash)) {
      duplicates++;
    } else if (seen.size > max) {
      limitExceeded = true;
      return false;
    }
    return true;
  };

  if (typeof input === 'string') {
    // Lines end at "\n", "\r\n" or a lone "\r"; native indexOf finds both breaks,
    // each searched again only once the scan has passed its last hit (linear).
    const n = input.length;
    let start = 0;
    let nl = -2;
    let cr = -2;
    for (;;) {
      if (nl !== -1 && nl < start) nl = input.indexOf('\n', start);
      if (cr !== -1 && cr < start) cr = input.indexOf('\r', start);
      const stop = nl < 0 ? (cr < 0 ? n : cr) : cr < 0 || nl < cr ? nl : cr;
      lineNo++;
      if (!take(input, start, stop)) break;
      if (stop === n) break;
      start = stop + (input.charCodeAt(stop) === CR && input.charCodeAt(stop + 1) === LF ? 2 : 1);
    }
  } else {
    for (const el of input) {
      lineNo++;
      if (typeof el !== 'string') invalidLines.add(lineNo, INVALID_REASON.NOT_A_STRING, jsonKind(el));
      else if (!take(el, 0, el.length)) break;
    }
  }
  return { proxies: seen.values(), invalid: invalidLines.count, invalidLines, duplicates, ignored, limitExceeded, schemes };
}

/** What a non-string element of a JSON array is shown as: its JSON for a scalar, `[…]` / `{…}` for the rest. */
function jsonKind(v: unknown): string {
  if (Array.isArray(v)) return '[\u2026]';
  if (typeof v === 'object' && v !== null) return '{\u2026}';
  return JSON.stringify(v) ?? String(v);
}
