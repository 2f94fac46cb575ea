/**
 * This machine's own addresses (os.networkInterfaces) and the interfaces of
 * its default routes, read once at start (the thin driver of
 * judge-address.ts). Linux: /proc/net/route (destination 00000000) and
 * /proc/net/ipv6_route (destination ::/0); elsewhere, or unreadable: no
 * default route known.
 */
import { readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import type { LocalAddress, LocalAddresses } from './judge-address';

/** The interface of the first default route in /proc/net/route's text (pure). */
export function defaultRouteV4(routeText: string): string | null {
  for (const line of routeText.split('\n').slice(1)) {
    const [iface, destination, , flags, , , , mask] = line.trim().split(/\s+/);
    // RTF_UP (1): a route in use
    if (iface !== undefined && destination === '00000000' && mask === '00000000' && (Number.parseInt(flags ?? '0', 16) & 1) === 1) return iface;
  }
  return null;
}

/** The interface of the first default route in /proc/net/ipv6_route's text (pure). */
export function defaultRouteV6(routeText: string): string | null {
  for (const line of routeText.split('\n')) {
    const f = line.trim().split(/\s+/);
    // destination, prefix length, ..., flags (f[8]), device (f[9]); not the loopback's unreachable default
    if (f.length >= 10 && /^0{32}$/.test(f[0]!) && f[1] === '00' && f[9] !== 'lo' && (Number.parseInt(f[8]!, 16) & 1) === 1) return f[9]!;
  }
  return null;
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

export function localAddresses(): LocalAddresses {
  const interfaces: Record<string, LocalAddress[]> = {};
  for (const [name, list] of Object.entries(networkInterfaces())) {
    interfaces[name] = (list ?? []).map((a) => ({ address: a.address, family: a.family === 'IPv6' ? 'IPv6' : 'IPv4', internal: a.internal }));
  }
  return { interfaces, defaultRoute: { v4: defaultRouteV4(readText('/proc/net/route')), v6: defaultRouteV6(readText('/proc/net/ipv6_route')) } };
}

/** Every address of this machine (loopback included), for "is this proxy on this machine?". */
export function ownAddresses(local: LocalAddresses): Set<string> {
  const out = new Set(['127.0.0.1', '::1']);
  for (const list of Object.values(local.interfaces)) for (const a of list) out.add(a.address.toLowerCase());
  return out;
}
