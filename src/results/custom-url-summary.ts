/**
 * `custom_url_validation` of the result file (seed "Check response",
 * DECISIONS "Responses and files") as a fold over CustomUrlResult (pure).
 *
 *   {summary: {total_urls_tested, total_proxies_tested, processing_time},
 *    per_url_summary: [{url, success_count, failed_count, success_rate,
 *                       successful_proxies: [{proxy: {host, port}}],
 *                       failed_proxies: [{proxy: {host, port}}]}]}
 *
 * `per_url_summary` is in the order of the job's rules; `success_rate` is
 * success / (success + failed) as "66.67%" ("0.00%" when nothing was tried);
 * proxies in each list are in input order (ascending proxy index), whatever
 * order the results arrived in. `total_proxies_tested` counts distinct
 * proxies. Memory: one number per (proxy, URL) result; the `{proxy}` objects
 * are only made when the result is produced. For big jobs `jsonChunks()`
 * produces the same JSON text in pieces (for the streaming result writer)
 * without building the object at all.
 */
import { ServiceError } from '../errors';
import { DOMAIN_ERROR_CODES } from '../error-codes';
import type { CustomUrlResult } from '../probe/types';
import { successRate } from './format';
import { formatProcessingTime } from './summary';

// the rate's format lives in format.ts, beside the record's other formats (samples.ts uses it too)
export { successRate };

export interface ProxyRef {
  proxy: { host: string; port: number };
}

export interface PerUrlSummary {
  url: string;
  success_count: number;
  failed_count: number;
  success_rate: string;
  successful_proxies: ProxyRef[];
  failed_proxies: ProxyRef[];
}

export interface CustomUrlValidation {
  summary: { total_urls_tested: number; total_proxies_tested: number; processing_time: string };
  per_url_summary: PerUrlSummary[];
}

/** Looks a proxy up by its index in the job. */
export type ProxyAt = (index: number) => { host: string; port: number };



const ref = (proxyAt: ProxyAt, i: number): ProxyRef => {
  const p = proxyAt(i);
  return { proxy: { host: p.host, port: p.port } };
};

const sorted = (xs: number[]): Float64Array => Float64Array.from(xs).sort();

export class CustomUrlFold {
  private readonly ok: number[][];
  private readonly bad: number[][];
  private readonly proxies = new Set<number>();
  private count = 0;

  constructor(private readonly urls: readonly string[]) {
    this.ok = urls.map(() => []);
    this.bad = urls.map(() => []);
  }

  /** Results folded so far. */
  get resultsSeen(): number {
    return this.count;
  }

  add(r: CustomUrlResult): void {
    const ok = this.ok[r.urlIndex];
    const bad = this.bad[r.urlIndex];
    if (ok === undefined || bad === undefined || !Number.isInteger(r.index) || r.index < 0) {
      throw new ServiceError(DOMAIN_ERROR_CODES.CUSTOM_URL_RESULT_OUT_OF_RANGE, `custom URL result for url ${r.urlIndex}, proxy ${r.index} is out of range`);
    }
    (r.success ? ok : bad).push(r.index);
    this.proxies.add(r.index);
    this.count++;
  }

  private summary(processingMs: number): CustomUrlValidation['summary'] {
    return {
      total_urls_tested: this.urls.length,
      total_proxies_tested: this.proxies.size,
      processing_time: formatProcessingTime(processingMs),
    };
  }

  /** The whole object (fine for small and medium jobs). */
  result(proxyAt: ProxyAt, processingMs: number): CustomUrlValidation {
    return {
      summary: this.summary(processingMs),
      per_url_summary: this.urls.map((url, u) => {
        const ok = this.ok[u] ?? [];
        const bad = this.bad[u] ?? [];
        return {
          url,
          success_count: ok.length,
          failed_count: bad.length,
          success_rate: successRate(ok.length, bad.length),
          successful_proxies: Array.from(sorted(ok), (i) => ref(proxyAt, i)),
          failed_proxies: Array.from(sorted(bad), (i) => ref(proxyAt, i)),
        };
      }),
    };
  }

  /** The same JSON text as JSON.stringify(result(...)), in pieces of at most ~`per` proxies. */
  *jsonChunks(proxyAt: ProxyAt, processingMs: number, per = 1000): Generator<string, void, undefined> {
    yield `{"summary":${JSON.stringify(this.summary(processingMs))},"per_url_summary":[`;
    for (let u = 0; u < this.urls.length; u++) {
      const ok = this.ok[u] ?? [];
      const bad = this.bad[u] ?? [];
      const head = {
        url: this.urls[u],
        success_count: ok.length,
        failed_count: bad.length,
        success_rate: successRate(ok.length, bad.length),
      };
      yield `${u === 0 ? '' : ','}${JSON.stringify(head).slice(0, -1)},"successful_proxies":[`;
      yield* list(sorted(ok), proxyAt, per);
      yield '],"failed_proxies":[';
      yield* list(sorted(bad), proxyAt, per);
      yield ']}';
    }
    yield ']}';
  }
}

function* list(indices: Float64Array, proxyAt: ProxyAt, per: number): Generator<string, void, undefined> {
  for (let start = 0; start < indices.length; start += per) {
    const parts: string[] = [];
    const end = Math.min(indices.length, start + per);
    for (let k = start; k < end; k++) parts.push(JSON.stringify(ref(proxyAt, indices[k]!)));
    yield (start === 0 ? '' : ',') + parts.join(',');
  }
}
