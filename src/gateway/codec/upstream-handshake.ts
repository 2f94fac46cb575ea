/**
 * The gateway's side of a tunnel through a chained upstream proxy (pure, no
 * I/O): the probe's client-side tunnel machine (src/probe/codec/tunnel-client.ts,
 * the one handshake of the house: the gateway frames SOCKS4/4a, SOCKS5 and
 * CONNECT exactly as the checker that found the proxy working did), its
 * failures mapped to whom they blame and to the SOCKS5 REP a SOCKS5 client
 * of the gateway gets (`blameOf`).
 *
 * `start()` gives the first bytes; then `push()` every chunk the upstream
 * sends until a step other than `need_more`: `send`, `ready` (`rest`: the
 * target's first bytes) or `fail` (repeated by every later push and end).
 *
 * Whom a failure blames:
 *   upstream  the proxy itself is at fault (garbage, EOF, our credentials
 *             refused: 407, SOCKS5 no acceptable method or auth failure,
 *             SOCKS4 92-93's identd / user-id codes, credentials that cannot
 *             be framed); the gateway reports it to its pool;
 *   target    a well-formed refusal to reach this target (CONNECT answered
 *             with another status, a SOCKS5 REP other than 0, SOCKS4 91), or
 *             a target the protocol cannot carry (an IPv6 target over SOCKS4):
 *             another upstream is tried, nothing is reported.
 * `rep` is the upstream's own REP when it gave one.
 */
import { TunnelClient, type TunnelFailure, type TunnelProxy } from '../../probe/codec/tunnel-client';
import { SOCKS5_REP } from './socks5-server';

export type Blame = 'upstream' | 'target';

export type HandshakeStep =
  | { kind: 'need_more' }
  | { kind: 'send'; bytes: Buffer }
  | { kind: 'ready'; rest: Buffer }
  | { kind: 'fail'; blame: Blame; reason: string; rep: number };

export type HandshakeUpstream = TunnelProxy;

const SOCKS4_REJECTED = 91;

/** Whom a tunnel failure blames, and the SOCKS5 REP for it. */
export function blameOf(f: TunnelFailure): { blame: Blame; rep: number } {
  switch (f.kind) {
    case 'status':
      return f.detail === 407 ? upstream() : { blame: 'target', rep: SOCKS5_REP.HOST_UNREACHABLE };
    case 'unencodable':
      // the target cannot be framed (SOCKS4: IPv6; a name over 255 bytes); credentials that cannot are the upstream's
      return f.stage === 'socks5_auth' ? upstream() : { blame: 'target', rep: SOCKS5_REP.ADDRESS_TYPE_NOT_SUPPORTED };
    case 'socks_rejected':
      if (f.stage === 'socks5_reply') return { blame: 'target', rep: f.detail >= 0 ? f.detail : SOCKS5_REP.GENERAL_FAILURE };
      if (f.stage === 'socks4_reply' && f.detail === SOCKS4_REJECTED) return { blame: 'target', rep: SOCKS5_REP.GENERAL_FAILURE };
      return upstream();
    default:
      return upstream();
  }
}

function upstream(): { blame: Blame; rep: number } {
  return { blame: 'upstream', rep: SOCKS5_REP.GENERAL_FAILURE };
}

export class UpstreamHandshake {
  readonly #tunnel: TunnelClient;

  constructor(upstream: HandshakeUpstream, target: { host: string; port: number }) {
    this.#tunnel = new TunnelClient(upstream, target);
  }

  /** The first bytes to send (`send`), or `fail` when this upstream cannot carry the target. */
  start(): HandshakeStep {
    return this.#map(this.#tunnel.start());
  }

  push(chunk: Buffer): HandshakeStep {
    return this.#map(this.#tunnel.push(chunk));
  }

  /** The upstream closed before the handshake ended. */
  end(): HandshakeStep {
    return this.#map(this.#tunnel.end());
  }

  #map(step: ReturnType<TunnelClient['push']>): HandshakeStep {
    switch (step.kind) {
      case 'fail': {
        const b = blameOf(step.failure);
        return { kind: 'fail', blame: b.blame, reason: step.failure.message, rep: b.rep };
      }
      case 'ready':
        return { kind: 'ready', rest: step.rest };
      default:
        return step;
    }
  }
}
