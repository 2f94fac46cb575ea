/**
 * What a job reports about itself (pure): the metadata block shared by the
 * check response and the result file.
 */
import { regionName } from '../regions';
import { formatProcessingTime, formatTimeout } from '../results/summary';
import type { JobMetadata } from './job-types';
import type { CheckRequest } from './request';

export function jobMetadata(jobId: string, req: CheckRequest, checked: number, elapsedMs: number): JobMetadata {
  return {
    region_used: req.region,
    region_name: regionName(req.region) ?? req.region,
    proxy_type: req.type,
    timeout_used: formatTimeout(req.timeoutMs),
    total_checked: checked,
    total_invalid: req.totalInvalid,
    total_duplicates: req.totalDuplicates,
    processing_time: formatProcessingTime(elapsedMs),
    job_id: jobId,
  };
}
