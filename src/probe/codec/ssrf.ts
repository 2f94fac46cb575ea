/**
 * SSRF guard (pure): is this resolved IP address one the checker must never
 * connect to (or send a proxy to) unless ALLOW_PRIVATE_TARGETS=true?
 *
 * Blocked: loopback, RFC 1918 private, link-local, CGNAT (100.64/10),
 * multicast, "this network" (0/8), reserved (240/4, broadcast), IETF protocol
 * assignments, benchmarking and documentation ranges; for IPv6 everything
 * outside global unicast 2000::/3 (::, ::1, fc00::/7, fe80::/10, ff00::/8,
 * ...) plus 2001::/23, 2001:db8::/32 and 3fff::/20. Addresses that embed an
 * IPv4 address (IPv4-mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96, 6to4
 * 2002::/16) are judged by that IPv4 address. Anything that is not an IP
 * literal is blocked (fail closed). A zone suffix (`%eth0`) is ignored.
 *
 * `blockedTargetMessage` is the one text of a `blocked_target` failure
 * (probes, custom URLs, and the job layer's refusal of literal addresses
 * before any connection): it names the setting that changes it.
 */

import { parseIPv4, parseIPv6 } from './ip-literal';

/** [network, prefix length] pairs of blocked IPv4 ranges. */
const V4_BLOCKED: ReadonlyArray<readonly [number, number]> = Object.freeze(
  (
    [
      ['0.0.0.0', 8], // "this network"
      ['10.0.0.0', 8], // private
      ['100.64.0.0', 10], // CGNAT shared address space
      ['127.0.0.0', 8], // loopback
      ['169.254.0.0', 16], // link-local
      ['172.16.0.0', 12], // private
      ['192.0.0.0', 24], // IETF protocol assignments
      ['192.0.2.0', 24], // TEST-NET-1 documentation
      ['192.88.99.0', 24], // deprecated 6to4 relay anycast
      ['192.168.0.0', 16], // private
      ['198.18.0.0', 15], // benchmarking
      ['198.51.100.0', 24], // TEST-NET-2 documentation
      ['203.0.113.0', 24], // TEST-NET-3 documentation
      ['224.0.0.0', 4], // multicast
      ['240.0.0.0', 4], // reserved + 255.255.255.255 broadcast
    ] as const
  ).map(([net, bits]) => [parseIPv4(net) as number, bits] as const),
);

function v4Blocked(v: number): boolean {
  for (const [net, bits] of V4_BLOCKED) {
    const size = 2 ** (32 - bits);
    if (v >= net && v < net + size) return true;
  }
  return false;
}

function v6Blocked(g: number[]): boolean {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const embedded = g6 * 65536 + g7;
  // IPv4-mapped ::ffff:0:0/96 -> judge the IPv4 address
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0xffff) return v4Blocked(embedded);
  // NAT64 well-known prefix 64:ff9b::/96
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return v4Blocked(embedded);
  // 6to4 2002::/16 embeds the IPv4 address in groups 1-2
  if (g0 === 0x2002) return v4Blocked(g1 * 65536 + g2);
  // only global unicast 2000::/3 is reachable on the internet
  if ((g0 & 0xe000) !== 0x2000) return true;
  if (g0 === 0x2001 && g1 < 0x200) return true; // 2001::/23 IETF protocol assignments (Teredo, ORCHID, ...)
  if (g0 === 0x2001 && g1 === 0x0db8) return true; // 2001:db8::/32 documentation
  if (g0 === 0x3fff && g1 < 0x1000) return true; // 3fff::/20 documentation
  return false;
}

/** True when `ip` must not be connected to (see header); non-IP input is blocked. */
export function isBlockedAddress(ip: string): boolean {
  const pct = ip.indexOf('%');
  const s = pct === -1 ? ip : ip.slice(0, pct);
  const v4 = parseIPv4(s);
  if (v4 >= 0) return v4Blocked(v4);
  const v6 = parseIPv6(s);
  if (v6 !== null) return v6Blocked(v6);
  return true;
}

/** The setting that lets the guard pass such addresses (tests and private networks set it). */
export const ALLOW_PRIVATE_TARGETS = 'ALLOW_PRIVATE_TARGETS';

/**
 * The message of a `blocked_target` failure: `ip` refused, reached as
 * `host` (a name that resolved to it; the address itself when it was given
 * as one), naming the setting that allows it.
 */
export function blockedTargetMessage(ip: string, host: string = ip): string {
  const what = host === ip ? `${ip} is in a private, loopback or reserved range` : `${host} resolves to ${ip}, a private, loopback or reserved address`;
  return `${what}; refused unless the server sets ${ALLOW_PRIVATE_TARGETS}=true`;
}
