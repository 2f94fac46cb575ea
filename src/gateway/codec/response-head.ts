/**
 * The response heads the gateway itself sends to an HTTP client (pure), and
 * the head of an upstream's response as it is passed on.
 *
 * - 407 with `Proxy-Authenticate: Basic realm="proxycheck gateway"`: no, or
 *   wrong, credentials (a wrong key, another account's pool, a username the
 *   grammar refuses: the client is told nothing more).
 * - Errors of the gateway: a status, `X-Gateway-Error: <code>` and a short
 *   fixed text body (GATEWAY_ERRORS); never an internal detail.
 * - The successful CONNECT answer: `200 Connection established` with
 *   `X-Gateway-Upstream: <host>:<port>`.
 * - An upstream's response head (relayedResponseHead): its status, its
 *   end-to-end headers (headers.ts), `X-Gateway-Upstream`, `Connection: close`.
 *   The body follows byte for byte until the upstream closes.
 * Every head the gateway makes itself closes the connection.
 */
import { authority } from '../../probe/codec/http-request';
import { endToEnd, headerLines } from './headers';

export const GATEWAY_REALM = 'proxycheck gateway';

/** X-Gateway-Error codes, their statuses and fixed texts. */
export const GATEWAY_ERRORS = Object.freeze({
  bad_request: { status: 400, text: 'The request is not a valid HTTP proxy request' },
  blocked_target: { status: 403, text: 'The target address is not allowed' },
  too_many_connections: { status: 429, text: 'Too many open connections for this key' },
  unsupported: { status: 501, text: 'Only absolute-form http:// requests and CONNECT are supported' },
  no_upstream: { status: 502, text: 'No working proxy of the pool matches' },
  upstream_failed: { status: 502, text: 'The upstream proxies failed' },
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

export function gatewayError(code: GatewayErrorCode): string {
  const e = GATEWAY_ERRORS[code];
  return withBody(e.status, `X-Gateway-Error: ${code}\r\n`, e.text);
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
 * Whether an upstream's answer means the upstream, not the target, failed,
 * so another upstream is tried: a CONNECT that is not 2xx; any 407 (our
 * credentials for the upstream were refused: the client must not see a 407
 * it did not cause).
 */
export function isUpstreamFailure(status: number, connect: boolean): boolean {
  if (status === 407) return true;
  return connect && (status < 200 || status > 299);
}
