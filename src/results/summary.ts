/**
 * The check response's `summary` as a fold over proxy records (pure, O(1)
 * per record), and the response's duration formats (`processing_time`,
 * `timeout_used`). The record's `responseTime` format is src/results/format.ts.
 *
 * `summary` counts WORKING proxies only (seed "Check response"):
 * - `total_working`
 * - `countries`: English country name -> count; unknown names count under
 *   "Unknown" (DECISIONS); keys in name order.
 * - `anonymity_levels`: always all three keys `elite`, `anonymous`,
 *   `transparent`.
 * - `top_isps`: the 10 ISPs with the most working proxies, ties broken by
 *   name ascending (code-unit order), in that order as object keys; an unknown
 *   ISP counts as "Unknown", like countries. (JSON key order follows
 *   insertion except for integer-like names such as "123", which JavaScript
 *   always puts first; real AS organisation names are not integers.)
 * - `protocols` (auto jobs only, `new SummaryFold({ protocols: true })`):
 *   `{http, socks4, socks5}`, how many working proxies passed each protocol
 *   (a proxy that passed two counts in both); absent for other jobs.
 * - `rotating` (sampled jobs only, `new SummaryFold({ rotating: true })`):
 *   proxies whose samples left through more than one exit address
 *   (`samples.unique_exit_ips` > 1, src/results/samples.ts); absent otherwise.
 * - `errors`: failed proxies per `error.code` (the one count that is not of
 *   working proxies), the most frequent first, ties by code; `{}` when none
 *   failed. Additive (the ClearProxy SDK reads none of it); the CLI and the
 *   dashboard chart it. Proxies refused before any connection count here too
 *   (`blocked_target`), as the failed records of the result file they are.
 * - `https`: working proxies whose record says `https: true`; present from
 *   the start in a check that runs the https check (`new SummaryFold({
 *   https: true })`: 0 when no proxy passed), else once a working record
 *   carries `https` at all (a cluster's API node does not know whether its
 *   agents have a TLS judge), absent otherwise. The file head's summary is
 *   what tells the CSV export to add its `https` column (export.ts).
 * Only the counters live in memory (one map entry per distinct country/ISP).
 */
import type { ProxyRecord } from './record';
import type { SummaryBody } from '../contract/checks';

export const UNKNOWN = 'Unknown';
export const TOP_ISPS = 10;

/** The summary of a check: the contract's (src/contract/checks.ts Summary); SummaryFold builds it. */
export type CheckSummary = SummaryBody;
/** `type: "auto"` checks: working proxies per protocol passed. */
export type ProtocolCounts = NonNullable<SummaryBody['protocols']>;

type SummaryInput = Pick<ProxyRecord, 'status' | 'country_name' | 'anonymity' | 'isp'> & Pick<Partial<ProxyRecord>, 'protocols' | 'samples' | 'https' | 'error'>;

export class SummaryFold {
  private working = 0;
  private failed = 0;
  private readonly countries = new Map<string, number>();
  private readonly isps = new Map<string, number>();
  private readonly errors = new Map<string, number>();
  private readonly anonymity = { elite: 0, anonymous: 0, transparent: 0 };
  /** null unless the job is auto */
  private readonly protocols: ProtocolCounts | null;
  /** null unless the job is sampled */
  private rotating: number | null;
  /** null until a working record carries `https` (or from the start with `https: true`) */
  private https: number | null;

  constructor(opts: { protocols?: boolean; rotating?: boolean; https?: boolean } = {}) {
    this.protocols = opts.protocols === true ? { http: 0, socks4: 0, socks5: 0 } : null;
    this.rotating = opts.rotating === true ? 0 : null;
    this.https = opts.https === true ? 0 : null;
  }

  add(record: SummaryInput): void {
    if (this.rotating !== null && (record.samples?.unique_exit_ips ?? 0) > 1) this.rotating++;
    if (record.status !== 'working') {
      this.failed++;
      const code = record.error?.code ?? 'bad_response'; // a failed record always has one (record.ts)
      this.errors.set(code, (this.errors.get(code) ?? 0) + 1);
      return;
    }
    this.working++;
    const c = record.country_name || UNKNOWN; // null or ''
    this.countries.set(c, (this.countries.get(c) ?? 0) + 1);
    const i = record.isp || UNKNOWN;
    this.isps.set(i, (this.isps.get(i) ?? 0) + 1);
    if (record.anonymity !== null) this.anonymity[record.anonymity]++;
    if (this.protocols !== null && record.protocols !== undefined) for (const p of record.protocols) this.protocols[p]++;
    if (record.https !== undefined) this.https = (this.https ?? 0) + (record.https === true ? 1 : 0);
  }

  /** Records folded so far (working + failed). */
  get total(): number {
    return this.working + this.failed;
  }

  get totalWorking(): number {
    return this.working;
  }

  result(): CheckSummary {
    // Object.fromEntries defines own data properties: even a name like "__proto__" stays a plain key
    const countries = Object.fromEntries([...this.countries].sort((a, b) => cmp(a[0], b[0])));
    const byCount = (a: [string, number], b: [string, number]) => b[1] - a[1] || cmp(a[0], b[0]);
    const top_isps = Object.fromEntries([...this.isps].sort(byCount).slice(0, TOP_ISPS));
    const summary: CheckSummary = {
      total_working: this.working,
      countries,
      anonymity_levels: { ...this.anonymity },
      top_isps,
      errors: Object.fromEntries([...this.errors].sort(byCount)),
    };
    if (this.protocols !== null) summary.protocols = { ...this.protocols };
    if (this.rotating !== null) summary.rotating = this.rotating;
    if (this.https !== null) summary.https = this.https;
    return summary;
  }
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** `processing_time`: seconds with 2 decimals and an `s`, e.g. "12.32s". */
export function formatProcessingTime(ms: number): string {
  return `${(Math.max(0, ms) / 1000).toFixed(2)}s`;
}

/** `timeout_used`: whole milliseconds and `ms`, e.g. "5000ms". */
export function formatTimeout(ms: number): string {
  return `${Math.round(ms)}ms`;
}
