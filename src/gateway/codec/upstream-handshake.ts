/**
 * The gateway's side of a tunnel through a chained upstream proxy (pure, no
 * I/O): the bytes to send and what each answer means, for the three
 * protocols a pool's proxy speaks. Built on the probe's client codecs
 * (src/probe/codec/socks-codec.ts, http-request.ts, http-response.ts), so
 * the gateway frames SOCKS4/4a, SOCKS5 and CONNECT exactly as the checker
 * that found the proxy working did.
 *
 * `start()` gives the first bytes; then `push()` every chunk the upstream
 * sends until a step other than `need_more`: `send` (more bytes to write,
 * then keep pushing), `ready` (the tunnel to the target is up; `rest` is
 * what the upstream sent after its reply: the target's first bytes) or
 * `fail`. Any split of a well-behaved upstream's bytes gives the same
 * steps; a SOCKS5 upstream that speaks before it is asked (bytes after its
 * method or auth reply) fails, as in the probe.
 *
 * States:
 *   http     HTTP_CONNECT ─2xx─> READY
 *   socks4   SOCKS4_REPLY ─90─> READY
 *   socks5   SOCKS5_METHOD ─(02)─> SOCKS5_AUTH ─> SOCKS5_REPLY ─00─> READY
 *                         └(00)──────────────────> SOCKS5_REPLY
 *   any ─> FAILED (a bad or refusing answer; every later push repeats it)
 *
 * A failure says whom it blames:
 *   upstream  the proxy itself is at fault (garbage, our credentials refused:
 *             407, SOCKS5 no acceptable method or auth failure, SOCKS4 91-93's
 *             identd / user-id codes); the gateway reports it to its pool;
 *   target    a well-formed refusal to reach this target (CONNECT answered
 *             with another status, a SOCKS5 REP other than 0, SOCKS4 91), or
 *             a target the protocol cannot carry (an IPv6 target over SOCKS4):
 *             another upstream is tried, nothing is reported.
 * `rep` is the SOCKS5 REP code a SOCKS5 client of the gateway should get for
 * it (the upstream's own REP when it gave one).
 */
import { basicAuth, buildConnectRequest } from '../../probe/codec/http-request';
import { HttpResponseParser, ResponseState } from '../../probe/codec/http-response';
import {
  buildSocks4Connect,
  buildSocks5Auth,
  buildSocks5Connect,
  buildSocks5Greeting,
  parseSocks4Reply,
  parseSocks5AuthReply,
  parseSocks5ConnectReply,
  parseSocks5MethodReply,
  SOCKS5_USER_PASS,
  type SocksReply,
} from '../../probe/codec/socks-codec';
import type { ProxyType } from '../../proxy/types';
import { SOCKS5_REP } from './socks5-server';

export type Blame = 'upstream' | 'target';

export type HandshakeStep =
  | { kind: 'need_more' }
  | { kind: 'send'; bytes: Buffer }
  | { kind: 'ready'; rest: Buffer }
  | { kind: 'fail'; blame: Blame; reason: string; rep: number };

export interface HandshakeUpstream {
  type: ProxyType;
  username?: string | undefined;
  password?: string | undefined;
}

export const HandshakeState = Object.freeze({
  START: 0,
  HTTP_CONNECT: 1,
  SOCKS4_REPLY: 2,
  SOCKS5_METHOD: 3,
  SOCKS5_AUTH: 4,
  SOCKS5_REPLY: 5,
  READY: 6,
  FAILED: 7,
} as const);
export type HandshakeStateValue = (typeof HandshakeState)[keyof typeof HandshakeState];

const EMPTY = Buffer.alloc(0);
const NEED_MORE: HandshakeStep = Object.freeze({ kind: 'need_more' }) as HandshakeStep;

/** The Proxy-Authorization value for an HTTP upstream with credentials, else null. */
export function upstreamAuthorization(u: HandshakeUpstream): string | null {
  return u.username === undefined ? null : basicAuth(u.username, u.password ?? '');
}

export class UpstreamHandshake {
  state: HandshakeStateValue = HandshakeState.START;
  readonly #up: HandshakeUpstream;
  readonly #host: string;
  readonly #port: number;
  #parser: HttpResponseParser | null = null;
  #buf: Buffer = EMPTY;
  #failure: HandshakeStep | null = null;

  constructor(upstream: HandshakeUpstream, target: { host: string; port: number }) {
    this.#up = upstream;
    this.#host = target.host;
    this.#port = target.port;
  }

  /** The first bytes to send (`send`), or `fail` when this upstream cannot carry the target. */
  start(): HandshakeStep {
    if (this.state !== HandshakeState.START) return this.#failure ?? NEED_MORE;
    const u = this.#up;
    switch (u.type) {
      case 'http':
        this.state = HandshakeState.HTTP_CONNECT;
        this.#parser = new HttpResponseParser({ bodyCap: 0, headOnly: true });
        return send(Buffer.from(buildConnectRequest(this.#host, this.#port, upstreamAuthorization(u)), 'latin1'));
      case 'socks4':
        this.state = HandshakeState.SOCKS4_REPLY;
        try {
          return send(buildSocks4Connect(this.#host, this.#port, u.username ?? ''));
        } catch (e) {
          return this.#fail('target', (e as Error).message, SOCKS5_REP.ADDRESS_TYPE_NOT_SUPPORTED);
        }
      case 'socks5':
        this.state = HandshakeState.SOCKS5_METHOD;
        return send(buildSocks5Greeting(u.username !== undefined));
    }
  }

  push(chunk: Buffer): HandshakeStep {
    if (this.#failure !== null) return this.#failure;
    if (chunk.length === 0) return NEED_MORE;
    if (this.state === HandshakeState.HTTP_CONNECT) return this.#httpAnswer(chunk);
    if (this.state < HandshakeState.SOCKS4_REPLY || this.state > HandshakeState.SOCKS5_REPLY) return NEED_MORE;
    this.#buf = this.#buf.length === 0 ? chunk : Buffer.concat([this.#buf, chunk]);
    return this.#socksAnswer();
  }

  /** The upstream closed before the handshake ended. */
  end(): HandshakeStep {
    if (this.#failure !== null || this.state === HandshakeState.READY) return this.#failure ?? NEED_MORE;
    return this.#fail('upstream', 'the upstream closed during the handshake', SOCKS5_REP.GENERAL_FAILURE);
  }

  #fail(blame: Blame, reason: string, rep: number): HandshakeStep {
    this.state = HandshakeState.FAILED;
    this.#parser = null;
    this.#buf = EMPTY;
    this.#failure = { kind: 'fail', blame, reason, rep };
    return this.#failure;
  }

  #httpAnswer(chunk: Buffer): HandshakeStep {
    const p = this.#parser as HttpResponseParser;
    const st = p.push(chunk);
    if (st === ResponseState.ERROR) return this.#fail('upstream', `invalid answer to CONNECT (${p.error})`, SOCKS5_REP.GENERAL_FAILURE);
    if (st !== ResponseState.DONE) return NEED_MORE;
    const status = p.statusCode;
    if (status === 407) return this.#fail('upstream', 'the upstream answered CONNECT with 407', SOCKS5_REP.GENERAL_FAILURE);
    if (status < 200 || status > 299) return this.#fail('target', `the upstream answered CONNECT with ${status}`, SOCKS5_REP.HOST_UNREACHABLE);
    this.state = HandshakeState.READY;
    const rest = p.rest ?? EMPTY;
    this.#parser = null;
    return { kind: 'ready', rest };
  }

  #socksAnswer(): HandshakeStep {
    const state = this.state;
    const withAuth = this.#up.username !== undefined;
    const r: SocksReply =
      state === HandshakeState.SOCKS4_REPLY
        ? parseSocks4Reply(this.#buf)
        : state === HandshakeState.SOCKS5_METHOD
          ? parseSocks5MethodReply(this.#buf, withAuth)
          : state === HandshakeState.SOCKS5_AUTH
            ? parseSocks5AuthReply(this.#buf)
            : parseSocks5ConnectReply(this.#buf);
    if (r.kind === 'incomplete') return NEED_MORE;
    if (r.kind === 'fail') return this.#socksFailure(state, r.code, r.message);
    const rest = this.#buf.subarray(r.consumed);
    this.#buf = EMPTY;
    if (state === HandshakeState.SOCKS4_REPLY || state === HandshakeState.SOCKS5_REPLY) {
      this.state = HandshakeState.READY;
      return { kind: 'ready', rest };
    }
    // a SOCKS5 server speaks only when asked: bytes after the method or auth reply are garbage
    if (rest.length > 0) return this.#fail('upstream', 'the SOCKS5 upstream sent unexpected bytes', SOCKS5_REP.GENERAL_FAILURE);
    if (state === HandshakeState.SOCKS5_METHOD && r.value === SOCKS5_USER_PASS) {
      this.state = HandshakeState.SOCKS5_AUTH;
      try {
        return send(buildSocks5Auth(this.#up.username ?? '', this.#up.password ?? ''));
      } catch (e) {
        return this.#fail('upstream', (e as Error).message, SOCKS5_REP.GENERAL_FAILURE);
      }
    }
    this.state = HandshakeState.SOCKS5_REPLY;
    try {
      return send(buildSocks5Connect(this.#host, this.#port));
    } catch (e) {
      return this.#fail('target', (e as Error).message, SOCKS5_REP.ADDRESS_TYPE_NOT_SUPPORTED);
    }
  }

  #socksFailure(state: HandshakeStateValue, code: string, message: string): HandshakeStep {
    if (code === 'socks_rejected' && state === HandshakeState.SOCKS5_REPLY) {
      const rep = this.#buf[1] ?? SOCKS5_REP.GENERAL_FAILURE;
      return this.#fail('target', message, rep);
    }
    if (code === 'socks_rejected' && state === HandshakeState.SOCKS4_REPLY && this.#buf[1] === 0x5b) {
      return this.#fail('target', message, SOCKS5_REP.GENERAL_FAILURE);
    }
    return this.#fail('upstream', message, SOCKS5_REP.GENERAL_FAILURE);
  }
}

function send(bytes: Buffer): HandshakeStep {
  return { kind: 'send', bytes };
}
