/**
 * Which protocol a client speaks to the gateway, from its first byte (the
 * gateway serves HTTP proxy and SOCKS5 on one port: DECISIONS "Gateway").
 * Pure. The same test the auto-detecting proxy servers make, from their side:
 *
 *   0x05          SOCKS5 (the greeting's version byte)
 *   0x04          SOCKS4 (not served: the driver answers socks4Refusal and closes)
 *   'A'..'Z'      HTTP (a request line starts with a method, a token in
 *                 upper case in practice: GET, CONNECT, ...)
 *   anything else unknown (TLS, HTTP/2's preface is caught later by the
 *                 request parser, random bytes): the driver closes
 */

export type FrontProtocol = 'socks5' | 'socks4' | 'http' | 'unknown';

export function sniffFront(firstByte: number): FrontProtocol {
  if (firstByte === 0x05) return 'socks5';
  if (firstByte === 0x04) return 'socks4';
  if (firstByte >= 0x41 && firstByte <= 0x5a) return 'http';
  return 'unknown';
}
