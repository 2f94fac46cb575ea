/**
 * The gateway's username grammar (DECISIONS "Gateway"); the password is an
 * API key. Pure.
 *
 *   pool-<id>[-country-<cc>][-type-<http|socks4|socks5>][-target-<name>][-session-<token>][-rotate-random]
 *
 *   id      the pool's id (src/pools/pool-id.ts: 10..32 of [a-z0-9])
 *   cc      ISO 3166 alpha-2, any case (upper-cased)
 *   name    one of the pool's targets (DECISIONS "Targets in pools"): 1..32 of [a-z0-9-];
 *           its parts run up to the next option keyword (a name with a part
 *           `country`, `type`, `target`, `session` or `rotate` cannot be asked for)
 *   token   1..32 of [A-Za-z0-9]: the same upstream while it works, at most 30 minutes
 *   rotate-random   pick at random among the matches instead of round-robin
 *
 * The options may come in any order, each at most once; keywords are lower
 * case. Anything else is refused with a reason for the log (the client only
 * sees a 407 or a SOCKS auth failure). formatGatewayUsername writes the
 * canonical order; parse(format(u)) is u.
 */
import { isPoolId } from '../pools/pool-id';
import { PROXY_TYPES, type ProxyType } from '../proxy/types';

export type Rotation = 'round_robin' | 'random';

export interface GatewayUser {
  poolId: string;
  country: string | null;
  type: ProxyType | null;
  target: string | null;
  session: string | null;
  rotate: Rotation;
}

export type UsernameParse = { ok: true; user: GatewayUser } | { ok: false; reason: string };

const SESSION = /^[A-Za-z0-9]{1,32}$/;
const TARGET = /^[a-z0-9-]{1,32}$/;
const KEYWORDS = new Set(['country', 'type', 'target', 'session', 'rotate']);
const COUNTRY = /^[A-Za-z]{2}$/;
/** Longer usernames are refused before splitting (the longest valid one is under 100). */
const MAX_LENGTH = 255;

const no = (reason: string): UsernameParse => ({ ok: false, reason });

export function parseGatewayUsername(username: string): UsernameParse {
  if (username.length > MAX_LENGTH) return no('username too long');
  const parts = username.split('-');
  if (parts[0] !== 'pool') return no('username must start with pool-');
  const poolId = parts[1] ?? '';
  if (!isPoolId(poolId)) return no('not a pool id');
  const user: GatewayUser = { poolId, country: null, type: null, target: null, session: null, rotate: 'round_robin' };
  const seen = new Set<string>();
  for (let i = 2; i < parts.length; i += 2) {
    const key = parts[i] as string;
    let value = parts[i + 1];
    if (key === 'target' && value !== undefined) {
      // a target's name may hold `-`: its parts up to the next keyword
      let j = i + 2;
      while (j < parts.length && !KEYWORDS.has(parts[j]!)) j++;
      value = parts.slice(i + 1, j).join('-');
      i = j - 2;
    }
    if (value === undefined) return no(`option ${key} has no value`);
    if (seen.has(key)) return no(`option ${key} given twice`);
    seen.add(key);
    if (key === 'country') {
      if (!COUNTRY.test(value)) return no('country must be two letters');
      user.country = value.toUpperCase();
    } else if (key === 'type') {
      if (!(PROXY_TYPES as readonly string[]).includes(value)) return no('type must be http, socks4 or socks5');
      user.type = value as ProxyType;
    } else if (key === 'target') {
      if (!TARGET.test(value)) return no('target must be 1 to 32 of a-z, 0-9 and -');
      user.target = value;
    } else if (key === 'session') {
      if (!SESSION.test(value)) return no('session must be 1 to 32 letters or digits');
      user.session = value;
    } else if (key === 'rotate') {
      if (value !== 'random') return no('rotate must be random');
      user.rotate = 'random';
    } else {
      return no(`unknown option ${key.slice(0, 20)}`);
    }
  }
  return { ok: true, user };
}

export function formatGatewayUsername(u: GatewayUser): string {
  let s = `pool-${u.poolId}`;
  if (u.country !== null) s += `-country-${u.country}`;
  if (u.type !== null) s += `-type-${u.type}`;
  if (u.target !== null) s += `-target-${u.target}`;
  if (u.session !== null) s += `-session-${u.session}`;
  if (u.rotate === 'random') s += '-rotate-random';
  return s;
}
