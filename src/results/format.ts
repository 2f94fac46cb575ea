/**
 * The proxy record's `responseTime` format (seed "Proxy result record"). Pure.
 * Below both src/results/record.ts, which formats each record with it, and
 * src/results/summary.ts, which folds records, so neither imports the other
 * for it.
 */

/** `responseTime`: milliseconds with 2 decimals and ` ms`, e.g. "123.45 ms". */
export function formatResponseTime(ms: number): string {
  return `${Math.max(0, ms).toFixed(2)} ms`;
}
