/**
 * `samples` (an extension): one proxy probed several times, each probe on a
 * fresh connection, folded into its one record. Pure.
 *
 * `foldSamples(results)` takes a proxy's sample results in sample order
 * (sample 0 first; the order the probes were numbered in, not the order
 * they finished in, so the record never depends on timing) and gives:
 *
 * - `result`: the probe result the record is built from: the first passing
 *   sample (its status code, response time, anonymity, origin, protocols; the
 *   geo of its origin), so `status` is `working` when at least one passed.
 *   When none passed: the first sample that failed for a reason of the
 *   proxy's, i.e. not `checker_overloaded` (our own shortage says nothing
 *   about the proxy); the first sample when every one was ours.
 * - `samples`: the record's block
 *     {count, succeeded, success_rate, exit_ips, unique_exit_ips,
 *      response_time_ms: {min, p50, max} | null}
 *   `count` is the samples folded (a sample the checker never ran counts as
 *   one that did not pass); `success_rate` is succeeded / count as "66.67%",
 *   the format of every rate in the result file (format.ts);
 *   `exit_ips` the distinct origins the judge saw through the passing
 *   samples, in sample order; `response_time_ms` over the passing samples,
 *   milliseconds with 2 decimals as numbers, p50 the nearest-rank median
 *   (an observed value: the lower middle one of an even count); null when no
 *   sample passed.
 */
import { ServiceError } from '../errors';
import { DOMAIN_ERROR_CODES } from '../error-codes';
import type { ProbeResult } from '../probe/types';
import { successRate } from './format';

export interface SamplesBlock {
  count: number;
  succeeded: number;
  /** "66.67%" */
  success_rate: string;
  /** distinct exit addresses of the passing samples, first seen first */
  exit_ips: string[];
  unique_exit_ips: number;
  /** over the passing samples; null when none passed */
  response_time_ms: { min: number; p50: number; max: number } | null;
}

const ms2 = (ms: number): number => Math.round(Math.max(0, ms) * 100) / 100;

/** The nearest-rank median of a non-empty ascending list. */
export function nearestRankMedian(sorted: readonly number[]): number {
  return sorted[Math.ceil(sorted.length / 2) - 1]!;
}

export function foldSamples(results: readonly ProbeResult[]): { result: ProbeResult; samples: SamplesBlock } {
  if (results.length === 0) throw new ServiceError(DOMAIN_ERROR_CODES.SAMPLES_EMPTY, 'a proxy was folded without any sample');
  let firstPass: ProbeResult | null = null;
  let firstFail: ProbeResult | null = null;
  const exits: string[] = [];
  const times: number[] = [];
  for (const r of results) {
    if (r.status === 'working') {
      firstPass ??= r;
      times.push(r.responseTimeMs);
      if (r.origin !== null && !exits.includes(r.origin)) exits.push(r.origin);
    } else if (firstFail === null && r.error?.code !== 'checker_overloaded') {
      firstFail = r;
    }
  }
  times.sort((a, b) => a - b);
  const succeeded = times.length;
  return {
    result: firstPass ?? firstFail ?? results[0]!,
    samples: {
      count: results.length,
      succeeded,
      success_rate: successRate(succeeded, results.length - succeeded),
      exit_ips: exits,
      unique_exit_ips: exits.length,
      response_time_ms: succeeded === 0 ? null : { min: ms2(times[0]!), p50: ms2(nearestRankMedian(times)), max: ms2(times[succeeded - 1]!) },
    },
  };
}
