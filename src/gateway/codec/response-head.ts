/**
 * The response heads the gateway itself sends to an HTTP client (pure), and
 * the head of an upstream's response as it is passed on.
 *
 * - 407 with `Proxy-Authenticate: Basic realm="proxycheck gateway"`: no, or
 *   wrong, credentials (a wrong key, another account's pool, a username the
 *   grammar refuses: the client is told nothing more).
 * - Errors of the gateway: a status, `X-Gateway-Error: <code>` and a short
 *   fixed text body (GATEWAY_ERRORS; one with a setting behind it names it);
 *   never an internal detail. A client address blocked by the failed-attempt
 *   throttle gets 429 `auth_blocked` with Retry-After (before its credentials
 *   are looked at).
 * - The successful CONNECT answer: `200 Connection established` with
 *   `X-Gateway-Upstream: <host>:<port>`.
 * - An upstream's response head (relayedResponseHead): its status, its
 *   end-to-end headers (headers.ts), `X-Gateway-Upstream`, `Connection: close`.
 *   The body follows byte for byte until the upstream closes.
 * Every head the gateway makes itself closes the connection.
 */
import { authority } from '../../probe/codec/http-request';
import { ALLOW_PRIVATE_TARGETS } from '../../probe/codec/ssrf';
import { endToEnd, headerLines } from './headers';

export const GATEWAY_REALM = 'proxycheck gateway';

/** X-Gateway-Error codes, their statuses and fixed texts. */
export const GATEWAY_ERRORS = Object.freeze({
  bad_request: { status: 400, text: 'The request is not a valid HTTP proxy request' },
  blocked_target: { status: 403, text: `The target is a private, loopback or reserved address; refused unless the server sets ${ALLOW_PRIVATE_TARGETS}=true` },
  too_many_connections: { status: 429, text: 'Too many open connections for this key (the server allows GATEWAY_MAX_CONNECTIONS at once)' },
  auth_blocked: { status: 429, text: 'Too many failed authentications from this address; try again later' },
  unsupported: { status: 501, text: 'Only absolute-form http:// requests and CONNECT are supported' },
  dns_failed: { status: 502, text: 'The target host name does not resolve' },
  no_upstream: { status: 502, text: 'No working proxy of the pool matches' },
  upstream_failed: { status: 502, text: 'The upstream proxies failed' },
  target_unreachable: { status: 502, text: 'The upstream proxies could not reach the target' },
  unavailable: { status: 503, text: 'The gateway cannot serve this request now; try again' },
} as const);
export type GatewayErrorCode = keyof typeof GATEWAY_ERRORS;

const REASONS: Readonly<Record<number, string>> = Object.freeze({
  200: 'OK',
  201: 'Created',
  204: 'No Content',
  206: 'Partial Content',
  301: 'Moved Permanently',
  302: 'Found',
  304: 'Not Modified',
  307: 'Temporary Redirect',
  308: 'Permanent Redirect',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  407: 'Proxy Authentication Required',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
});

function statusLine(status: number): string {
  return `HTTP/1.1 ${status} ${REASONS[status] ?? ''}\r\n`;
}

function withBody(status: number, headers: string, text: string): string {
  const body = `${text}\n`;
  return `${statusLine(status)}${headers}Content-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

export function proxyAuthRequired(): string {
  return withBody(407, `Proxy-Authenticate: Basic realm="${GATEWAY_REALM}"\r\n`, 'Proxy authentication required: user pool-<id>, password your API key');
}

/** An error of the gateway; `retryAfterS` adds Retry-After (auth_blocked). */
export function gatewayError(code: GatewayErrorCode, retryAfterS?: number): string {
  const e = GATEWAY_ERRORS[code];
  const retry = retryAfterS === undefined ? '' : `Retry-After: ${Math.max(1, Math.ceil(retryAfterS))}\r\n`;
  return withBody(e.status, `X-Gateway-Error: ${code}\r\n${retry}`, e.text);
}

export const CONTINUE_HEAD = 'HTTP/1.1 100 Continue\r\n\r\n';

export function upstreamName(upstream: { host: string; port: number }): string {
  return authority(upstream.host, upstream.port, null);
}

export function connectEstablished(upstream: { host: string; port: number }): string {
  return `HTTP/1.1 200 Connection established\r\nX-Gateway-Upstream: ${upstreamName(upstream)}\r\n\r\n`;
}

/** An upstream's response head as the client gets it (no body; latin1). */
export function relayedResponseHead(status: number, headers: readonly [string, string][], upstream: { host: string; port: number }): string {
  const kept = endToEnd(headers, ['x-gateway-upstream']);
  return `${statusLine(status)}${headerLines(kept)}X-Gateway-Upstream: ${upstreamName(upstream)}\r\nConnection: close\r\n\r\n`;
}

/**
 * Whether an upstream's answer to a forwarded request means the upstream,
 * not the target, failed, so another upstream is tried: a 407 (our
 * credentials for the upstream were refused: the client must not see a 407
 * it did not cause, and the request went no further). The answer to CONNECT
 * is judged by codec/upstream-handshake.ts.
 */
export function isUpstreamFailure(status: number): boolean {
  return status === 407;
}
