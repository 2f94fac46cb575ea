/**
 * One client connection of the gateway (the socket driver over the front
 * codecs, codec/*): tell HTTP from SOCKS5 by the first byte, read the
 * request and credentials, check them through the pool port, guard the
 * target, choose an upstream (upstream-choice.ts), bring it up through an
 * UpstreamLeg (at most MAX_TRIES, a failed one reported to its pool), answer
 * the client and relay both ways with backpressure (writer.ts).
 *
 * Phases (`phase`):
 *
 *   OPEN ─0x05─> SOCKS ─auth─> CHECKING ─ok─> SOCKS ─request─> ADMITTING
 *     │                                                           │
 *     └─'A'..'Z'─> HTTP_HEAD ─head─> CHECKING ─ok────────────────>┤
 *                                                                 ▼
 *   ADMITTING (per-key cap, SSRF guard after DNS, choice) ─> DIALING ─tunnel up─> RELAY
 *                                                     forward: │ ─request sent─> FORWARDING ─answer head─> RELAY
 *   DIALING / FORWARDING ─the try failed─> DIALING (the next upstream) | CLOSING (no try left: one error)
 *   any ─refusal─> CLOSING (the answer, then FIN; closed when the client closes or after CLOSE_GRACE_MS)
 *   any ─> CLOSED (sockets closed, the key's slot and counters released once)
 *
 * Target names go to the upstream as names (it resolves them where it is),
 * except to a SOCKS4 upstream, which gets the address the guard resolved
 * (plain SOCKS4 has no names; many servers lack SOCKS4a).
 *
 * Tries and what the client sees: a tunnel (CONNECT, SOCKS5) is answered
 * only once an upstream's tunnel is up, so any failure before it is
 * replaced. A forwarded absolute-form request is sent again only when that
 * is safe: the upstream refused it (407), or it failed before answering and
 * the method is idempotent and its body (at most REPLAY_MAX bytes) was kept.
 *
 * Bounded memory: client bytes that arrive before there is an upstream to
 * send them to are kept up to EARLY_MAX, then the client is paused; a
 * forwarded body is kept for a retry up to REPLAY_MAX, then not at all; the
 * relay pauses the side that reads while the other's writer holds bytes.
 *
 * Timers: the caller's tick (gateway.ts) calls `tick(now)` (times on the
 * context's clock); the head or SOCKS
 * dialog and the credential check must end within the handshake timeout,
 * each try within the connect timeout; DIALING past it fails the try;
 * FORWARDING and RELAY end after the idle timeout without a byte either way.
 */
import { isIP } from 'node:net';
import { hashApiKey } from '../accounts/keys';
import type { Clock } from '../clock';
import type { Logger } from '../log';
import { isBlockedAddress } from '../probe/codec/ssrf';
import type { DnsAnswer } from '../probe/net/dns-cache';
import { forwardRequestHead } from './codec/forward-head';
import { ProxyRequestParser, RequestHeadState, type ProxyRequestHead } from './codec/request-head';
import { RequestBodyFramer } from './codec/request-body';
import { connectEstablished, CONTINUE_HEAD, gatewayError, proxyAuthRequired, relayedResponseHead, type GatewayErrorCode } from './codec/response-head';
import { sniffFront } from './codec/sniff';
import { SOCKS5_REP, Socks5ServerReader, socks4Refusal, socks5AuthReply, socks5MethodReply, socks5Reply } from './codec/socks5-server';
import { SOCKS5_USER_PASS } from '../probe/codec/socks-codec';
import type { FailureGate, GatewayAccount, GatewayCounters, GatewayPools } from './ports';
import type { UpstreamAttempt, UpstreamChooser, WorkingSet } from './upstream-choice';
import { UpstreamLeg, type LegEvents, type LegFailure } from './upstream-leg';
import { parseGatewayUsername, type GatewayUser } from './username';
import { Writer, type Sock } from './writer';

/** Client bytes kept before an upstream can take them; more pauses the client. */
export const EARLY_MAX = 64 * 1024;
/** A forwarded body kept for a retry at most. */
export const REPLAY_MAX = 64 * 1024;
/** After an error answer, the client has this long to read it and close. */
export const CLOSE_GRACE_MS = 2_000;
/** Relayed bytes reported to the counters in batches of this size (and at close). */
const BYTES_BATCH = 1024 * 1024;
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);
const EMPTY = Buffer.alloc(0);

/** What every connection of one gateway shares. */
export interface GatewayContext {
  readonly pools: GatewayPools;
  readonly chooser: UpstreamChooser;
  readonly throttle: FailureGate;
  readonly counters: GatewayCounters;
  readonly log: Logger;
  /** ALLOW_PRIVATE_TARGETS: the client's target may be private (the guard applies to targets only). */
  readonly allowPrivateTargets: boolean;
  readonly maxConnectionsPerKey: number;
  readonly handshakeTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly idleTimeoutMs: number;
  /** Deadlines, idle times and the chooser's sessions (a monotonic clock). */
  readonly clock: Clock;
  resolve(host: string): Promise<DnsAnswer>;
  /** Open connections per key (sha256 of the key). */
  readonly keySlots: Map<string, number>;
  /** A connection reached CLOSED. */
  closed(conn: ClientConnection): void;
}

export const Phase = Object.freeze({
  OPEN: 0,
  HTTP_HEAD: 1,
  SOCKS: 2,
  CHECKING: 3,
  ADMITTING: 4,
  DIALING: 5,
  FORWARDING: 6,
  RELAY: 7,
  CLOSING: 8,
  CLOSED: 9,
} as const);
export type PhaseValue = (typeof Phase)[keyof typeof Phase];

/** The SOCKS5 REP for each refusal (`target_unreachable` carries the upstream's own). */
const SOCKS_REP_OF: Readonly<Partial<Record<GatewayErrorCode, number>>> = Object.freeze({
  blocked_target: SOCKS5_REP.NOT_ALLOWED,
  too_many_connections: SOCKS5_REP.NOT_ALLOWED,
  dns_failed: SOCKS5_REP.HOST_UNREACHABLE,
});

export class ClientConnection implements LegEvents {
  phase: PhaseValue = Phase.OPEN;
  readonly address: string;
  readonly #ctx: GatewayContext;
  readonly #sock: Sock;
  readonly #writer: Writer;
  #deadline: number;
  #lastActive: number;
  #front: 'http' | 'socks5' | null = null;
  #http: ProxyRequestParser | null = null;
  #head: ProxyRequestHead | null = null;
  #body: RequestBodyFramer | null = null;
  #socks: Socks5ServerReader | null = null;
  #pending: Buffer[] = [];
  #pendingLen = 0;
  #pausedForPending = false;
  #clientEnded = false;
  #upstreamEnded = false;
  #account: GatewayAccount | null = null;
  #keyHash: string | null = null;
  #user: GatewayUser | null = null;
  #working: WorkingSet | null = null;
  #slotHeld = false;
  #target: { host: string; port: number } | null = null;
  /** A target name's first IPv4 address (what a SOCKS4 upstream gets: many do not speak SOCKS4a). */
  #targetV4: string | null = null;
  #attempt: UpstreamAttempt | null = null;
  #lastFailure: LegFailure | null = null;
  #leg: UpstreamLeg | null = null;
  #replay: Buffer[] | null = [];
  #replayLen = 0;
  /** Body bytes of a forwarded request went to an upstream (a retry needs them all in #replay). */
  #bodySent = false;
  #continueSent = false;
  #unflushed = 0;

  constructor(ctx: GatewayContext, sock: Sock, address: string, now: number) {
    this.#ctx = ctx;
    this.#sock = sock;
    this.address = address;
    this.#writer = new Writer(sock, () => this.#maybeDone());
    this.#lastActive = now;
    this.#deadline = now + ctx.handshakeTimeoutMs;
  }

  /** Bytes this connection holds for writing, both ways (the relay's bound). */
  get buffered(): number {
    return this.#writer.buffered + (this.#leg?.writer?.buffered ?? 0) + this.#pendingLen + this.#replayLen;
  }

  // ---- events of the client socket ----------------------------------------------------

  received(chunk: Buffer, now: number): void {
    this.#lastActive = now;
    switch (this.phase) {
      case Phase.OPEN:
        this.#sniff(chunk);
        return;
      case Phase.HTTP_HEAD:
        this.#httpBytes(chunk);
        return;
      case Phase.SOCKS:
        (this.#socks as Socks5ServerReader).push(chunk);
        this.#socksRun();
        return;
      case Phase.CHECKING:
      case Phase.ADMITTING:
      case Phase.DIALING:
        this.#stash(chunk);
        return;
      case Phase.FORWARDING:
        this.#bodyUp(chunk);
        return;
      case Phase.RELAY:
        if (this.#head !== null && !this.#head.connect) this.#bodyUp(chunk);
        else this.#up(chunk);
        return;
    }
  }

  drained(now: number): void {
    this.#lastActive = now;
    this.#writer.drain();
  }

  /** The client sent FIN. */
  ended(): void {
    this.#clientEnded = true;
    switch (this.phase) {
      case Phase.OPEN:
      case Phase.HTTP_HEAD:
      case Phase.SOCKS:
      case Phase.CLOSING:
        this.close(true);
        return;
      case Phase.RELAY:
        // a forwarded request's answer is still coming: an upstream proxy may take a half-close as an abort
        if (this.#head === null || this.#head.connect) this.#leg?.writer?.end();
        this.#maybeDone();
        return;
    }
  }

  /** The client socket is gone (closed or reset): what was written to the upstream still goes out. */
  closedByClient(): void {
    this.close(true);
  }

  tick(now: number): void {
    if (this.phase === Phase.RELAY || this.phase === Phase.FORWARDING) {
      if (now - this.#lastActive < this.#ctx.idleTimeoutMs) return;
      if (this.phase === Phase.FORWARDING) this.#refuse('upstream_failed');
      else this.close(false);
      return;
    }
    if (now < this.#deadline) return;
    if (this.phase === Phase.DIALING) this.#leg?.timedOut();
    else this.close(false);
  }

  /** Closes both sides (idempotent). `graceful`: a normal close (what was written still goes out); else a reset. */
  close(graceful: boolean): void {
    if (this.phase === Phase.CLOSED) return;
    this.phase = Phase.CLOSED;
    this.#leg?.destroy(graceful);
    this.#leg = null;
    this.#writer.kill();
    this.#pending = [];
    this.#pendingLen = 0;
    this.#replay = null;
    this.#replayLen = 0;
    if (graceful) this.#sock.end();
    else this.#sock.terminate();
    this.#releaseSlot();
    this.#flushBytes();
    this.#ctx.closed(this);
  }

  // ---- the front: sniff, HTTP head, SOCKS5 dialog ------------------------------------------

  #sniff(chunk: Buffer): void {
    const front = sniffFront(chunk[0] as number);
    if (front === 'http') {
      this.#front = 'http';
      this.#http = new ProxyRequestParser();
      this.phase = Phase.HTTP_HEAD;
      this.#httpBytes(chunk);
    } else if (front === 'socks5') {
      this.#front = 'socks5';
      this.#socks = new Socks5ServerReader();
      this.phase = Phase.SOCKS;
      this.#socks.push(chunk);
      this.#socksRun();
    } else {
      this.#ctx.counters.refused('unsupported');
      if (front === 'socks4') this.#writer.write(socks4Refusal());
      this.#closing();
    }
  }

  #httpBytes(chunk: Buffer): void {
    const p = this.#http as ProxyRequestParser;
    const st = p.push(chunk);
    if (st === RequestHeadState.HEAD) return;
    if (st === RequestHeadState.ERROR) {
      this.#refuse(p.error === 'not_a_proxy_request' ? 'unsupported' : 'bad_request');
      return;
    }
    const head = p.head as ProxyRequestHead;
    const rest = p.rest ?? EMPTY;
    this.#http = null;
    this.#head = head;
    if (!head.connect) this.#body = new RequestBodyFramer(head.framing);
    this.phase = Phase.CHECKING;
    if (rest.length > 0) this.#stash(rest);
    if (this.#blocked()) return;
    if (head.auth !== 'basic' || head.credentials === null) {
      this.#denyAuth(head.auth !== 'none');
      return;
    }
    void this.#check(head.credentials.username, head.credentials.password);
  }

  #socksRun(): void {
    const r = this.#socks as Socks5ServerReader;
    while (this.phase === Phase.SOCKS) {
      const m = r.next();
      switch (m.kind) {
        case 'need_more':
          return;
        case 'greeting':
          this.#writer.write(socks5MethodReply(SOCKS5_USER_PASS));
          break;
        case 'auth':
          this.phase = Phase.CHECKING;
          if (this.#blocked()) return;
          void this.#check(m.username, m.password);
          return;
        case 'request':
          this.#target = { host: m.host, port: m.port };
          this.#socks = null;
          this.phase = Phase.ADMITTING;
          if (r.rest().length > 0) this.#stash(r.rest());
          this.#admit();
          return;
        case 'error':
          this.#ctx.counters.refused('bad_request');
          if (m.reply !== null) this.#writer.write(m.reply);
          this.#closing();
          return;
      }
    }
  }

  /** The failed-attempt throttle: a blocked address is refused before its credentials are looked at. */
  #blocked(): boolean {
    const wait = this.#ctx.throttle.blockedFor(this.address);
    if (wait === null) return false;
    this.#ctx.counters.refused('auth_blocked');
    if (this.#front === 'http') this.#writer.write(gatewayError('auth_blocked', wait));
    else this.#writer.write(socks5AuthReply(false));
    this.#closing();
    return true;
  }

  /** Wrong or missing credentials: 407 / SOCKS5 auth failure; `counted`: a failed attempt for the throttle. */
  #denyAuth(counted: boolean): void {
    if (counted) this.#ctx.throttle.fail(this.address);
    this.#ctx.counters.refused('auth');
    this.#writer.write(this.#front === 'http' ? proxyAuthRequired() : socks5AuthReply(false));
    this.#closing();
  }

  async #check(username: string, key: string): Promise<void> {
    const parsed = parseGatewayUsername(username);
    let account: GatewayAccount | null = null;
    let working: WorkingSet | null = null;
    try {
      if (parsed.ok) account = await this.#ctx.pools.authenticate(key);
      if (parsed.ok && account !== null) working = await this.#ctx.pools.workingSet(account.id, parsed.user.poolId);
    } catch (err) {
      if (this.phase !== Phase.CHECKING) return;
      this.#ctx.log.warn('gateway: the key or pool look-up failed', { err });
      this.#refuse('unavailable');
      return;
    }
    if (this.phase !== Phase.CHECKING) return;
    if (!parsed.ok || account === null || working === null) {
      this.#denyAuth(true);
      return;
    }
    this.#account = account;
    this.#keyHash = hashApiKey(key);
    this.#user = parsed.user;
    this.#working = working;
    if (this.#front === 'http') {
      const h = this.#head as ProxyRequestHead;
      this.#target = { host: h.host, port: h.port };
      this.phase = Phase.ADMITTING;
      this.#admit();
      return;
    }
    this.#writer.write(socks5AuthReply(true));
    this.phase = Phase.SOCKS;
    const early = this.#unstash();
    const r = this.#socks as Socks5ServerReader;
    for (const c of early) r.push(c);
    this.#socksRun();
  }

  // ---- admission: per-key cap, SSRF guard, choice ---------------------------------------

  #admit(): void {
    const ctx = this.#ctx;
    const key = this.#keyHash as string;
    const open = ctx.keySlots.get(key) ?? 0;
    if (open >= ctx.maxConnectionsPerKey) {
      this.#refuse('too_many_connections');
      return;
    }
    ctx.keySlots.set(key, open + 1);
    this.#slotHeld = true;
    ctx.counters.connection((this.#account as GatewayAccount).id);
    const host = (this.#target as { host: string }).host;
    if (isIP(host) !== 0) {
      if (!ctx.allowPrivateTargets && isBlockedAddress(host)) this.#refuse('blocked_target');
      else this.#choose();
      return;
    }
    ctx.resolve(host).then(
      (a) => {
        if (this.phase !== Phase.ADMITTING) return;
        if (a.addresses.length === 0) this.#refuse('dns_failed');
        else if (!ctx.allowPrivateTargets && a.addresses.some(isBlockedAddress)) this.#refuse('blocked_target');
        else {
          this.#targetV4 = a.addresses.find((x) => isIP(x) === 4) ?? null;
          this.#choose();
        }
      },
      () => {
        if (this.phase === Phase.ADMITTING) this.#refuse('dns_failed');
      },
    );
  }

  #choose(): void {
    const u = this.#user as GatewayUser;
    this.#attempt = this.#ctx.chooser.begin(this.#working as WorkingSet, u, this.#ctx.clock.now());
    if (this.#attempt.matches === 0) {
      this.#refuse('no_upstream');
      return;
    }
    this.#nextTry();
  }

  #nextTry(): void {
    const u = (this.#attempt as UpstreamAttempt).next();
    if (u === null) {
      const f = this.#lastFailure;
      this.#refuse(f === null ? 'no_upstream' : f.blame === 'target' ? 'target_unreachable' : 'upstream_failed', f?.rep);
      return;
    }
    this.phase = Phase.DIALING;
    this.#deadline = this.#ctx.clock.now() + this.#ctx.connectTimeoutMs;
    const head = this.#head;
    const t = this.#target as { host: string; port: number };
    const to = u.type === 'socks4' && this.#targetV4 !== null ? { host: this.#targetV4, port: t.port } : t;
    const leg = new UpstreamLeg(this, u, head !== null && !head.connect ? 'forward' : 'tunnel', to);
    this.#leg = leg;
    leg.dial();
  }

  // ---- events of the upstream leg -----------------------------------------------------

  legReady(leg: UpstreamLeg, rest: Buffer): void {
    if (leg !== this.#leg) return;
    const w = leg.writer as Writer;
    if (leg.kind === 'tunnel') {
      (this.#attempt as UpstreamAttempt).succeeded(leg.upstream);
      this.phase = Phase.RELAY;
      this.#writer.write(this.#front === 'http' ? connectEstablished(leg.upstream) : socks5Reply(SOCKS5_REP.SUCCEEDED));
      if (rest.length > 0) this.#down(rest);
      for (const c of this.#unstash()) this.#up(c);
      if (this.#clientEnded) w.end();
      return;
    }
    // forward: the request head, then the body kept for a retry, then what waits
    const head = this.#head as ProxyRequestHead;
    const u = leg.upstream;
    this.phase = Phase.FORWARDING;
    w.write(
      forwardRequestHead(
        head,
        u.type === 'http'
          ? { form: 'absolute', credentials: u.username === undefined ? null : { username: u.username, password: u.password ?? '' } }
          : { form: 'origin' },
      ),
    );
    if (head.expectsContinue && !this.#continueSent) {
      this.#continueSent = true;
      this.#writer.write(CONTINUE_HEAD);
    }
    for (const c of this.#replay ?? []) w.write(c, this.#sock);
    for (const c of this.#unstash()) this.#bodyUp(c);
  }

  legResponse(leg: UpstreamLeg, status: number, headers: [string, string][], rest: Buffer): void {
    if (leg !== this.#leg) return;
    (this.#attempt as UpstreamAttempt).succeeded(leg.upstream);
    this.phase = Phase.RELAY;
    this.#replay = null;
    this.#replayLen = 0;
    const head = relayedResponseHead(status, headers, leg.upstream);
    this.#count(head.length);
    this.#writer.write(head);
    if (rest.length > 0) this.#down(rest);
  }

  legFailed(leg: UpstreamLeg, f: LegFailure): void {
    if (leg !== this.#leg) return;
    this.#leg = null;
    this.#lastFailure = f;
    const ctx = this.#ctx;
    if (f.blame === 'upstream') {
      (this.#attempt as UpstreamAttempt).failed(leg.upstream);
      ctx.pools.reportFailure((this.#working as WorkingSet).poolId, leg.upstream);
      ctx.counters.upstreamFailed();
      ctx.log.debug('gateway: upstream failed', { pool: (this.#working as WorkingSet).poolId, upstream: `${leg.upstream.host}:${leg.upstream.port}`, reason: f.reason });
    }
    const head = this.#head;
    if (head !== null && !head.connect) {
      // a forwarded request goes again only whole (its body kept) and, once it may have reached the target, only when idempotent
      const bodyLost = this.#bodySent && this.#replay === null;
      if (bodyLost || (f.sent && !IDEMPOTENT.has(head.method))) {
        this.#refuse('upstream_failed');
        return;
      }
    }
    this.#nextTry();
  }

  legData(leg: UpstreamLeg, chunk: Buffer): void {
    if (leg !== this.#leg) return;
    this.#lastActive = this.#ctx.clock.now();
    this.#down(chunk);
  }

  legEnded(leg: UpstreamLeg, closed: boolean): void {
    if (leg !== this.#leg) return;
    this.#upstreamEnded = true;
    this.#writer.end();
    if (closed) leg.writer?.kill();
    this.#maybeDone();
  }

  // ---- relay ----------------------------------------------------------------------

  /** Client -> upstream (a tunnel, or a forwarded body's bytes). */
  #up(chunk: Buffer): void {
    const w = this.#leg?.writer;
    if (w === undefined || w === null) return;
    this.#count(chunk.length);
    w.write(chunk, this.#sock);
  }

  /** Upstream -> client. */
  #down(chunk: Buffer): void {
    this.#count(chunk.length);
    this.#writer.write(chunk, this.#leg?.socket ?? null);
  }

  /** A forwarded request's body: relayed as its framing says, kept for a retry while small; what follows it is dropped. */
  #bodyUp(chunk: Buffer): void {
    const framer = this.#body as RequestBodyFramer;
    if (framer.done) return;
    const step = framer.push(chunk);
    if (step.error !== null) {
      if (this.phase === Phase.FORWARDING) this.#refuse('bad_request');
      else this.close(false);
      return;
    }
    if (step.body.length === 0) return;
    this.#bodySent = true;
    if (this.#replay !== null && this.phase === Phase.FORWARDING) {
      this.#replayLen += step.body.length;
      if (this.#replayLen > REPLAY_MAX) {
        this.#replay = null;
        this.#replayLen = 0;
      } else {
        this.#replay.push(step.body);
      }
    }
    this.#up(step.body);
  }

  /** Both directions ended and were written out: close gracefully. */
  #maybeDone(): void {
    if (this.phase === Phase.CLOSING && this.#writer.finished && this.#clientEnded) {
      this.close(true);
      return;
    }
    if (this.phase !== Phase.RELAY || !this.#upstreamEnded || !this.#writer.finished) return;
    const forward = this.#head !== null && !this.#head.connect;
    const upDone = forward || this.#leg === null || this.#leg.writer === null || this.#leg.writer.finished;
    if (this.#clientEnded && upDone) this.close(true);
  }

  // ---- refusals and bookkeeping ----------------------------------------------------------

  /** One clean error to the client, then CLOSING. */
  #refuse(code: GatewayErrorCode, rep?: number): void {
    this.#ctx.counters.refused(code);
    if (this.#front === 'http') this.#writer.write(gatewayError(code));
    else this.#writer.write(socks5Reply(rep ?? SOCKS_REP_OF[code] ?? SOCKS5_REP.GENERAL_FAILURE));
    this.#closing();
  }

  /** The answer is written: FIN, then wait (briefly) for the client to close. */
  #closing(): void {
    this.phase = Phase.CLOSING;
    this.#leg?.destroy(false);
    this.#leg = null;
    this.#unstash();
    this.#replay = null;
    this.#replayLen = 0;
    this.#releaseSlot();
    this.#deadline = this.#ctx.clock.now() + CLOSE_GRACE_MS;
    this.#writer.end();
    this.#maybeDone();
  }

  #stash(chunk: Buffer): void {
    this.#pending.push(chunk);
    this.#pendingLen += chunk.length;
    if (this.#pendingLen > EARLY_MAX && !this.#pausedForPending) {
      this.#pausedForPending = true;
      this.#sock.pause();
    }
  }

  #unstash(): Buffer[] {
    const p = this.#pending;
    this.#pending = [];
    this.#pendingLen = 0;
    if (this.#pausedForPending) {
      this.#pausedForPending = false;
      this.#sock.resume();
    }
    return p;
  }

  #count(n: number): void {
    this.#unflushed += n;
    if (this.#unflushed >= BYTES_BATCH) this.#flushBytes();
  }

  #flushBytes(): void {
    if (this.#unflushed === 0 || this.#account === null) return;
    this.#ctx.counters.bytes(this.#account.id, this.#unflushed);
    this.#unflushed = 0;
  }

  #releaseSlot(): void {
    if (!this.#slotHeld) return;
    this.#slotHeld = false;
    const key = this.#keyHash as string;
    const n = (this.#ctx.keySlots.get(key) ?? 1) - 1;
    if (n <= 0) this.#ctx.keySlots.delete(key);
    else this.#ctx.keySlots.set(key, n);
  }
}
