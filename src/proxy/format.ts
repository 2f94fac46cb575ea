/**
 * Proxy address -> text in one of the three input forms (the inverse of
 * parse.ts for every valid address). Pure.
 *
 * - IPv6 hosts are written in brackets.
 * - url_auth percent-encodes user and password except the RFC 3986 userinfo-safe
 *   characters A-Z a-z 0-9 - . _ ~ ! $ & ' ( ) * + , ; = (so ":", "@", "%", "#",
 *   spaces and non-ASCII are escaped; UTF-8 percent-encoding).
 * - colon_auth writes credentials verbatim (the parser does not decode them).
 *
 * Lossless fallbacks, so parseProxyLine(formatProxy(p, f)) always gives p back:
 * - no credentials -> the standard form whatever `format` says;
 * - credentials with `format: 'standard'` -> url_auth (standard cannot carry them);
 * - colon_auth that cannot be represented -> url_auth. Not representable: a
 *   username that is empty or contains ":", a password ending in whitespace
 *   (trimmed away as surrounding whitespace of the line).
 * Credentials with control characters or unpaired surrogates are not valid
 * proxies at all (the parser rejects them in every form); they are still
 * formatted without throwing (unpaired surrogates become U+FFFD in url_auth).
 */
import type { AddressFormat, ProxyAddress, ProxyType } from './types';

const USERINFO_SAFE = /^[A-Za-z0-9\-._~!$&'()*+,;=]*$/;
const REDUNDANT_ESCAPE = /%(?:24|26|2B|2C|3B|3D)/g;

function encodeCredential(s: string): string {
  if (USERINFO_SAFE.test(s)) return s;
  return encodeURIComponent(s.toWellFormed()).replace(REDUNDANT_ESCAPE, (m) =>
    String.fromCharCode(Number.parseInt(m.slice(1), 16)),
  );
}

/** Host as it appears in an address: IPv6 in brackets. */
export function formatHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/** Whether the colon form can carry these credentials unchanged. */
export function colonRepresentable(username: string, password: string): boolean {
  return username.length > 0 && !username.includes(':') && password === password.trimEnd();
}

export function formatProxy(p: ProxyAddress, format: AddressFormat): string {
  const hostPort = `${formatHost(p.host)}:${p.port}`;
  if (p.username === undefined) return hostPort;
  const password = p.password ?? '';
  if (format === 'colon_auth' && colonRepresentable(p.username, password)) {
    return `${hostPort}:${p.username}:${password}`;
  }
  return `${encodeCredential(p.username)}:${encodeCredential(password)}@${hostPort}`;
}

/**
 * The line of a text list that carries the protocol (`scheme=true`, DECISIONS
 * "Mixed lists"): `<protocol>://[user:pass@]host:port`, credentials in the
 * URL form (percent-encoded as above). The list parser reads it back to `p`
 * with `protocol` as its own.
 */
export function formatProxyUrl(p: ProxyAddress, protocol: ProxyType): string {
  return `${protocol}://${formatProxy(p, 'url_auth')}`;
}
