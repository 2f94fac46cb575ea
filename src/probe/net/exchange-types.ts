/**
 * Shapes of the exchange (src/probe/net/exchange.ts): what one exchange is asked
 * to do (ExchangeSpec), what it reports (ExchangeOutcome), its explicit state
 * enum with a human name per state for error messages, and the contract
 * between the exchange's state machine and a socket link (Link / LinkEvents,
 * implemented by src/probe/net/bun-socket.ts and src/probe/net/node-socket.ts).
 */
import type { ProxyAddress } from '../../proxy/types';
import type { ProbeError } from '../types';

export const ExchangeState = Object.freeze({
  IDLE: 0,
  RESOLVING: 1,
  CONNECTING: 2,
  HTTP_CONNECT: 3,
  SOCKS4_REPLY: 4,
  SOCKS5_METHOD: 5,
  SOCKS5_AUTH: 6,
  SOCKS5_REPLY: 7,
  TLS: 8,
  RESPONSE: 9,
  DONE: 10,
} as const);
export type ExchangeStateValue = (typeof ExchangeState)[keyof typeof ExchangeState];

/** What the exchange is waiting for in each state (for messages). */
export const STATE_NAMES: readonly string[] = Object.freeze([
  'start',
  'DNS lookup',
  'TCP connect',
  'the answer to CONNECT',
  'the SOCKS4 reply',
  'the SOCKS5 method reply',
  'the SOCKS5 auth reply',
  'the SOCKS5 CONNECT reply',
  'the TLS handshake',
  'the HTTP response',
  'done',
]);

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
  /** false: refuse to connect to a blocked (private, loopback, ...) address */
  allowPrivateTargets: boolean;
  /** extra CA certificates (PEM) trusted for TLS targets; default: system roots */
  tlsCa?: string;
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

/** One connection as the exchange drives it. */
export interface Link {
  /** Send bytes; strings are ASCII (requests are built that way). */
  write(data: string | Buffer): void;
  /** Start TLS to `host` over the connected socket; then `secured` or `errored`. */
  startTls(host: string, ca: string | undefined): void;
  /** Close at once (idempotent); no event is delivered afterwards that matters. */
  destroy(): void;
}

/** Opens a link to ip:port (an IP literal); events go to `ev`. May throw (bad port). */
export type Dial = (ev: LinkEvents, ip: string, port: number) => Link;
