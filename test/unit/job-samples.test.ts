/** src/jobs/samples.ts: task numbers of sampled jobs, and the per-proxy accumulator that folds a proxy once its last sample is in. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { SAMPLES_MAX } from '../../src/http/check-request';
import { proxyOfTask, sampleOfTask, SampleSets } from '../../src/jobs/samples';
import { packTasks, unpackTasks } from '../../src/probe/workers/packed-tasks';
import type { ProbeResult } from '../../src/probe/types';

const pass = (index: number, origin: string): ProbeResult => ({ index, status: 'working', statusCode: 200, responseTimeMs: 10 + index, anonymity: 'elite', origin, error: null });
const fail = (index: number): ProbeResult => ({ index, status: 'failed', statusCode: null, responseTimeMs: 5, anonymity: null, origin: null, error: { code: 'timeout', message: 't' } });

describe('task numbers', () => {
  test('task t is sample t % samples of proxy floor(t / samples); samples = 1 is the proxy index', () => {
    expect([0, 1, 2, 3, 4, 5].map((t) => [proxyOfTask(t, 3), sampleOfTask(t, 3)])).toEqual([[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]]);
    expect([0, 7, 99].map((t) => [proxyOfTask(t, 1), sampleOfTask(t, 1)])).toEqual([[0, 0], [7, 0], [99, 0]]);
  });

  test('every (proxy, sample) pair has exactly one task, and the largest job fits an Int32 task number', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10 }), fc.integer({ min: 1, max: 50 }), (samples, proxies) => {
        const pairs = new Set<string>();
        for (let t = 0; t < proxies * samples; t++) pairs.add(`${proxyOfTask(t, samples)}:${sampleOfTask(t, samples)}`);
        expect(pairs.size).toBe(proxies * samples);
        expect(proxyOfTask(proxies * samples - 1, samples)).toBe(proxies - 1);
      }),
    );
  });

  test('the last task of the largest job (MAX_PROXIES ceiling 10^7 x SAMPLES_MAX) survives the lanes\' packed Int32 task numbers', () => {
    const last = 10_000_000 * SAMPLES_MAX - 1;
    const [task] = unpackTasks(packTasks([{ index: last, proxy: { host: 'h', port: 1 } }]));
    expect(task!.index).toBe(last);
    expect(proxyOfTask(last, SAMPLES_MAX)).toBe(10_000_000 - 1);
  });
});

describe('SampleSets', () => {
  test('a proxy is folded once its last sample is in, in sample order whatever order they came in; then dropped', () => {
    const sets = new SampleSets(3);
    // proxy 1 = tasks 3, 4, 5; proxy 0 = tasks 0, 1, 2; interleaved, out of order
    expect(sets.add(pass(5, '10.0.0.5'))).toBeNull();
    expect(sets.add(fail(1))).toBeNull();
    expect(sets.add(pass(3, '10.0.0.3'))).toBeNull();
    expect(sets.pending).toBe(2);
    expect(sets.add(pass(2, '10.0.0.2'))).toBeNull();
    const p1 = sets.add(pass(4, '10.0.0.3'))!;
    expect(p1.proxy).toBe(1);
    expect(p1.result.index).toBe(3); // sample 0 of proxy 1, the first passing one by number
    expect(p1.samples).toMatchObject({ count: 3, succeeded: 3, exit_ips: ['10.0.0.3', '10.0.0.5'], unique_exit_ips: 2 });
    expect(sets.pending).toBe(1);
    const p0 = sets.add(pass(0, '10.0.0.9'))!;
    expect(p0.proxy).toBe(0);
    expect(p0.samples).toMatchObject({ count: 3, succeeded: 2, exit_ips: ['10.0.0.9', '10.0.0.2'] });
    expect(sets.pending).toBe(0);
  });

  test('property: any arrival order yields each proxy exactly once, the same fold as in sample order', () => {
    const samples = 4;
    const proxies = 5;
    const results = Array.from({ length: proxies * samples }, (_, t) => (t % 3 === 0 ? fail(t) : pass(t, `10.0.${t % 2}.1`)));
    const inOrder = new Map<number, unknown>();
    const ref = new SampleSets(samples);
    for (const r of results) {
      const out = ref.add(r);
      if (out !== null) inOrder.set(out.proxy, out);
    }
    fc.assert(
      fc.property(fc.shuffledSubarray(results, { minLength: results.length }), (shuffled) => {
        const sets = new SampleSets(samples);
        const got = new Map<number, unknown>();
        for (const r of shuffled) {
          const out = sets.add(r);
          if (out === null) continue;
          expect(got.has(out.proxy)).toBe(false);
          got.set(out.proxy, out);
        }
        expect(got.size).toBe(proxies);
        for (const [p, out] of got) expect(out).toEqual(inOrder.get(p));
        expect(sets.pending).toBe(0);
      }),
    );
  });
});
