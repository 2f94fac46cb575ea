/** Tests for src/jobs/progress.ts: message shape per step, and the throttle with a fake clock and timer. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import {
  progressBatchSize,
  progressMessage,
  ProgressThrottle,
  type ProgressMessage,
  type ProgressState,
} from '../../src/jobs/progress';
import { FakeClock } from '../helpers/fake-clock';

const T0 = Date.UTC(2025, 0, 2, 3, 4, 5);
const base: ProgressState = { jobId: 'job_1', phase: 'validating', total: 0, checked: 0, working: 0, hasCustomUrls: false, now: T0 };

describe('progressMessage', () => {
  test('exact shape while validating', () => {
    expect(progressMessage(base)).toEqual({
      jobId: 'job_1',
      status: 'in_progress',
      currentStep: 'validating',
      stepsCompleted: 0,
      progress: 0,
      eta: null,
      details: { message: 'Validating proxy list', batches_done: 0, working_so_far: 0, checked: 0, total: 0 },
      timestamp: '2025-01-02T03:04:05.000Z',
    });
  });

  test('balance step', () => {
    const m = progressMessage({ ...base, phase: 'checking_balance', total: 1000 });
    expect(m.currentStep).toBe('checking_balance');
    expect(m.stepsCompleted).toBe(1);
    expect(m.progress).toBe(2);
  });

  test('batches, progress and eta while probing', () => {
    // 1000 proxies -> batches of 50 -> 20 batches
    expect(progressBatchSize(1000)).toBe(50);
    const s: ProgressState = { ...base, phase: 'probing', total: 1000, checked: 0, probeStartedAt: T0, now: T0 };
    let m = progressMessage(s);
    expect(m.currentStep).toBe('proxy_check_batch_1_of_20');
    expect(m.stepsCompleted).toBe(2);
    expect(m.progress).toBe(5);
    expect(m.eta).toBeNull();
    m = progressMessage({ ...s, checked: 250, working: 40, now: T0 + 5000 });
    expect(m.currentStep).toBe('proxy_check_batch_6_of_20');
    expect(m.details).toEqual({
      message: 'Checking proxies: 250/1000 done, 40 working (batch 6 of 20)',
      batches_done: 5,
      working_so_far: 40,
      checked: 250,
      total: 1000,
    });
    expect(m.stepsCompleted).toBe(7);
    expect(m.progress).toBe(27.5);
    expect(m.eta).toBe(15);
    m = progressMessage({ ...s, checked: 1000, now: T0 + 9000 });
    expect(m.currentStep).toBe('proxy_check_batch_20_of_20');
    expect(m.details.batches_done).toBe(20);
    expect(m.progress).toBe(95);
    expect(m.eta).toBe(0);
  });

  test('custom URLs, writing, completed: steps add up', () => {
    const s: ProgressState = { ...base, total: 10, checked: 10, working: 4, hasCustomUrls: true };
    const probing = progressMessage({ ...s, phase: 'probing', checked: 5 });
    expect(probing.currentStep).toBe('proxy_check_batch_1_of_1');
    expect(probing.progress).toBe(45);
    const cu = progressMessage({ ...s, phase: 'custom_url_validation', customChecked: 4, customTotal: 8, customStartedAt: T0 - 2000 });
    expect(cu.currentStep).toBe('custom_url_validation');
    expect(cu.stepsCompleted).toBe(3);
    expect(cu.progress).toBe(90);
    expect(cu.eta).toBe(2);
    const w = progressMessage({ ...s, phase: 'writing_results' });
    expect(w.currentStep).toBe('writing_results');
    expect(w.stepsCompleted).toBe(4);
    const done = progressMessage({ ...s, phase: 'completed' });
    expect(done.status).toBe('completed');
    expect(done.stepsCompleted).toBe(5);
    expect(done.progress).toBe(100);
    expect(done.eta).toBe(0);
    expect(done.details.message).toBe('Completed: 4 of 10 proxies working');
    expect(progressMessage({ ...s, hasCustomUrls: false, phase: 'completed' }).stepsCompleted).toBe(4);
  });

  test('failed keeps the step it failed in, no eta, message override', () => {
    const m = progressMessage({
      ...base,
      phase: 'failed',
      failedIn: 'probing',
      total: 100,
      checked: 60,
      probeStartedAt: T0 - 1000,
      message: 'Service shutting down',
    });
    expect(m.status).toBe('failed');
    expect(m.currentStep).toBe('proxy_check_batch_2_of_2');
    expect(m.eta).toBeNull();
    expect(m.details.message).toBe('Service shutting down');
    expect(progressMessage({ ...base, phase: 'failed' }).details.message).toBe('Failed during validating');
  });

  test('fast-check: invariants over arbitrary states', () => {
    const phases = ['validating', 'checking_balance', 'probing', 'custom_url_validation', 'writing_results', 'completed', 'failed'] as const;
    fc.assert(
      fc.property(
        fc.constantFrom(...phases),
        fc.integer({ min: 0, max: 200_000 }),
        fc.integer({ min: 0, max: 200_000 }),
        fc.boolean(),
        fc.integer({ min: 0, max: 100_000 }),
        (phase, total, checked, hasCustomUrls, dt) => {
          const m = progressMessage({ ...base, phase, total, checked, working: Math.min(checked, total), hasCustomUrls, probeStartedAt: T0, now: T0 + dt });
          expect(m.progress).toBeGreaterThanOrEqual(0);
          expect(m.progress).toBeLessThanOrEqual(100);
          expect(m.details.checked).toBeLessThanOrEqual(m.details.total);
          if (m.eta !== null) expect(Number.isInteger(m.eta) && m.eta >= 0).toBe(true);
          const batch = /^proxy_check_batch_(\d+)_of_(\d+)$/.exec(m.currentStep);
          if (batch) {
            const i = Number(batch[1]);
            const n = Number(batch[2]);
            expect(i >= 1 && i <= n && n <= 50).toBe(true);
          }
          expect(Object.keys(m).sort()).toEqual(['currentStep', 'details', 'eta', 'jobId', 'progress', 'status', 'stepsCompleted', 'timestamp']);
        },
      ),
    );
  });
});

const msg = (n: number, status: ProgressMessage['status'] = 'in_progress') => ({ status, n });

describe('ProgressThrottle', async () => {
  test('first message passes, the burst is coalesced to the latest, sent after the interval', async () => {
    const clock = new FakeClock();
    const out: { n: number }[] = [];
    const th = new ProgressThrottle<{ status: string; n: number }>({ emit: (m) => out.push(m), clock });
    th.offer(msg(1));
    for (let i = 2; i <= 50; i++) {
      await clock.advance(1);
      th.offer(msg(i));
    }
    expect(out.map((m) => m.n)).toEqual([1]);
    await clock.advance(49); // t = 98
    expect(out.map((m) => m.n)).toEqual([1]);
    await clock.advance(2); // t = 100
    expect(out.map((m) => m.n)).toEqual([1, 50]);
    expect(clock.pending).toBe(0);
    await clock.advance(500);
    th.offer(msg(51));
    expect(out.map((m) => m.n)).toEqual([1, 50, 51]);
  });

  test('at most ~10 per second however many offers', async () => {
    const clock = new FakeClock();
    let count = 0;
    const th = new ProgressThrottle<{ status: string; n: number }>({ emit: () => count++, clock });
    for (let i = 0; i < 10_000; i++) {
      th.offer(msg(i));
      await clock.advance(1); // 10 s in total
    }
    await clock.advance(1000);
    expect(count).toBeGreaterThanOrEqual(99);
    expect(count).toBeLessThanOrEqual(102);
  });

  test('the final message always passes at once, drops the waiting one, clears the timer, closes', async () => {
    const clock = new FakeClock();
    const out: { status: string; n: number }[] = [];
    const th = new ProgressThrottle<{ status: string; n: number }>({ emit: (m) => out.push(m), clock });
    th.offer(msg(1));
    th.offer(msg(2));
    expect(clock.pending).toBe(1);
    th.offer(msg(3, 'completed'));
    expect(out).toEqual([msg(1), msg(3, 'completed')]);
    expect(clock.pending).toBe(0);
    expect(th.closed).toBe(true);
    th.offer(msg(4));
    th.offer(msg(5, 'failed'));
    await clock.advance(1000);
    expect(out.length).toBe(2);
  });

  test('failed is final too; close() is idempotent and silences the timer', async () => {
    const clock = new FakeClock();
    const out: number[] = [];
    const th = new ProgressThrottle<{ status: string; n: number }>({ emit: (m) => out.push(m.n), clock });
    th.offer(msg(1, 'failed'));
    expect(out).toEqual([1]);
    const th2 = new ProgressThrottle<{ status: string; n: number }>({ emit: (m) => out.push(m.n), clock });
    th2.offer(msg(2));
    th2.offer(msg(3));
    th2.close();
    th2.close();
    expect(clock.pending).toBe(0);
    await clock.advance(1000);
    expect(out).toEqual([1, 2]);
  });

  test('an emit that throws from the timer goes to onError', async () => {
    const clock = new FakeClock();
    const errors: unknown[] = [];
    let calls = 0;
    const th = new ProgressThrottle<{ status: string; n: number }>({
      emit: () => {
        calls++;
        if (calls === 2) throw new Error('socket gone');
      },
      onError: (e) => errors.push(e),
      clock,
    });
    th.offer(msg(1));
    th.offer(msg(2));
    await clock.advance(100);
    expect(errors.length).toBe(1);
    await clock.advance(100);
    th.offer(msg(3));
    expect(calls).toBe(3);
  });
});
