/**
 * The pure part of the dashboard's job follower (src/web/client/job-follow.ts):
 * GET /checks/{jobId}'s progress drawn as a progress message.
 */
import { expect, test } from 'bun:test';
import { jobProgress } from '../../src/web/client/job-follow';

test('a running job: the probing share of the bar, no ETA, the counts', () => {
  expect(jobProgress({ status: 'running', progress: { checked: 50, total: 200, working_so_far: 7 } })).toEqual({
    status: 'in_progress',
    progress: 27.5,
    eta: null,
    details: { message: 'Checking proxies: 50/200 done, 7 working', checked: 50, total: 200, working_so_far: 7 },
  });
  expect(jobProgress({ status: 'running', progress: { checked: 0, total: 0, working_so_far: 0 } }).progress).toBe(5);
});

test('ended jobs: completed at 100 % (ETA 0), failed and cancelled as failed', () => {
  const p = { checked: 200, total: 200, working_so_far: 7 };
  expect(jobProgress({ status: 'completed', progress: p })).toMatchObject({ status: 'completed', progress: 100, eta: 0 });
  expect(jobProgress({ status: 'failed', progress: p }).status).toBe('failed');
  expect(jobProgress({ status: 'cancelled', progress: p }).status).toBe('failed');
});
