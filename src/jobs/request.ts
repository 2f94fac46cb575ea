/**
 * What a check job is asked to do: the validated request, whatever door it
 * came in by (POST /check, POST /check-raw, later a queue). The HTTP layer's
 * pure validators (src/http/check-request.ts) build it; the job layer runs it.
 */
import type { CustomUrlRule } from '../probe/types';
import type { InvalidLines } from '../proxy/invalid-lines';
import type { ParsedProxy } from '../proxy/parse';
import type { CheckType } from '../proxy/types';

export interface CheckRequest {
  route: 'check' | 'check-raw';
  proxies: ParsedProxy[];
  totalInvalid: number;
  /** The invalid lines themselves (number, text, reason): the first 20 in the response, all in the result file. */
  invalidLines: InvalidLines;
  totalDuplicates: number;
  region: string;
  /** One protocol, or 'auto' (each tried: src/probe/auto.ts). */
  type: CheckType;
  timeoutMs: number;
  /**
   * Probes per proxy (1..10, default 1), each on a fresh connection with the
   * whole `timeoutMs`; charged per probe (src/jobs/samples.ts). 1 = the
   * contract's check, nothing added to the response.
   */
  samples: number;
  jobId: string | null;
  customUrls: CustomUrlRule[];
}

/** Who runs a job: the account it is charged to. */
export interface JobOwner {
  id: string;
}
