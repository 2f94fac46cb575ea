/**
 * Proxies refused before any connection (DECISIONS "Failures that explain
 * themselves"): while ALLOW_PRIVATE_TARGETS is off, a proxy given as a
 * literal loopback, private, link-local or reserved address would only ever
 * be `blocked_target` at probe time (src/probe/net/exchange.ts), so the job
 * decides it before the reservation: such proxies are not probed and not
 * charged (the required quota and the 402 count the others), counted in
 * `metadata.total_blocked`, and written to the result file as failed
 * records with the same `blocked_target` message as a probe would give.
 * Host names are not resolved here: one that resolves to such an address is
 * probed, charged and `blocked_target` as before. Pure: the classifier is
 * the SSRF guard's own (src/probe/codec/ssrf.ts).
 */
import { blockedTargetMessage, isBlockedAddress } from '../probe/codec/ssrf';
import type { ProbeResult } from '../probe/types';
import { ipv4At } from '../proxy/host';
import type { ParsedProxy } from '../proxy/parse';

/** The parser's hosts: an IPv4 dotted quad, an IPv6 literal (without brackets, so with a ":"), or a name. */
function isIpLiteral(host: string): boolean {
  return host.includes(':') || ipv4At(host, 0, host.length) >= 0;
}

/**
 * Splits the proxies into those to probe and those refused before any
 * connection (none when private targets are allowed); both keep their order.
 */
export function splitRefused<P extends Pick<ParsedProxy, 'host'>>(proxies: P[], allowPrivateTargets: boolean): { probe: P[]; refused: P[] } {
  if (allowPrivateTargets) return { probe: proxies, refused: [] };
  let refused: P[] | null = null;
  let probe: P[] | null = null;
  for (let i = 0; i < proxies.length; i++) {
    const p = proxies[i]!;
    const blocked = isIpLiteral(p.host) && isBlockedAddress(p.host);
    if (blocked && refused === null) {
      refused = [];
      probe = proxies.slice(0, i);
    }
    if (blocked) refused!.push(p);
    else probe?.push(p);
  }
  return refused === null ? { probe: proxies, refused: [] } : { probe: probe!, refused };
}

/** The probe result a refused proxy is recorded with: failed, nothing measured. */
export function refusedResult(p: Pick<ParsedProxy, 'host'>): ProbeResult {
  return {
    index: 0,
    status: 'failed',
    statusCode: null,
    responseTimeMs: 0,
    anonymity: null,
    origin: null,
    error: { code: 'blocked_target', message: blockedTargetMessage(p.host) },
  };
}
