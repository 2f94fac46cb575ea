/**
 * Where the built-in judge is reached, and by whom (pure): decided once at
 * start from the settings and this machine's own addresses; no request ever
 * chooses it.
 *
 * - JUDGE_URL or BASE_URL set, or the listener on loopback only
 *   (HOST=127.0.0.1): the operator chose; nothing is judged (reach null).
 * - Neither set, the listener on one other address: that address (a private
 *   one: this network only).
 * - Neither set, the listener on every address (HOST=0.0.0.0 or ::): the
 *   address of the default route's interface when it is public (IPv4, or
 *   IPv6 with HOST=::); else the derived BASE_URL (127.0.0.1), this machine
 *   only: the start warns, /health says `judge_reachable`, and a check whose
 *   proxies are elsewhere gets a warning (judge-warnings in src/jobs).
 *
 * Reach: `public` (any proxy), `this network only` (a private, link-local or
 * otherwise non-public address: proxies on its network), `this machine only`
 * (loopback: proxies on this machine), or null (the operator's choice, not
 * judged).
 */
import { isIP } from 'node:net';
import { isBlockedAddress } from '../probe/codec/ssrf';

export type JudgeReach = 'public' | 'this network only' | 'this machine only';

export interface LocalAddress {
  address: string;
  family: 'IPv4' | 'IPv6';
  internal: boolean;
}

/** This machine's addresses by interface, and the interfaces of its default routes. */
export interface LocalAddresses {
  interfaces: Record<string, readonly LocalAddress[]>;
  defaultRoute: { v4: string | null; v6: string | null };
}

export interface JudgeAddressInput {
  judgeUrl: string | undefined;
  baseUrl: string;
  baseUrlSet: boolean;
  /** HOST: the listener's address. */
  listenHost: string;
  local: LocalAddresses;
}

export interface JudgeAddress {
  /** The host to reach the built-in judge at (brackets for IPv6); null: BASE_URL's (or JUDGE_URL's) as it is. */
  host: string | null;
  reach: JudgeReach | null;
  /** Why, for the ready line. */
  from: string;
}

function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || (isIP(h) === 4 && h.startsWith('127.'));
}

/** Who reaches a URL host: by its address, or null for a host name (localhost: this machine). */
export function reachOf(host: string): JudgeReach | null {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (isLoopback(h)) return 'this machine only';
  if (isIP(h) === 0) return null;
  return isBlockedAddress(h) ? 'this network only' : 'public';
}

function hostOf(url: string): string {
  // the derived BASE_URL's host: HOST itself, in brackets for IPv6
  return new URL(url).hostname;
}

function publicAddressOf(local: LocalAddresses, family: 'IPv4' | 'IPv6'): string | null {
  const name = family === 'IPv4' ? local.defaultRoute.v4 : local.defaultRoute.v6;
  if (name === null) return null;
  const a = (local.interfaces[name] ?? []).find((x) => x.family === family && !x.internal && !isBlockedAddress(x.address));
  return a?.address ?? null;
}

export function judgeAddress(i: JudgeAddressInput): JudgeAddress {
  if (i.judgeUrl !== undefined) return { host: null, reach: null, from: 'JUDGE_URL' };
  if (i.baseUrlSet) return { host: null, reach: null, from: 'BASE_URL' };
  const listen = i.listenHost.toLowerCase();
  if (isLoopback(listen)) return { host: null, reach: null, from: 'HOST (loopback only)' };
  if (listen !== '0.0.0.0' && listen !== '::') return { host: null, reach: reachOf(hostOf(i.baseUrl)), from: 'HOST' };
  const v4 = publicAddressOf(i.local, 'IPv4');
  if (v4 !== null) return { host: v4, reach: 'public', from: `${i.local.defaultRoute.v4}'s address (the default route)` };
  const v6 = listen === '::' ? publicAddressOf(i.local, 'IPv6') : null;
  if (v6 !== null) return { host: `[${v6}]`, reach: 'public', from: `${i.local.defaultRoute.v6}'s address (the default IPv6 route)` };
  return { host: null, reach: 'this machine only', from: 'no public address on this machine' };
}
