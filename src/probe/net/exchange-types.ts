/**
 * Shapes of the exchange (src/probe/net/exchange.ts): what one exchange is asked
 * to do (ExchangeSpec), what it reports (ExchangeOutcome), and the contract
 * between the exchange's state machine and a socket link (Link / LinkEvents,
 * implemented by src/probe/net/bun-socket.ts and src/probe/net/node-socket.ts).
 * The state enum and its transitions are src/probe/net/exchange-states.ts.
 */
import type { ProxyAddress } from '../../proxy/types';
import type { PresentedCertificate, ProbeError } from '../types';

export type Via = 'direct' | 'http' | 'socks4' | 'socks5';

export interface ExchangeSpec {
  via: Via;
  /** the proxy (for 'direct': ignored, the target is connected to) */
  proxy: ProxyAddress;
  /** target host (IP literal without brackets, or hostname) and port */
  host: string;
  port: number;
  tls: boolean;
  /** path + query starting with "/" */
  pathWithQuery: string;
  timeoutMs: number;
  bodyCap: number;
  /** The body as it arrives instead of kept (within bodyCap); true = enough read, the answer is complete (codec/http-response.ts). */
  onBody?: ((chunk: Buffer) => boolean) | undefined;
  /** false: refuse to connect to a blocked (private, loopback, ...) address */
  allowPrivateTargets: boolean;
  /** extra CA certificates (PEM) trusted for TLS targets; default: system roots */
  tlsCa?: string;
  /**
   * Pin the target's certificate instead of verifying a CA chain: TLS is
   * accepted whatever signed it, then the presented certificate's SHA-256
   * fingerprint (codec/cert-pin.ts form) must be this one; another is
   * `tls_intercepted` with that certificate's subject and fingerprint.
   */
  tlsPin?: string;
  /** pinned TLS: a session to offer when this thread keeps none for the target (TlsJudgeTarget.session) */
  tlsSession?: Uint8Array;
  /** 'direct' only: connect to this address instead of resolving `host` (calibration per family) */
  connectAddress?: string;
}

export interface ExchangeOutcome {
  /** null when a complete HTTP answer came back (whatever its status) */
  error: ProbeError | null;
  statusCode: number | null;
  headers: [string, string][];
  body: Buffer | null;
  bodyTruncated: boolean;
  /** ms from connect start (or from the start when no connect happened) to the end */
  elapsedMs: number;
  /** the address connected to (null when none) */
  connectedTo: string | null;
  /**
   * our own end of that connection (the socket's local address as the OS
   * reports it, e.g. `::1`, `10.0.0.5`, maybe `::ffff:a.b.c.d`): what the
   * proxy, or the target when direct, saw of us unless a NAT was between.
   * Null when no connection came up or the runtime did not tell.
   */
  localAddress: string | null;
}

/**
 * What a link delivers to its exchange. The exchange guards every event with
 * its own state, so a link may deliver late or duplicate events (e.g. `ended`
 * from both FIN and close) without harm.
 */
export interface LinkEvents {
  /** TCP connection established */
  connected(): void;
  /** bytes from the peer (plain, or decrypted once TLS is up) */
  data(chunk: Buffer): void;
  /** FIN or close from the peer */
  ended(): void;
  /** a socket error (connect errors carry `code`, e.g. ECONNREFUSED) */
  errored(err: Error): void;
  /** TLS handshake done (links that support startTls) */
  secured(): void;
  /** an exception thrown by our own event handling */
  abort(e: unknown): void;
}

/** How a link starts TLS over its connected socket (Link.startTls). */
export interface TlsStart {
  /** the target's name (SNI when not an IP literal; verified against when not pinned) */
  host: string;
  /** extra CA certificates (PEM) trusted when not pinned; default: system roots */
  ca: string | undefined;
  /**
   * Accept any certificate: the exchange compares the peer's fingerprint
   * itself after `secured` (or trusts a resumed session: Link.sessionReused)
   * instead of verifying a chain against `ca` / the system roots. Pinned
   * TLS is TLS 1.2 at most: a resumed TLS 1.2 handshake has no key exchange
   * (TLS 1.3 resumption still does one), about half the CPU on both sides
   * (bench/RESULTS.md "The https check"); the pin's proof is the same (the
   * peer proves the session's master secret, which only the server that
   * issued it can read from its ticket).
   */
  pinned: boolean;
  /** A TLS session (Link.tlsSession of an earlier link to the same target) to offer for resumption. */
  session?: Buffer | undefined;
}

/** One connection as the exchange drives it. */
export interface Link {
  /** Send bytes; strings are ASCII (requests are built that way). */
  write(data: string | Buffer): void;
  /** Start TLS over the connected socket; then `secured` or `errored`. */
  startTls(t: TlsStart): void;
  /** After `secured`: the certificate the peer presented (null when none or unknown). */
  peerCertificate(): PresentedCertificate | null;
  /** After `secured`: whether the peer accepted the session offered (TlsStart.session): no certificate was exchanged. */
  sessionReused(): boolean;
  /** The latest TLS session the peer issued on this link (a TLS 1.3 ticket arrives after the handshake), or null. */
  tlsSession(): Buffer | null;
  /** Close at once (idempotent); no event is delivered afterwards that matters. */
  destroy(): void;
  /** The socket's own address; asked once, in or after `connected`. Null when unknown. */
  localAddress(): string | null;
}

/** Opens a link to ip:port (an IP literal); events go to `ev`. May throw (bad port). */
export type Dial = (ev: LinkEvents, ip: string, port: number) => Link;
