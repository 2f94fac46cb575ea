/**
 * Verdict accuracy of one run, against the farm's manifest. Pure.
 *
 * - expected working: a working / instant entry whose own delay is under
 *   `timeout - margin` (the margin covers connect + the relay to the judge
 *   + scheduling noise on a loaded 2-core machine); every one must be found.
 * - borderline: working entries with a delay in [timeout - margin, timeout):
 *   either verdict is right; reported separately.
 * - false positive: `working` for a refused, black-hole or slow entry. Must be 0.
 * - late accepted: a working entry whose own delay is >= the timeout reported
 *   working (its answer came after the probe's deadline and was kept).
 * Also the error codes seen per behaviour and records missing from the file.
 */
import { BEHAVIOURS, type Behaviour, type Entry } from '../farm/entries';
import type { ResultRecord } from './service';

export interface Accuracy {
  expectedWorking: number;
  foundWorking: number;
  borderline: number;
  borderlineFound: number;
  falsePositives: number;
  /** real working proxies slower than the timeout that were still reported working (the probe kept an answer that came after its deadline) */
  lateAccepted: number;
  /** entries with no record in the result file */
  missingRecords: number;
  /** up to 10 examples of misses and false positives */
  examples: string[];
  /** behaviour -> verdict ('working' or the error code) -> count */
  codes: Partial<Record<Behaviour, Record<string, number>>>;
  /** responseTime of found working proxies minus their own delay (the farm's configured delay), ms: the honest response-time error */
  overheadMs: { p50: number; p90: number; p99: number; max: number } | null;
  /** the same difference's p99 per fifth of the list (list order = start order): where in the job the excess is; null for a fifth with none found */
  overheadP99ByFifth: (number | null)[];
  /** behaviour -> responseTime of its records, ms */
  timeMs: Partial<Record<Behaviour, { mean: number; p50: number; p99: number; max: number }>>;
}

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

export function assess(entries: readonly Entry[], records: readonly ResultRecord[], timeoutMs: number, marginMs = 250): Accuracy {
  const byKey = new Map<string, ResultRecord>();
  for (const r of records) byKey.set(`${r.proxy.host}:${r.proxy.port}`, r);
  const acc: Accuracy = {
    expectedWorking: 0,
    foundWorking: 0,
    borderline: 0,
    borderlineFound: 0,
    falsePositives: 0,
    lateAccepted: 0,
    missingRecords: 0,
    examples: [],
    codes: {},
    overheadMs: null,
    overheadP99ByFifth: [],
    timeMs: {},
  };
  const over: number[] = [];
  const byFifth: number[][] = [[], [], [], [], []];
  let pos = -1;
  const times = new Map<Behaviour, number[]>();
  for (const e of entries) {
    pos++;
    const r = byKey.get(`${e.host}:${e.port}`);
    if (r === undefined) {
      acc.missingRecords++;
      continue;
    }
    const verdict = r.status === 'working' ? 'working' : (r.error?.code ?? 'failed');
    let ts = times.get(e.behaviour);
    if (ts === undefined) times.set(e.behaviour, (ts = []));
    ts.push(parseFloat(r.responseTime));
    const per = (acc.codes[e.behaviour] ??= {});
    per[verdict] = (per[verdict] ?? 0) + 1;
    const works = e.behaviour === BEHAVIOURS.WORKING || e.behaviour === BEHAVIOURS.INSTANT;
    const d = e.delayMs ?? Infinity;
    const found = r.status === 'working';
    if (works && d < timeoutMs - marginMs) {
      acc.expectedWorking++;
      if (found) {
        acc.foundWorking++;
        over.push(parseFloat(r.responseTime) - d);
        byFifth[Math.floor((pos * 5) / entries.length)]!.push(parseFloat(r.responseTime) - d);
      } else if (acc.examples.length < 10) {
        acc.examples.push(`missed ${e.host}:${e.port} (delay ${d} ms): ${verdict} ${r.error?.message ?? ''}`);
      }
    } else if (works && d < timeoutMs) {
      acc.borderline++;
      if (found) acc.borderlineFound++;
    } else if (found && works) {
      acc.lateAccepted++;
      if (acc.examples.length < 10) acc.examples.push(`late answer accepted ${e.host}:${e.port} (delay ${d} ms >= timeout): working in ${r.responseTime}`);
    } else if (found) {
      acc.falsePositives++;
      if (acc.examples.length < 10) acc.examples.push(`false positive ${e.host}:${e.port} (${e.behaviour}, delay ${e.delayMs}): working in ${r.responseTime}`);
    }
  }
  for (const [b, ts] of times) {
    ts.sort((x, y) => x - y);
    acc.timeMs[b] = { mean: ts.reduce((x, y) => x + y, 0) / ts.length, p50: quantile(ts, 0.5), p99: quantile(ts, 0.99), max: ts[ts.length - 1]! };
  }
  acc.overheadP99ByFifth = byFifth.map((xs) => (xs.length === 0 ? null : quantile(xs.sort((a, b) => a - b), 0.99)));
  if (over.length > 0) {
    over.sort((a, b) => a - b);
    acc.overheadMs = { p50: quantile(over, 0.5), p90: quantile(over, 0.9), p99: quantile(over, 0.99), max: over[over.length - 1]! };
  }
  return acc;
}
