/**
 * The exchange's states and the pure decisions on them: which state follows
 * the TCP connect and each SOCKS reply, and which failure (code + message)
 * each event means in each state. No I/O, no clock: the socket driver (exchange.ts) feeds in what
 * happened and does what comes out. Failures only allocate the error object
 * the result carries anyway; the working path allocates nothing here.
 *
 * States (ExchangeState), in the order an exchange moves through them:
 *   IDLE         created, not started
 *   RESOLVING    proxy hostname -> address (DNS cache); skipped for IP literals
 *   CONNECTING   TCP connect to the proxy (SSRF guard checked before)
 *   HTTP_CONNECT CONNECT sent to an HTTP proxy, waiting for its answer head
 *   SOCKS4_REPLY  SOCKS4/4a CONNECT sent, waiting for the 8-byte reply
 *   SOCKS5_METHOD SOCKS5 greeting sent, waiting for the chosen method
 *   SOCKS5_AUTH   username/password sent, waiting for the auth reply
 *   SOCKS5_REPLY  SOCKS5 CONNECT sent, waiting for its reply
 *   TLS          TLS handshake with the target through the tunnel
 *   RESPONSE     GET sent, parsing the answer (HttpResponseParser)
 *   DONE         finished: outcome delivered once, timer cleared, link destroyed
 *
 * Transitions:
 *   IDLE -> RESOLVING -> CONNECTING            (IP literal: IDLE -> CONNECTING)
 *   CONNECTING -> RESPONSE                     (plain HTTP proxy, or direct)
 *   CONNECTING -> TLS                          (direct to an https target)
 *   CONNECTING -> HTTP_CONNECT -> TLS          (HTTP proxy, https target)
 *   CONNECTING -> SOCKS4_REPLY -> tunnel
 *   CONNECTING -> SOCKS5_METHOD [-> SOCKS5_AUTH] -> SOCKS5_REPLY -> tunnel
 *   tunnel = TLS (https target) or RESPONSE (http target)
 *   TLS -> RESPONSE -> DONE
 *   any state -> DONE on a failure (socket error, close, deadline, bad bytes)
 *
 * The handshake states (HTTP_CONNECT .. SOCKS5_REPLY) are the stages of the
 * client-side tunnel machine (../codec/tunnel-client.ts, shared with the
 * gateway), which the exchange drives; `stateOfTunnelStage` names the stage
 * it waits in and `tunnelError` maps its failures to probe error codes.
 *
 * The numeric order matters: every state <= CONNECTING is "not connected yet"
 * (connect_timeout / connect_failed rather than timeout / bad_response).
 */
import { LOCAL_EXHAUSTION_CODES, type ProbeError, type ProbeErrorCode } from '../types';
import type { ResponseErrorCode } from '../codec/http-response';
import type { Via } from './exchange-types';
import { SOCKS5_USER_PASS, type SocksReply } from '../codec/socks-codec';
import { readTunnelReply, type SocksStage, type TunnelFailure, type TunnelStage } from '../codec/tunnel-client';

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
type State = ExchangeStateValue;

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

/** The one shape of a failure (one hidden class for every probe error). */
export function probeError(code: ProbeErrorCode, message: string): ProbeError {
  return { code, message };
}

// ---- transitions ----

/** The first state once TCP is up: the handshake the proxy speaks, or straight to TLS / the request. */
export function stateAfterConnect(via: Via, tls: boolean): State {
  switch (via) {
    case 'direct':
      return tls ? ExchangeState.TLS : ExchangeState.RESPONSE;
    case 'http':
      return tls ? ExchangeState.HTTP_CONNECT : ExchangeState.RESPONSE;
    case 'socks4':
      return ExchangeState.SOCKS4_REPLY;
    case 'socks5':
      return ExchangeState.SOCKS5_METHOD;
  }
}

/** The exchange's state while the tunnel machine (../codec/tunnel-client.ts) waits in `stage` (for the messages and the deadline's code). */
export function stateOfTunnelStage(stage: TunnelStage): State {
  switch (stage) {
    case 'http_connect':
      return ExchangeState.HTTP_CONNECT;
    case 'socks4_reply':
      return ExchangeState.SOCKS4_REPLY;
    case 'socks5_method':
      return ExchangeState.SOCKS5_METHOD;
    case 'socks5_auth':
      return ExchangeState.SOCKS5_AUTH;
    case 'start':
      return ExchangeState.CONNECTING;
    default:
      return ExchangeState.SOCKS5_REPLY;
  }
}

const SOCKS_STAGES: Partial<Record<State, SocksStage>> = {
  [ExchangeState.SOCKS4_REPLY]: 'socks4_reply',
  [ExchangeState.SOCKS5_METHOD]: 'socks5_method',
  [ExchangeState.SOCKS5_AUTH]: 'socks5_auth',
};

/**
 * The reply the exchange waits for in a SOCKS state, parsed from what came so
 * far: the tunnel machine's reader under the exchange's state names (the
 * exchange itself reads replies through the machine; this is the state table's view).
 */
export function readSocksReply(state: State, buf: Buffer, withAuth: boolean): SocksReply {
  return readTunnelReply(SOCKS_STAGES[state] ?? 'socks5_reply', buf, withAuth);
}

/**
 * The state after a complete, successful SOCKS reply in `state`: `value` is
 * the reply's value (the chosen method in SOCKS5_METHOD), `extraBytes`
 * whether bytes followed the reply, `tls` whether the target is https.
 * SOCKS5_AUTH / SOCKS5_REPLY: send credentials / CONNECT next; TLS or
 * RESPONSE: the tunnel is up (bytes after the reply are the start of the
 * HTTP answer). DONE: fail with socksExtraBytesError(state).
 */
export function stateAfterSocksReply(state: State, value: number, extraBytes: boolean, tls: boolean): State {
  if (state === ExchangeState.SOCKS5_METHOD || state === ExchangeState.SOCKS5_AUTH) {
    if (extraBytes) return ExchangeState.DONE;
    return state === ExchangeState.SOCKS5_METHOD && value === SOCKS5_USER_PASS ? ExchangeState.SOCKS5_AUTH : ExchangeState.SOCKS5_REPLY;
  }
  if (tls) return extraBytes ? ExchangeState.DONE : ExchangeState.TLS;
  return ExchangeState.RESPONSE;
}

/** Why stateAfterSocksReply said DONE in `state`: bytes the SOCKS server should not have sent yet. */
export function socksExtraBytesError(state: State): ProbeError {
  return state === ExchangeState.SOCKS5_METHOD || state === ExchangeState.SOCKS5_AUTH
    ? probeError('bad_response', 'SOCKS5 server sent unexpected bytes')
    : probeError('bad_response', 'SOCKS server sent data before the TLS handshake');
}

// ---- failures per event and state ----

/**
 * The probe error for a failure of the tunnel machine (../codec/tunnel-client.ts):
 * the reply parsers' codes as they are; an unframable target `socks_rejected`,
 * unframable credentials `auth_required`; a CONNECT status as connectAnswerError.
 */
export function tunnelError(f: TunnelFailure): ProbeError {
  switch (f.kind) {
    case 'invalid_answer':
    case 'bad_response':
      return probeError('bad_response', f.message);
    case 'status':
      return connectAnswerError(f.detail, false) ?? probeError('bad_response', f.message);
    case 'socks_rejected':
    case 'auth_required':
      return probeError(f.kind, f.message);
    case 'unencodable':
      return probeError(f.stage === 'socks5_auth' ? 'auth_required' : 'socks_rejected', f.message);
    case 'early_bytes':
      return socksExtraBytesError(stateOfTunnelStage(f.stage));
    case 'closed':
      return closedError(stateOfTunnelStage(f.stage), null);
  }
}

/** The proxy's complete answer to CONNECT: null when the tunnel is up (go to TLS), else the failure. */
export function connectAnswerError(statusCode: number, earlyData: boolean): ProbeError | null {
  if (statusCode === 407) return probeError('auth_required', 'proxy answered CONNECT with 407 Proxy Authentication Required');
  if (statusCode < 200 || statusCode > 299) return probeError('http_status', `proxy answered CONNECT with ${statusCode}`);
  if (earlyData) return probeError('bad_response', 'proxy sent data before the TLS handshake');
  return null;
}

/** EOF or close from the peer in `state` (not DONE); `parserError` is the response parser's verdict at EOF (RESPONSE only). */
export function closedError(state: State, parserError: ResponseErrorCode | null): ProbeError {
  switch (state) {
    case ExchangeState.RESPONSE:
      if (parserError === 'empty') return probeError('connection_closed', 'connection closed without an HTTP response');
      if (parserError === 'truncated') return probeError('connection_closed', 'connection closed in the middle of the HTTP response');
      return probeError('bad_response', `invalid HTTP response (${parserError})`);
    case ExchangeState.CONNECTING:
      return probeError('connect_failed', 'connection closed while connecting');
    case ExchangeState.TLS:
      return probeError('tls_failed', 'connection closed during the TLS handshake');
    default:
      return probeError('connection_closed', `connection closed while waiting for ${STATE_NAMES[state]}`);
  }
}

/** A socket error in `state` (not DONE); connect errors carry `code` (ECONNREFUSED, ETIMEDOUT, ...). */
export function socketError(state: State, err: Error): ProbeError {
  const code = (err as { code?: unknown }).code;
  const why = typeof code === 'string' ? code : err.message;
  switch (state) {
    case ExchangeState.CONNECTING:
      if (typeof code === 'string' && LOCAL_EXHAUSTION_CODES.has(code)) return overloaded(code);
      if (code === 'ECONNREFUSED') return probeError('connect_refused', 'connection refused');
      if (code === 'ETIMEDOUT') return probeError('connect_timeout', 'connect timed out');
      return probeError('connect_failed', `connect failed (${why})`);
    case ExchangeState.TLS:
      return probeError('tls_failed', `TLS handshake failed (${why})`);
    default:
      return probeError('connection_closed', `connection lost while waiting for ${STATE_NAMES[state]} (${why})`);
  }
}

/** The budget of `timeoutMs` ran out in `state` (not DONE). */
export function deadlineError(state: State, timeoutMs: number): ProbeError {
  return state <= ExchangeState.CONNECTING
    ? probeError('connect_timeout', `not connected within ${timeoutMs} ms (${STATE_NAMES[state]})`)
    : probeError('timeout', `no complete answer within ${timeoutMs} ms (waiting for ${STATE_NAMES[state]})`);
}

/** An unexpected exception in the exchange's own code, described by `why` (its `code` when it has one), in `state`. */
export function internalError(state: State, why: string, code?: unknown): ProbeError {
  // creating the socket itself can throw EMFILE: ours, not the proxy's
  if (typeof code === 'string' && LOCAL_EXHAUSTION_CODES.has(code)) return overloaded(code);
  return state <= ExchangeState.CONNECTING
    ? probeError('connect_failed', `cannot connect: ${why}`)
    : probeError('bad_response', `internal error: ${why}`);
}

/**
 * This process ran out of `code` (EMFILE, ...): the proxy was not tried. The
 * message names what changes it: fewer probes at once (MAX_IN_FLIGHT; an
 * agent's AGENT_SLOTS), and for file descriptors the process's open-file limit.
 */
function overloaded(code: string): ProbeError {
  const fewer = 'MAX_IN_FLIGHT (AGENT_SLOTS on a region agent)';
  const fix = code === 'EMFILE' || code === 'ENFILE' ? `raise the open-file limit (ulimit -n, systemd LimitNOFILE) or lower ${fewer}` : `lower ${fewer}`;
  return probeError('checker_overloaded', `the checker ran out of local resources (${code}); the proxy was not tried (${fix})`);
}
