/**
 * SOCKS4 / SOCKS4a / SOCKS5 (RFC 1928) and RFC 1929 username/password frames
 * (pure, no I/O). Builders return Buffers; reply parsers take everything
 * received so far and answer `incomplete` until they have a whole reply, so
 * the same stream gives the same answer however it was split. Modelled on
 * undici lib/core/socks5-utils.js. `consumed` says how many bytes the reply
 * used; anything after that is already tunnel data.
 */
import { parseIPv4, parseIPv6 } from './ip-literal';

export type SocksFailCode = 'socks_rejected' | 'auth_required' | 'bad_response';

export type SocksReply =
  | { kind: 'incomplete' }
  | { kind: 'ok'; consumed: number; value: number }
  | { kind: 'fail'; code: SocksFailCode; message: string };

const INCOMPLETE: SocksReply = Object.freeze({ kind: 'incomplete' }) as SocksReply;

function fail(code: SocksFailCode, message: string): SocksReply {
  return { kind: 'fail', code, message };
}

function portBytes(b: Buffer, at: number, port: number): void {
  b[at] = (port >> 8) & 0xff;
  b[at + 1] = port & 0xff;
}

// ---------------------------------------------------------------- SOCKS4/4a

/**
 * CONNECT request. `host` is an IPv4 literal (plain SOCKS4) or a hostname
 * (SOCKS4a: DSTIP 0.0.0.1 and the name after the user id). IPv6 targets are
 * not expressible in SOCKS4: RangeError.
 */
export function buildSocks4Connect(host: string, port: number, userId: string): Buffer {
  const v4 = parseIPv4(host);
  if (v4 < 0 && host.indexOf(':') !== -1) throw new RangeError('SOCKS4 cannot address an IPv6 target');
  const user = Buffer.from(userId, 'utf8');
  const name = v4 < 0 ? Buffer.from(host, 'utf8') : null;
  const b = Buffer.alloc(9 + user.length + (name === null ? 0 : name.length + 1));
  b[0] = 4;
  b[1] = 1;
  portBytes(b, 2, port);
  if (name === null) b.writeUInt32BE(v4, 4);
  else b.writeUInt32BE(1, 4);
  user.copy(b, 8);
  b[8 + user.length] = 0;
  if (name !== null) {
    name.copy(b, 9 + user.length);
    b[b.length - 1] = 0;
  }
  return b;
}

/** SOCKS4 reply: 8 bytes, VN 0 (4 tolerated), CD 90 granted. `value` = CD. */
export function parseSocks4Reply(buf: Buffer): SocksReply {
  if (buf.length >= 1 && buf[0] !== 0 && buf[0] !== 4) return fail('bad_response', `not a SOCKS4 reply (first byte ${buf[0]})`);
  if (buf.length < 8) return INCOMPLETE;
  const cd = buf[1] as number;
  if (cd === 0x5a) return { kind: 'ok', consumed: 8, value: cd };
  if (cd === 0x5b) return fail('socks_rejected', 'SOCKS4 request rejected or failed (91)');
  if (cd === 0x5c) return fail('socks_rejected', 'SOCKS4 request rejected: server cannot reach identd (92)');
  if (cd === 0x5d) return fail('auth_required', 'SOCKS4 request rejected: user id not accepted (93)');
  return fail('bad_response', `SOCKS4 reply with unknown code ${cd}`);
}

// ------------------------------------------------------------------- SOCKS5

export const SOCKS5_NO_AUTH = 0x00;
export const SOCKS5_USER_PASS = 0x02;
export const SOCKS5_NO_ACCEPTABLE = 0xff;

/** Greeting offering no-auth, plus username/password when we have credentials. */
export function buildSocks5Greeting(withCredentials: boolean): Buffer {
  return withCredentials
    ? Buffer.from([5, 2, SOCKS5_NO_AUTH, SOCKS5_USER_PASS])
    : Buffer.from([5, 1, SOCKS5_NO_AUTH]);
}

/** Method selection reply. `value` = chosen method (only one we offered). */
export function parseSocks5MethodReply(buf: Buffer, offeredCredentials: boolean): SocksReply {
  if (buf.length >= 1 && buf[0] !== 5) return fail('bad_response', `not a SOCKS5 reply (first byte ${buf[0]})`);
  if (buf.length < 2) return INCOMPLETE;
  const m = buf[1] as number;
  if (m === SOCKS5_NO_AUTH) return { kind: 'ok', consumed: 2, value: m };
  if (m === SOCKS5_USER_PASS && offeredCredentials) return { kind: 'ok', consumed: 2, value: m };
  if (m === SOCKS5_NO_ACCEPTABLE) {
    return offeredCredentials
      ? fail('socks_rejected', 'SOCKS5 server accepts none of the offered auth methods')
      : fail('auth_required', 'SOCKS5 server requires authentication');
  }
  return fail('bad_response', `SOCKS5 server chose a method that was not offered (${m})`);
}

/** RFC 1929 sub-negotiation. Username and password are at most 255 UTF-8 bytes each (RangeError). */
export function buildSocks5Auth(username: string, password: string): Buffer {
  const u = Buffer.from(username, 'utf8');
  const p = Buffer.from(password, 'utf8');
  if (u.length > 255 || p.length > 255) throw new RangeError('SOCKS5 username and password are limited to 255 bytes');
  const b = Buffer.alloc(3 + u.length + p.length);
  b[0] = 1;
  b[1] = u.length;
  u.copy(b, 2);
  b[2 + u.length] = p.length;
  p.copy(b, 3 + u.length);
  return b;
}

/** RFC 1929 reply: [version 1 (5 tolerated), status 0 = success]. */
export function parseSocks5AuthReply(buf: Buffer): SocksReply {
  if (buf.length >= 1 && buf[0] !== 1 && buf[0] !== 5) return fail('bad_response', `not a SOCKS5 auth reply (first byte ${buf[0]})`);
  if (buf.length < 2) return INCOMPLETE;
  if (buf[1] === 0) return { kind: 'ok', consumed: 2, value: 0 };
  return fail('auth_required', `SOCKS5 username/password rejected (${buf[1]})`);
}

/** CONNECT request: IPv4 (ATYP 1), IPv6 (ATYP 4) or domain name (ATYP 3, at most 255 bytes). */
export function buildSocks5Connect(host: string, port: number): Buffer {
  const v4 = parseIPv4(host);
  if (v4 >= 0) {
    const b = Buffer.alloc(10);
    b[0] = 5;
    b[1] = 1;
    b[3] = 1;
    b.writeUInt32BE(v4, 4);
    portBytes(b, 8, port);
    return b;
  }
  const v6 = host.indexOf(':') !== -1 ? parseIPv6(host) : null;
  if (v6 !== null) {
    const b = Buffer.alloc(22);
    b[0] = 5;
    b[1] = 1;
    b[3] = 4;
    for (let i = 0; i < 8; i++) b.writeUInt16BE(v6[i] as number, 4 + i * 2);
    portBytes(b, 20, port);
    return b;
  }
  const name = Buffer.from(host, 'utf8');
  if (name.length === 0 || name.length > 255) throw new RangeError('SOCKS5 domain name must be 1..255 bytes');
  const b = Buffer.alloc(7 + name.length);
  b[0] = 5;
  b[1] = 1;
  b[3] = 3;
  b[4] = name.length;
  name.copy(b, 5);
  portBytes(b, 5 + name.length, port);
  return b;
}

const SOCKS5_REPLIES: readonly string[] = Object.freeze([
  'succeeded',
  'general SOCKS server failure',
  'connection not allowed by ruleset',
  'network unreachable',
  'host unreachable',
  'connection refused',
  'TTL expired',
  'command not supported',
  'address type not supported',
]);

/** CONNECT reply: VER 5, REP, RSV, ATYP + bound address + port. `value` = REP. */
export function parseSocks5ConnectReply(buf: Buffer): SocksReply {
  if (buf.length >= 1 && buf[0] !== 5) return fail('bad_response', `not a SOCKS5 reply (first byte ${buf[0]})`);
  if (buf.length >= 2 && buf[1] !== 0) {
    const rep = buf[1] as number;
    const why = SOCKS5_REPLIES[rep];
    return why === undefined
      ? fail('bad_response', `SOCKS5 reply with unknown code ${rep}`)
      : fail('socks_rejected', `SOCKS5 CONNECT failed: ${why} (${rep})`);
  }
  if (buf.length < 5) return INCOMPLETE;
  const atyp = buf[3];
  let total: number;
  if (atyp === 1) total = 10;
  else if (atyp === 4) total = 22;
  else if (atyp === 3) total = 7 + (buf[4] as number);
  else return fail('bad_response', `SOCKS5 reply with unknown address type ${atyp}`);
  if (buf.length < total) return INCOMPLETE;
  return { kind: 'ok', consumed: total, value: 0 };
}
