/**
 * IP address text -> numbers, for the geo lookups (pure, no I/O).
 *
 * IPv4 becomes one unsigned 32-bit integer; IPv6 becomes four unsigned 32-bit
 * words, most significant first. IPv4-mapped IPv6 (`::ffff:1.2.3.4`) is
 * reported as the IPv4 address it carries, because that is what a dual-stack
 * judge sees for an IPv4 client. A zone id (`fe80::1%eth0`) is ignored.
 * Invalid text gives `null`: callers treat it as "unknown", never as an error.
 */
import { ipv4At } from '../proxy/host';

export type IpWords = { v: 4; n: number } | { v: 6; w: Uint32Array };

/** Dotted quad -> uint32, or -1 when the text is not exactly a dotted quad (no leading zeros beyond "0"). */
export function parseIpv4(s: string, start = 0, end = s.length): number {
  return ipv4At(s, start, end); // one strict dotted-quad parser for the whole code base
}

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/** IPv6 text -> eight 16-bit groups, or null. Accepts `::`, a trailing dotted quad and a `%zone`. */
export function parseIpv6Groups(text: string): Uint16Array | null {
  let end = text.indexOf('%');
  if (end === -1) end = text.length;
  if (end === 0) return null;
  const head: number[] = [];
  const tail: number[] = [];
  let cur = head;
  let sawDouble = false;
  let i = 0;
  if (text.charCodeAt(0) === 58) {
    if (text.charCodeAt(1) !== 58) return null;
    sawDouble = true;
    cur = tail;
    i = 2;
    if (i === end) return new Uint16Array(8);
  }
  while (i < end) {
    // One group: hex digits up to ':' or end, or a dotted quad at the very end.
    let j = i;
    let group = 0;
    while (j < end) {
      const h = hexValue(text.charCodeAt(j));
      if (h < 0) break;
      group = group * 16 + h;
      j++;
    }
    if (j < end && text.charCodeAt(j) === 46) {
      // embedded IPv4: must be the last 32 bits
      const v4 = parseIpv4(text, i, end);
      if (v4 < 0) return null;
      cur.push(Math.floor(v4 / 65536), v4 & 0xffff);
      i = end;
      break;
    }
    const len = j - i;
    if (len === 0 || len > 4) return null;
    cur.push(group);
    if (j === end) {
      i = end;
      break;
    }
    if (text.charCodeAt(j) !== 58) return null;
    if (text.charCodeAt(j + 1) === 58) {
      if (sawDouble) return null;
      sawDouble = true;
      cur = tail;
      i = j + 2;
      if (i === end) break;
    } else {
      i = j + 1;
      if (i === end) return null; // trailing single ':'
    }
  }
  const total = head.length + tail.length;
  if (sawDouble ? total > 7 : total !== 8) return null;
  const out = new Uint16Array(8);
  for (let k = 0; k < head.length; k++) out[k] = head[k]!;
  for (let k = 0; k < tail.length; k++) out[8 - tail.length + k] = tail[k]!;
  return out;
}

/** Any IP text -> numbers; IPv4-mapped IPv6 comes back as IPv4. */
export function parseIp(text: string): IpWords | null {
  if (text.indexOf(':') === -1) {
    const n = parseIpv4(text);
    return n < 0 ? null : { v: 4, n };
  }
  let s = text;
  if (s.charCodeAt(0) === 91 && s.charCodeAt(s.length - 1) === 93) s = s.slice(1, -1);
  const g = parseIpv6Groups(s);
  if (!g) return null;
  if (g[0] === 0 && g[1] === 0 && g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0xffff) {
    return { v: 4, n: g[6]! * 65536 + g[7]! };
  }
  const w = new Uint32Array(4);
  for (let k = 0; k < 4; k++) w[k] = g[2 * k]! * 65536 + g[2 * k + 1]!;
  return { v: 6, w };
}
