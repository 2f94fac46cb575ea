/**
 * The request head the gateway sends upstream for a client's absolute-form
 * request (pure): rebuilt from the parsed head (request-head.ts), never the
 * client's bytes passed on, so nothing the client wrote oddly (bare LF,
 * duplicate framing, hop-by-hop headers, its API key) reaches the upstream.
 *
 *   through an HTTP upstream   absolute-form `METHOD http://host[:port]/path HTTP/1.1`
 *                              + the upstream's own Proxy-Authorization when it has credentials
 *   through a tunnel           origin-form `METHOD /path HTTP/1.1` (a SOCKS upstream, or
 *                              CONNECT through an HTTP one: the request goes to the target itself)
 *
 * Headers: the client's end-to-end headers (headers.ts) in their order,
 * without Host (replaced by the target's authority, RFC 9112 3.2.2) and
 * Expect (the gateway answers 100-continue itself), then `Connection:
 * close`. The result is a latin1 string (header values are kept as the
 * parser read them); write it with 'latin1'.
 *
 * CONNECT through an HTTP upstream uses the probe's own CONNECT request
 * (src/probe/codec/http-request.ts buildConnectRequest).
 */
import { authority, basicAuth } from '../../probe/codec/http-request';
import { endToEnd, headerLines } from './headers';
import type { ProxyRequestHead } from './request-head';

export interface UpstreamCredentials {
  username: string;
  password: string;
}

export type ForwardVia = { form: 'absolute'; credentials: UpstreamCredentials | null } | { form: 'origin' };

export function forwardRequestHead(head: ProxyRequestHead, via: ForwardVia): string {
  const host = authority(head.host, head.port, 80);
  const target = via.form === 'absolute' ? `http://${host}${head.path}` : head.path;
  let s = `${head.method} ${target} HTTP/1.1\r\nHost: ${host}\r\n`;
  s += headerLines(endToEnd(head.headers, ['host', 'expect']));
  s += 'Connection: close\r\n';
  if (via.form === 'absolute' && via.credentials !== null) s += `Proxy-Authorization: ${basicAuth(via.credentials.username, via.credentials.password)}\r\n`;
  return `${s}\r\n`;
}
