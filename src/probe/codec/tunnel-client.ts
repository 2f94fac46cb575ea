/**
 * The client side of a tunnel through a proxy (pure, no I/O): the bytes to
 * send and what each answer means, for the three protocols a proxy speaks
 * (HTTP CONNECT, SOCKS4/4a, SOCKS5 with RFC 1929 username/password). The one
 * handshake of the house: the probe drives it to check a proxy
 * (src/probe/net/exchange.ts, which maps a failure to a probe error code,
 * exchange-states.ts `tunnelError`), the gateway to chain through one
 * (src/gateway/codec/upstream-handshake.ts, which maps it to whom it blames).
 * Built on the frame codecs (socks-codec.ts, http-request.ts, http-response.ts).
 *
 * `start()` gives the first bytes; then `push()` every chunk the proxy sends
 * until a step other than `need_more`: `send` (more bytes to write, then keep
 * pushing), `ready` (the tunnel to the target is up; `rest` is what the proxy
 * sent after its reply: the target's first bytes; `status` the CONNECT
 * answer's status, 0 over SOCKS) or `fail`. Any split of a well-behaved
 * proxy's bytes gives the same steps. A SOCKS5 server that speaks before it
 * is asked (bytes after its method or auth reply) fails (`early_bytes`).
 *
 * Stages (`stage`):
 *   start ─http──> http_connect ─2xx─> ready
 *         ─socks4> socks4_reply ─90──> ready
 *         ─socks5> socks5_method ─(02)─> socks5_auth ─> socks5_reply ─00─> ready
 *                                └(00)─────────────────> socks5_reply
 *   any but ready ─> failed (a bad or refusing answer, EOF, or bytes that
 *   cannot be framed; every later push and end repeat the same failure)
 *
 * A failure is neutral (what happened, not whose fault): `kind`, the stage it
 * happened in, a message, and `detail`: the CONNECT answer's status
 * (`status`), the reply's code byte (`socks_rejected`: SOCKS4 CD, SOCKS5 REP
 * or the method 0xFF), else -1.
 *   invalid_answer   the answer to CONNECT is not HTTP
 *   status           CONNECT answered with a status other than 2xx (407 too)
 *   socks_rejected, auth_required, bad_response
 *                    a SOCKS reply parser's verdict (socks-codec.ts SocksFailCode)
 *   unencodable      what must be sent cannot be framed (an IPv6 target over
 *                    SOCKS4, a name or credentials over 255 bytes)
 *   early_bytes      bytes after a SOCKS5 method or auth reply
 *   closed           the proxy closed before the tunnel was up (end())
 */
import type { ProxyType } from '../../proxy/types';
import { basicAuth, buildConnectRequest } from './http-request';
import { HttpResponseParser, ResponseState } from './http-response';
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
  type SocksFailCode,
  type SocksReply,
} from './socks-codec';

export type TunnelStage = 'start' | 'http_connect' | 'socks4_reply' | 'socks5_method' | 'socks5_auth' | 'socks5_reply' | 'ready' | 'failed';
/** The stages that wait for a SOCKS reply. */
export type SocksStage = 'socks4_reply' | 'socks5_method' | 'socks5_auth' | 'socks5_reply';

export type TunnelFailureKind = 'invalid_answer' | 'status' | SocksFailCode | 'unencodable' | 'early_bytes' | 'closed';

/** One shape for every failure (see the header for `detail`). */
export interface TunnelFailure {
  readonly kind: TunnelFailureKind;
  readonly stage: TunnelStage;
  readonly message: string;
  readonly detail: number;
}

export type TunnelStep =
  | { kind: 'need_more' }
  | { kind: 'send'; bytes: Buffer }
  | { kind: 'ready'; rest: Buffer; status: number }
  | { kind: 'fail'; failure: TunnelFailure };

/** The proxy as the handshake needs it. */
export interface TunnelProxy {
  type: ProxyType;
  username?: string | undefined;
  password?: string | undefined;
}

const EMPTY = Buffer.alloc(0);
const NEED_MORE: TunnelStep = Object.freeze({ kind: 'need_more' }) as TunnelStep;

/** The Proxy-Authorization value for an HTTP proxy with credentials, else null. */
export function proxyAuthorization(p: TunnelProxy): string | null {
  return p.username === undefined ? null : basicAuth(p.username, p.password ?? '');
}

/** The reply `stage` waits for, parsed from what came so far (`withAuth`: credentials were offered). */
export function readTunnelReply(stage: SocksStage, buf: Buffer, withAuth: boolean): SocksReply {
  switch (stage) {
    case 'socks4_reply':
      return parseSocks4Reply(buf);
    case 'socks5_method':
      return parseSocks5MethodReply(buf, withAuth);
    case 'socks5_auth':
      return parseSocks5AuthReply(buf);
    case 'socks5_reply':
      return parseSocks5ConnectReply(buf);
  }
}

export class TunnelClient {
  #stage: TunnelStage = 'start';
  readonly #proxy: TunnelProxy;
  readonly #host: string;
  readonly #port: number;
  #parser: HttpResponseParser | null = null;
  #buf: Buffer = EMPTY;
  #failure: TunnelStep | null = null;
  readonly #authorization: string | null;
  #status = 0;

  /** `authorization`: the Proxy-Authorization value for CONNECT (default: from the proxy's credentials). */
  constructor(proxy: TunnelProxy, target: { host: string; port: number }, authorization: string | null = proxyAuthorization(proxy)) {
    this.#proxy = proxy;
    this.#authorization = authorization;
    this.#host = target.host;
    this.#port = target.port;
  }

  get stage(): TunnelStage {
    return this.#stage;
  }

  /** The CONNECT answer's status once its status line was read (kept after it), else 0. */
  get statusCode(): number {
    return this.#parser?.statusCode ?? this.#status;
  }

  /** The first bytes to send (`send`), or `fail` when this proxy cannot carry the target. */
  start(): TunnelStep {
    if (this.#stage !== 'start') return this.#failure ?? NEED_MORE;
    const p = this.#proxy;
    switch (p.type) {
      case 'http':
        this.#stage = 'http_connect';
        this.#parser = new HttpResponseParser({ bodyCap: 0, headOnly: true });
        return send(Buffer.from(buildConnectRequest(this.#host, this.#port, this.#authorization), 'latin1'));
      case 'socks4':
        return this.#build('socks4_reply', () => buildSocks4Connect(this.#host, this.#port, p.username ?? ''));
      case 'socks5':
        this.#stage = 'socks5_method';
        return send(buildSocks5Greeting(p.username !== undefined));
    }
  }

  push(chunk: Buffer): TunnelStep {
    if (this.#failure !== null) return this.#failure;
    if (chunk.length === 0) return NEED_MORE;
    const stage = this.#stage;
    if (stage === 'http_connect') return this.#httpAnswer(chunk);
    if (stage === 'start' || stage === 'ready') return NEED_MORE;
    this.#buf = this.#buf.length === 0 ? chunk : Buffer.concat([this.#buf, chunk]);
    return this.#socksAnswer(stage as SocksStage);
  }

  /** The proxy closed: a failure unless the tunnel is up. */
  end(): TunnelStep {
    if (this.#failure !== null || this.#stage === 'ready') return this.#failure ?? NEED_MORE;
    return this.#fail('closed', 'the proxy closed during the handshake');
  }

  #fail(kind: TunnelFailureKind, message: string, detail = -1): TunnelStep {
    const failure: TunnelFailure = { kind, stage: this.#stage, message, detail };
    this.#stage = 'failed';
    this.#parser = null;
    this.#buf = EMPTY;
    this.#failure = { kind: 'fail', failure };
    return this.#failure;
  }

  /** Moves to `stage` and sends what `build` frames; a frame that cannot be built fails there (`unencodable`). */
  #build(stage: SocksStage, build: () => Buffer): TunnelStep {
    this.#stage = stage;
    try {
      return send(build());
    } catch (e) {
      return this.#fail('unencodable', (e as Error).message);
    }
  }

  #httpAnswer(chunk: Buffer): TunnelStep {
    const p = this.#parser as HttpResponseParser;
    const st = p.push(chunk);
    if (st === ResponseState.ERROR) return this.#fail('invalid_answer', `invalid answer to CONNECT (${p.error})`);
    if (st !== ResponseState.DONE) return NEED_MORE;
    const status = p.statusCode;
    this.#status = status;
    if (status < 200 || status > 299) return this.#fail('status', `proxy answered CONNECT with ${status}`, status);
    this.#stage = 'ready';
    const rest = p.rest ?? EMPTY;
    this.#parser = null;
    return { kind: 'ready', rest, status };
  }

  #socksAnswer(stage: SocksStage): TunnelStep {
    const r = readTunnelReply(stage, this.#buf, this.#proxy.username !== undefined);
    if (r.kind === 'incomplete') return NEED_MORE;
    if (r.kind === 'fail') return this.#fail(r.code, r.message, r.code === 'socks_rejected' ? (this.#buf[1] ?? -1) : -1);
    const rest = this.#buf.subarray(r.consumed);
    this.#buf = EMPTY;
    if (stage === 'socks4_reply' || stage === 'socks5_reply') {
      this.#stage = 'ready';
      return { kind: 'ready', rest, status: 0 };
    }
    // a SOCKS5 server speaks only when asked: bytes after the method or auth reply are garbage
    if (rest.length > 0) return this.#fail('early_bytes', 'SOCKS5 server sent unexpected bytes');
    const p = this.#proxy;
    if (stage === 'socks5_method' && r.value === SOCKS5_USER_PASS) return this.#build('socks5_auth', () => buildSocks5Auth(p.username ?? '', p.password ?? ''));
    return this.#build('socks5_reply', () => buildSocks5Connect(this.#host, this.#port));
  }
}

function send(bytes: Buffer): TunnelStep {
  return { kind: 'send', bytes };
}
