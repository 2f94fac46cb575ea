/**
 * Char-level scanners of one proxy line, for the list parser (parse.ts):
 * pure, allocation-free, each bounded to the [a, b) range it is given so a
 * scan never runs into the next line.
 */
import { COLON, DOT, HYPHEN, isDigit } from './host';
import type { ProxyType } from './types';

export const SLASH = 47;
export const CR = 13;
export const LF = 10;
export const HASH = 35;
export const AT = 64;
export const PERCENT = 37;
export const OPEN_BRACKET = 91;
export const CLOSE_BRACKET = 93;
/** Longest IPv6 literal canonicalIPv6 accepts (so a "]" further away cannot close a valid host). */
export const IPV6_MAX = 45;

/**
 * Exactly the code units String#trim removes: ECMAScript WhiteSpace (TAB, VT,
 * FF, SP, NBSP, ZWNBSP/BOM, Unicode Zs) and LineTerminator (LF, CR, LS, PS).
 */
export function isTrimSpace(c: number): boolean {
  if (c <= 32) return c === 32 || (c >= 9 && c <= 13);
  if (c < 0xa0) return false;
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** [A-Za-z0-9.-]: the chars an unbracketed host is made of. */
export function isHostChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || isDigit(c) || c === DOT || c === HYPHEN;
}

/**
 * Index just past a supported scheme prefix ("socks5://") of the line s[a, b),
 * or `a` when there is none. The scheme is what precedes the line's first ":",
 * which must be at offset 4..7 and be followed by "//"; it is compared as
 * String#toLowerCase would see it (so the Kelvin sign K counts as "k").
 */
export function schemeEnd(s: string, a: number, b: number): number {
  const lim = Math.min(b, a + 8);
  let i = a;
  let ascii = true;
  for (; i < lim; i++) {
    const c = s.charCodeAt(i);
    if (c === COLON) break;
    if (c >= 0x80) ascii = false;
  }
  const len = i - a;
  if (i === lim || len < 4 || i + 2 >= b || s.charCodeAt(i + 1) !== SLASH || s.charCodeAt(i + 2) !== SLASH) return a;
  if (!ascii) return isSchemeName(s.slice(a, i).toLowerCase()) ? i + 3 : a;
  // ASCII: c | 0x20 equals a lower-case letter exactly for that letter in either case
  const c0 = s.charCodeAt(a) | 0x20;
  let ok = false;
  if (c0 === 104 /* h */) {
    ok =
      len <= 5 &&
      (s.charCodeAt(a + 1) | 0x20) === 116 /* t */ &&
      (s.charCodeAt(a + 2) | 0x20) === 116 /* t */ &&
      (s.charCodeAt(a + 3) | 0x20) === 112 /* p */ &&
      (len === 4 || (s.charCodeAt(a + 4) | 0x20) === 115); /* s */
  } else if (c0 === 115 /* s */ && len >= 6) {
    const v = s.charCodeAt(a + 5); // "4" or "5"
    ok =
      (s.charCodeAt(a + 1) | 0x20) === 111 /* o */ &&
      (s.charCodeAt(a + 2) | 0x20) === 99 /* c */ &&
      (s.charCodeAt(a + 3) | 0x20) === 107 /* k */ &&
      (s.charCodeAt(a + 4) | 0x20) === 115 /* s */ &&
      (v === 52 || v === 53) &&
      (len === 6 || (s.charCodeAt(a + 6) | 0x20) === (v === 52 ? 97 /* a */ : 104 /* h */));
  }
  return ok ? i + 3 : a;
}

/**
 * The protocol a scheme names (DECISIONS "Mixed lists"), for a line s[a, ...)
 * that schemeEnd found a supported scheme at: http and https -> http,
 * socks4 and socks4a -> socks4, socks5 and socks5h -> socks5. Every supported
 * name starts with "h" or "s", and a SOCKS name has its version digit 6th (a
 * Kelvin sign is one code unit, so the offsets hold for it too).
 */
export function schemeProtocol(s: string, a: number): ProxyType {
  if ((s.charCodeAt(a) | 0x20) === 104 /* h */) return 'http';
  return s.charCodeAt(a + 5) === 52 /* 4 */ ? 'socks4' : 'socks5';
}

function isSchemeName(lower: string): boolean {
  switch (lower) {
    case 'http':
    case 'https':
    case 'socks4':
    case 'socks4a':
    case 'socks5':
    case 'socks5h':
      return true;
    default:
      return false;
  }
}

/** Port number of s[a, b), or -1 when not 1..65535 in 1-5 decimal digits. */
export function portAt(s: string, a: number, b: number): number {
  if (b <= a || b - a > 5) return -1;
  let v = 0;
  for (let i = a; i < b; i++) {
    const c = s.charCodeAt(i);
    if (!isDigit(c)) return -1;
    v = v * 10 + (c - 48);
  }
  return v >= 1 && v <= 65535 ? v : -1;
}

/** End of the run of decimal digits starting at i (at most `b`). */
export function digitsEnd(s: string, i: number, b: number): number {
  while (i < b && isDigit(s.charCodeAt(i))) i++;
  return i;
}

// Scanner output (module scratch: the parser is synchronous and not re-entrant).
// scanHost only validates; hostText / hostHash turn the scanned host into the
// field and its hash once the line's form is known, so text that merely looks
// like a host (the user name of "user:pass@host:port") allocates nothing.
