/**
 * One HTTP/1.1 GET exchange to a target, through an HTTP, SOCKS4/4a or SOCKS5
 * proxy (or directly, for calibration), over a raw socket link, under ONE
 * total time budget. This file is the socket driver of the exchange's state
 * machine: it dials, writes, feeds the codecs (../codec: HTTP request and
 * response, SOCKS) and moves `state`. The states, their transitions and the
 * pure decisions on them (the SOCKS step after a reply; which failure an
 * EOF, a socket error or the deadline means in each state) are
 * exchange-states.ts. The sockets are links (exchange-types.ts Link): the
 * native Bun link (bun-socket.ts) for plain TCP and pinned TLS (the https
 * check), the node:net/node:tls link (node-socket.ts) for TLS verified
 * against a CA (its hostname check) and wherever the native link is
 * unavailable or switched off (setSocketDriver: PROBE_SOCKET_DRIVER=node,
 * applied per thread by the probe workers' lanes and by the composition roots).
 *
 * Pinned TLS resumes the target's last TLS session (tls-sessions.ts): a
 * resumed session needs no certificate check (it proves the server whose
 * certificate was compared when it began); a full handshake is compared
 * with the pin and, when the exchange ends, its session is kept.
 *
 * Every exit goes through `finish`, which runs once. The deadline is armed
 * before DNS in the thread's one deadline queue (timer-wheel.ts: no timer per
 * probe) and fires at `timeoutMs`: `connect_timeout` while the TCP connection
 * is not up yet, `timeout` after. `finish` cancels it and destroys the link.
 *
 * A timeout that was the thread's, not the proxy's: each exchange adds up
 * how late its thread was (setLatenessSource: the probe lane's lag meter)
 * at each of its reads (the connect, the first bytes of each answer, the
 * TLS handshake) and when the budget ran out; at or above the threshold of
 * ../codec/checker-lag.ts the failure is checker_overloaded (checkerLagMs),
 * not a timeout. Without a source (the main thread's exchanges) it is 0.
 */
import { isIP } from 'node:net';
import { errorText } from '../../errors';
import type { ProbeError } from '../types';
import type { Dial, ExchangeOutcome, ExchangeSpec, Link, LinkEvents } from './exchange-types';
import {
  closedError,
  connectAnswerError,
  deadlineError,
  ExchangeState,
  internalError,
  probeError,
  socketError,
  socksExtraBytesError,
  stateAfterConnect,
  stateAfterSocksReply,
  stateOfTunnelStage,
  tunnelError,
  type ExchangeStateValue as State,
} from './exchange-states';
import { probeDeadlines, type TimerEntry } from './timer-wheel';
import { dialNode } from './node-socket';
import { dialBun, nativeLinkAvailable } from './bun-socket';
import { dnsCache, type DnsAnswer } from './dns-cache';
import { countHandshake, keepSession, sessionFor, sessionKey } from './tls-sessions';
import { fdsExhausted } from './fd-check';
import { blockedTargetMessage, isBlockedAddress } from '../codec/ssrf';
import { checkerLagError, isCheckerTimeout } from '../codec/checker-lag';
import { interceptedError } from '../codec/cert-pin';
import { socksAnswerError, socksAnswerOf } from '../codec/socks-answer';
import { HttpResponseParser, ResponseState } from '../codec/http-response';
import { basicAuth, buildGetRequest } from '../codec/http-request';
import { TunnelClient, type TunnelStep } from '../codec/tunnel-client';

export { ExchangeState } from './exchange-states';
export type { ExchangeOutcome, ExchangeSpec, Via } from './exchange-types';

const EMPTY_HEADERS: [string, string][] = [];

/** A session handed across threads arrives as a Uint8Array (structured clone); the links take a Buffer. */
function asBuffer(u: Uint8Array | undefined): Buffer | undefined {
  return u === undefined ? undefined : Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength);
}

/** Which link plain-TCP exchanges use: 'native' (bun-socket.ts, when available) or 'node'. */
export type SocketDriver = 'native' | 'node';
let plainDial: Dial = nativeLinkAvailable ? dialBun : dialNode;

/** Chooses the link for plain-TCP exchanges on this thread; returns the one in effect ('native' falls back to 'node' where unavailable). */
export function setSocketDriver(d: SocketDriver): SocketDriver {
  plainDial = d === 'native' && nativeLinkAvailable ? dialBun : dialNode;
  return socketDriver();
}
export function socketDriver(): SocketDriver {
  return plainDial === dialBun ? 'native' : 'node';
}

/** How late this thread is now, ms (the lane's lag meter); 0 without one. */
let lateness: () => number = () => 0;
/** How late the checker is when a deadline fires: this thread, or the one that answers as the judge. */
let deadlineLateness: () => number = () => 0;

/**
 * The thread's lateness for its exchanges (the probe lane sets its lag
 * meter's): `atRead` at each read, `atDeadline` (default the same) when a
 * budget runs out (the lane adds the main thread's, where the built-in
 * judge answers).
 */
export function setLatenessSource(atRead: () => number, atDeadline: () => number = atRead): void {
  lateness = atRead;
  deadlineLateness = atDeadline;
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
  private local: string | null = null;
  private link: Link | null = null;
  private parser: HttpResponseParser | null = null;
  /** the tunnel machine, from the proxy's handshake (HTTP_CONNECT .. SOCKS5_REPLY) to the end */
  private tunnel: TunnelClient | null = null;
  private proxyAuthorization: string | null = null;
  /** pinned TLS: the session store's key of the target (tls-sessions.ts) */
  private readonly sessionKey: string | null;
  /** pinned TLS: the peer is proven (the pin compared, or a resumed session): its session may be kept */
  private peerProven = false;
  /** How late the thread was at this exchange's reads, added up (ms; see the header). */
  private late = 0;
  /** The state whose first bytes were counted in `late` (a state's later chunks come in the same busy stretch). */
  private lateCounted: State = ExchangeState.IDLE;
  /** via http: the first bytes of the proxy's answer (at most 2), to tell a SOCKS server's (codec/socks-answer.ts) */
  private answerHead: number[] | null = null;

  constructor(spec: ExchangeSpec, done: (o: ExchangeOutcome) => void) {
    this.spec = spec;
    this.done = done;
    this.startedAt = performance.now();
    const p = spec.proxy;
    if (spec.via === 'http' && p.username !== undefined) this.proxyAuthorization = basicAuth(p.username, p.password ?? '');
    this.sessionKey = spec.tls && spec.tlsPin !== undefined ? sessionKey(spec.host, spec.port, spec.tlsPin) : null;
  }

  /** What the exchange connects to: the proxy, or (direct) the target. */
  private get dialHost(): string {
    return this.spec.via === 'direct' ? (this.spec.connectAddress ?? this.spec.host) : this.spec.proxy.host;
  }

  start(): void {
    probeDeadlines.arm(this, this.spec.timeoutMs);
    const host = this.dialHost;
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
      this.fail(probeError('dns_failed', `host did not resolve (${a.errorCode ?? 'no address'})`));
      return;
    }
    this.connectTo(first, this.dialHost);
  }

  private connectTo(ip: string, host: string = ip): void {
    if (!this.spec.allowPrivateTargets && isBlockedAddress(ip)) {
      this.fail(probeError('blocked_target', blockedTargetMessage(ip, host)));
      return;
    }
    this.address = ip;
    this.state = ExchangeState.CONNECTING;
    this.connectStart = performance.now();
    const port = this.spec.via === 'direct' ? this.spec.port : this.spec.proxy.port;
    // TLS verified against a CA: node:tls (its hostname check); pinned TLS: the plain link, which can start it
    this.link = (this.spec.tls && this.sessionKey === null ? dialNode : plainDial)(this, ip, port);
  }

  connected(): void {
    if (this.state !== ExchangeState.CONNECTING) return;
    this.late += lateness();
    this.local = this.link?.localAddress() ?? null; // once per exchange, while the socket is surely up
    this.enter(stateAfterConnect(this.spec.via, this.spec.tls));
  }

  /** Moves on to `next` (after CONNECTING) and sends what it waits for an answer to, or starts TLS. */
  private enter(next: State): void {
    if (next === ExchangeState.RESPONSE) return this.sendRequest();
    const sp = this.spec;
    const link = this.link as Link;
    this.state = next;
    switch (next) {
      case ExchangeState.TLS: {
        const key = this.sessionKey;
        return link.startTls({ host: sp.host, ca: sp.tlsCa, pinned: key !== null, session: key === null ? undefined : (sessionFor(key) ?? asBuffer(sp.tlsSession)) });
      }
    }
    // HTTP_CONNECT, SOCKS4_REPLY, SOCKS5_METHOD: the proxy's handshake (the tunnel machine)
    const p = sp.proxy;
    const via = sp.via === 'direct' ? 'http' : sp.via; // never direct here: stateAfterConnect sends it to TLS or the request
    this.tunnel = new TunnelClient({ type: via, username: p.username, password: p.password }, { host: sp.host, port: sp.port }, this.proxyAuthorization);
    this.tunnelStep(this.tunnel.start());
  }

  /** Does what the tunnel machine's step says: write, wait, fail, or go on once the tunnel is up. */
  private tunnelStep(step: TunnelStep): void {
    const t = this.tunnel as TunnelClient;
    switch (step.kind) {
      case 'need_more':
        return;
      case 'send':
        this.state = stateOfTunnelStage(t.stage);
        (this.link as Link).write(step.bytes);
        return;
      case 'fail': {
        const f = step.failure;
        return this.fail(tunnelError(f), f.kind === 'status' ? f.detail : null);
      }
      case 'ready': {
        const state = this.state;
        const early = step.rest.length > 0;
        if (state === ExchangeState.HTTP_CONNECT) {
          const err = connectAnswerError(step.status, early);
          return err === null ? this.enter(ExchangeState.TLS) : this.fail(err, step.status);
        }
        const next = stateAfterSocksReply(state, 0, early, this.spec.tls);
        if (next === ExchangeState.DONE) return this.fail(socksExtraBytesError(state));
        this.enter(next);
        if (early) this.data(step.rest); // the tunnel is up to an http target: the start of its answer
      }
    }
  }

  data(chunk: Buffer): void {
    if (this.lateCounted !== this.state) {
      this.lateCounted = this.state;
      this.late += lateness();
    }
    if ((this.answerHead === null || this.answerHead.length < 2) && this.spec.via === 'http' && chunk.length > 0) this.noteAnswerHead(chunk);
    switch (this.state) {
      case ExchangeState.RESPONSE: {
        const p = this.parser as HttpResponseParser;
        const st = p.push(chunk);
        if (st === ResponseState.DONE) this.complete();
        else if (st === ResponseState.ERROR) this.fail(probeError('bad_response', `invalid HTTP response (${p.error})`), p.statusCode || null);
        return;
      }
      case ExchangeState.HTTP_CONNECT:
      case ExchangeState.SOCKS4_REPLY:
      case ExchangeState.SOCKS5_METHOD:
      case ExchangeState.SOCKS5_AUTH:
      case ExchangeState.SOCKS5_REPLY:
        this.tunnelStep((this.tunnel as TunnelClient).push(chunk));
        return;
      default:
        // bytes while connecting or during TLS (the raw socket is detached then): not ours to read
        return;
    }
  }

  /** An unexpected exception in our own code: fail the exchange rather than the process. */
  abort(e: unknown): void {
    this.fail(internalError(this.state, errorText(e), (e as { code?: unknown } | null)?.code));
  }

  secured(): void {
    if (this.state !== ExchangeState.TLS) return;
    this.late += lateness();
    const pin = this.spec.tlsPin;
    const link = this.link as Link;
    // pinned (the judge's TLS listener): exactly that certificate, whoever signed it; a resumed
    // session proves the server that issued it, whose certificate was compared (tls-sessions.ts)
    const reused = pin !== undefined && link.sessionReused();
    if (pin !== undefined) countHandshake(reused);
    if (pin !== undefined && !reused) {
      const cert = link.peerCertificate();
      if (cert === null) return this.fail(probeError('tls_failed', 'TLS handshake gave no peer certificate'));
      if (cert.fingerprint !== pin) return this.fail(interceptedError(cert));
    }
    this.peerProven = pin !== undefined;
    this.sendRequest();
  }

  /** GET to the target: absolute-form to a plain HTTP proxy, origin-form through a tunnel or directly. */
  private sendRequest(): void {
    const sp = this.spec;
    this.state = ExchangeState.RESPONSE;
    this.parser = new HttpResponseParser({ bodyCap: sp.bodyCap, onBody: sp.onBody });
    const req = buildGetRequest({
      scheme: sp.tls ? 'https' : 'http',
      host: sp.host,
      port: sp.port,
      pathWithQuery: sp.pathWithQuery,
      absoluteForm: sp.via === 'http' && !sp.tls,
      proxyAuthorization: this.proxyAuthorization,
    });
    (this.link as Link).write(req);
  }

  /** EOF or close from the peer. */
  ended(): void {
    const state = this.state;
    if (state === ExchangeState.DONE) return;
    if (state !== ExchangeState.RESPONSE) {
      this.fail(closedError(state, null));
      return;
    }
    const p = this.parser as HttpResponseParser;
    if (p.end() === ResponseState.DONE) this.complete();
    else this.fail(closedError(state, p.error), p.statusCode || null);
  }

  errored(err: Error): void {
    const state = this.state;
    if (state === ExchangeState.DONE) return;
    // the status of an answer head read so far (not the CONNECT answer's once TLS started)
    const statusCode = state === ExchangeState.CONNECTING || state === ExchangeState.TLS ? null : this.statusSoFar();
    // Bun reports a socket it could not create (EMFILE) as ECONNREFUSED: check before blaming the proxy (fd-check.ts)
    const exhausted = state === ExchangeState.CONNECTING && (err as { code?: unknown }).code === 'ECONNREFUSED' ? fdsExhausted() : null;
    this.fail(socketError(state, exhausted === null ? err : Object.assign(new Error(exhausted), { code: exhausted })), statusCode);
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
    const state = this.state;
    if (state === ExchangeState.DONE) return;
    this.fail(this.ours(deadlineError(state, this.spec.timeoutMs)), state <= ExchangeState.CONNECTING ? null : this.statusSoFar());
  }

  /** A timeout while the thread was late by the threshold or more (../codec/checker-lag.ts) is the checker's. */
  private ours(error: ProbeError): ProbeError {
    const late = this.late + deadlineLateness();
    return isCheckerTimeout(error, late, this.spec.timeoutMs) ? checkerLagError(error, late) : error;
  }

  /** The status of the answer head read so far: the response's, else the CONNECT answer's (kept through TLS); null when none. */
  private statusSoFar(): number | null {
    return (this.parser ?? this.tunnel)?.statusCode || null;
  }

  private complete(): void {
    const p = this.parser as HttpResponseParser;
    // The budget is the verdict's, not only the timer's: when the event loop is
    // saturated the deadline can fire late, and an answer that came in after
    // the budget must not count (a proxy slower than the timeout is not working).
    if (performance.now() - this.startedAt > this.spec.timeoutMs) {
      this.fail(this.ours(probeError('timeout', `the answer came after the ${this.spec.timeoutMs} ms budget`)), p.statusCode || null);
      return;
    }
    this.finish(null, p.statusCode, p.headers, p.body(), p.bodyTruncated);
  }

  /** Keeps the first 2 bytes the proxy answered with (via http: RESPONSE or HTTP_CONNECT). */
  private noteAnswerHead(chunk: Buffer): void {
    if (this.state !== ExchangeState.RESPONSE && this.state !== ExchangeState.HTTP_CONNECT) return;
    const head = (this.answerHead ??= []);
    for (let i = 0; i < chunk.length && head.length < 2; i++) head.push(chunk[i]!);
  }

  private fail(error: ProbeError, statusCode: number | null = null): void {
    // an http check's answer that was no HTTP: a SOCKS server's says so
    if (error.code === 'bad_response' && this.answerHead !== null) {
      const socks = socksAnswerOf(this.answerHead);
      if (socks !== null) error = socksAnswerError(socks);
    }
    this.finish(error, statusCode, EMPTY_HEADERS, null, false);
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
    const link = this.link;
    if (link !== null) {
      // a full handshake with the proven peer: keep its session (a TLS 1.3 ticket came after the handshake)
      if (this.peerProven && !link.sessionReused()) {
        const session = link.tlsSession();
        if (session !== null) keepSession(this.sessionKey as string, session);
      }
      link.destroy();
    }
    this.parser = null;
    this.tunnel = null;
    this.done({
      error,
      statusCode,
      headers,
      body,
      bodyTruncated,
      elapsedMs: end - (this.connectStart >= 0 ? this.connectStart : this.startedAt),
      connectedTo: this.address,
      localAddress: this.local,
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
