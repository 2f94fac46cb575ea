/**
 * The proxy record's `responseTime` format (seed "Proxy result record") and
 * the result file's rate format (`success_rate` of custom URLs and of
 * samples). Pure. Below src/results/record.ts, summary.ts,
 * custom-url-summary.ts and samples.ts, so none imports another for them.
 */

/** `responseTime`: milliseconds with 2 decimals and ` ms`, e.g. "123.45 ms". */
export function formatResponseTime(ms: number): string {
  return `${Math.max(0, ms).toFixed(2)} ms`;
}

/** "66.67%": two decimals; "0.00%" when nothing was tried. */
export function successRate(success: number, failed: number): string {
  const n = success + failed;
  return `${(n === 0 ? 0 : (success * 100) / n).toFixed(2)}%`;
}
