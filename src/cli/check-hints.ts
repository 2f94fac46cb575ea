/**
 * The hints after a check's summary, pure (the response and what the result
 * file's records showed in, lines out): what a newcomer could not guess from
 * the failure counts alone.
 * - proxies refused as private, loopback or reserved targets
 *   (`metadata.total_blocked`, else `summary.errors.blocked_target`): the
 *   operator's ALLOW_PRIVATE_TARGETS setting;
 * - an `http` check that met SOCKS servers: records failed `bad_response`
 *   whose message says SOCKS (the probe recognises a SOCKS answer), else
 *   `bad_response` for at least half of the failed proxies: `--type auto`,
 *   or the list's `socks5://` scheme;
 * - the check's own `metadata.warnings` (the judge out of reach, ...).
 * Each hint is one line; none when nothing applies.
 */
import type { CheckResponseBody } from './api-client';
import { fmtInt } from './progress-bar';

/** What the records of the result file showed (proxy-table.ts ProxyDigest counts it); null: not read. */
export interface RecordSigns {
  /** failed `bad_response` records whose message says the proxy answered like a SOCKS server */
  socksLike: number;
}

/** A `bad_response` message that says the bytes were a SOCKS server's. */
export const isSocksAnswer = (code: unknown, message: unknown): boolean => code === 'bad_response' && typeof message === 'string' && /socks/i.test(message);

const are = (n: number) => (n === 1 ? 'proxy is' : 'proxies are');

export function checkHints(r: CheckResponseBody, signs: RecordSigns | null): string[] {
  const m = r.metadata;
  const errors = r.summary.errors ?? {};
  const out: string[] = [];
  const blocked = typeof m.total_blocked === 'number' ? m.total_blocked : (errors.blocked_target ?? 0);
  if (blocked > 0) {
    out.push(
      `Hint: ${fmtInt(blocked)} ${are(blocked)} on private, loopback or reserved addresses: refused (blocked_target), not checked, not charged. ` +
        'The service checks such proxies only when its operator sets ALLOW_PRIVATE_TARGETS=true.',
    );
  }
  if (m.proxy_type === 'http') {
    const bad = errors.bad_response ?? 0;
    const failed = Object.values(errors).reduce((a, n) => a + (typeof n === 'number' ? n : 0), 0) - (errors.blocked_target ?? 0);
    if (signs !== null && signs.socksLike > 0) {
      const n = signs.socksLike;
      out.push(
        `Hint: ${fmtInt(n)} ${n === 1 ? 'proxy' : 'proxies'} answered like a SOCKS server on this http check: check again with --type auto ` +
          '(tries http, socks4 and socks5), or write socks5:// (or socks4://) before them in the list.',
      );
    } else if (bad > 0 && 2 * bad >= failed) {
      out.push(
        `Hint: ${fmtInt(bad)} ${bad === 1 ? 'proxy' : 'proxies'} failed with bad_response on this http check; if they are SOCKS proxies, ` +
          'check again with --type auto (tries http, socks4 and socks5), or write socks5:// before them in the list.',
      );
    }
  }
  for (const w of m.warnings ?? []) {
    const text = typeof w === 'string' ? w : typeof w?.message === 'string' ? w.message : '';
    if (text !== '') out.push(`Note: ${text}`);
  }
  return out;
}
