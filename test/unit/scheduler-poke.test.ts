import { expect, test } from 'bun:test';
import fc from 'fast-check';
import { RegionScheduler } from '../../src/jobs/scheduler';

test('poke: a region whose capacity rose grants its waiting jobs at once', () => {
  let cap = 4;
  const s = new RegionScheduler(() => cap, { minGrant: 1 });
  const grants: number[] = [];
  s.register('j', 'us1', 10, (n) => grants.push(n));
  expect(grants).toEqual([4]);
  cap = 10;
  expect(grants).toEqual([4]); // nothing runs a pass by itself
  s.poke('us1');
  expect(grants).toEqual([4, 6]);
  s.poke('us1'); // nothing pending: no grant
  s.poke('de1'); // no job there: nothing
  expect(grants).toEqual([4, 6]);
});

test('demand: probes in flight plus probes waiting, per region; 0 once the jobs are done', () => {
  const s = new RegionScheduler(() => 4, { minGrant: 1 });
  expect(s.demand('us1')).toBe(0);
  const a = s.register('a', 'us1', 10, () => {}); // 4 in flight, 6 waiting
  const b = s.register('b', 'us1', 3, () => {}); // 3 waiting
  s.register('c', 'de1', 2, () => {});
  expect(s.demand('us1')).toBe(13);
  expect(s.demand('de1')).toBe(2);
  a.release(4); // 4 done: b gets 3 slots, a 1
  expect(s.demand('us1')).toBe(9);
  a.cancel(); // a's 5 waiting dropped; 1 still in flight
  expect(s.demand('us1')).toBe(4);
  a.release(1);
  b.release(3);
  expect(s.demand('us1')).toBe(0);
});

test('setGlobalCapacity: lowering revokes nothing and stops grants; raising grants every waiting region at once', () => {
  const s = new RegionScheduler(() => 100, { minGrant: 1, globalCapacity: 10 });
  const us: number[] = [];
  const de: number[] = [];
  const a = s.register('a', 'us1', 50, (n) => us.push(n));
  const b = s.register('b', 'de1', 50, (n) => de.push(n));
  expect(s.totalInFlight).toBe(10);
  expect(de).toEqual([]);
  s.setGlobalCapacity(4); // 10 in flight stay in flight
  expect(s.totalInFlight).toBe(10);
  a.release(5); // 5 in flight > 4: no grant
  expect(s.totalInFlight).toBe(5);
  expect(us).toEqual([10]);
  expect(de).toEqual([]);
  a.cancel(); // us1 waits for nothing more; de1 still waits
  s.setGlobalCapacity(12); // every waiting region's pass runs: de1 takes the 7 free
  expect(s.totalInFlight).toBe(12);
  expect(de).toEqual([7]);
  s.setGlobalCapacity(12); // unchanged: nothing to do
  expect(de).toEqual([7]);
  b.cancel();
  expect(() => s.setGlobalCapacity(0)).toThrow();
  expect(() => new RegionScheduler(() => 1).setGlobalCapacity(5)).toThrow(); // no global cap to change
});

test('setStartBudget: at most n probes start until the next call; a budget that rose runs the waiting passes', () => {
  const s = new RegionScheduler(() => 100, { minGrant: 1, globalCapacity: 1000 });
  s.setStartBudget(5);
  const us: number[] = [];
  const a = s.register('a', 'us1', 50, (n) => us.push(n));
  expect(us).toEqual([5]);
  a.release(5); // slots free, but the budget is spent
  expect(s.totalInFlight).toBe(0);
  s.setStartBudget(0);
  expect(s.totalInFlight).toBe(0);
  s.setStartBudget(30);
  expect(s.totalInFlight).toBe(30);
  s.setStartBudget(Number.POSITIVE_INFINITY); // unlimited again: the region's 100
  expect(s.totalInFlight).toBe(45); // 50 - 5 released
  a.cancel();
  expect(() => s.setStartBudget(-1)).toThrow();
});

test('property: grants between two setStartBudget calls never exceed the budget, nor the global capacity set last', () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.oneof(
          fc.record({ op: fc.constant('register' as const), region: fc.constantFrom('us1', 'de1'), n: fc.integer({ min: 1, max: 200 }) }),
          fc.record({ op: fc.constant('release' as const), k: fc.nat(), n: fc.integer({ min: 1, max: 50 }) }),
          fc.record({ op: fc.constant('budget' as const), n: fc.integer({ min: 0, max: 100 }) }),
          fc.record({ op: fc.constant('cap' as const), n: fc.integer({ min: 1, max: 150 }) }),
        ),
        { maxLength: 60 },
      ),
      (ops) => {
        let since = 0;
        let budget = Number.POSITIVE_INFINITY;
        let cap = 120;
        const s = new RegionScheduler(() => 64, { minGrant: 1, globalCapacity: cap, jobShare: 0.9 });
        const jobs: ReturnType<RegionScheduler['register']>[] = [];
        const onGrant = (n: number) => {
          since += n;
          expect(since).toBeLessThanOrEqual(budget);
        };
        let inFlightBefore = 0;
        for (const o of ops) {
          inFlightBefore = s.totalInFlight;
          if (o.op === 'register') jobs.push(s.register(`j${jobs.length}`, o.region, o.n, onGrant));
          else if (o.op === 'release') {
            const j = jobs[o.k % Math.max(1, jobs.length)];
            if (j !== undefined && j.inFlight > 0) j.release(Math.min(j.inFlight, o.n));
          } else if (o.op === 'budget') {
            since = 0;
            budget = o.n;
            s.setStartBudget(o.n);
          } else {
            cap = o.n;
            s.setGlobalCapacity(o.n);
          }
          // a grant never takes the total above the cap (lowering it revokes nothing)
          if (s.totalInFlight > inFlightBefore) expect(s.totalInFlight).toBeLessThanOrEqual(cap);
        }
      },
    ),
  );
});
