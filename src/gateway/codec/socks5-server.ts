/**
 * SOCKS5 (RFC 1928) with username/password (RFC 1929), the server's side,
 * for the gateway (pure, no I/O). The client's side is
 * src/probe/codec/socks-codec.ts; the two agree byte for byte (their tests
 * feed one into the other).
 *
 * Socks5ServerReader is incremental: push() the client's bytes as they
 * come, then call next() until it answers `need_more`; any split of the
 * stream, including a client that sends greeting, auth and request in one
 * write, gives the same messages. Its phases (the dialog the driver holds):
 *
 *   greeting ──(offers 0x02)──> auth ──> request ──> done   (rest(): tunnel bytes)
 *       │                         │          │
 *       └─────────────────────────┴──────────┴──────> error (with the reply to send, if any)
 *
 * The gateway always requires username/password (the API key is the
 * password): a greeting without method 0x02 is an error whose reply is
 * "no acceptable methods" (05 FF). The driver answers the greeting with
 * socks5MethodReply(USER_PASS), checks the credentials of `auth` and answers
 * socks5AuthReply, and answers `request` with socks5Reply once the upstream
 * is connected (or with the failure's code).
 *
 * Errors (`error.code`, and the reply the driver sends before closing):
 *   bad_version                 not SOCKS5 (or RFC 1929 v1)  -> none (greeting), 05 01 (request)
 *   no_acceptable_method        no 0x02 offered              -> 05 FF
 *   bad_auth_version            sub-negotiation not v1       -> 01 01
 *   command_not_supported       BIND, UDP ASSOCIATE, ...     -> REP 07
 *   address_type_not_supported  ATYP not 1, 3, 4            -> REP 08
 *   bad_address                 an empty or invalid name, port 0 -> REP 04
 * A domain name that is an IP literal is read as that address.
 */
import { canonicalIPv6, hostKindAt, HOST_INVALID, HOST_NAME_UPPER } from '../../proxy/host';
import { SOCKS5_NO_ACCEPTABLE, SOCKS5_USER_PASS } from '../../probe/codec/socks-codec';
import { parseIPv4, parseIPv6 } from '../../probe/codec/ip-literal';

/** REP codes of a SOCKS5 reply (RFC 1928 6). */
export const SOCKS5_REP = Object.freeze({
  SUCCEEDED: 0x00,
  GENERAL_FAILURE: 0x01,
  NOT_ALLOWED: 0x02,
  NETWORK_UNREACHABLE: 0x03,
  HOST_UNREACHABLE: 0x04,
  CONNECTION_REFUSED: 0x05,
  TTL_EXPIRED: 0x06,
  COMMAND_NOT_SUPPORTED: 0x07,
  ADDRESS_TYPE_NOT_SUPPORTED: 0x08,
} as const);

export const SOCKS5_CONNECT = 0x01;

export type Socks5ServerError =
  | 'bad_version'
  | 'no_acceptable_method'
  | 'bad_auth_version'
  | 'command_not_supported'
  | 'address_type_not_supported'
  | 'bad_address';

export type Socks5Message =
  | { kind: 'need_more' }
  | { kind: 'greeting'; methods: number[] }
  | { kind: 'auth'; username: string; password: string }
  | { kind: 'request'; command: number; host: string; port: number; addressType: 'ipv4' | 'ipv6' | 'domain' }
  | { kind: 'error'; code: Socks5ServerError; reply: Buffer | null };

export type Socks5Phase = 'greeting' | 'auth' | 'request' | 'done' | 'error';

const NEED_MORE: Socks5Message = Object.freeze({ kind: 'need_more' }) as Socks5Message;

export class Socks5ServerReader {
  #phase: Socks5Phase = 'greeting';
  #buf: Buffer = Buffer.alloc(0);
  #error: Socks5Message | null = null;

  get phase(): Socks5Phase {
    return this.#phase;
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0 || this.#phase === 'error') return;
    this.#buf = this.#buf.length === 0 ? chunk : Buffer.concat([this.#buf, chunk]);
  }

  /** The bytes after the request (the client's first tunnel bytes); empty before `done`. */
  rest(): Buffer {
    return this.#phase === 'done' ? this.#buf : Buffer.alloc(0);
  }

  /** The next whole message of the current phase, or `need_more`. After an error, the same error. */
  next(): Socks5Message {
    if (this.#error !== null) return this.#error;
    switch (this.#phase) {
      case 'greeting':
        return this.#greeting();
      case 'auth':
        return this.#auth();
      case 'request':
        return this.#request();
      default:
        return NEED_MORE;
    }
  }

  #consume(n: number): void {
    this.#buf = this.#buf.subarray(n);
  }

  #fail(code: Socks5ServerError, reply: Buffer | null): Socks5Message {
    this.#phase = 'error';
    this.#buf = Buffer.alloc(0);
    this.#error = { kind: 'error', code, reply };
    return this.#error;
  }

  #greeting(): Socks5Message {
    const b = this.#buf;
    if (b.length >= 1 && b[0] !== 5) return this.#fail('bad_version', null);
    if (b.length < 2) return NEED_MORE;
    const n = b[1] as number;
    if (b.length < 2 + n) return NEED_MORE;
    const methods = [...b.subarray(2, 2 + n)];
    this.#consume(2 + n);
    if (!methods.includes(SOCKS5_USER_PASS)) return this.#fail('no_acceptable_method', socks5MethodReply(SOCKS5_NO_ACCEPTABLE));
    this.#phase = 'auth';
    return { kind: 'greeting', methods };
  }

  #auth(): Socks5Message {
    const b = this.#buf;
    if (b.length >= 1 && b[0] !== 1) return this.#fail('bad_auth_version', socks5AuthReply(false));
    if (b.length < 2) return NEED_MORE;
    const ulen = b[1] as number;
    if (b.length < 3 + ulen) return NEED_MORE;
    const plen = b[2 + ulen] as number;
    if (b.length < 3 + ulen + plen) return NEED_MORE;
    const username = b.toString('utf8', 2, 2 + ulen);
    const password = b.toString('utf8', 3 + ulen, 3 + ulen + plen);
    this.#consume(3 + ulen + plen);
    this.#phase = 'request';
    return { kind: 'auth', username, password };
  }

  #request(): Socks5Message {
    const b = this.#buf;
    if (b.length >= 1 && b[0] !== 5) return this.#fail('bad_version', socks5Reply(SOCKS5_REP.GENERAL_FAILURE));
    if (b.length < 5) return NEED_MORE;
    const command = b[1] as number;
    const atyp = b[3] as number;
    let total: number;
    if (atyp === 1) total = 10;
    else if (atyp === 4) total = 22;
    else if (atyp === 3) total = 7 + (b[4] as number);
    else return this.#fail('address_type_not_supported', socks5Reply(SOCKS5_REP.ADDRESS_TYPE_NOT_SUPPORTED));
    if (b.length < total) return NEED_MORE;
    if (command !== SOCKS5_CONNECT) return this.#fail('command_not_supported', socks5Reply(SOCKS5_REP.COMMAND_NOT_SUPPORTED));
    const port = b.readUInt16BE(total - 2);
    let host: string | null;
    let addressType: 'ipv4' | 'ipv6' | 'domain';
    if (atyp === 1) {
      host = `${b[4]}.${b[5]}.${b[6]}.${b[7]}`;
      addressType = 'ipv4';
    } else if (atyp === 4) {
      const groups: string[] = [];
      for (let i = 0; i < 8; i++) groups.push(b.readUInt16BE(4 + i * 2).toString(16));
      host = canonicalIPv6(groups.join(':'));
      addressType = 'ipv6';
    } else {
      host = domainHost(b.toString('latin1', 5, 5 + (b[4] as number)));
      addressType = 'domain';
    }
    if (host === null || port === 0) return this.#fail('bad_address', socks5Reply(SOCKS5_REP.HOST_UNREACHABLE));
    this.#consume(total);
    this.#phase = 'done';
    return { kind: 'request', command, host, port, addressType };
  }
}

/** A domain name as the gateway uses it (lower-case), or its IP literal, or null. */
function domainHost(name: string): string | null {
  if (name.includes(':')) return canonicalIPv6(name);
  const kind = hostKindAt(name, 0, name.length);
  if (kind === HOST_INVALID) return null;
  return kind === HOST_NAME_UPPER ? name.toLowerCase() : name;
}

// ---- replies -----------------------------------------------------------------------------

export function socks5MethodReply(method: number): Buffer {
  return Buffer.from([5, method]);
}

/** RFC 1929 status: 00 success, 01 failure. */
export function socks5AuthReply(ok: boolean): Buffer {
  return Buffer.from([1, ok ? 0 : 1]);
}

/** A request's reply: REP and the bound address (IPv4 or IPv6 literal; 0.0.0.0:0 when absent). */
export function socks5Reply(rep: number, bound?: { host: string; port: number }): Buffer {
  const v6 = bound !== undefined && bound.host.includes(':') ? parseIPv6(bound.host) : null;
  if (v6 !== null) {
    const b = Buffer.alloc(22);
    b[0] = 5;
    b[1] = rep;
    b[3] = 4;
    for (let i = 0; i < 8; i++) b.writeUInt16BE(v6[i] as number, 4 + i * 2);
    b.writeUInt16BE(bound?.port ?? 0, 20);
    return b;
  }
  const v4 = bound !== undefined ? parseIPv4(bound.host) : -1;
  const b = Buffer.alloc(10);
  b[0] = 5;
  b[1] = rep;
  b[3] = 1;
  b.writeUInt32BE(v4 >= 0 ? v4 : 0, 4);
  b.writeUInt16BE(v4 >= 0 ? (bound?.port ?? 0) : 0, 8);
  return b;
}

/** The answer to a SOCKS4 client (the gateway serves SOCKS5 only): request rejected (91). */
export function socks4Refusal(): Buffer {
  return Buffer.from([0, 0x5b, 0, 0, 0, 0, 0, 0]);
}
