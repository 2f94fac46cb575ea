/**
 * Micro-benchmark of the region scheduler's hot path (src/jobs/scheduler.ts):
 * a release and the pass that grants the freed slots again, with check jobs
 * only (what every /check pays), and with a background job listed beside
 * them (what checks pay once pool rounds run). Dispatch does nothing.
 *
 *   bun bench/micro-scheduler.ts
 *     mitata, this version.
 *   SCHEDULER_BASELINE=scheduler-old.ts bun bench/micro-scheduler.ts
 *     this version against another one put beside it in src/jobs/ (e.g.
 *     `git show main:src/jobs/scheduler.ts > src/jobs/scheduler-old.ts`),
 *     the check-only cases interleaved, 100 000 calls per sample, the best
 *     of 60 samples each: on a loaded machine mitata's figures move between
 *     runs by more than such a change, the best of interleaved samples less.
 */
import { bench, group, run, summary } from 'mitata';
import { RegionScheduler, type JobHandle } from '../src/jobs/scheduler';

type Ctor = typeof RegionScheduler;
const HUGE = 1e12;
const noop = () => {};

/** Each call: one job (in turn) releases up to `n`, and the pass grants them again. */
function releaser(jobs: JobHandle[], n: number): () => void {
  let i = 0;
  return () => {
    const j = jobs[i++ % jobs.length]!;
    j.release(Math.min(n, j.inFlight));
  };
}

/** The check-only cases: a name and a maker of the call to time. */
const cases: [string, (S: Ctor) => () => void][] = [
  ['1 check job, 512 slots, release 16', (S) => releaser([new S(() => 512, { jobShare: 0.95 }).register('a', 'us1', HUGE, noop)], 16)],
  [
    '8 check jobs, release 1',
    (S) => {
      const s = new S(() => 512, { jobShare: 0.95, minGrant: 1 });
      return releaser(Array.from({ length: 8 }, (_, k) => s.register(`j${k}`, 'us1', HUGE, noop)), 1);
    },
  ],
  [
    '3 regions under a global cap, release 16',
    (S) => {
      const s = new S(() => 12_288, { jobShare: 0.95, globalCapacity: 17_000 });
      return releaser(['us1', 'sg1', 'de1'].map((r) => s.register(r, r, HUGE, noop)), 16);
    },
  ],
  [
    'register a 10-probe check beside a big one, release, cancel',
    (S) => {
      const s = new S(() => 512, { jobShare: 0.95 });
      s.register('big', 'us1', HUGE, noop);
      let k = 0;
      return () => {
        const h = s.register(`s${k++}`, 'us1', 10, noop);
        h.release(h.inFlight);
        h.cancel();
      };
    },
  ],
];

const baseline = process.env.SCHEDULER_BASELINE;
if (baseline !== undefined) {
  const url = new URL(`../src/jobs/${baseline.replace(/^\.\//, '')}`, import.meta.url).href;
  const Old = ((await import(url)) as { RegionScheduler: Ctor }).RegionScheduler;
  const N = 100_000;
  const SAMPLES = 60;
  for (const [name, make] of cases) {
    const calls = { current: make(RegionScheduler), baseline: make(Old) };
    const best = { current: Infinity, baseline: Infinity };
    for (let r = 0; r < SAMPLES; r++) {
      // alternate which goes first, so neither always runs on a warmer cache
      for (const k of r % 2 === 0 ? (['current', 'baseline'] as const) : (['baseline', 'current'] as const)) {
        const f = calls[k];
        const t0 = Bun.nanoseconds();
        for (let i = 0; i < N; i++) f();
        best[k] = Math.min(best[k], (Bun.nanoseconds() - t0) / N);
      }
    }
    console.log(`${name}: current ${best.current.toFixed(1)} ns, baseline ${best.baseline.toFixed(1)} ns (${((best.current / best.baseline - 1) * 100).toFixed(1)} %)`);
  }
} else {
  summary(() => {
    group('release + re-grant', () => {
      for (const [name, make] of cases) bench(name, make(RegionScheduler));
      {
        const s = new RegionScheduler(() => 512, { jobShare: 0.95 });
        s.register('round', 'us1', HUGE, noop, 'background');
        bench('1 check job beside a background job, release 16', releaser([s.register('a', 'us1', HUGE, noop)], 16));
      }
      {
        const s = new RegionScheduler(() => 12_288, { jobShare: 0.95, globalCapacity: 17_000 });
        s.register('round', 'us1', HUGE, noop, 'background');
        bench('3 regions under a global cap beside a background job, release 16', releaser(['us1', 'sg1', 'de1'].map((r) => s.register(r, r, HUGE, noop)), 16));
      }
      {
        // the background job's own path: a release, and the pass that finds no check waiting
        const s = new RegionScheduler(() => 512, { jobShare: 0.95 });
        bench('a background job alone, release 16', releaser([s.register('round', 'us1', HUGE, noop, 'background')], 16));
      }
    });
  });
  await run();
}
