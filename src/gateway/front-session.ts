/**
 * The front of one client connection (pure: bytes and events in, actions
 * out; no socket, no clock, no port): tell HTTP from SOCKS5 by the first
 * byte, read the HTTP request head or the SOCKS5 dialog, hand out the
 * credentials to check, and once they are accepted, the target. The socket
 * driver (connection.ts) does what the actions say.
 *
 * Stages (`stage`):
 *   sniff ─'A'..'Z'─> http_head ─head with Basic credentials─> checking
 *         ─0x05────> socks ─greeting, auth─> checking
 *         ─other───> done (refused: unsupported; a SOCKS4 client gets its refusal)
 *   checking ─accepted─> (HTTP) done: target
 *                     └> (SOCKS5) socks ─request─> done: target
 *   checking ─denied─> done (refused: auth, a failed attempt)
 *   http_head ─no or other credentials─> done (refused: auth; a failed attempt unless none were sent)
 *   http_head / socks ─bad bytes─> done (refused: bad_request, or unsupported for a non-proxy request)
 *
 * Actions, in order: `write` (bytes for the client), `check` (the
 * credentials: the driver applies the failed-attempt throttle, looks them
 * up, then calls accepted() or denied()), `target` (what to admit, with the
 * client's bytes that came after it: a forwarded body's start or tunnel
 * bytes), `refuse` (the answer was written by a `write` before it: count the
 * refusal, then close).
 *
 * While `checking`, the driver keeps what the client sends and hands it to
 * accepted(): a SOCKS5 client may send its request before the auth reply.
 */
import { gatewayError, proxyAuthRequired, type GatewayErrorCode } from './codec/response-head';
import { ProxyRequestParser, RequestHeadState, type ProxyRequestHead } from './codec/request-head';
import { sniffFront } from './codec/sniff';
import { SOCKS5_REP, Socks5ServerReader, socks4Refusal, socks5AuthReply, socks5MethodReply, socks5Reply } from './codec/socks5-server';
import { SOCKS5_USER_PASS } from '../probe/codec/socks-codec';
import type { GatewayRefusal } from './ports';

export type FrontProtocol = 'http' | 'socks5';
export type FrontStage = 'sniff' | 'http_head' | 'socks' | 'checking' | 'done';

/** What the client asked for. */
export interface FrontTarget {
  host: string;
  port: number;
  /** The HTTP request head (CONNECT or a request to forward); null for SOCKS5 (a tunnel). */
  head: ProxyRequestHead | null;
}

export type FrontAction =
  | { kind: 'write'; bytes: Buffer | string }
  | { kind: 'check'; username: string; password: string }
  | { kind: 'target'; target: FrontTarget; rest: Buffer[] }
  | { kind: 'refuse'; reason: GatewayRefusal; failedAttempt: boolean };

/** The SOCKS5 REP for each refusal (`target_unreachable` carries the upstream's own). */
const SOCKS_REP_OF: Readonly<Partial<Record<GatewayErrorCode, number>>> = Object.freeze({
  blocked_target: SOCKS5_REP.NOT_ALLOWED,
  too_many_connections: SOCKS5_REP.NOT_ALLOWED,
  dns_failed: SOCKS5_REP.HOST_UNREACHABLE,
});

/** The error answer for `code` on `front`: an HTTP error with X-Gateway-Error, or a SOCKS5 reply (`rep`: the upstream's own). */
export function refusalBytes(front: FrontProtocol, code: GatewayErrorCode, rep?: number): Buffer | string {
  return front === 'http' ? gatewayError(code) : socks5Reply(rep ?? SOCKS_REP_OF[code] ?? SOCKS5_REP.GENERAL_FAILURE);
}

/** The answer to an address the throttle blocks for `waitS` seconds. */
export function blockedBytes(front: FrontProtocol, waitS: number): Buffer | string {
  return front === 'http' ? gatewayError('auth_blocked', waitS) : socks5AuthReply(false);
}

/** Wrong or missing credentials: 407, or the SOCKS5 auth failure. */
export function deniedBytes(front: FrontProtocol): Buffer | string {
  return front === 'http' ? proxyAuthRequired() : socks5AuthReply(false);
}

/** The session's stages, each with what it reads or keeps. */
type FrontState =
  | { stage: 'sniff' }
  | { stage: 'http_head'; parser: ProxyRequestParser }
  | { stage: 'socks'; reader: Socks5ServerReader }
  | { stage: 'checking'; front: 'http'; head: ProxyRequestHead; rest: Buffer | null }
  | { stage: 'checking'; front: 'socks5'; reader: Socks5ServerReader }
  | { stage: 'done' };

const SNIFF: FrontState = Object.freeze({ stage: 'sniff' });
const DONE: FrontState = Object.freeze({ stage: 'done' });

export class FrontSession {
  #state: FrontState = SNIFF;
  #front: FrontProtocol | null = null;

  get stage(): FrontStage {
    return this.#state.stage;
  }

  /** Once the first byte was read: which protocol the client speaks. */
  get front(): FrontProtocol | null {
    return this.#front;
  }

  /** Bytes from the client (stages sniff, http_head and socks; the driver keeps them while checking). */
  push(chunk: Buffer): FrontAction[] {
    const st = this.#state;
    switch (st.stage) {
      case 'sniff':
        return this.#sniff(chunk);
      case 'http_head':
        return this.#httpBytes(st.parser, chunk);
      case 'socks':
        st.reader.push(chunk);
        return this.#socksRun(st.reader, []);
      default:
        return [];
    }
  }

  /** The credentials were accepted; `early`: what the client sent while they were checked. */
  accepted(early: Buffer[]): FrontAction[] {
    const st = this.#state;
    if (st.stage !== 'checking') return [];
    if (st.front === 'http') {
      this.#state = DONE;
      const rest = st.rest === null ? early : [st.rest, ...early];
      return [{ kind: 'target', target: { host: st.head.host, port: st.head.port, head: st.head }, rest }];
    }
    this.#state = { stage: 'socks', reader: st.reader };
    for (const c of early) st.reader.push(c);
    return this.#socksRun(st.reader, [{ kind: 'write', bytes: socks5AuthReply(true) }]);
  }

  /** The credentials were refused (a wrong key, an unknown pool, a bad username). */
  denied(): FrontAction[] {
    const st = this.#state;
    if (st.stage !== 'checking') return [];
    return this.#refuse('auth', deniedBytes(st.front), true);
  }

  #refuse(reason: GatewayRefusal, bytes: Buffer | string | null, failedAttempt = false): FrontAction[] {
    this.#state = DONE;
    const refuse: FrontAction = { kind: 'refuse', reason, failedAttempt };
    return bytes === null ? [refuse] : [{ kind: 'write', bytes }, refuse];
  }

  #sniff(chunk: Buffer): FrontAction[] {
    const front = sniffFront(chunk[0] ?? 0);
    if (front === 'http') {
      this.#front = 'http';
      const parser = new ProxyRequestParser();
      this.#state = { stage: 'http_head', parser };
      return this.#httpBytes(parser, chunk);
    }
    if (front === 'socks5') {
      this.#front = 'socks5';
      const reader = new Socks5ServerReader();
      this.#state = { stage: 'socks', reader };
      reader.push(chunk);
      return this.#socksRun(reader, []);
    }
    return this.#refuse('unsupported', front === 'socks4' ? socks4Refusal() : null);
  }

  #httpBytes(p: ProxyRequestParser, chunk: Buffer): FrontAction[] {
    const st = p.push(chunk);
    if (st === RequestHeadState.HEAD) return [];
    const head = p.head;
    if (st === RequestHeadState.ERROR || head === null) {
      const code = p.error === 'not_a_proxy_request' ? 'unsupported' : 'bad_request';
      return this.#refuse(code, gatewayError(code));
    }
    if (head.auth !== 'basic' || head.credentials === null) return this.#refuse('auth', proxyAuthRequired(), head.auth !== 'none');
    const rest = p.rest;
    this.#state = { stage: 'checking', front: 'http', head, rest: rest !== null && rest.length > 0 ? rest : null };
    return [{ kind: 'check', username: head.credentials.username, password: head.credentials.password }];
  }

  #socksRun(r: Socks5ServerReader, out: FrontAction[]): FrontAction[] {
    for (;;) {
      const m = r.next();
      switch (m.kind) {
        case 'need_more':
          return out;
        case 'greeting':
          out.push({ kind: 'write', bytes: socks5MethodReply(SOCKS5_USER_PASS) });
          break;
        case 'auth':
          this.#state = { stage: 'checking', front: 'socks5', reader: r };
          out.push({ kind: 'check', username: m.username, password: m.password });
          return out;
        case 'request': {
          this.#state = DONE;
          const rest = r.rest();
          out.push({ kind: 'target', target: { host: m.host, port: m.port, head: null }, rest: rest.length > 0 ? [rest] : [] });
          return out;
        }
        case 'error':
          return out.concat(this.#refuse('bad_request', m.reply));
      }
    }
  }
}
