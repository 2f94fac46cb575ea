/** src/jobs/job-report.ts: the metadata block (pure). */
import { describe, expect, test } from 'bun:test';
import { jobMetadata } from '../../src/jobs/job-report';
import type { CheckRequest } from '../../src/jobs/request';
import { parseProxyList } from '../../src/proxy/parse';

describe('jobMetadata', () => {
  test('the contract block from the request, the count and the elapsed time', () => {
    const req: CheckRequest = { route: 'check', proxies: [], totalInvalid: 2, invalidLines: parseProxyList(['x', 'y:0']).invalidLines, totalDuplicates: 3, region: 'de1', type: 'socks5', timeoutMs: 5000, samples: 1, jobId: null, customUrls: [] };
    const m = jobMetadata('job-x', req, 10, 1234);
    expect(m).toMatchObject({ region_used: 'de1', proxy_type: 'socks5', total_checked: 10, total_invalid: 2, total_duplicates: 3, total_blocked: 0, job_id: 'job-x' });
    expect(m.invalid_lines).toEqual([
      { line: 1, text: 'x', reason: 'no port: expected host:port' },
      { line: 2, text: 'y:0', reason: 'port is not a number from 1 to 65535' },
    ]);
    expect(jobMetadata('job-x', req, 10, 1234, 4).total_blocked).toBe(4);
    expect(typeof m.region_name).toBe('string');
    expect(m.timeout_used).toMatch(/5/);
    expect(m.processing_time).toMatch(/1\.2/);
  });
});
