/**
 * The invalid lines of a proxy list, kept so a check can say which lines it
 * skipped and why (DECISIONS "Failures that explain themselves":
 * `metadata.invalid_lines`, all of them in the result file). Pure.
 *
 * Reasons are fixed texts, one per way a line fails (`INVALID_REASONS`); the
 * parser (parse.ts) names one per invalid line.
 *
 * ## Memory
 *
 * A body of junk may hold millions of invalid lines, so they are not kept as
 * objects, nor as slices of the body (a slice may keep the whole body alive):
 * each is packed into one growing byte buffer, its text copied and cut at
 * `INVALID_TEXT_MAX` characters:
 *
 *   header   1 byte: reason (bits 0-3), text cut (bit 4), text stored as
 *            UTF-16 (bit 5: a char above U+00FF), line = previous line + 1
 *            (bit 6: no delta follows)
 *   delta    varint, the line number minus the previous one (absent with bit 6)
 *   length   varint, the kept text's length in UTF-16 code units (<= 100)
 *   text     one byte per char (Latin-1), or two (UTF-16LE) with bit 5
 *
 * So a line costs its kept text plus 2 bytes (3 after a gap): a 16 MiB body
 * of long junk lines keeps about 102 bytes per line, one of short lines
 * about its own size (1.5 times for the worst, one-character lines), and no
 * copy of the body itself. Entries are read back in order (`first`, `all`).
 */

/** Characters of an invalid line kept (and shown); a longer one is cut and ends with `…`. */
export const INVALID_TEXT_MAX = 100;
/** How many invalid lines the check response shows (`metadata.invalid_lines`); the result file has all. */
export const INVALID_LINES_SHOWN = 20;

/** Why a line is invalid: the fixed texts users see, by reason number (parse.ts names one per line). */
export const INVALID_REASONS = Object.freeze([
  'not a proxy address: expected host:port, user:pass@host:port or host:port:user:pass',
  'not a string',
  'no port: expected host:port',
  'port is not a number from 1 to 65535',
  'host is not an IPv4 address, an IPv6 address in brackets or a host name',
  'username or password has a control character or a bad percent-escape',
  'empty username',
  'no password: expected host:port:user:pass',
  'scheme is not http, https, socks4, socks4a, socks5 or socks5h',
] as const);

export const INVALID_REASON = Object.freeze({
  UNRECOGNISED: 0,
  NOT_A_STRING: 1,
  NO_PORT: 2,
  BAD_PORT: 3,
  BAD_HOST: 4,
  BAD_CREDENTIALS: 5,
  EMPTY_USERNAME: 6,
  NO_PASSWORD: 7,
  BAD_SCHEME: 8,
} as const);
export type InvalidReason = (typeof INVALID_REASON)[keyof typeof INVALID_REASON];

/** One invalid line as the API shows it: `line` counts from 1 (a JSON array's elements too). */
export interface InvalidLine {
  line: number;
  text: string;
  reason: string;
}

const CUT = 0x10;
const WIDE = 0x20;
const NEXT = 0x40;
const ELLIPSIS = '\u2026';

export class InvalidLines {
  #buf = new Uint8Array(256);
  #len = 0;
  #count = 0;
  #lastLine = 0;

  /** Invalid lines added. */
  get count(): number {
    return this.#count;
  }

  /** Bytes the packed entries take (the buffer may be up to twice as large while it grows). */
  get byteLength(): number {
    return this.#len;
  }

  /**
   * Adds line number `line` (greater than the previous one), whose trimmed
   * text is s[a, b), invalid for `reason`. Copies at most INVALID_TEXT_MAX
   * characters (never splitting a surrogate pair).
   */
  add(line: number, reason: InvalidReason, s: string, a = 0, b = s.length): void {
    let end = b;
    let flags: number = reason;
    if (b - a > INVALID_TEXT_MAX) {
      end = a + INVALID_TEXT_MAX;
      const last = s.charCodeAt(end - 1);
      if (last >= 0xd800 && last <= 0xdbff) end--; // keep the pair whole: cut before it
      flags |= CUT;
    }
    for (let i = a; i < end; i++) {
      if (s.charCodeAt(i) > 0xff) {
        flags |= WIDE;
        break;
      }
    }
    const delta = line - this.#lastLine;
    if (delta === 1) flags |= NEXT;
    const n = end - a;
    this.#reserve(1 + 8 + 1 + n * 2); // a varint of a safe integer takes at most 8 bytes
    const buf = this.#buf;
    let o = this.#len;
    buf[o++] = flags;
    if (delta !== 1) o = putVarint(buf, o, delta);
    buf[o++] = n; // n <= INVALID_TEXT_MAX < 128: one varint byte
    if ((flags & WIDE) === 0) {
      for (let i = a; i < end; i++) buf[o++] = s.charCodeAt(i);
    } else {
      for (let i = a; i < end; i++) {
        const c = s.charCodeAt(i);
        buf[o++] = c & 0xff;
        buf[o++] = c >>> 8;
      }
    }
    this.#len = o;
    this.#lastLine = line;
    this.#count++;
  }

  /** The first `n` entries (the check response's `metadata.invalid_lines`). */
  first(n: number = INVALID_LINES_SHOWN): InvalidLine[] {
    const out: InvalidLine[] = [];
    for (const e of this.all()) {
      if (out.length >= n) break;
      out.push(e);
    }
    return out;
  }

  /** Every entry, in line order (the result file's `invalid_lines`). */
  *all(): Generator<InvalidLine> {
    const buf = this.#buf;
    let o = 0;
    let line = 0;
    for (let k = 0; k < this.#count; k++) {
      const flags = buf[o++]!;
      if ((flags & NEXT) !== 0) line++;
      else {
        let v = 0;
        let shift = 1;
        for (;;) {
          const byte = buf[o++]!;
          v += (byte & 0x7f) * shift;
          if (byte < 0x80) break;
          shift *= 128;
        }
        line += v;
      }
      const n = buf[o++]!;
      let text: string;
      if ((flags & WIDE) === 0) {
        text = latin1(buf, o, n);
        o += n;
      } else {
        text = utf16(buf, o, n);
        o += 2 * n;
      }
      if ((flags & CUT) !== 0) text += ELLIPSIS;
      yield { line, text, reason: INVALID_REASONS[flags & 0x0f] ?? INVALID_REASONS[0] };
    }
  }

  #reserve(more: number): void {
    if (this.#len + more <= this.#buf.length) return;
    let size = this.#buf.length * 2;
    while (size < this.#len + more) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.#buf.subarray(0, this.#len));
    this.#buf = next;
  }
}

/** Writes `v` (>= 0) as a little-endian base-128 varint at `o`; returns the index past it. */
function putVarint(buf: Uint8Array, o: number, v: number): number {
  while (v >= 0x80) {
    buf[o++] = (v % 128) | 0x80;
    v = Math.floor(v / 128);
  }
  buf[o++] = v;
  return o;
}

function latin1(buf: Uint8Array, o: number, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += String.fromCharCode(buf[o + i]!);
  return s;
}

function utf16(buf: Uint8Array, o: number, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += String.fromCharCode(buf[o + 2 * i]! | (buf[o + 2 * i + 1]! << 8));
  return s;
}
