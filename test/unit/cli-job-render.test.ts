/**
 * The CLI's pure job pieces: src/cli/job-render.ts (status text, the note
 * after --async) and progressOfJob of src/cli/job-follow.ts (GET's progress
 * as the bar's input), with the bar's own tracker reading it.
 */
import { describe, expect, test } from 'bun:test';
import type { JobBody } from '../../src/cli/api-client';
import { progressOfJob } from '../../src/cli/job-follow';
import { jobHints, renderAccepted, renderJob } from '../../src/cli/job-render';
import { PHASES, ProgressTracker } from '../../src/cli/progress-bar';

const running: JobBody = { jobId: 'job-1', status: 'running', created_at: '2026-11-22T10:00:00.000Z', progress: { checked: 250, total: 1000, working_so_far: 40 } };

describe('renderJob', () => {
  test('running: counts, how long, what to do next', () => {
    expect(renderJob(running, new Date('2026-11-22T10:00:12.500Z'))).toBe(
      [
        'Job job-1: running',
        '  checked  250 / 1,000 (25.0%)',
        '  working  40',
        '  started  2026-11-22T10:00:00.000Z, running for 12.5 s',
        '',
        jobHints('job-1'),
      ].join('\n'),
    );
  });

  test('cancelled and failed: the code and what came back', () => {
    const ended = { ...running, finished_at: '2026-11-22T10:00:03.000Z' };
    const c = renderJob({ ...ended, status: 'cancelled', error: 'client_cancelled' }, new Date());
    expect(c).toContain('Job job-1: cancelled (client_cancelled)');
    expect(c).toContain('  ended    2026-11-22T10:00:03.000Z, after 3.0 s');
    expect(c).toContain('the checks not performed were refunded');
    expect(c).not.toContain('proxycheck wait');
    expect(renderJob({ ...ended, status: 'failed', error: 'interrupted' }, new Date())).toContain('every check it reserved was refunded');
  });
});

test('renderAccepted names the job and the three commands', () => {
  const text = renderAccepted({ jobId: 'big-1', status: 'running', status_url: 'http://x/checks/big-1', progress_url: 'ws://x/ws?jobId=big-1' }, 100_000);
  expect(text.split('\n')[0]).toBe('Submitted 100,000 entries as job big-1: it runs on the server whatever happens to this terminal.');
  for (const cmd of ['wait', 'status', 'cancel']) expect(text).toContain(`proxycheck ${cmd} big-1`);
});

describe('progressOfJob', () => {
  test('running is probing (until all are checked: writing); the tracker reads it', () => {
    const m = progressOfJob(running);
    expect(m).toEqual({ status: 'in_progress', currentStep: 'proxy_check_batch_1_of_1', progress: 27.5, eta: null, details: { checked: 250, total: 1000, working_so_far: 40 } });
    const v = new ProgressTracker(0).update(m, 1000);
    expect(v).toMatchObject({ phase: PHASES.PROBING, checked: 250, total: 1000, working: 40 });
    expect(progressOfJob({ status: 'running', progress: { checked: 1000, total: 1000, working_so_far: 40 } }).currentStep).toBe('writing_results');
  });

  test('ended jobs: completed / failed', () => {
    expect(progressOfJob({ ...running, status: 'completed' }).status).toBe('completed');
    expect(progressOfJob({ ...running, status: 'cancelled' }).status).toBe('failed');
    expect(progressOfJob({ status: 'running', progress: { checked: 0, total: 0, working_so_far: 0 } }).progress).toBe(5);
  });
});
