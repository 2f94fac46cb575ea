/**
 * IP literal parsing and normalisation (pure). Shared by the SSRF guard and
 * the anonymity classifier: IPv4 dotted quads (no leading zeros), IPv6 with
 * `::` compression and a trailing dotted IPv4 part. `normalizeIp` gives one
 * canonical spelling per address so addresses compare exactly, with
 * IPv4-mapped IPv6 (::ffff:a.b.c.d) collapsed to its IPv4 form.
 */
import { ipv4At } from '../../proxy/host';

/** Parses a dotted-quad IPv4 literal into an unsigned 32-bit integer, or -1. */
export function parseIPv4(s: string): number {
  return ipv4At(s, 0, s.length); // one strict dotted-quad parser for the whole code base
}

/**
 * Parses an IPv6 literal (no brackets, no zone) into 8 16-bit groups, or null.
 * Accepts `::` compression and a trailing dotted IPv4 part.
 */
export function parseIPv6(s: string): number[] | null {
  if (s.length < 2 || s.length > 45) return null;
  const dbl = s.indexOf('::');
  if (dbl !== -1 && s.indexOf('::', dbl + 1) !== -1) return null;
  const head = dbl === -1 ? s : s.slice(0, dbl);
  const tail = dbl === -1 ? '' : s.slice(dbl + 2);
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups: number[] = [];
  const parseSide = (parts: string[], out: number[], isLast: boolean): boolean => {
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i] as string;
      if (isLast && i === parts.length - 1 && p.includes('.')) {
        const v4 = parseIPv4(p);
        if (v4 < 0) return false;
        out.push(Math.floor(v4 / 65536), v4 % 65536);
        continue;
      }
      if (p.length === 0 || p.length > 4 || !/^[0-9a-fA-F]+$/.test(p)) return false;
      out.push(parseInt(p, 16));
    }
    return true;
  };
  const l: number[] = [];
  const r: number[] = [];
  if (!parseSide(left, l, dbl === -1)) return null;
  if (!parseSide(right, r, true)) return null;
  if (dbl === -1) {
    if (l.length !== 8) return null;
    return l;
  }
  const fill = 8 - l.length - r.length;
  if (fill < 1) return null;
  groups.push(...l);
  for (let i = 0; i < fill; i++) groups.push(0);
  groups.push(...r);
  return groups;
}

/**
 * Canonical spelling of an IP literal, or null when `s` is not one: IPv4 as
 * dotted quad, IPv4-mapped IPv6 as its IPv4, other IPv6 as eight lower-case
 * hex groups without leading zeros (uncompressed). A `%zone` is dropped.
 */
export function normalizeIp(s: string): string | null {
  const pct = s.indexOf('%');
  const t = pct === -1 ? s : s.slice(0, pct);
  const v4 = parseIPv4(t);
  if (v4 >= 0) return t;
  if (t.indexOf(':') === -1) return null;
  const g = parseIPv6(t);
  if (g === null) return null;
  if (g[0] === 0 && g[1] === 0 && g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0xffff) {
    const a = g[6] as number;
    const b = g[7] as number;
    return `${a >> 8}.${a & 255}.${b >> 8}.${b & 255}`;
  }
  let out = '';
  for (let i = 0; i < 8; i++) out += (i ? ':' : '') + (g[i] as number).toString(16);
  return out;
}
