/**
 * Shared shapes of a proxy address, used by the input parser (src/proxy),
 * the probe engine (src/probe, workers/) and the result writer.
 */

export const PROXY_TYPES = Object.freeze(['http', 'socks4', 'socks5'] as const);
export type ProxyType = (typeof PROXY_TYPES)[number];

/**
 * What a check may ask for: one protocol, or `auto` (each of the three is
 * tried: src/probe/auto.ts). An extension: the contract's 400 body still lists
 * PROXY_TYPES only.
 */
export const CHECK_TYPES = Object.freeze([...PROXY_TYPES, 'auto'] as const);
export type CheckType = (typeof CHECK_TYPES)[number];

/** One proxy as the caller submitted it, after parsing. */
export interface ProxyAddress {
  /** IPv4 literal, IPv6 literal WITHOUT brackets, or a hostname (lower-cased). */
  host: string;
  /** 1..65535 */
  port: number;
  /** Present only for authenticated proxies (percent-decoded). */
  username?: string;
  password?: string;
  /**
   * The proxy's own protocol, from its line's scheme (`socks5://...`,
   * DECISIONS "Mixed lists"): it is checked as that whatever the request's
   * `type`. Absent: the request's (or pool's) `type` decides. A parse given
   * the request's type leaves it out when the scheme names that very type
   * (parse.ts ParseListOptions.type), so "http://h:1" and "h:1" in an http
   * check are one proxy. Part of the proxy's identity (dedupe.ts).
   */
  protocol?: ProxyType;
}

/** The three input shapes DECISIONS accepts; kept so `.txt` downloads echo the caller's form. */
export type AddressFormat = 'standard' | 'url_auth' | 'colon_auth';
