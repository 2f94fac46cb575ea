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
 * States:
 *   CONNECTING ─open─> HANDSHAKE ─ready─> (tunnel) RELAY
 *                 │                    └> (forward) RESPONSE ─head─> RELAY
 *                 └─(forward, http upstream)──────> RESPONSE
 *   any but RELAY ─error, EOF, bad answer─> FAILED (`failed` once, socket gone)
 *   RELAY: data / end / close go to the connection.
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
import { UpstreamHandshake, type Blame } from './codec/upstream-handshake';
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

export const LegState = Object.freeze({ CONNECTING: 0, HANDSHAKE: 1, RESPONSE: 2, RELAY: 3, FAILED: 4, CLOSED: 5 } as const);
export type LegStateValue = (typeof LegState)[keyof typeof LegState];


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
  state: LegStateValue = LegState.CONNECTING;
  readonly upstream: Upstream;
  readonly kind: LegKind;
  /** Set once open: what the connection writes to the upstream. */
  writer: Writer | null = null;
  socket: Sock | null = null;
  readonly #ev: LegEvents;
  readonly #target: { host: string; port: number };
  readonly #connect: LegConnect;
  #handshake: UpstreamHandshake | null = null;
  #response: HttpResponseParser | null = null;
  #sent = false;

  constructor(ev: LegEvents, upstream: Upstream, kind: LegKind, target: { host: string; port: number }, connect: LegConnect = bunConnect) {
    this.#ev = ev;
    this.#connect = connect;
    this.upstream = upstream;
    this.kind = kind;
    this.#target = target;
  }

  /** Starts the connect; failures arrive as `legFailed`. */
  dial(): void {
    this.#connect(this);
  }

  opened(s: LegSock): void {
    if (this.state !== LegState.CONNECTING) {
      s.terminate(); // given up on before it opened
      return;
    }
    s.setNoDelay(true);
    this.socket = s;
    this.writer = new Writer(s);
    if (this.kind === 'forward' && this.upstream.type === 'http') {
      this.#forward(Buffer.alloc(0));
      return;
    }
    this.state = LegState.HANDSHAKE;
    this.#handshake = new UpstreamHandshake(this.upstream, this.#target);
    this.#step(this.#handshake.start());
  }

  received(chunk: Buffer): void {
    switch (this.state) {
      case LegState.RELAY:
        this.#ev.legData(this, chunk);
        return;
      case LegState.HANDSHAKE:
        this.#step((this.#handshake as UpstreamHandshake).push(chunk));
        return;
      case LegState.RESPONSE:
        this.#responseBytes(chunk);
        return;
    }
  }

  ended(closed: boolean): void {
    if (this.state === LegState.RELAY) {
      if (closed) this.state = LegState.CLOSED;
      this.#ev.legEnded(this, closed);
      return;
    }
    if (this.state === LegState.HANDSHAKE) {
      this.#step((this.#handshake as UpstreamHandshake).end());
      return;
    }
    if (this.state === LegState.RESPONSE) {
      const p = this.#response as HttpResponseParser;
      p.end();
      this.#fail('upstream', `the upstream closed before its answer (${p.error ?? 'no head'})`, this.#sent);
      return;
    }
    if (this.state === LegState.CONNECTING) this.#fail('upstream', 'the connection closed while connecting', false);
  }

  errored(err: Error): void {
    if (this.state === LegState.RELAY) {
      this.state = LegState.CLOSED;
      this.#ev.legEnded(this, true);
      return;
    }
    const code = (err as { code?: unknown }).code;
    this.#fail('upstream', `socket error (${typeof code === 'string' ? code : err.message})`, this.#sent);
  }

  /** The connection's deadline for this try ran out. */
  timedOut(): void {
    if (this.state === LegState.RELAY || this.state >= LegState.FAILED) return;
    this.#fail('upstream', 'the upstream did not answer in time', this.#sent);
  }

  /** Close (idempotent); no event follows. `graceful`: a normal close (what was written still goes out), else a reset. */
  destroy(graceful = false): void {
    if (this.state !== LegState.FAILED) this.state = LegState.CLOSED;
    this.#handshake = null;
    this.#response = null;
    this.writer?.kill();
    const s = this.socket;
    this.socket = null;
    if (graceful) s?.end();
    else s?.terminate();
  }

  #step(step: ReturnType<UpstreamHandshake['push']>): void {
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
        this.#handshake = null;
        if (this.kind === 'tunnel') {
          this.state = LegState.RELAY;
          this.#ev.legReady(this, step.rest);
          return;
        }
        this.#forward(step.rest);
    }
  }

  /** Forward: the connection writes its request now (synchronously, in legReady); then the answer is read. */
  #forward(early: Buffer): void {
    this.state = LegState.RESPONSE;
    this.#response = new HttpResponseParser({ bodyCap: 0, headOnly: true });
    this.#ev.legReady(this, Buffer.alloc(0));
    this.#sent = true;
    if (early.length > 0 && this.state === LegState.RESPONSE) this.#responseBytes(early);
  }

  #responseBytes(chunk: Buffer): void {
    const p = this.#response as HttpResponseParser;
    const st = p.push(chunk);
    if (st === ResponseState.ERROR) {
      this.#fail('upstream', `invalid answer (${p.error})`, this.#sent);
      return;
    }
    if (st !== ResponseState.DONE) return;
    if (isUpstreamFailure(p.statusCode)) {
      // 407: our credentials for the upstream were refused; the request went nowhere
      this.#fail('upstream', `the upstream answered ${p.statusCode}`, false);
      return;
    }
    this.state = LegState.RELAY;
    this.#response = null;
    this.#ev.legResponse(this, p.statusCode, p.headers, p.rest ?? Buffer.alloc(0));
  }

  #fail(blame: Blame, reason: string, sent: boolean): void {
    this.#failWith({ blame, reason, rep: SOCKS5_REP.GENERAL_FAILURE, sent });
  }

  #failWith(f: LegFailure): void {
    if (this.state >= LegState.FAILED) return;
    this.destroy();
    this.state = LegState.FAILED;
    this.#ev.legFailed(this, f);
  }
}
