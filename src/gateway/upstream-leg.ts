/**
 * One try of one upstream for one client connection (a socket driver over
 * codec/upstream-handshake.ts and the probe's response parser): dial the
 * upstream (Bun.connect), bring up what the client asked for, then carry
 * the upstream's side of the relay.
 *
 * Two kinds:
 *   tunnel   the client wants a raw tunnel (CONNECT, SOCKS5): the upstream's
 *            own handshake (CONNECT / SOCKS4 / SOCKS5 with its credentials),
 *            then `ready`.
 *   forward  the client sent an absolute-form request: an HTTP upstream gets
 *            it at once (`ready` on connect: the connection writes the
 *            absolute-form head), a SOCKS upstream after its handshake (the
 *            origin-form head goes through the tunnel); then the answer's
 *            head is read here (`response`), the body relayed as it comes.
 *
 * Phases (`phase`, LEG_PHASES below):
 *   connecting ─open─> handshake ─ready─> (tunnel) relay
 *                 │                    └> (forward) response ─head─> relay
 *                 └─(forward, http upstream)──────> response
 *   connecting / handshake / response ─error, EOF, bad answer, deadline─> failed
 *     (`legFailed` once, the socket gone)
 *   relay: data / end / close go to the connection; ─close─> closed
 *   any but failed ─destroy─> closed (no event follows)
 * A failure says whether the request may have reached the target
 * (`sent`: a forward request written and not refused with 407), so the
 * connection retries only what is safe to send again.
 *
 * Bun.connect hands the socket out only once it is open, so a connect the
 * connection gave up on (its deadline) is closed when it opens; until then
 * it costs a descriptor (the kernel gives up on a black-holed SYN within
 * about two minutes).
 */
import type { SocketHandler } from 'bun';
import { HttpResponseParser, ResponseState } from '../probe/codec/http-response';
import { isUpstreamFailure } from './codec/response-head';
import { SOCKS5_REP } from './codec/socks5-server';
import { UpstreamHandshake, type Blame, type HandshakeStep } from './codec/upstream-handshake';
import { transition, transitionTable } from '../state-machine';
import type { Upstream } from './upstream-choice';
import { Writer, type Sock } from './writer';

export type LegKind = 'tunnel' | 'forward';

export interface LegFailure {
  blame: Blame;
  reason: string;
  /** The SOCKS5 REP a SOCKS client should get for it. */
  rep: number;
  /** A forward request reached the upstream (it may have reached the target). */
  sent: boolean;
}

/** What a leg tells its client connection. */
export interface LegEvents {
  /** Tunnel: up (`rest`: the target's first bytes). Forward: write the request now. */
  legReady(leg: UpstreamLeg, rest: Buffer): void;
  /** Forward: the answer's head (`rest`: the body's first bytes). */
  legResponse(leg: UpstreamLeg, status: number, headers: [string, string][], rest: Buffer): void;
  legFailed(leg: UpstreamLeg, f: LegFailure): void;
  /** RELAY: bytes from the upstream. */
  legData(leg: UpstreamLeg, chunk: Buffer): void;
  /** RELAY: the upstream sent FIN (`closed` true: the socket is gone altogether). */
  legEnded(leg: UpstreamLeg, closed: boolean): void;
}

/**
 * The leg's phases, each with what it needs (moved through src/state-machine.ts):
 * `sent` is true exactly in `response` (the forwarded request was written).
 */
export type LegPhase =
  | { name: 'connecting' }
  | { name: 'handshake'; handshake: UpstreamHandshake }
  | { name: 'response'; parser: HttpResponseParser }
  | { name: 'relay' }
  | { name: 'failed' }
  | { name: 'closed' };
export type LegPhaseName = LegPhase['name'];

export const LEG_PHASES = transitionTable<LegPhaseName>({
  connecting: ['handshake', 'response', 'failed', 'closed'],
  handshake: ['relay', 'response', 'failed', 'closed'],
  response: ['relay', 'failed', 'closed'],
  relay: ['closed'],
  failed: [],
  closed: [],
});

const RELAY: LegPhase = Object.freeze({ name: 'relay' });
const FAILED: LegPhase = Object.freeze({ name: 'failed' });
const CLOSED: LegPhase = Object.freeze({ name: 'closed' });
const EMPTY = Buffer.alloc(0);

/** The upstream's socket as a leg drives it (a Bun socket; a fake in unit tests). */
export type LegSock = Sock & { setNoDelay(on?: boolean): unknown };

/** Starts the connect to `leg.upstream`: then `opened`, or `errored` / `ended` (default: Bun.connect). */
export type LegConnect = (leg: UpstreamLeg) => void;

const HANDLERS: SocketHandler<UpstreamLeg> = {
  open(s) {
    s.data.opened(s);
  },
  data(s, chunk) {
    s.data.received(chunk);
  },
  drain(s) {
    s.data.writer?.drain();
  },
  end(s) {
    s.data.ended(false);
  },
  close(s) {
    s.data.ended(true);
  },
  error(s, err) {
    s.data.errored(err);
  },
  connectError(s, err) {
    s.data.errored(err);
  },
};

/** Bun.connect with the leg's handlers; a connect that throws at once fails the leg on the next microtask. */
export const bunConnect: LegConnect = (leg) => {
  try {
    Bun.connect<UpstreamLeg>({ hostname: leg.upstream.host, port: leg.upstream.port, socket: HANDLERS, data: leg, allowHalfOpen: true }).catch(() => {});
  } catch (e) {
    queueMicrotask(() => leg.errored(e as Error));
  }
};

export class UpstreamLeg {
  readonly upstream: Upstream;
  readonly kind: LegKind;
  /** Set once open: what the connection writes to the upstream. */
  writer: Writer | null = null;
  socket: Sock | null = null;
  readonly #ev: LegEvents;
  readonly #target: { host: string; port: number };
  readonly #connect: LegConnect;
  #phase: LegPhase = { name: 'connecting' };

  constructor(ev: LegEvents, upstream: Upstream, kind: LegKind, target: { host: string; port: number }, connect: LegConnect = bunConnect) {
    this.#ev = ev;
    this.#connect = connect;
    this.upstream = upstream;
    this.kind = kind;
    this.#target = target;
  }

  get phase(): LegPhaseName {
    return this.#phase.name;
  }

  /** Starts the connect; failures arrive as `legFailed`. */
  dial(): void {
    this.#connect(this);
  }

  opened(s: LegSock): void {
    if (this.#phase.name !== 'connecting') {
      s.terminate(); // given up on before it opened
      return;
    }
    s.setNoDelay(true);
    this.socket = s;
    this.writer = new Writer(s);
    if (this.kind === 'forward' && this.upstream.type === 'http') {
      this.#forward(EMPTY);
      return;
    }
    const handshake = new UpstreamHandshake(this.upstream, this.#target);
    this.#enter('connecting', { name: 'handshake', handshake });
    this.#step(handshake.start());
  }

  received(chunk: Buffer): void {
    const p = this.#phase;
    switch (p.name) {
      case 'relay':
        this.#ev.legData(this, chunk);
        return;
      case 'handshake':
        this.#step(p.handshake.push(chunk));
        return;
      case 'response':
        this.#responseBytes(p.parser, chunk);
        return;
    }
  }

  ended(closed: boolean): void {
    const p = this.#phase;
    switch (p.name) {
      case 'relay':
        if (closed) this.#enter('relay', CLOSED);
        this.#ev.legEnded(this, closed);
        return;
      case 'handshake':
        this.#step(p.handshake.end());
        return;
      case 'response':
        p.parser.end();
        this.#fail(`the upstream closed before its answer (${p.parser.error ?? 'no head'})`);
        return;
      case 'connecting':
        this.#fail('the connection closed while connecting');
    }
  }

  errored(err: Error): void {
    if (this.#phase.name === 'relay') {
      this.#enter('relay', CLOSED);
      this.#ev.legEnded(this, true);
      return;
    }
    const code = (err as { code?: unknown }).code;
    this.#fail(`socket error (${typeof code === 'string' ? code : err.message})`);
  }

  /** The connection's deadline for this try ran out. */
  timedOut(): void {
    if (this.#phase.name === 'relay') return;
    this.#fail('the upstream did not answer in time');
  }

  /** Close (idempotent); no event follows. `graceful`: a normal close (what was written still goes out), else a reset. */
  destroy(graceful = false): void {
    const name = this.#phase.name;
    if (name !== 'failed' && name !== 'closed') this.#enter(name, CLOSED);
    this.writer?.kill();
    const s = this.socket;
    this.socket = null;
    if (graceful) s?.end();
    else s?.terminate();
  }

  #enter(from: LegPhaseName, next: LegPhase): void {
    transition('gateway upstream leg', LEG_PHASES, this.#phase.name, from, next.name);
    this.#phase = next;
  }

  #step(step: HandshakeStep): void {
    switch (step.kind) {
      case 'need_more':
        return;
      case 'send':
        this.writer?.write(step.bytes);
        return;
      case 'fail':
        this.#failWith({ blame: step.blame, reason: step.reason, rep: step.rep, sent: false });
        return;
      case 'ready':
        if (this.kind === 'tunnel') {
          this.#enter('handshake', RELAY);
          this.#ev.legReady(this, step.rest);
          return;
        }
        this.#forward(step.rest);
    }
  }

  /** Forward: the connection writes its request now (synchronously, in legReady); then the answer is read. */
  #forward(early: Buffer): void {
    const parser = new HttpResponseParser({ bodyCap: 0, headOnly: true });
    this.#enter(this.#phase.name, { name: 'response', parser });
    this.#ev.legReady(this, EMPTY);
    if (early.length > 0 && this.#phase.name === 'response') this.#responseBytes(parser, early);
  }

  #responseBytes(p: HttpResponseParser, chunk: Buffer): void {
    const st = p.push(chunk);
    if (st === ResponseState.ERROR) {
      this.#fail(`invalid answer (${p.error})`);
      return;
    }
    if (st !== ResponseState.DONE) return;
    if (isUpstreamFailure(p.statusCode)) {
      // 407: our credentials for the upstream were refused; the request went nowhere
      this.#failWith({ blame: 'upstream', reason: `the upstream answered ${p.statusCode}`, rep: SOCKS5_REP.GENERAL_FAILURE, sent: false });
      return;
    }
    this.#enter('response', RELAY);
    this.#ev.legResponse(this, p.statusCode, p.headers, p.rest ?? EMPTY);
  }

  /** The upstream's own failure; `sent` when a forwarded request was written (the phase is `response`). */
  #fail(reason: string): void {
    this.#failWith({ blame: 'upstream', reason, rep: SOCKS5_REP.GENERAL_FAILURE, sent: this.#phase.name === 'response' });
  }

  #failWith(f: LegFailure): void {
    const name = this.#phase.name;
    if (name === 'failed' || name === 'closed' || name === 'relay') return;
    this.#enter(name, FAILED);
    this.destroy();
    this.#ev.legFailed(this, f);
  }
}
