/**
 * The socket driver: one HTTP/1.1 GET exchange to a target, through an HTTP,
 * SOCKS4/4a or SOCKS5 proxy (or directly, for calibration), over raw
 * node:net / node:tls sockets, under ONE total time budget.
 *
 * States (ExchangeState):
 *   RESOLVING    proxy hostname -> address (DNS cache); skipped for IP literals
 *   CONNECTING   TCP connect to the proxy (SSRF guard checked before)
 *   HTTP_CONNECT CONNECT sent to an HTTP proxy, waiting for its answer head
 *   SOCKS4_REPLY / SOCKS5_METHOD / SOCKS5_AUTH / SOCKS5_REPLY  handshake steps
 *   TLS          TLS handshake with the target through the tunnel
 *   RESPONSE     GET sent, parsing the answer (HttpResponseParser)
 *   DONE         finished: outcome delivered once, timer cleared, sockets destroyed
 *
 * Every exit goes through `finish`, which runs once. The single timer is armed
 * before DNS and fires at `timeoutMs`: `connect_timeout` while the TCP
 * connection is not up yet, `timeout` after. Socket listeners are shared
 * module-level functions that find their exchange through a symbol property,
 * so a probe allocates no per-socket closures.
 */
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import type { ProbeError, ProbeErrorCode } from './types';
import {
  ExchangeState,
  STATE_NAMES,
  type ExchangeOutcome,
  type ExchangeSpec,
  type ExchangeStateValue as State,
} from './exchange-types';
import { dnsCache, type DnsAnswer } from './dns-cache';
import { isBlockedAddress } from './ssrf';
import { HttpResponseParser, ResponseState } from './http-response';
import { basicAuth, buildConnectRequest, buildGetRequest } from './http-request';
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
} from './socks-codec';

export { ExchangeState, type ExchangeOutcome, type ExchangeSpec, type Via } from './exchange-types';

const kEx = Symbol('exchange');
type Carrier = { [kEx]: Exchange };
const EMPTY_HEADERS: [string, string][] = [];

class Exchange {
  state: State = ExchangeState.IDLE;
  private readonly spec: ExchangeSpec;
  private readonly done: (o: ExchangeOutcome) => void;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly startedAt: number;
  private connectStart = -1;
  private address: string | null = null;
  private raw: Socket | null = null;
  private secure: TLSSocket | null = null;
  private parser: HttpResponseParser | null = null;
  private pending: Buffer | null = null;
  private proxyAuthorization: string | null = null;

  constructor(spec: ExchangeSpec, done: (o: ExchangeOutcome) => void) {
    this.spec = spec;
    this.done = done;
    this.startedAt = performance.now();
    const p = spec.proxy;
    if (spec.via === 'http' && p.username !== undefined) this.proxyAuthorization = basicAuth(p.username, p.password ?? '');
  }

  start(): void {
    this.timer = setTimeout(onTimer, this.spec.timeoutMs, this);
    const host = this.spec.via === 'direct' ? (this.spec.connectAddress ?? this.spec.host) : this.spec.proxy.host;
    if (isIP(host) !== 0) {
      this.connectTo(host);
      return;
    }
    this.state = ExchangeState.RESOLVING;
    dnsCache.resolve(host).then((a) => {
      try {
        this.onResolved(a);
      } catch (e) {
        this.abort(e);
      }
    });
  }

  private onResolved(a: DnsAnswer): void {
    if (this.state !== ExchangeState.RESOLVING) return;
    const first = a.addresses[0];
    if (first === undefined) {
      this.fail('dns_failed', `host did not resolve (${a.errorCode ?? 'no address'})`);
      return;
    }
    this.connectTo(first);
  }

  private connectTo(ip: string): void {
    if (!this.spec.allowPrivateTargets && isBlockedAddress(ip)) {
      this.fail('blocked_target', `${ip} is in a private, loopback or reserved range`);
      return;
    }
    this.address = ip;
    this.state = ExchangeState.CONNECTING;
    this.connectStart = performance.now();
    const port = this.spec.via === 'direct' ? this.spec.port : this.spec.proxy.port;
    const s = netConnect({ host: ip, port, noDelay: true });
    (s as unknown as Carrier)[kEx] = this;
    this.raw = s;
    s.on('connect', onConnect);
    s.on('data', onData);
    s.on('end', onEnd);
    s.on('close', onClose);
    s.on('error', onError);
  }

  connected(): void {
    if (this.state !== ExchangeState.CONNECTING) return;
    const sp = this.spec;
    const raw = this.raw as Socket;
    switch (sp.via) {
      case 'direct':
        if (sp.tls) this.startTls();
        else this.sendRequest(false);
        return;
      case 'http':
        if (sp.tls) {
          this.state = ExchangeState.HTTP_CONNECT;
          this.parser = new HttpResponseParser({ bodyCap: 0, headOnly: true });
          raw.write(buildConnectRequest(sp.host, sp.port, this.proxyAuthorization), 'latin1');
        } else {
          this.sendRequest(true);
        }
        return;
      case 'socks4': {
        let req: Buffer;
        try {
          req = buildSocks4Connect(sp.host, sp.port, sp.proxy.username ?? '');
        } catch (e) {
          this.fail('socks_rejected', (e as Error).message);
          return;
        }
        this.state = ExchangeState.SOCKS4_REPLY;
        raw.write(req);
        return;
      }
      case 'socks5':
        this.state = ExchangeState.SOCKS5_METHOD;
        raw.write(buildSocks5Greeting(sp.proxy.username !== undefined));
        return;
    }
  }

  data(chunk: Buffer): void {
    switch (this.state) {
      case ExchangeState.RESPONSE: {
        const p = this.parser as HttpResponseParser;
        const st = p.push(chunk);
        if (st === ResponseState.DONE) this.complete();
        else if (st === ResponseState.ERROR) this.fail('bad_response', `invalid HTTP response (${p.error})`, p.statusCode || null);
        return;
      }
      case ExchangeState.HTTP_CONNECT: {
        const p = this.parser as HttpResponseParser;
        const st = p.push(chunk);
        if (st === ResponseState.ERROR) this.fail('bad_response', `invalid answer to CONNECT (${p.error})`);
        else if (st === ResponseState.DONE) this.connectAnswered(p);
        return;
      }
      case ExchangeState.SOCKS4_REPLY:
      case ExchangeState.SOCKS5_METHOD:
      case ExchangeState.SOCKS5_AUTH:
      case ExchangeState.SOCKS5_REPLY:
        this.pending = this.pending === null ? chunk : Buffer.concat([this.pending, chunk]);
        this.socksStep(this.pending);
        return;
      default:
        // bytes while connecting or during TLS (the raw socket is detached then): not ours to read
        return;
    }
  }

  private connectAnswered(p: HttpResponseParser): void {
    const code = p.statusCode;
    if (code === 407) this.fail('auth_required', 'proxy answered CONNECT with 407 Proxy Authentication Required', code);
    else if (code < 200 || code > 299) this.fail('http_status', `proxy answered CONNECT with ${code}`, code);
    else if (p.rest !== null && p.rest.length > 0) this.fail('bad_response', 'proxy sent data before the TLS handshake', code);
    else this.startTls();
  }

  private socksStep(buf: Buffer): void {
    const sp = this.spec;
    let r: SocksReply;
    switch (this.state) {
      case ExchangeState.SOCKS4_REPLY:
        r = parseSocks4Reply(buf);
        break;
      case ExchangeState.SOCKS5_METHOD:
        r = parseSocks5MethodReply(buf, sp.proxy.username !== undefined);
        break;
      case ExchangeState.SOCKS5_AUTH:
        r = parseSocks5AuthReply(buf);
        break;
      default:
        r = parseSocks5ConnectReply(buf);
    }
    if (r.kind === 'incomplete') return;
    if (r.kind === 'fail') {
      this.fail(r.code, r.message);
      return;
    }
    const rest = buf.length > r.consumed ? buf.subarray(r.consumed) : null;
    this.pending = null;
    const raw = this.raw as Socket;
    if (this.state === ExchangeState.SOCKS5_METHOD && r.value === SOCKS5_USER_PASS) {
      if (rest !== null) return this.fail('bad_response', 'SOCKS5 server sent unexpected bytes');
      let auth: Buffer;
      try {
        auth = buildSocks5Auth(sp.proxy.username ?? '', sp.proxy.password ?? '');
      } catch (e) {
        return this.fail('auth_required', (e as Error).message);
      }
      this.state = ExchangeState.SOCKS5_AUTH;
      raw.write(auth);
      return;
    }
    if (this.state === ExchangeState.SOCKS5_METHOD || this.state === ExchangeState.SOCKS5_AUTH) {
      if (rest !== null) return this.fail('bad_response', 'SOCKS5 server sent unexpected bytes');
      let req: Buffer;
      try {
        req = buildSocks5Connect(sp.host, sp.port);
      } catch (e) {
        return this.fail('socks_rejected', (e as Error).message);
      }
      this.state = ExchangeState.SOCKS5_REPLY;
      raw.write(req);
      return;
    }
    // tunnel is up
    if (sp.tls) {
      if (rest !== null) return this.fail('bad_response', 'SOCKS server sent data before the TLS handshake');
      this.startTls();
      return;
    }
    this.sendRequest(false);
    if (rest !== null) this.data(rest);
  }

  private startTls(): void {
    const raw = this.raw as Socket;
    this.state = ExchangeState.TLS;
    raw.removeListener('data', onData);
    raw.removeListener('end', onEnd);
    raw.removeListener('close', onClose);
    const host = this.spec.host;
    const t = tlsConnect({
      socket: raw,
      host,
      servername: isIP(host) === 0 ? host : undefined,
      ca: this.spec.tlsCa,
      ALPNProtocols: ['http/1.1'],
    });
    (t as unknown as Carrier)[kEx] = this;
    this.secure = t;
    t.on('secureConnect', onSecure);
    t.on('data', onData);
    t.on('end', onEnd);
    t.on('close', onClose);
    t.on('error', onError);
  }

  /** An unexpected exception in our own code: fail the exchange rather than the process. */
  abort(e: unknown): void {
    const why = e instanceof Error ? e.message : String(e);
    if (this.state <= ExchangeState.CONNECTING) this.fail('connect_failed', `cannot connect: ${why}`);
    else this.fail('bad_response', `internal error: ${why}`);
  }

  secured(): void {
    if (this.state === ExchangeState.TLS) this.sendRequest(false);
  }

  private sendRequest(absoluteForm: boolean): void {
    const sp = this.spec;
    this.state = ExchangeState.RESPONSE;
    this.parser = new HttpResponseParser({ bodyCap: sp.bodyCap });
    const req = buildGetRequest({
      scheme: sp.tls ? 'https' : 'http',
      host: sp.host,
      port: sp.port,
      pathWithQuery: sp.pathWithQuery,
      absoluteForm,
      proxyAuthorization: this.proxyAuthorization,
    });
    (this.secure ?? (this.raw as Socket)).write(req, 'latin1');
  }

  /** EOF or close from the peer. */
  ended(): void {
    switch (this.state) {
      case ExchangeState.DONE:
        return;
      case ExchangeState.RESPONSE: {
        const p = this.parser as HttpResponseParser;
        const st = p.end();
        if (st === ResponseState.DONE) this.complete();
        else if (p.error === 'empty') this.fail('connection_closed', 'connection closed without an HTTP response');
        else if (p.error === 'truncated') this.fail('connection_closed', 'connection closed in the middle of the HTTP response', p.statusCode || null);
        else this.fail('bad_response', `invalid HTTP response (${p.error})`, p.statusCode || null);
        return;
      }
      case ExchangeState.CONNECTING:
        this.fail('connect_failed', 'connection closed while connecting');
        return;
      case ExchangeState.TLS:
        this.fail('tls_failed', 'connection closed during the TLS handshake');
        return;
      default:
        this.fail('connection_closed', `connection closed while waiting for ${STATE_NAMES[this.state]}`);
    }
  }

  errored(err: Error): void {
    const code = (err as { code?: unknown }).code;
    switch (this.state) {
      case ExchangeState.DONE:
        return;
      case ExchangeState.CONNECTING:
        if (code === 'ECONNREFUSED') this.fail('connect_refused', 'connection refused');
        else if (code === 'ETIMEDOUT') this.fail('connect_timeout', 'connect timed out');
        else this.fail('connect_failed', `connect failed (${typeof code === 'string' ? code : err.message})`);
        return;
      case ExchangeState.TLS:
        this.fail('tls_failed', `TLS handshake failed (${typeof code === 'string' ? code : err.message})`);
        return;
      default:
        this.fail(
          'connection_closed',
          `connection lost while waiting for ${STATE_NAMES[this.state]} (${typeof code === 'string' ? code : err.message})`,
          this.parser?.statusCode || null,
        );
    }
  }

  timedOut(): void {
    this.timer = null;
    if (this.state === ExchangeState.DONE) return;
    const ms = this.spec.timeoutMs;
    if (this.state <= ExchangeState.CONNECTING) {
      this.fail('connect_timeout', `not connected within ${ms} ms (${STATE_NAMES[this.state]})`);
    } else {
      this.fail('timeout', `no complete answer within ${ms} ms (waiting for ${STATE_NAMES[this.state]})`, this.parser?.statusCode || null);
    }
  }

  private complete(): void {
    const p = this.parser as HttpResponseParser;
    this.finish(null, p.statusCode, p.headers, p.body(), p.bodyTruncated);
  }

  private fail(code: ProbeErrorCode, message: string, statusCode: number | null = null): void {
    this.finish({ code, message }, statusCode, EMPTY_HEADERS, null, false);
  }

  private finish(
    error: ProbeError | null,
    statusCode: number | null,
    headers: [string, string][],
    body: Buffer | null,
    bodyTruncated: boolean,
  ): void {
    if (this.state === ExchangeState.DONE) return;
    this.state = ExchangeState.DONE;
    const end = performance.now();
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.secure !== null) this.secure.destroy();
    if (this.raw !== null) this.raw.destroy();
    this.parser = null;
    this.pending = null;
    this.done({
      error,
      statusCode,
      headers,
      body,
      bodyTruncated,
      elapsedMs: end - (this.connectStart >= 0 ? this.connectStart : this.startedAt),
      connectedTo: this.address,
    });
  }
}

function onTimer(ex: Exchange): void {
  try {
    ex.timedOut();
  } catch (e) {
    ex.abort(e);
  }
}
function onConnect(this: Socket): void {
  const ex = (this as unknown as Carrier)[kEx];
  try { ex.connected(); } catch (e) { ex.abort(e); }
}
function onSecure(this: TLSSocket): void {
  const ex = (this as unknown as Carrier)[kEx];
  try { ex.secured(); } catch (e) { ex.abort(e); }
}
function onData(this: Socket, chunk: Buffer): void {
  const ex = (this as unknown as Carrier)[kEx];
  try { ex.data(chunk); } catch (e) { ex.abort(e); }
}
function onEnd(this: Socket): void {
  const ex = (this as unknown as Carrier)[kEx];
  try { ex.ended(); } catch (e) { ex.abort(e); }
}
function onClose(this: Socket): void {
  const ex = (this as unknown as Carrier)[kEx];
  try { ex.ended(); } catch (e) { ex.abort(e); }
}
function onError(this: Socket, err: Error): void {
  const ex = (this as unknown as Carrier)[kEx];
  try { ex.errored(err); } catch (e) { ex.abort(e); }
}

/** Runs one exchange. Never rejects; resolves exactly once, at most a few ms after `timeoutMs`. */
export function exchange(spec: ExchangeSpec): Promise<ExchangeOutcome> {
  return new Promise((resolve) => {
    const ex = new Exchange(spec, resolve);
    try {
      ex.start();
    } catch (e) {
      ex.abort(e);
    }
  });
}
