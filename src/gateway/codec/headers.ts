/**
 * Hop-by-hop headers (RFC 9110 7.6.1): the ones that describe one connection
 * and must not be passed on by a proxy, in either direction. Pure. The
 * gateway drops them from what it forwards and adds its own `Connection:
 * close` (one request per client connection).
 *
 * Dropped: Connection and every header it names, Keep-Alive,
 * Proxy-Connection, Proxy-Authorization (the client's API key never leaves
 * the gateway), Proxy-Authenticate, TE, Trailer, Upgrade.
 * Kept: Transfer-Encoding and Content-Length, because bodies are relayed
 * byte for byte with their own framing.
 */

export const HOP_BY_HOP: readonly string[] = Object.freeze([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'upgrade',
]);

/** The headers a proxy passes on: all but the hop-by-hop ones and `alsoDrop` (lower-case names). */
export function endToEnd(headers: readonly [string, string][], alsoDrop: readonly string[] = []): [string, string][] {
  const drop = new Set([...HOP_BY_HOP, ...alsoDrop]);
  for (const [n, v] of headers) {
    if (n.toLowerCase() !== 'connection') continue;
    for (const token of v.split(',')) {
      const t = token.trim().toLowerCase();
      if (t !== '') drop.add(t);
    }
  }
  return headers.filter(([n]) => !drop.has(n.toLowerCase())).map(([n, v]) => [n, v]);
}

/** Header lines, each with CRLF. */
export function headerLines(headers: readonly [string, string][]): string {
  let s = '';
  for (const [n, v] of headers) s += `${n}: ${v}\r\n`;
  return s;
}
