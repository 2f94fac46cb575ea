/**
 * Shapes of the socket driver (src/probe/exchange.ts): what one exchange is
 * asked to do (ExchangeSpec), what it reports (ExchangeOutcome) and its
 * explicit state enum with a human name per state for error messages.
 */
import type { ProxyAddress } from '../proxy/types';
import type { ProbeError } from './types';

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
