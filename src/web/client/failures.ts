/**
 * Why proxies failed, pure: the failures per error code for the results
 * view's chart (from the result's `summary.errors` when the service sends
 * it, else counted from the records), and a short plain-words note per code
 * (docs/API.md has the full meaning of each).
 */
import type { Bar } from './charts';
import { escapeXml } from './svg';

/** One line per error code a record can carry. */
export const ERROR_NOTES: Readonly<Record<string, string>> = Object.freeze({
  connect_refused: 'nothing listens at that address and port',
  connect_timeout: 'no TCP connection within the timeout: dead, or filtered',
  connect_failed: 'the connection failed (unreachable, reset)',
  timeout: 'connected, but the full answer did not come back in time',
  auth_required: 'the proxy wants credentials, or refused the ones given',
  socks_rejected: 'the SOCKS server refused to connect to the judge',
  bad_response: 'the answer is not the protocol asked for (another type of proxy?)',
  judge_mismatch: 'a page came back, but not the judge: a captive portal or a web server',
  tampered: "the proxy changed the judge's signed answer",
  http_status: 'the proxy answered with an error status (often: it cannot reach the judge)',
  tls_failed: 'TLS through the proxy failed',
  tls_intercepted: "the proxy presented its own certificate instead of the judge's",
  dns_failed: "the proxy's host name does not resolve",
  blocked_target: 'a private, loopback or reserved address: not checked (ALLOW_PRIVATE_TARGETS)',
  connection_closed: 'the proxy closed the connection before a full answer',
  text_not_found: 'a custom URL answered without the required text',
  checker_overloaded: 'this service ran out of local resources; not charged',
});

/** Failed proxies per code, most first: summary.errors when it is an object of counts, else the records' codes. */
export function failureBars(summaryErrors: unknown, records: readonly { status: string; error: string }[]): Bar[] {
  const counts = new Map<string, number>();
  if (typeof summaryErrors === 'object' && summaryErrors !== null && !Array.isArray(summaryErrors)) {
    for (const [code, n] of Object.entries(summaryErrors as Record<string, unknown>)) {
      if (typeof n === 'number' && Number.isFinite(n) && n > 0) counts.set(code, n);
    }
  } else {
    for (const r of records) if (r.status !== 'working' && r.error !== '') counts.set(r.error, (counts.get(r.error) ?? 0) + 1);
  }
  return [...counts].map(([label, value]) => ({ label, value })).sort((a, b) => b.value - a.value || a.label.localeCompare(b.label));
}

/** The notes of the codes shown, as a definition list (codes without a note are left out). */
export function failureNotesHtml(bars: readonly Bar[]): string {
  const items = bars.filter((b) => ERROR_NOTES[b.label] !== undefined).map((b) => `<div><dt><code>${escapeXml(b.label)}</code></dt><dd>${escapeXml(ERROR_NOTES[b.label]!)}</dd></div>`);
  return items.length === 0 ? '' : `<dl class="notes">${items.join('')}</dl>`;
}
