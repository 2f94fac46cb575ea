/** src/job-id.ts: the one job-id rule. */
import { describe, expect, test } from 'bun:test';
import { isJobId, JOB_ID, JOB_ID_PATTERN } from '../../src/job-id';

describe('job id', () => {
  test('3 to 64 letters, digits, "_" or "-"', () => {
    for (const ok of ['abc', 'A-1_z', 'web-0123456789abcdef', 'x'.repeat(64)]) expect(isJobId(ok)).toBe(true);
    for (const bad of ['', 'ab', 'x'.repeat(65), 'job.1', 'job 1', 'a/b', 'jöb', 'abc\n']) expect(isJobId(bad)).toBe(false);
  });

  test('the RegExp and the OpenAPI pattern are the same rule', () => {
    expect(JOB_ID.source).toBe(JOB_ID_PATTERN);
  });
});
