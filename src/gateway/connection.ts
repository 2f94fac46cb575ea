/**
 * One client connection of the gateway: the thin socket driver over pure
 * pieces. The front session (front-session.ts) reads the client's first
 * bytes and says what to do; the credential check and `admit` (admit.ts:
 * the per-key cap, DNS, the SSRF guard) let it in or refuse it; the chooser
 * (upstream-choice.ts) offers upstreams, each tried through an UpstreamLeg
 * (upstream-leg.ts, over the shared tunnel machine); the retry policy
 * (retry-policy.ts) says when a failed try is replaced and what is sent
 * again; the relay writes both ways with backpressure (writer.ts).
 *
 * Phases (`phase`, a union carrying each phase's own data, moved only through
 * `transition` of src/state-machine.ts, CONNECTION_PHASES below):
 *
 *   front ─credentials─> checking ─accepted─> request ─target─> admitting
 *     (HTTP: the target comes with the accept; SOCKS5: after its request)
 *   admitting ─admitted, an upstream offered─> dialing {tries, leg}
 *   dialing ─tunnel up─> relay {tries, leg}
 *           ─forward: ready for the request─> forwarding {tries, leg} ─answer head─> relay
 *   dialing / forwarding ─the try failed, the policy allows another─> dialing (the next upstream)
 *   front .. forwarding ─refusal─> closing (the answer, then FIN; closed when the
 *     client closes or after CLOSE_GRACE_MS)
 *   any ─> closed (sockets closed, the key's slot and counters released once)
 *
 * Target names go to the upstream as names (it resolves them where it is),
 * except to a SOCKS4 upstream, which gets the address the guard resolved
 * (plain SOCKS4 has no names; many servers lack SOCKS4a).
 *
 * Bounded memory: client bytes that arrive before there is an upstream to
 * send them to are kept up to EARLY_MAX, then the client is paused; a
 * forwarded body is kept for a retry up to REPLAY_MAX (retry-policy.ts); the
 * relay pauses the side that reads while the other's writer holds bytes.
 *
 * Timers: the caller's tick (gateway.ts) calls `tick(now)` (times on the
 * context's clock): the front and the credential check must end within the
 * handshake timeout, each try within the connect timeout (dialing past it
 * fails the try); forwarding and relay end after the idle timeout without a
 * byte either way. Nothing on the connection's path waits on a timer.
 */
import type { Clock } from '../clock';
import type { Logger } from '../log';
import { forwardRequestHead } from './codec/forward-head';
import type { ProxyRequestHead } from './codec/request-head';
import { RequestBodyFramer } from './codec/request-body';
import { connectEstablished, CONTINUE_HEAD, relayedResponseHead, type GatewayErrorCode } from './codec/response-head';
import { SOCKS5_REP, socks5Reply } from './codec/socks5-server';
import { admit, checkCredentials, type AdmitPorts, type Authed, type Checked } from './admit';
import { blockedBytes, FrontSession, refusalBytes, type FrontAction, type FrontProtocol, type FrontTarget } from './front-session';
import type { FailureGate, GatewayCounters, GatewayPools } from './ports';
import { afterFailure, exhaustedRefusal, ReplayBuffer } from './retry-policy';
import { transition, transitionTable } from '../state-machine';
import type { UpstreamAttempt, UpstreamChooser } from './upstream-choice';
import { UpstreamLeg, type LegConnect, type LegEvents, type LegFailure } from './upstream-leg';
import { Writer, type Sock } from './writer';

export { REPLAY_MAX } from './retry-policy';
/** Client bytes kept before an upstream can take them; more pauses the client. */
export const EARLY_MAX = 64 * 1024;
/** After an error answer, the client has this long to read it and close. */
export const CLOSE_GRACE_MS = 2_000;
/** Relayed bytes reported to the counters in batches of this size (and at close). */
const BYTES_BATCH = 1024 * 1024;

/** What every connection of one gateway shares. */
export interface GatewayContext extends AdmitPorts {
  readonly pools: GatewayPools;
  readonly chooser: UpstreamChooser;
  readonly throttle: FailureGate;
  readonly counters: GatewayCounters;
  readonly log: Logger;
  readonly handshakeTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly idleTimeoutMs: number;
  /** Deadlines, idle times and the chooser's sessions (a monotonic clock). */
  readonly clock: Clock;
  /** How a leg connects to its upstream (default Bun.connect; fakes in unit tests). */
  readonly connect?: LegConnect;
  /** A connection reached closed. */
  closed(conn: ClientConnection): void;
}

/** The upstream tries of one admitted connection. */
export interface Tries {
  readonly auth: Authed;
  readonly target: FrontTarget;
  /** A forwarded request's head (null: a tunnel, CONNECT or SOCKS5). */
  readonly forward: ProxyRequestHead | null;
  /** A forwarded request's body framing. */
  readonly body: RequestBodyFramer | null;
  /** The target name's first IPv4 address (what a SOCKS4 upstream gets). */
  readonly targetV4: string | null;
  readonly attempt: UpstreamAttempt;
  readonly replay: ReplayBuffer;
  last: LegFailure | null;
  continueSent: boolean;
}

export type ConnectionPhase =
  | { name: 'front'; session: FrontSession }
  | { name: 'checking'; session: FrontSession }
  | { name: 'request'; session: FrontSession; auth: Authed }
  | { name: 'admitting'; auth: Authed; target: FrontTarget }
  | { name: 'dialing'; tries: Tries; leg: UpstreamLeg }
  | { name: 'forwarding'; tries: Tries; leg: UpstreamLeg }
  | { name: 'relay'; tries: Tries; leg: UpstreamLeg }
  | { name: 'closing' }
  | { name: 'closed' };
export type PhaseName = ConnectionPhase['name'];

export const CONNECTION_PHASES = transitionTable<PhaseName>({
  front: ['checking', 'closing', 'closed'],
  checking: ['request', 'closing', 'closed'],
  request: ['admitting', 'closing', 'closed'],
  admitting: ['dialing', 'closing', 'closed'],
  dialing: ['dialing', 'forwarding', 'relay', 'closing', 'closed'],
  forwarding: ['dialing', 'relay', 'closing', 'closed'],
  relay: ['closed'],
  closing: ['closed'],
  closed: [],
});

const CLOSING: ConnectionPhase = Object.freeze({ name: 'closing' });
const CLOSED: ConnectionPhase = Object.freeze({ name: 'closed' });

export class ClientConnection implements LegEvents {
  readonly address: string;
  readonly #ctx: GatewayContext;
  readonly #sock: Sock;
  readonly #writer: Writer;
  #phase: ConnectionPhase = { name: 'front', session: new FrontSession() };
  #front: FrontProtocol | null = null;
  #deadline: number;
  #lastActive: number;
  #pending: Buffer[] = [];
  #pendingLen = 0;
  #pausedForPending = false;
  #clientEnded = false;
  #upstreamEnded = false;
  /** Set once the credentials are accepted (the byte counters' account). */
  #accountId: string | null = null;
  /** The per-key slot held (admit.ts), released once. */
  #slotKey: string | null = null;
  #unflushed = 0;

  constructor(ctx: GatewayContext, sock: Sock, address: string, now: number) {
    this.#ctx = ctx;
    this.#sock = sock;
    this.address = address;
    this.#writer = new Writer(sock, () => this.#maybeDone());
    this.#lastActive = now;
    this.#deadline = now + ctx.handshakeTimeoutMs;
  }

  get phase(): PhaseName {
    return this.#phase.name;
  }

  /** Bytes this connection holds for writing, both ways, and kept (the relay's bound). */
  get buffered(): number {
    const p = this.#phase;
    const leg = 'leg' in p ? p.leg : null;
    const replay = 'tries' in p ? p.tries.replay.length : 0;
    return this.#writer.buffered + (leg?.writer?.buffered ?? 0) + this.#pendingLen + replay;
  }

  // ---- events of the client socket ----------------------------------------------------

  received(chunk: Buffer, now: number): void {
    this.#lastActive = now;
    const p = this.#phase;
    switch (p.name) {
      case 'front':
      case 'request':
        this.#run(p.session.push(chunk));
        return;
      case 'checking':
      case 'admitting':
      case 'dialing':
        this.#stash(chunk);
        return;
      case 'forwarding':
        this.#bodyUp(p, chunk);
        return;
      case 'relay':
        if (p.tries.forward !== null) this.#bodyUp(p, chunk);
        else this.#up(p.leg, chunk);
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
    const p = this.#phase;
    switch (p.name) {
      case 'front':
      case 'request':
      case 'closing':
        this.close(true);
        return;
      case 'relay':
        // a forwarded request's answer is still coming: an upstream proxy may take a half-close as an abort
        if (p.tries.forward === null) p.leg.writer?.end();
        this.#maybeDone();
        return;
    }
  }

  /** The client socket is gone (closed or reset): what was written to the upstream still goes out. */
  closedByClient(): void {
    this.close(true);
  }

  tick(now: number): void {
    const p = this.#phase;
    if (p.name === 'relay' || p.name === 'forwarding') {
      if (now - this.#lastActive < this.#ctx.idleTimeoutMs) return;
      if (p.name === 'forwarding') this.#refuse('upstream_failed');
      else this.close(false);
      return;
    }
    if (now < this.#deadline) return;
    if (p.name === 'dialing') p.leg.timedOut();
    else this.close(false);
  }

  /** Closes both sides (idempotent). `graceful`: a normal close (what was written still goes out); else a reset. */
  close(graceful: boolean): void {
    const p = this.#phase;
    if (p.name === 'closed') return;
    if ('leg' in p) p.leg.destroy(graceful);
    this.#enter(p.name, CLOSED);
    this.#writer.kill();
    this.#pending = [];
    this.#pendingLen = 0;
    if (graceful) this.#sock.end();
    else this.#sock.terminate();
    this.#releaseSlot();
    this.#flushBytes();
    this.#ctx.closed(this);
  }

  // ---- the front's actions, the credential check, admission ---------------------------------

  #enter(from: PhaseName | readonly PhaseName[], next: ConnectionPhase): void {
    transition('gateway connection', CONNECTION_PHASES, this.#phase.name, from, next.name);
    this.#phase = next;
  }

  #run(actions: FrontAction[]): void {
    for (const a of actions) {
      switch (a.kind) {
        case 'write':
          this.#writer.write(a.bytes);
          break;
        case 'check':
          this.#check(a.username, a.password);
          return;
        case 'target':
          this.#admit(a.target, a.rest);
          return;
        case 'refuse':
          if (a.failedAttempt) this.#ctx.throttle.fail(this.address);
          this.#ctx.counters.refused(a.reason);
          this.#closing();
          return;
      }
    }
  }

  /** The failed-attempt throttle first (a blocked address is refused before its credentials are looked at), then the look-up. */
  #check(username: string, key: string): void {
    const p = this.#phase;
    if (p.name !== 'front') return;
    const front = p.session.front ?? 'http';
    this.#front = front;
    this.#enter('front', { name: 'checking', session: p.session });
    const wait = this.#ctx.throttle.blockedFor(this.address);
    if (wait !== null) {
      this.#ctx.counters.refused('auth_blocked');
      this.#writer.write(blockedBytes(front, wait));
      this.#closing();
      return;
    }
    this.#after(checkCredentials(this.#ctx.pools, username, key), (r) => this.#checked(r));
  }

  /** `then` with what `p` gives; a throw in it (a bug: an illegal transition) closes this connection, logged, rather than escaping as an unhandled rejection. */
  #after<T>(p: Promise<T>, then: (v: T) => void): void {
    p.then(then).catch((err: unknown) => {
      this.#ctx.log.error('gateway: a connection step failed', { err });
      this.close(false);
    });
  }

  #checked(r: Checked): void {
    const p = this.#phase;
    if (p.name !== 'checking') return;
    switch (r.kind) {
      case 'unavailable':
        this.#ctx.log.warn('gateway: the key or pool look-up failed', { err: r.err });
        this.#refuse('unavailable');
        return;
      case 'denied':
        this.#run(p.session.denied());
        return;
      case 'accepted':
        this.#accountId = r.auth.account.id;
        this.#enter('checking', { name: 'request', session: p.session, auth: r.auth });
        this.#run(p.session.accepted(this.#unstash()));
    }
  }

  #admit(target: FrontTarget, rest: Buffer[]): void {
    const p = this.#phase;
    if (p.name !== 'request') return;
    const auth = p.auth;
    this.#enter('request', { name: 'admitting', auth, target });
    for (const c of rest) this.#stash(c);
    this.#after(admit(this.#ctx, auth.keyHash, target.host), (r) => {
      if (this.#phase.name !== 'admitting') {
        if (r.kind === 'admitted') this.#ctx.slots.release(r.slotKey);
        return;
      }
      if (r.kind === 'refused') {
        this.#refuse(r.code);
        return;
      }
      this.#slotKey = r.slotKey;
      this.#ctx.counters.connection(auth.account.id);
      const attempt = this.#ctx.chooser.begin(auth.working, auth.user, this.#ctx.clock.now());
      if (attempt.matches === 0) {
        this.#refuse('no_upstream');
        return;
      }
      const forward = target.head !== null && !target.head.connect ? target.head : null;
      const tries: Tries = {
        auth,
        target,
        forward,
        body: forward === null ? null : new RequestBodyFramer(forward.framing),
        targetV4: r.targetV4,
        attempt,
        replay: new ReplayBuffer(),
        last: null,
        continueSent: false,
      };
      this.#nextTry(tries);
    });
  }

  // ---- upstream tries ---------------------------------------------------------------------

  #nextTry(tries: Tries): void {
    const u = tries.attempt.next();
    if (u === null) {
      const r = exhaustedRefusal(tries.last);
      this.#refuse(r.code, r.rep);
      return;
    }
    this.#deadline = this.#ctx.clock.now() + this.#ctx.connectTimeoutMs;
    const t = tries.target;
    const to = u.type === 'socks4' && tries.targetV4 !== null ? { host: tries.targetV4, port: t.port } : { host: t.host, port: t.port };
    const leg = new UpstreamLeg(this, u, tries.forward === null ? 'tunnel' : 'forward', to, this.#ctx.connect);
    this.#enter(['admitting', 'dialing', 'forwarding'], { name: 'dialing', tries, leg });
    leg.dial();
  }

  /** The phase, when `leg` is its current leg (events of a leg given up on are dropped). */
  #legPhase(leg: UpstreamLeg): Extract<ConnectionPhase, { leg: UpstreamLeg }> | null {
    const p = this.#phase;
    return 'leg' in p && p.leg === leg ? p : null;
  }

  legReady(leg: UpstreamLeg, rest: Buffer): void {
    const p = this.#legPhase(leg);
    if (p === null || p.name !== 'dialing') return;
    const { tries } = p;
    const w = leg.writer;
    if (w === null) return;
    if (tries.forward === null) {
      tries.attempt.succeeded(leg.upstream);
      const relay: ConnectionPhase = { name: 'relay', tries, leg };
      this.#enter('dialing', relay);
      this.#answer(leg, this.#front === 'http' ? connectEstablished(leg.upstream) : socks5Reply(SOCKS5_REP.SUCCEEDED), rest, false);
      for (const c of this.#unstash()) this.#up(leg, c);
      if (this.#clientEnded) w.end();
      return;
    }
    // forward: the request head, then the body kept for a retry, then what waits
    const head = tries.forward;
    const u = leg.upstream;
    const forwarding: Extract<ConnectionPhase, { name: 'forwarding' }> = { name: 'forwarding', tries, leg };
    this.#enter('dialing', forwarding);
    w.write(
      forwardRequestHead(
        head,
        u.type === 'http'
          ? { form: 'absolute', credentials: u.username === undefined ? null : { username: u.username, password: u.password ?? '' } }
          : { form: 'origin' },
      ),
    );
    if (head.expectsContinue && !tries.continueSent) {
      tries.continueSent = true;
      this.#writer.write(CONTINUE_HEAD);
    }
    for (const c of tries.replay.chunks) w.write(c, this.#sock);
    for (const c of this.#unstash()) this.#bodyUp(forwarding, c);
  }

  legResponse(leg: UpstreamLeg, status: number, headers: [string, string][], rest: Buffer): void {
    const p = this.#legPhase(leg);
    if (p === null || p.name !== 'forwarding') return;
    p.tries.attempt.succeeded(leg.upstream);
    p.tries.replay.drop();
    this.#enter('forwarding', { name: 'relay', tries: p.tries, leg });
    this.#answer(leg, relayedResponseHead(status, headers, leg.upstream), rest, true);
  }

  /** The client's answer and the upstream's first bytes after it, in one write (one segment); `counted`: the head counts as relayed. */
  #answer(leg: UpstreamLeg, head: string | Buffer, rest: Buffer, counted: boolean): void {
    const bytes = typeof head === 'string' ? Buffer.from(head, 'latin1') : head;
    this.#count((counted ? bytes.length : 0) + rest.length);
    this.#writer.write(rest.length === 0 ? bytes : Buffer.concat([bytes, rest]), leg.socket);
  }

  legFailed(leg: UpstreamLeg, f: LegFailure): void {
    const p = this.#legPhase(leg);
    if (p === null || (p.name !== 'dialing' && p.name !== 'forwarding')) return;
    const { tries } = p;
    tries.last = f;
    const ctx = this.#ctx;
    if (f.blame === 'upstream') {
      const poolId = tries.auth.working.poolId;
      tries.attempt.failed(leg.upstream);
      ctx.pools.reportFailure(poolId, leg.upstream);
      ctx.counters.upstreamFailed();
      ctx.log.debug('gateway: upstream failed', { pool: poolId, upstream: `${leg.upstream.host}:${leg.upstream.port}`, reason: f.reason });
    }
    const fw = tries.forward;
    const next = afterFailure({
      answered: false,
      tries: tries.attempt.tries,
      forward: fw === null ? null : { method: fw.method, replayWhole: tries.replay.whole },
      failure: f,
    });
    if (next.kind === 'refuse') this.#refuse(next.code, next.rep);
    else this.#nextTry(tries);
  }

  legData(leg: UpstreamLeg, chunk: Buffer): void {
    if (this.#legPhase(leg)?.name !== 'relay') return;
    this.#lastActive = this.#ctx.clock.now();
    this.#down(leg, chunk);
  }

  legEnded(leg: UpstreamLeg, closed: boolean): void {
    if (this.#legPhase(leg)?.name !== 'relay') return;
    this.#upstreamEnded = true;
    this.#writer.end();
    if (closed) leg.writer?.kill();
    this.#maybeDone();
  }

  // ---- relay ----------------------------------------------------------------------

  /** Client -> upstream (a tunnel, or a forwarded body's bytes). */
  #up(leg: UpstreamLeg, chunk: Buffer): void {
    const w = leg.writer;
    if (w === null) return;
    this.#count(chunk.length);
    w.write(chunk, this.#sock);
  }

  /** Upstream -> client. */
  #down(leg: UpstreamLeg, chunk: Buffer): void {
    this.#count(chunk.length);
    this.#writer.write(chunk, leg.socket);
  }

  /** A forwarded request's body: relayed as its framing says, kept for a retry until the answer comes; what follows it is dropped. */
  #bodyUp(p: Extract<ConnectionPhase, { name: 'forwarding' | 'relay' }>, chunk: Buffer): void {
    const framer = p.tries.body;
    if (framer === null || framer.done) return;
    const step = framer.push(chunk);
    if (step.error !== null) {
      if (p.name === 'forwarding') this.#refuse('bad_request');
      else this.close(false);
      return;
    }
    if (step.body.length === 0) return;
    p.tries.replay.sent(step.body, p.name === 'forwarding');
    this.#up(p.leg, step.body);
  }

  /** Both directions ended and were written out: close gracefully. */
  #maybeDone(): void {
    const p = this.#phase;
    if (p.name === 'closing' && this.#writer.finished && this.#clientEnded) {
      this.close(true);
      return;
    }
    if (p.name !== 'relay' || !this.#upstreamEnded || !this.#writer.finished) return;
    const upDone = p.tries.forward !== null || p.leg.writer === null || p.leg.writer.finished;
    if (this.#clientEnded && upDone) this.close(true);
  }

  // ---- refusals and bookkeeping ----------------------------------------------------------

  /** One clean error to the client, then closing. */
  #refuse(code: GatewayErrorCode, rep?: number): void {
    this.#ctx.counters.refused(code);
    this.#writer.write(refusalBytes(this.#front ?? 'http', code, rep));
    this.#closing();
  }

  /** The answer is written: FIN, then wait (briefly) for the client to close. */
  #closing(): void {
    const p = this.#phase;
    if ('leg' in p) p.leg.destroy(false);
    this.#enter(['front', 'checking', 'request', 'admitting', 'dialing', 'forwarding'], CLOSING);
    this.#unstash();
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
    if (this.#unflushed === 0 || this.#accountId === null) return;
    this.#ctx.counters.bytes(this.#accountId, this.#unflushed);
    this.#unflushed = 0;
  }

  #releaseSlot(): void {
    if (this.#slotKey === null) return;
    this.#ctx.slots.release(this.#slotKey);
    this.#slotKey = null;
  }
}
