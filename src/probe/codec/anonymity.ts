/**
 * Anonymity classifier (pure), DECISIONS "Checking a proxy":
 *
 * - `transparent` when any header the judge saw (other than Host, which the
 *   checker itself sets to the judge's address) carries one of the checker's
 *   own addresses as an exact address token. Own = the calibrated and
 *   configured addresses (`checkerIps`) plus this probe's `localAddress`:
 *   the address its socket had towards the proxy, which is what a proxy
 *   reached without NAT sees of us, and on a host with several addresses
 *   (IPv4 and IPv6, several interfaces) need not be one calibration learned. Values are tokenised on
 *   `, ; space tab = " ' ( ) < > [ ]`; a token `a.b.c.d:port` counts as
 *   `a.b.c.d`; IPv6 is compared in normalised form and IPv4-mapped IPv6 as
 *   its IPv4. So `1.2.3.4` never matches `1.2.3.45`.
 * - else `anonymous` when a proxy-revealing header is present that is not in
 *   the calibration baseline (headers the judge path adds by itself);
 * - else `elite`.
 */
import type { Anonymity } from '../types';
import { normalizeIp } from './ip-literal';

/** Header names (lower case) whose presence tells the target a proxy was used. */
export const REVEALING_HEADERS: ReadonlySet<string> = new Set([
  'via',
  'x-via',
  'forwarded',
  'forwarded-for',
  'forwarded-for-ip',
  'x-forwarded',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-forwarded-port',
  'x-forwarded-server',
  'x-forwarded-by',
  'x-real-ip',
  'client-ip',
  'x-client-ip',
  'x-cluster-client-ip',
  'true-client-ip',
  'x-originating-ip',
  'x-remote-ip',
  'x-remote-addr',
  'x-proxy-id',
  'x-proxy-connection',
  'x-proxyuser-ip',
  'proxy-connection',
  'proxy-agent',
  'x-tinyproxy',
  'x-bluecoat-via',
  'x-cache',
  'x-cache-lookup',
  'x-host',
  'x-coming-from',
  'coming-from',
  'x-imforwards',
  'xroxy-connection',
  'cf-connecting-ip',
]);

/** Prefixes that are proxy-revealing whatever follows (`x-forwarded-*`, `x-proxy-*`, `proxy-*`). */
const REVEALING_PREFIXES: readonly string[] = Object.freeze(['x-forwarded-', 'x-proxy-', 'proxy-']);

export function isRevealingHeader(lowerName: string): boolean {
  if (REVEALING_HEADERS.has(lowerName)) return true;
  for (const p of REVEALING_PREFIXES) if (lowerName.startsWith(p)) return true;
  return false;
}

/** Token separators in header values (char codes). */
const SEPARATORS: ReadonlySet<number> = new Set(
  [',', ';', ' ', '\t', '=', '"', "'", '(', ')', '<', '>', '[', ']'].map((c) => c.charCodeAt(0)),
);

/** Normalised address a token stands for (port stripped), or null. */
export function tokenAddress(token: string): string | null {
  const direct = normalizeIp(token);
  if (direct !== null) return direct;
  // a.b.c.d:port
  const colon = token.indexOf(':');
  if (colon > 0 && token.indexOf(':', colon + 1) === -1) {
    const host = token.slice(0, colon);
    const port = token.slice(colon + 1);
    if (/^\d{1,5}$/.test(port) && host.indexOf('.') !== -1) return normalizeIp(host);
  }
  return null;
}

/** All address tokens in a header value, normalised. */
export function addressTokens(value: string): string[] {
  const out: string[] = [];
  let start = -1;
  for (let i = 0; i <= value.length; i++) {
    const sep = i === value.length || SEPARATORS.has(value.charCodeAt(i));
    if (sep) {
      if (start !== -1) {
        const a = tokenAddress(value.slice(start, i));
        if (a !== null) out.push(a);
        start = -1;
      }
    } else if (start === -1) {
      start = i;
    }
  }
  return out;
}

/** `::` as normalizeIp spells it. */
const UNSPECIFIED_V6 = '0:0:0:0:0:0:0:0';

/**
 * Classifies what the judge saw. `checkerIps`: the checker's own addresses in
 * any spelling; `baselineHeaders`: lower-case names the judge path adds itself;
 * `localAddress`: the probe socket's own address (any spelling, IPv4-mapped
 * IPv6 and a `%zone` included), one more own address for this probe; null or
 * absent when unknown.
 */
export function classifyAnonymity(
  judgeHeaders: [string, string][],
  checkerIps: readonly string[],
  baselineHeaders: readonly string[],
  localAddress: string | null = null,
): Anonymity {
  const own = new Set<string>();
  for (const ip of checkerIps) {
    const n = normalizeIp(ip.trim());
    if (n !== null) own.add(n);
  }
  if (localAddress !== null) {
    const n = normalizeIp(localAddress);
    // a connected socket never has the unspecified address; a runtime that reports one knows none
    if (n !== null && n !== '0.0.0.0' && n !== UNSPECIFIED_V6) own.add(n);
  }
  const baseline = new Set<string>();
  for (const b of baselineHeaders) baseline.add(b.trim().toLowerCase());
  let revealing = false;
  for (const [rawName, value] of judgeHeaders) {
    const name = rawName.trim().toLowerCase();
    if (name !== 'host' && own.size > 0 && value.length >= 2) {
      for (const a of addressTokens(value)) if (own.has(a)) return 'transparent';
    }
    if (!revealing && isRevealingHeader(name) && !baseline.has(name)) revealing = true;
  }
  return revealing ? 'anonymous' : 'elite';
}
