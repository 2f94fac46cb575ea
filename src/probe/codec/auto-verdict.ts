/**
 * The pure decisions of a `type: "auto"` probe (src/probe/auto.ts): when the
 * first protocol's outcome settles the whole probe, which protocol a record
 * names, and which failure tells the most when none passed. No I/O, no clock.
 *
 * ## Order of the protocols
 *
 * AUTO_PREFERENCE = socks5, socks4, http: `type` is the first of these that
 * passed, `protocols` lists every one that passed in this order, and a tie
 * between equally telling failures goes to the earlier one.
 *
 * ## The lead settles it
 *
 * The http probe runs first (auto.ts says why). A failure before the TCP
 * connection was up (LEAD_FINAL_CODES: refused, connect timeout, connect
 * failure, DNS, the SSRF guard, or the checker's own exhaustion) would be the
 * same for the SOCKS probes (same host and port), so they are not tried and
 * the lead's error is the record's.
 *
 * ## A proxy that lies under one protocol lies
 *
 * An attempt that caught the proxy lying (LYING_CODES: `tampered`, it changed
 * what it relayed; `tls_intercepted`, it presented its own certificate) fails
 * the whole auto probe, even when another protocol passed, and its record
 * lists no protocols: a lying proxy is never `working`.
 *
 * ## The most telling error (ERROR_PREFERENCE, first wins)
 *
 *   tampered           the proxy changed the judge's answer: it lies
 *   tls_intercepted    a tunnel presented another certificate than the TLS
 *                      judge's (the https check of an attempt that passed)
 *   auth_required      the proxy wants (other) credentials: actionable
 *   socks_rejected     a SOCKS server that understood us and refused the judge
 *   judge_mismatch     a 200 that is not the judge (captive portal, web server)
 *   http_status        an HTTP answer with another status (403, 502, ...)
 *   tls_failed         the tunnel came up, TLS through it failed
 *   timeout            connected and answered in part, not in time: a slow
 *                      proxy of that protocol (or one that waits on bytes of
 *                      a protocol it does not speak)
 *   bad_response       bytes of another protocol: what a wrong guess gives,
 *                      so it says least of the answers that came back
 *   connection_closed  closed on us
 *   connect_timeout, connect_failed, connect_refused, dns_failed,
 *   blocked_target     nothing answered at all
 *   text_not_found     (custom URLs only; never from a probe)
 *   checker_overloaded ours, not the proxy's: chosen only by the rule below
 *
 * A sub-probe that could not run (checker_overloaded) makes the whole auto
 * probe checker_overloaded when no protocol passed, so the job tries it again
 * (and never charges it): the verdict would be missing a protocol. When one
 * passed, the record is working with what passed.
 */
import type { ProxyType } from '../../proxy/types';
import type { ProbeErrorCode, ProbeResult } from '../types';

/** The order protocols are named in (`type` = the first that passed). */
export const AUTO_PREFERENCE: readonly ProxyType[] = Object.freeze(['socks5', 'socks4', 'http'] as const);

/** Failures of the lead probe after which the other protocols are not tried (nothing was connected to). */
export const LEAD_FINAL_CODES: ReadonlySet<ProbeErrorCode> = new Set<ProbeErrorCode>([
  'connect_refused',
  'connect_timeout',
  'connect_failed',
  'dns_failed',
  'blocked_target',
  'checker_overloaded',
]);

/** Failures that make the whole proxy fail whatever else passed (the header says why). */
export const LYING_CODES: ReadonlySet<ProbeErrorCode> = new Set<ProbeErrorCode>(['tampered', 'tls_intercepted']);

/** Failure codes, most telling first (the header says why). */
export const ERROR_PREFERENCE: readonly ProbeErrorCode[] = Object.freeze([
  'tampered',
  'tls_intercepted',
  'auth_required',
  'socks_rejected',
  'judge_mismatch',
  'http_status',
  'tls_failed',
  'timeout',
  'bad_response',
  'connection_closed',
  'connect_timeout',
  'connect_failed',
  'connect_refused',
  'dns_failed',
  'blocked_target',
  'text_not_found',
  'checker_overloaded',
] as const);

const RANK: ReadonlyMap<ProbeErrorCode, number> = new Map(ERROR_PREFERENCE.map((c, i) => [c, i]));

/** The lead's outcome ends the auto probe: it failed before anything was connected to. */
export function leadSettles(lead: ProbeResult): boolean {
  return lead.status !== 'working' && lead.error !== null && LEAD_FINAL_CODES.has(lead.error.code);
}

/** The rank of a failure (lower tells more); a failure without an error ranks last. */
function rankOf(r: ProbeResult): number {
  return r.error === null ? ERROR_PREFERENCE.length : (RANK.get(r.error.code) ?? ERROR_PREFERENCE.length);
}

export type AutoAttempts = Partial<Record<ProxyType, ProbeResult>>;

/** The protocol whose failure the record reports: the most telling error, ties to the earlier protocol. null when nothing was tried. */
export function mostTellingFailure(tried: AutoAttempts): ProxyType | null {
  let best: ProxyType | null = null;
  let bestRank = Number.POSITIVE_INFINITY;
  for (const p of AUTO_PREFERENCE) {
    const r = tried[p];
    if (r === undefined) continue;
    const rank = rankOf(r);
    if (rank < bestRank) {
      best = p;
      bestRank = rank;
    }
  }
  return best;
}

/**
 * The auto probe's result from the protocol probes that were tried (each a
 * full runProbe). Working: the fields of the first passed protocol in
 * AUTO_PREFERENCE (its status, response time, anonymity and origin: what a
 * client using it as `type` gets), `protocols` every one that passed. Failed:
 * the status code, time and error of the most telling failure, its message
 * prefixed with the protocol (`socks5: ...`).
 */
export function autoResult(index: number, tried: AutoAttempts): ProbeResult {
  const protocols = AUTO_PREFERENCE.filter((p) => tried[p]?.status === 'working');
  // the protocol under which the proxy lied (the most telling such failure), if any
  const lied = AUTO_PREFERENCE.filter((p) => {
    const c = tried[p]?.error?.code;
    return c !== undefined && LYING_CODES.has(c);
  }).sort((a, b) => rankOf(tried[a]!) - rankOf(tried[b]!))[0];
  const first = protocols[0];
  if (first !== undefined && lied === undefined) {
    const r = tried[first]!;
    const out: ProbeResult = { index, status: 'working', statusCode: r.statusCode, responseTimeMs: r.responseTimeMs, anonymity: r.anonymity, origin: r.origin, error: null, protocols };
    if (r.https !== undefined) out.https = r.https;
    return out;
  }
  const overloaded = lied === undefined ? AUTO_PREFERENCE.find((p) => tried[p]?.error?.code === 'checker_overloaded') : undefined;
  const p = lied ?? overloaded ?? mostTellingFailure(tried);
  const r = p === null ? undefined : tried[p];
  if (p === null || r === undefined) {
    return { index, status: 'failed', statusCode: null, responseTimeMs: 0, anonymity: null, origin: null, error: { code: 'bad_response', message: 'auto: no protocol was tried' }, protocols };
  }
  const error = r.error === null ? { code: 'bad_response' as const, message: 'probe failed without an error' } : r.error;
  return {
    index,
    status: 'failed',
    statusCode: r.statusCode,
    responseTimeMs: r.responseTimeMs,
    anonymity: null,
    origin: null,
    error: { ...error, message: `${p}: ${error.message}` },
    protocols: lied === undefined ? protocols : [],
  };
}

/** The record's `type` of an auto probe: the first of socks5, socks4, http that passed; null when none did. */
export function autoType(protocols: readonly ProxyType[]): ProxyType | null {
  for (const p of AUTO_PREFERENCE) if (protocols.includes(p)) return p;
  return null;
}
