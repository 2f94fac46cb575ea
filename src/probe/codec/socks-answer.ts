/**
 * An http check that met a SOCKS server (issue 34, DECISIONS "Mixed lists"):
 * the first bytes a proxy answered an HTTP request (or a CONNECT) with tell
 * whether it speaks SOCKS instead. Pure: bytes in, a protocol or null out.
 *
 * An HTTP answer starts with "HTTP/" (0x48); these never do:
 *   SOCKS5  0x05 then a method choice (0x00-0x03, 0xff: RFC 1928 section 3)
 *           or a reply code (0x00-0x08, section 6): what a SOCKS5 server
 *           sends to a greeting it cannot read (microsocks: 05 01 00 01 ...,
 *           a general failure; others: 05 ff, no acceptable method). A lone
 *           0x05 followed by the end of the connection counts too.
 *   SOCKS4  0x00 then a reply code 0x5a-0x5d (90-93: granted, rejected,
 *           no identd, identd mismatch), or 0x04 then one (some servers echo
 *           the version).
 * The probe's `bad_response` then says so in a fixed message naming the
 * protocol, the `type` to use and the list's scheme (socksAnswerError), so
 * the user (and the CLI's hint) knows it is no broken HTTP proxy.
 */
import type { ProbeError } from '../types';

export type SocksAnswer = 'socks5' | 'socks4';

/** What the answer `head` (its first bytes; at least the first one) shows of a SOCKS server, or null when it is not one. */
export function socksAnswerOf(head: ArrayLike<number>): SocksAnswer | null {
  if (head.length === 0) return null;
  const b0 = head[0]!;
  const b1 = head.length > 1 ? head[1]! : -1;
  if (b0 === 0x05) return b1 === -1 || b1 <= 0x08 || b1 === 0xff ? 'socks5' : null;
  if (b0 === 0x00 || b0 === 0x04) return b1 >= 0x5a && b1 <= 0x5d ? 'socks4' : null;
  return null;
}

/** The fixed messages of a `bad_response` that was a SOCKS server's answer (the CLI's hint matches "SOCKS" in them). */
export const SOCKS_ANSWER_MESSAGES: Readonly<Record<SocksAnswer, string>> = Object.freeze({
  socks5: 'The proxy answered like a SOCKS5 server; check it with type socks5 or auto, or write it socks5://host:port in the list',
  socks4: 'The proxy answered like a SOCKS4 server; check it with type socks4 or auto, or write it socks4://host:port in the list',
});

/** The `bad_response` of an http check whose answer was a SOCKS server's. */
export function socksAnswerError(kind: SocksAnswer): ProbeError {
  return { code: 'bad_response', message: SOCKS_ANSWER_MESSAGES[kind] };
}
