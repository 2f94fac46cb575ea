/**
 * One HTTP/1.1 GET exchange to a target, through an HTTP, SOCKS4/4a or SOCKS5
 * proxy (or directly, for calibration), over a raw socket link, under ONE
 * total time budget. This file is the state machine; the sockets are links
 * (exchange-types.ts Link): the native Bun link (bun-socket.ts) for plain
 * TCP, the node:net/node:tls link (node-socket.ts) whenever TLS is needed or
 * the native link is unavailable or switched off (setSocketDriver, or
 * PROBE_SOCKET_DRIVER=node in the environment).
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
 * Every exit goes through `finish`, which runs once. The deadline is armed
 * before DNS in the thread's one deadline queue (timer-wheel.ts: no timer per
 * probe) and fires at `timeoutMs`: `connect_timeout` while the TCP connection
 * is not up yet, `timeout` after. `finish` cancels it and destroys the link.
 */
import { isIP } from 'node:net';
import type { ProbeError, ProbeErrorCode } from '../types';
import {
  ExchangeState,
  STATE_NAMES,
  type Dial,
  type ExchangeOutcome,
  type ExchangeSpec,
  type ExchangeStateValue as State,
  type Link,
  type LinkEvents,
} from './exchange-types';
import { probeDeadlines, type TimerEntry } from './timer-wheel';
import { dialNode } from './node-socket';
import { dialBun, nativeLinkAvailable } from './bun-socket';
import { dnsCache, type DnsAnswer } from './dns-cache';
import { isBlockedAddress } from '../codec/ssrf';
import { HttpResponseParser, ResponseState } from '../codec/http-response';
import { basicAuth, buildConnectRequest, buildGetRequest } from '../codec/http-request';
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
} from '../codec/socks-codec';

export { ExchangeState, type ExchangeOutcome, type ExchangeSpec, type Via } from './exchange-types';

const EMPTY_HEADERS: [string, string][] = [];

/** Which link plain-TCP exchanges use: 'native' (bun-socket.ts, when available) or 'node'. */
export type SocketDriver = 'native' | 'node';
let plainDial: Dial = nativeLinkAvailable && process.env.PROBE_SOCKET_DRIVER !== 'node' ? dialBun : dialNode;

/** Chooses the link for plain-TCP exchanges on this thread; returns the one in effect ('native' falls back to 'node' where unavailable). */
export function setSocketDriver(d: SocketDriver): SocketDriver {
  plainDial = d === 'native' && nativeLinkAvailable ? dialBun : dialNode;
  return socketDriver();
}
export function socketDriver(): SocketDriver {
  return plainDial === dialBun ? 'native' : 'node';
}

class Exchange implements LinkEvents, TimerEntry {
  state: State = ExchangeState.IDLE;
  dueAt = 0;
  tPrev: TimerEntry | null = null;
  tNext: TimerEntry | null = null;
  tQueued = false;
  private readonly spec: ExchangeSpec;
  private readonly done: (o: ExchangeOutcome) => void;
  private readonly startedAt: number;
  private connectStart = -1;
  private address: string | null = null;
  private link: Link | null = null;
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
    probeDeadlines.arm(this, this.spec.timeoutMs);
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
    this.link = (this.spec.tls ? dialNode : plainDial)(this, ip, port);
  }

  connected(): void {
    if (this.state !== ExchangeState.CONNECTING) return;
    const sp = this.spec;
    const raw = this.link as Link;
    switch (sp.via) {
      case 'direct':
        if (sp.tls) this.startTls();
        else this.sendRequest(false);
        return;
      case 'http':
        if (sp.tls) {
          this.state = ExchangeState.HTTP_CONNECT;
          this.parser = new HttpResponseParser({ bodyCap: 0, headOnly: true });
          raw.write(buildConnectRequest(sp.host, sp.port, this.proxyAuthorization));
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
    const raw = this.link as Link;
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
    this.state = ExchangeState.TLS;
    (this.link as Link).startTls(this.spec.host, this.spec.tlsCa);
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
    (this.link as Link).write(req);
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

  /** The probe budget ran out (deadline queue). */
  onDeadline(): void {
    try {
      this.timedOut();
    } catch (e) {
      this.abort(e);
    }
  }

  private timedOut(): void {
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
    // The budget is the verdict's, not only the timer's: when the event loop is
    // saturated the deadline can fire late, and an answer that came in after
    // the budget must not count (a proxy slower than the timeout is not working).
    if (performance.now() - this.startedAt > this.spec.timeoutMs) {
      this.fail('timeout', `the answer came after the ${this.spec.timeoutMs} ms budget`, p.statusCode || null);
      return;
    }
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
    probeDeadlines.cancel(this);
    if (this.link !== null) this.link.destroy();
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
