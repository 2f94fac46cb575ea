/**
 * Tests for src/jobs/scheduler.ts: capacity (fast-check over random arrivals,
 * releases, demand and cancels), fairness for a small job behind a huge one,
 * independent regions, cancel, re-entrant dispatch and a throwing dispatch.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { ServiceError } from '../../src/errors';
import { RegionScheduler, type JobHandle } from '../../src/jobs/scheduler';

interface SimJob {
  id: string;
  handle: JobHandle;
  granted: number;
  released: number;
  grants: number[];
  demand: number;
}

/** A job whose dispatch only records grants; the test decides when probes finish. */
function addJob(s: RegionScheduler, id: string, region: string, pending: number, log?: string[]): SimJob {
  const job = { id, granted: 0, released: 0, grants: [], demand: pending } as unknown as SimJob;
  job.handle = s.register(id, region, pending, (n) => {
    job.granted += n;
    job.grants.push(n);
    log?.push(`${id}:${n}`);
  });
  return job;
}

/** Release everything in flight until no job holds a slot (releases may grant the rest of the demand). */
function drainAll(handles: readonly JobHandle[]): void {
  for (let guard = 0; guard < 100_000; guard++) {
    const busy = handles.find((h) => h.inFlight > 0);
    if (busy === undefined) return;
    busy.release(busy.inFlight);
  }
}

/** The models' ops on a registered job (random: fast-check). */
type ModelOp = { k: 'release'; job: number; frac: number } | { k: 'demand'; job: number; n: number } | { k: 'cancel'; job: number };
interface Tracked {
  handle: JobHandle;
  granted: number;
  released: number;
  demand: number;
}

/** 1 to 60 random ops: the model's own (`register`, ...) or one of ModelOp on a registered job. */
function modelOps<R extends { k: string }>(own: fc.Arbitrary<R>): fc.Arbitrary<(R | ModelOp)[]> {
  const op = fc.oneof(
    own,
    fc.record({ k: fc.constant('release' as const), job: fc.nat(), frac: fc.double({ min: 0, max: 1, noNaN: true }) }),
    fc.record({ k: fc.constant('demand' as const), job: fc.nat(), n: fc.integer({ min: 0, max: 100 }) }),
    fc.record({ k: fc.constant('cancel' as const), job: fc.nat() }),
  );
  return fc.array(op as fc.Arbitrary<R | ModelOp>, { minLength: 1, maxLength: 60 });
}

/** Releases a fraction of the job's probes in flight, adds demand (refused once cancelled), or cancels it. */
function applyOp(j: Tracked, o: ModelOp): void {
  if (o.k === 'release') {
    const n = Math.floor(j.handle.inFlight * o.frac);
    j.released += n;
    j.handle.release(n);
  } else if (o.k === 'demand') {
    if (j.handle.state === 'active') {
      j.demand += o.n;
      j.handle.addDemand(o.n);
    } else {
      expect(() => j.handle.addDemand(1)).toThrow(ServiceError);
    }
  } else {
    j.handle.cancel();
  }
}

const isModelOp = (o: { k: string }): o is ModelOp => o.k === 'release' || o.k === 'demand' || o.k === 'cancel';

/**
 * Plays the ops (`own` plays the model's own: `register` registers and pushes
 * onto `jobs`), `check` after each; then (after `beforeDrain`) liveness:
 * rounds in which every probe in flight finishes, until none is left, and
 * every job not cancelled ran all its demand.
 */
function play<R extends { k: string }>(ops: (R | ModelOp)[], jobs: Tracked[], check: () => void, own: (o: R) => void, beforeDrain?: () => void): void {
  for (const o of ops) {
    if (!isModelOp(o)) own(o);
    else if (jobs.length > 0) applyOp(jobs[o.job % jobs.length]!, o);
    check();
  }
  beforeDrain?.();
  for (let round = 0; round < 100_000; round++) {
    const busy = jobs.filter((j) => j.handle.inFlight > 0);
    if (busy.length === 0) break;
    for (const j of busy) {
      const n = j.handle.inFlight;
      j.released += n;
      j.handle.release(n);
    }
    check();
  }
  for (const j of jobs) {
    expect(j.handle.inFlight).toBe(0);
    if (j.handle.state === 'active') {
      expect(j.handle.pending).toBe(0);
      expect(j.granted).toBe(j.demand);
    }
  }
}

const caps: Record<string, number> = { us1: 64, sg1: 64, tiny: 16, one: 1 };
const capacityFor = (r: string) => caps[r] ?? 0;

describe('capacity and grants', () => {
  test('a job alone fills the region in chunks of at most maxGrant', () => {
    const s = new RegionScheduler(capacityFor, { maxGrant: 16, minGrant: 4 });
    const j = addJob(s, 'a', 'us1', 1000);
    expect(j.grants).toEqual([16, 16, 16, 16]);
    expect(j.handle.inFlight).toBe(64);
    expect(j.handle.pending).toBe(1000 - 64);
    expect(s.inFlight('us1')).toBe(64);
  });

  test('grants wait for a chunk (min grant) but not past what the job still needs', () => {
    const s = new RegionScheduler(capacityFor, { maxGrant: 64, minGrant: 8 });
    const j = addJob(s, 'a', 'us1', 70);
    expect(j.grants).toEqual([64]);
    j.handle.release(5); // 5 free < min(8, 6 left)
    expect(j.grants).toEqual([64]);
    j.handle.release(1); // 6 free = the whole remainder
    expect(j.grants).toEqual([64, 6]);
    expect(j.handle.pending).toBe(0);
  });

  test('min grant is clamped for small regions', () => {
    const s = new RegionScheduler(capacityFor, { maxGrant: 64, minGrant: 16 });
    const big = addJob(s, 'big', 'tiny', 100); // capacity 16 -> effective min 2
    expect(big.granted).toBe(16);
    big.handle.release(1);
    expect(big.granted).toBe(16);
    big.handle.release(1);
    expect(big.granted).toBe(18);
    const one = new RegionScheduler(capacityFor, { minGrant: 16 });
    const j = addJob(one, 'x', 'one', 3);
    expect(j.grants).toEqual([1]);
    j.handle.release(1);
    expect(j.grants).toEqual([1, 1]);
  });

  test('unknown region and bad counts are refused with codes', () => {
    const s = new RegionScheduler(capacityFor);
    expect(() => s.register('a', 'mars', 1, () => {})).toThrow(ServiceError);
    try {
      s.register('a', 'mars', 1, () => {});
    } catch (e) {
      expect((e as ServiceError).code).toBe('scheduler_no_capacity');
    }
    expect(() => s.register('a', 'us1', -1, () => {})).toThrow('non-negative integer');
    const j = addJob(s, 'a', 'us1', 10);
    try {
      j.handle.release(11);
      expect.unreachable();
    } catch (e) {
      expect((e as ServiceError).code).toBe('scheduler_over_release');
    }
    expect(() => new RegionScheduler(capacityFor, { maxGrant: 0 })).toThrow(ServiceError);
  });

  test('fast-check: capacity never exceeded, accounting exact, no idle slot while work waits, everything finishes', () => {
    const regions = ['us1', 'sg1', 'tiny', 'one'] as const;
    const register = fc.record({ k: fc.constant('register' as const), region: fc.constantFrom(...regions), pending: fc.integer({ min: 0, max: 400 }) });
    fc.assert(
      fc.property(
        modelOps(register),
        fc.integer({ min: 1, max: 64 }),
        fc.integer({ min: 1, max: 64 }),
        (ops, maxGrant, minGrant) => {
          const s = new RegionScheduler(capacityFor, { maxGrant, minGrant });
          const jobs: (SimJob & { region: string })[] = [];
          const check = () => {
            for (const r of regions) {
              const mine = jobs.filter((j) => j.region === r);
              const inflight = mine.reduce((a, j) => a + j.handle.inFlight, 0);
              expect(s.inFlight(r)).toBe(inflight);
              expect(inflight).toBeLessThanOrEqual(capacityFor(r));
              for (const j of mine) {
                expect(j.granted - j.released).toBe(j.handle.inFlight);
                expect(j.granted + j.handle.pending).toBeLessThanOrEqual(j.demand);
                expect(j.grants.every((g) => g >= 1 && g <= maxGrant)).toBe(true);
              }
              // I3: work waits only while fewer slots are free than the chunk threshold
              const waiting = mine.filter((j) => j.handle.pending > 0 && j.handle.state === 'active');
              if (waiting.length > 0) {
                const free = capacityFor(r) - inflight;
                const effMin = Math.min(minGrant, maxGrant, Math.max(1, Math.floor(capacityFor(r) / 8)));
                expect(free).toBeLessThan(effMin);
              }
            }
          };
          play(ops, jobs, check, (o) => {
            const j = addJob(s, `j${jobs.length}`, o.region, o.pending) as SimJob & { region: string };
            j.region = o.region;
            jobs.push(j);
          });
          for (const r of regions) expect(s.snapshot(r).jobs).toEqual([]);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('fairness', () => {
  test('a 10-probe job behind a 20 000-probe job gets the very next freed slots', () => {
    const log: string[] = [];
    const s = new RegionScheduler(capacityFor, { maxGrant: 64, minGrant: 8 });
    const big = addJob(s, 'big', 'us1', 20_000, log);
    expect(big.handle.inFlight).toBe(64);
    const small = addJob(s, 'small', 'us1', 10, log);
    expect(small.granted).toBe(0);
    log.length = 0;
    // big's probes finish one at a time
    let events = 0;
    while (small.granted < 10) {
      big.handle.release(1);
      events++;
      expect(events).toBeLessThanOrEqual(10);
    }
    expect(events).toBe(10);
    expect(log).toEqual(['small:8', 'small:2']); // big got nothing back meanwhile
    expect(s.inFlight('us1')).toBe(64);
    // small's probes finish: the slots go back to big
    small.handle.release(10);
    expect(big.handle.inFlight).toBe(64);
    expect(small.handle.inFlight).toBe(0);
  });

  test('in probe rounds (all in-flight probes finish together) the small job is done one round after it arrives', () => {
    const s = new RegionScheduler((r) => (r === 'us1' ? 16 * 4 : 0), { maxGrant: 64, minGrant: 16 });
    const big = addJob(s, 'big', 'us1', 20_000);
    let round = 0;
    let small: SimJob | undefined;
    let smallDoneRound = -1;
    while (round < 20) {
      round++;
      if (round === 3) small = addJob(s, 'small', 'us1', 10);
      // end of the round: every probe in flight finishes
      const bigN = big.handle.inFlight;
      const smallN = small?.handle.inFlight ?? 0;
      if (small !== undefined && smallN > 0) {
        small.released += smallN;
        small.handle.release(smallN);
        if (small.handle.pending === 0 && small.handle.inFlight === 0 && smallDoneRound < 0) smallDoneRound = round;
      }
      big.handle.release(bigN);
    }
    // registered in round 3 with the region full; granted at the end of round 3; done at the end of round 4
    expect(smallDoneRound).toBe(4);
    expect(small!.granted).toBe(10);
  });

  test('jobs with large demand share a region equally (within one chunk)', () => {
    const s = new RegionScheduler(() => 512, { maxGrant: 32, minGrant: 8 });
    const a = addJob(s, 'a', 'r', 100_000);
    expect(a.handle.inFlight).toBe(512);
    const b = addJob(s, 'b', 'r', 100_000);
    const c = addJob(s, 'c', 'r', 100_000);
    // probes finish in arbitrary interleavings; shares converge
    const all = [a, b, c];
    let rnd = 7;
    for (let i = 0; i < 5000; i++) {
      rnd = (rnd * 1103515245 + 12345) & 0x7fffffff;
      const j = all[rnd % 3]!;
      if (j.handle.inFlight > 0) j.handle.release(1);
    }
    const shares = all.map((j) => j.handle.inFlight);
    expect(shares.reduce((x, y) => x + y, 0)).toBeGreaterThan(512 - 8);
    for (const sh of shares) expect(Math.abs(sh - 512 / 3)).toBeLessThanOrEqual(32 + 8);
  });
});

describe('regions, cancel, re-entrancy', () => {
  test('regions are independent', () => {
    const s = new RegionScheduler(capacityFor);
    const big = addJob(s, 'big', 'us1', 20_000);
    const other = addJob(s, 'other', 'sg1', 10);
    expect(big.handle.inFlight).toBe(64);
    expect(other.grants).toEqual([10]);
    expect(s.inFlight('sg1')).toBe(10);
    expect(s.snapshot('us1')).toEqual({
      capacity: 64,
      inFlight: 64,
      jobs: [{ runId: 'big', priority: 'check', inFlight: 64, pending: 20_000 - 64, state: 'active' }],
    });
  });

  test('cancel drops pending demand, keeps in-flight counted until released', () => {
    const s = new RegionScheduler(capacityFor, { minGrant: 1 });
    const a = addJob(s, 'a', 'us1', 1000);
    const b = addJob(s, 'b', 'us1', 1000);
    expect(b.granted).toBe(0);
    a.handle.cancel();
    a.handle.cancel(); // idempotent
    expect(a.handle.state).toBe('cancelled');
    expect(a.handle.pending).toBe(0);
    expect(a.handle.inFlight).toBe(64);
    expect(s.inFlight('us1')).toBe(64);
    a.handle.release(64);
    expect(a.granted).toBe(64); // never granted again
    expect(b.handle.inFlight).toBe(64);
    expect(() => a.handle.addDemand(1)).toThrow('cancelled');
    expect(s.snapshot('us1').jobs.map((j) => j.runId)).toEqual(['b']);
  });

  test('addDemand revives an idle job (custom-URL stage)', () => {
    const s = new RegionScheduler(capacityFor);
    const a = addJob(s, 'a', 'sg1', 5);
    a.handle.release(5);
    expect(s.snapshot('sg1').jobs).toEqual([]);
    a.handle.addDemand(3);
    expect(a.grants).toEqual([5, 3]);
  });

  test('dispatch may release synchronously (re-entrant) without recursion or over-grant', () => {
    const s = new RegionScheduler(capacityFor, { maxGrant: 4, minGrant: 1 });
    let granted = 0;
    let maxInFlight = 0;
    const h: { handle?: JobHandle } = {};
    h.handle = s.register('sync', 'one', 5000, (n) => {
      granted += n;
      maxInFlight = Math.max(maxInFlight, s.inFlight('one'));
      // probes "finish" immediately; the handle exists after the first grant returns
      if (h.handle !== undefined) h.handle.release(n);
    });
    // the very first grant happened inside register, before the handle was returned
    expect(h.handle.inFlight).toBe(1);
    h.handle.release(1);
    expect(granted).toBe(5000);
    expect(maxInFlight).toBeLessThanOrEqual(1);
    expect(h.handle.inFlight).toBe(0);
  });

  test('a throwing dispatch cancels that job and its slots go to others', () => {
    const errors: string[] = [];
    const s = new RegionScheduler(capacityFor, { onDispatchError: (_e, id) => errors.push(id) });
    const good = addJob(s, 'good', 'tiny', 10);
    const bad = s.register('bad', 'tiny', 100, () => {
      throw new Error('boom');
    });
    expect(errors).toEqual(['bad']);
    expect(bad.state).toBe('cancelled');
    expect(bad.inFlight).toBe(0);
    expect(s.inFlight('tiny')).toBe(10);
    const late = addJob(s, 'late', 'tiny', 6);
    expect(late.granted).toBe(6);
    expect(good.handle.inFlight).toBe(10);
  });
});

describe('global capacity', () => {
  test('never more in flight across regions than the global cap', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ region: fc.constantFrom('us1', 'sg1', 'tiny'), n: fc.integer({ min: 1, max: 200 }) }), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 100 }),
        fc.array(fc.nat(), { maxLength: 200 }),
        (arrivals, globalCapacity, picks) => {
          const s = new RegionScheduler(capacityFor, { maxGrant: 16, minGrant: 4, globalCapacity });
          const jobs = arrivals.map((a, i) => addJob(s, `j${i}`, a.region, a.n));
          const check = () => expect(s.totalInFlight).toBeLessThanOrEqual(globalCapacity);
          check();
          // release random in-flight probes, then drain everything: every job completes
          for (const p of picks) {
            const busy = jobs.filter((j) => j.handle.inFlight > 0);
            if (busy.length === 0) break;
            const j = busy[p % busy.length]!;
            j.handle.release(1);
            j.released++;
            check();
          }
          for (let guard = 0; guard < 100_000; guard++) {
            const busy = jobs.find((j) => j.handle.inFlight > 0);
            if (busy === undefined) break;
            busy.handle.release(busy.handle.inFlight);
            check();
          }
          for (const j of jobs) {
            expect(j.handle.pending).toBe(0);
            expect(j.handle.inFlight).toBe(0);
            expect(j.granted).toBe(j.demand);
          }
          expect(s.totalInFlight).toBe(0);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('onBusy: told on the grant that ends a time with nothing in flight, not on the others', () => {
    let busy = 0;
    const s = new RegionScheduler(capacityFor, { maxGrant: 16, minGrant: 1, onBusy: () => busy++ });
    const a = addJob(s, 'a', 'us1', 40);
    expect(a.grants).toEqual([16, 16, 8]);
    expect(busy).toBe(1);
    const b = addJob(s, 'b', 'sg1', 5); // another region, probes already in flight: not idle
    expect(b.granted).toBe(5);
    expect(busy).toBe(1);
    a.handle.release(40);
    b.handle.release(5);
    expect(s.totalInFlight).toBe(0);
    addJob(s, 'c', 'us1', 3);
    expect(busy).toBe(2);
  });

  test('a release in one region feeds a region that waits on the global cap', () => {
    const s = new RegionScheduler(capacityFor, { maxGrant: 16, minGrant: 1, globalCapacity: 64 });
    const big = addJob(s, 'big', 'us1', 1000);
    expect(s.totalInFlight).toBe(64);
    const small = addJob(s, 'small', 'sg1', 10);
    expect(small.granted).toBe(0); // nothing free anywhere
    big.handle.release(16);
    expect(small.granted).toBe(10); // the sg1 job got the freed slots first (fewest in flight)
    expect(s.totalInFlight).toBeLessThanOrEqual(64);
  });
});

describe('load limit (the adaptive limit: setLoadLimit)', () => {
  test('in flight never exceeds min(global capacity, load limit) while both move; lowering revokes nothing, raising grants at once, everything finishes', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ region: fc.constantFrom('us1', 'sg1'), n: fc.integer({ min: 1, max: 300 }) }), { minLength: 1, maxLength: 6 }),
        fc.option(fc.integer({ min: 1, max: 200 }), { nil: undefined }),
        fc.array(fc.record({ limit: fc.integer({ min: 1, max: 300 }), release: fc.nat() }), { maxLength: 100 }),
        (arrivals, globalCapacity, steps) => {
          const s = new RegionScheduler(capacityFor, { maxGrant: 16, minGrant: 4, ...(globalCapacity !== undefined ? { globalCapacity } : {}) });
          const jobs = arrivals.map((a, i) => addJob(s, `j${i}`, a.region, a.n));
          let cap = globalCapacity ?? Infinity;
          for (const step of steps) {
            const before = s.totalInFlight;
            s.setLoadLimit(step.limit);
            expect(s.loadLimit).toBe(step.limit);
            cap = Math.min(globalCapacity ?? Infinity, step.limit);
            expect(s.totalInFlight).toBeGreaterThanOrEqual(before); // nothing revoked
            // after the call no region could be granted more under the cap (I3 under the cap in force)
            if (s.totalInFlight < cap - 16) expect(jobs.every((j) => j.handle.pending === 0 || s.inFlight(j.handle.region) >= capacityFor(j.handle.region) - 16)).toBe(true);
            const busy = jobs.filter((j) => j.handle.inFlight > 0);
            if (busy.length > 0) {
              const j = busy[step.release % busy.length]!;
              const inFlightBefore = s.totalInFlight;
              j.handle.release(1);
              // a release under the cap in force grants again only up to it
              if (inFlightBefore <= cap) expect(s.totalInFlight).toBeLessThanOrEqual(cap);
            }
          }
          s.setLoadLimit(Infinity);
          drainAll(jobs.map((j) => j.handle));
          for (const j of jobs) expect(j.granted).toBe(j.demand);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('composes with the descriptors\' cap: the lower one binds, raising the limit back restores the cap', () => {
    const s = new RegionScheduler(capacityFor, { maxGrant: 16, minGrant: 1, globalCapacity: 64 });
    s.setLoadLimit(32);
    const big = addJob(s, 'big', 'us1', 1000);
    expect(s.totalInFlight).toBe(32);
    s.setGlobalCapacity(48); // the guard lowers its cap: the limit still binds
    big.handle.release(16);
    expect(s.totalInFlight).toBe(32);
    s.setLoadLimit(1000); // raised above the cap: the cap binds again, granted at once
    expect(s.totalInFlight).toBe(48);
    s.setLoadLimit(8); // lowered: nothing revoked, releases are not granted again
    big.handle.release(16);
    expect(s.totalInFlight).toBe(32);
    big.handle.release(30); // 2 left: granted again up to the limit
    expect(s.totalInFlight).toBe(8);
  });

  test('a scheduler without a global capacity: the limit binds across regions, and a newcomer still starts beside a big job', () => {
    const s = new RegionScheduler(capacityFor, { maxGrant: 16, minGrant: 1, jobShare: 0.75 });
    s.setLoadLimit(64);
    const big = addJob(s, 'big', 'us1', 1000);
    expect(s.totalInFlight).toBe(48); // the last quarter of the cap in force is the newcomers' headroom
    const small = addJob(s, 'small', 'sg1', 10);
    expect(small.granted).toBe(10);
    expect(() => s.setLoadLimit(0)).toThrow(ServiceError);
    big.handle.release(48);
    small.handle.release(10);
  });
});

describe('headroom for newcomers (jobShare)', () => {
  const hold = (s: RegionScheduler, id: string, region: string, demand: number) => {
    let granted = 0;
    const h = s.register(id, region, demand, (n) => {
      granted += n;
    });
    return { h, granted: () => granted };
  };

  test('a huge job alone holds the whole capacity; a 10-probe job then starts at once, in the H lent above it', () => {
    const s = new RegionScheduler(() => 1000, { jobShare: 0.9 });
    const big = hold(s, 'big', 'de1', 20_000);
    expect(big.granted()).toBe(1000);
    const small = hold(s, 'small', 'de1', 10);
    expect(small.granted()).toBe(10); // all ten started inside register(), nothing released yet
    expect(s.inFlight('de1')).toBe(1010);
    big.h.release(5); // still over capacity: the big job's releases are not re-granted
    expect(s.inFlight('de1')).toBe(1005);
    expect(big.granted()).toBe(1000);
    big.h.release(50); // under capacity again: refilled up to it, not into the headroom
    expect(s.inFlight('de1')).toBe(1000);
    expect(big.granted()).toBe(1045);
  });

  test('a newcomer never waits for more than the headroom holds (a cluster node: minGrant 32, a small region)', () => {
    // a node's share of 100 slots (beside another node's big job): H = 5 < the small job's 10
    const s = new RegionScheduler(() => 100, { jobShare: 0.95, minGrant: 32 });
    const big = hold(s, 'big', 'us1', 8_000);
    expect(big.granted()).toBe(100);
    const small = hold(s, 'small', 'us1', 10);
    expect(small.granted()).toBe(5); // the headroom's 5 (lent above) at once, not after the big job's first round
    const third = hold(s, 'third', 'us1', 10);
    expect(third.granted()).toBe(0); // the headroom is used up: it waits for a release
  });

  test('without headroom (the default) the newcomer waits for a release', () => {
    const s = new RegionScheduler(() => 1000);
    hold(s, 'big', 'de1', 20_000);
    const small = hold(s, 'small', 'de1', 10);
    expect(small.granted()).toBe(0);
  });

  test('a second huge job may take the headroom only up to H; the first one\'s releases refill it', () => {
    const s = new RegionScheduler(() => 1000, { jobShare: 0.9 });
    const a = hold(s, 'a', 'de1', 20_000);
    const b = hold(s, 'b', 'de1', 20_000);
    expect(b.granted()).toBe(100); // a newcomer until it holds H = 100
    expect(s.inFlight('de1')).toBe(1100);
    a.h.release(100); // a's first probes end: both hold >= H and the region is at capacity: nothing re-granted
    expect(s.inFlight('de1')).toBe(1000);
    const c = hold(s, 'c', 'de1', 50);
    expect(c.granted()).toBe(50);
    expect(s.inFlight('de1')).toBe(1050);
  });

  test('the global cap keeps its headroom as well', () => {
    const s = new RegionScheduler(() => 10_000, { jobShare: 0.9, globalCapacity: 500 });
    hold(s, 'big', 'us1', 20_000);
    expect(s.totalInFlight).toBeLessThanOrEqual(450);
    expect(s.totalInFlight).toBeGreaterThan(450 - 4); // grants stop below the smallest useful chunk
    const other = hold(s, 'small', 'de1', 20);
    expect(other.granted()).toBe(20);
  });

  test('property: a job holding H or more is granted only up to capacity; slots never exceed capacity + H', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 8, max: 400 }),
        fc.double({ min: 0.5, max: 1, noNaN: true }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 1, max: 500 }), fc.boolean()), { minLength: 1, maxLength: 60 }),
        (cap, share, ops) => {
          const s = new RegionScheduler(() => cap, { jobShare: share, maxGrant: 16 });
          const H = cap - Math.floor(cap * share);
          const jobs: { h: ReturnType<RegionScheduler['register']>; held: { n: number } }[] = [];
          for (const [kind, n, flag] of ops) {
            if (kind === 0 || jobs.length === 0) {
              const held = { n: 0 };
              const h = s.register(`j${jobs.length}`, 'r', n, (g) => {
                // state is updated before dispatch: a job that held H or more before this grant stays within the capacity
                if (held.n >= H) expect(s.inFlight('r')).toBeLessThanOrEqual(cap);
                held.n += g;
              });
              jobs.push({ h, held });
            } else {
              const j = jobs[n % jobs.length]!;
              if (flag && j.h.inFlight > 0) {
                const k = 1 + (n % j.h.inFlight);
                j.held.n -= k;
                j.h.release(k);
              } else if (!flag) j.h.cancel();
            }
            expect(s.inFlight('r')).toBeLessThanOrEqual(cap + H);
          }
        },
      ),
    );
  });
});

describe('priority classes (check, background)', () => {
  /** The header's reserve(x) and headroom, restated. */
  const headroomOf = (x: number, share: number) => (share === 1 || !Number.isFinite(x) ? 0 : x - Math.floor(x * share));
  const reserveOf = (x: number, h: number, m: number, s: number) =>
    !(x > 1) || !Number.isFinite(x) ? 0 : Math.min(x - 1, Math.max(h, x - Math.floor(x * s), m));

  interface ModelJob {
    id: string;
    region: string;
    bg: boolean;
    handle: JobHandle;
    granted: number;
    released: number;
    demand: number;
    grants: number[];
    /** The scheduler's tie-break, restated: registration order before the first grant, then the last grant's order. */
    order: number;
  }

  test('fast-check model: I1-I4 for checks, I5 for background (reserves of region, global capacity and start budget, checks first, I3 of both lists), a check starts at once beside background work, everything finishes', () => {
    const capsM: Record<string, number> = { us1: 64, sg1: 64, tiny: 16, two: 2, one: 1 };
    const regions = Object.keys(capsM);
    const own = fc.oneof(
      { weight: 4, arbitrary: fc.record({ k: fc.constant('register' as const), region: fc.constantFrom(...regions), pending: fc.integer({ min: 0, max: 400 }), bg: fc.boolean() }) },
      { weight: 1, arbitrary: fc.record({ k: fc.constant('budget' as const), n: fc.integer({ min: 0, max: 300 }) }) },
    );
    fc.assert(
      fc.property(
        modelOps(own),
        fc.integer({ min: 1, max: 64 }),
        fc.integer({ min: 1, max: 64 }),
        fc.constantFrom(1, 0.95, 0.9, 0.5),
        fc.constantFrom(1, 0.9, 0.75, 0.5, 0.1),
        fc.option(fc.integer({ min: 1, max: 200 }), { nil: undefined }),
        (ops, maxGrant, minGrant, jobShare, backgroundShare, globalCapacity) => {
          const G = globalCapacity ?? Number.POSITIVE_INFINITY;
          const s = new RegionScheduler((r) => capsM[r] ?? 0, { maxGrant, minGrant, jobShare, backgroundShare, ...(globalCapacity !== undefined ? { globalCapacity } : {}) });
          const mg = Math.min(minGrant, maxGrant);
          const effMin = (cap: number) => Math.min(mg, Math.max(1, Math.floor(Math.min(cap, G) / 8)));
          const gH = headroomOf(G, jobShare);
          const jobs: ModelJob[] = [];
          let seq = 0;
          // the start budget, restated: what is left of the last setStartBudget, and the part background leaves to checks
          let budget = Number.POSITIVE_INFINITY;
          let budgetKeep = 0;
          const active = (j: ModelJob) => j.handle.state === 'active';
          const waiting = (j: ModelJob) => active(j) && j.handle.pending > 0;
          /** The least-served waiting job of a list (the scheduler's choice). */
          const leastServed = (list: ModelJob[]) =>
            list.filter(waiting).sort((a, b) => a.handle.inFlight - b.handle.inFlight || a.order - b.order)[0];
          const register = (id: string, region: string, pending: number, bg: boolean) => {
            const j = { id, region, bg, granted: 0, released: 0, demand: pending, grants: [], order: ++seq - 2 ** 40 } as unknown as ModelJob;
            jobs.push(j);
            j.handle = s.register(
              id,
              region,
              pending,
              (n) => {
                j.order = ++seq;
                j.granted += n;
                j.grants.push(n);
                budget -= n;
                expect(budget).toBeGreaterThanOrEqual(0);
                if (!bg) return;
                // I5 at the grant (state already updated): no check of the region waits, the reserves are kept
                const cap = capsM[region]!;
                expect(jobs.some((o) => o.region === region && !o.bg && waiting(o))).toBe(false);
                expect(s.inFlight(region)).toBeLessThanOrEqual(cap - reserveOf(cap, headroomOf(cap, jobShare), effMin(cap), backgroundShare));
                expect(s.totalInFlight).toBeLessThanOrEqual(G - reserveOf(G, gH, effMin(G), backgroundShare));
                expect(budget).toBeGreaterThanOrEqual(budgetKeep);
              },
              bg ? 'background' : 'check',
            );
            return j;
          };
          const check = () => {
            const total = jobs.reduce((a, j) => a + j.handle.inFlight, 0);
            expect(s.totalInFlight).toBe(total);
            expect(total).toBeLessThanOrEqual(G);
            for (const r of regions) {
              const cap = capsM[r]!;
              const H = headroomOf(cap, jobShare);
              const mine = jobs.filter((j) => j.region === r);
              const used = mine.reduce((a, j) => a + j.handle.inFlight, 0);
              const bgUsed = mine.filter((j) => j.bg).reduce((a, j) => a + j.handle.inFlight, 0);
              // I1, I2
              expect(s.inFlight(r)).toBe(used);
              expect(used).toBeLessThanOrEqual(cap + H);
              expect(s.demand(r)).toBe(s.demand(r, 'check') + s.demand(r, 'background'));
              expect(s.demand(r, 'background')).toBe(mine.filter((j) => j.bg).reduce((a, j) => a + j.handle.inFlight + j.handle.pending, 0));
              for (const j of mine) {
                expect(j.granted - j.released).toBe(j.handle.inFlight);
                expect(j.granted + j.handle.pending).toBeLessThanOrEqual(j.demand);
                expect(j.grants.every((g) => g >= 1 && g <= maxGrant)).toBe(true);
              }
              // I3 of the check list: work waits only while its least-served job's free slots are below its threshold
              const best = leastServed(mine.filter((j) => !j.bg));
              if (best !== undefined) {
                const f = best.handle.inFlight;
                const free = Math.min(cap - used + (f < H ? H : 0), G - total - (f >= gH ? gH : 0), budget);
                const room = Math.min(f < H ? H - f : Infinity, f < gH ? gH - f : Infinity);
                expect(free).toBeLessThan(Math.min(effMin(cap), best.handle.pending, maxGrant, Math.max(1, room)));
                continue;
              }
              // I3 of the background list (no check waits here)
              const bgBest = leastServed(mine.filter((j) => j.bg));
              if (bgBest !== undefined) {
                const m = effMin(cap);
                const R = reserveOf(cap, H, m, backgroundShare);
                const gR = reserveOf(G, gH, effMin(G), backgroundShare);
                const most = Math.min(cap - R, G - gR);
                const bgFree = Math.min(cap - R - used, G - gR - total, budget - budgetKeep);
                expect(bgFree).toBeLessThan(Math.min(m, bgBest.handle.pending, maxGrant, Math.max(1, most)));
              }
              expect(bgUsed).toBeLessThanOrEqual(used);
            }
          };
          const setBudget = (n: number) => {
            budget = n; // before the call: a budget that rose grants inside it
            budgetKeep = !Number.isFinite(n) || n <= 1 ? 0 : Math.min(n - 1, Math.max(n - Math.floor(n * backgroundShare), mg));
            s.setStartBudget(n);
          };
          play(
            ops,
            jobs,
            check,
            (o) => {
              if (o.k === 'budget') return setBudget(o.n);
              const cap = capsM[o.region]!;
              const m = effMin(cap);
              // "starts at once": only background work holds slots (here, and anywhere under a global cap),
              // and the start budget (which checks that ended may have used up) allows it
              const onlyBackground = jobs.every((j) => j.bg || (j.handle.inFlight === 0 && !waiting(j)));
              const need = Math.min(o.pending, maxGrant, reserveOf(cap, headroomOf(cap, jobShare), m, backgroundShare), reserveOf(G, gH, effMin(G), backgroundShare));
              const budgetBefore = budget;
              const j = register(`j${jobs.length}`, o.region, o.pending, o.bg);
              if (!o.bg && onlyBackground && cap >= 2 && G >= 2 && budgetBefore >= need) expect(j.granted).toBeGreaterThanOrEqual(need);
            },
            () => setBudget(Number.POSITIVE_INFINITY),
          );
          for (const r of regions) expect(s.snapshot(r).jobs).toEqual([]);
        },
      ),
      { numRuns: 400 },
    );
  });

  test('a load limit lowered below what background holds: a check still starts at once, up to the checks\' reserve of the limit, and background is not granted again while over', () => {
    // region 512, descriptors' cap 4096: background holds 512 - 52 = 460; the limit falls to 64,
    // reserve(64) = max(64 - floor(64 x 0.9) = 7, 4) = 7: checks see background as 57
    const s = new RegionScheduler(() => 512, { globalCapacity: 4096 });
    let bgGranted = 0;
    const round = s.register('round', 'us1', 100_000, (n) => (bgGranted += n), 'background');
    expect(round.inFlight).toBe(460);
    s.setLoadLimit(64);
    const small = addJob(s, 'small', 'us1', 10);
    expect(small.granted).toBe(7); // inside register(), before any background probe ended
    small.handle.release(7);
    expect(small.granted).toBe(10); // the rest at its own releases
    const before = bgGranted;
    round.release(100);
    expect(bgGranted).toBe(before); // background stays over the limit until it falls below its share
    expect(s.totalInFlight).toBe(360 + 3);
    small.handle.release(3);
    round.release(round.inFlight - 40); // background now under its share (57): it is granted up to it
    expect(round.inFlight).toBe(57);
    expect(s.totalInFlight).toBeLessThanOrEqual(64);
  });

  test('fast-check: under a moving load limit L, a check\'s grant never makes checks + min(background, L - reserve(L)) exceed L, nor anything the descriptors\' cap; a lone check beside background starts at once', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ bg: fc.boolean(), n: fc.integer({ min: 1, max: 400 }), limit: fc.integer({ min: 1, max: 600 }), release: fc.nat(), frac: fc.double({ min: 0, max: 1, noNaN: true }) }), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 8, max: 700 }),
        (steps, fd) => {
          const s = new RegionScheduler(() => 512, { globalCapacity: fd, maxGrant: 32, minGrant: 4 });
          const jobs: { bg: boolean; h: JobHandle; granted: number; demand: number }[] = [];
          let L = Infinity;
          const checksIn = () => jobs.filter((j) => !j.bg).reduce((a, j) => a + j.h.inFlight, 0);
          const bgIn = () => jobs.filter((j) => j.bg).reduce((a, j) => a + j.h.inFlight, 0);
          const seen = () => {
            const m = Math.min(4, Math.max(1, Math.floor(Math.min(512, fd, L) / 8)));
            return checksIn() + Math.min(bgIn(), L - reserveOf(L, 0, m, 0.9));
          };
          for (const step of steps) {
            const checksBefore = checksIn();
            const onlyBackground = checksBefore === 0;
            const j = { bg: step.bg, granted: 0, demand: step.n } as { bg: boolean; h: JobHandle; granted: number; demand: number };
            j.h = s.register(`j${jobs.length}`, 'us1', step.n, (n) => (j.granted += n), step.bg ? 'background' : 'check');
            jobs.push(j);
            if (!step.bg && onlyBackground && Number.isFinite(L) && L > 1 && s.totalInFlight < fd - 8 && s.inFlight('us1') < 512 - 8) {
              // a lone check: at once, up to the checks' reserve of L (4: its first chunk), whatever background holds
              expect(j.granted).toBeGreaterThanOrEqual(Math.min(step.n, 4, reserveOf(L, 0, Math.min(4, Math.max(1, Math.floor(Math.min(512, fd, L) / 8))), 0.9)));
            }
            if (checksIn() > checksBefore && Number.isFinite(L)) expect(seen()).toBeLessThanOrEqual(L);
            expect(s.totalInFlight).toBeLessThanOrEqual(fd);
            const busy = jobs.filter((x) => x.h.inFlight > 0);
            if (busy.length > 0) {
              const b = busy[step.release % busy.length]!;
              const cBefore = checksIn();
              b.h.release(Math.max(1, Math.floor(b.h.inFlight * step.frac)));
              if (checksIn() > cBefore && Number.isFinite(L)) expect(seen()).toBeLessThanOrEqual(L);
              expect(s.totalInFlight).toBeLessThanOrEqual(fd);
            }
            L = step.limit;
            s.setLoadLimit(L);
          }
          s.setLoadLimit(Infinity);
          drainAll(jobs.map((x) => x.h));
          for (const x of jobs) expect(x.granted).toBe(x.demand);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('a background job alone fills capacity - reserve; a check then starts at once, and the background job\'s releases go to it', () => {
    // 512 slots, H = 25 (jobShare 0.95), reserve = max(25, 512 - floor(512 x 0.9) = 52, 4) = 52
    const s = new RegionScheduler(() => 512, { jobShare: 0.95 });
    expect(s.checkReserve(512)).toBe(52);
    const round = { granted: 0 } as { granted: number; handle: JobHandle };
    round.handle = s.register('round', 'us1', 100_000, (n) => (round.granted += n), 'background');
    expect(round.handle.priority).toBe('background');
    expect(round.handle.inFlight).toBe(512 - 52); // up to capacity - reserve, never into the headroom
    round.handle.release(30);
    expect(round.handle.inFlight).toBe(512 - 52); // refilled
    expect(s.demand('us1', 'background')).toBe(100_000 - 30);
    expect(s.demand('us1', 'check')).toBe(0);

    const small = addJob(s, 'small', 'us1', 10);
    expect(small.granted).toBe(10); // inside register(): nothing was released
    const big = addJob(s, 'big', 'us1', 5000);
    expect(big.granted).toBeGreaterThanOrEqual(52 - 10); // what the small check left of the reserve, or more (headroom)
    const before = round.granted;
    round.handle.release(200);
    expect(round.granted).toBe(before); // the big check waits: background gets nothing back
    expect(big.handle.inFlight + small.handle.inFlight + round.handle.inFlight).toBeLessThanOrEqual(512);
    expect(s.inFlight('us1')).toBeGreaterThan(512 - 4); // the freed slots went to the check at once
    // the checks end: the round takes up to capacity - reserve again
    big.handle.cancel();
    big.handle.release(big.handle.inFlight);
    small.handle.release(10);
    expect(s.inFlight('us1')).toBe(512 - 52);
  });

  test('background is granted nothing while a check of its region waits, even when slots are free below the check\'s chunk', () => {
    const s = new RegionScheduler(() => 64, { minGrant: 8, maxGrant: 64 });
    const c = addJob(s, 'c', 'us1', 1000);
    expect(c.handle.inFlight).toBe(64);
    let bg = 0;
    const b = s.register('b', 'us1', 1000, (n) => (bg += n), 'background');
    c.handle.release(5); // 5 free < the check's chunk of 8: it waits, and so does background
    expect(bg).toBe(0);
    expect(c.handle.inFlight).toBe(59);
    c.handle.cancel(); // no check waits any more: background may take what the reserve leaves
    expect(b.inFlight).toBe(0); // 64 - 59 = 5 free, reserve 8 (one chunk): none for background
    c.handle.release(59);
    expect(bg).toBe(64 - s.checkReserve(64));
  });

  test('another region\'s check gets the global slots a release frees before background work does', () => {
    const s = new RegionScheduler(() => 100, { globalCapacity: 100, minGrant: 1, maxGrant: 16 });
    let bg = 0;
    const round = s.register('round', 'us1', 1000, (n) => (bg += n), 'background');
    expect(bg).toBe(100 - s.checkReserve(100)); // 90
    const big = addJob(s, 'big', 'us1', 1000); // a check in us1 takes the global reserve
    expect(s.totalInFlight).toBe(100);
    const other = addJob(s, 'other', 'sg1', 30); // waits on the global cap
    expect(other.granted).toBe(0);
    round.release(20); // freed in us1: sg1's check first (fewest in flight), then us1's, never background
    expect(other.granted).toBe(20);
    expect(bg).toBe(90);
    big.handle.release(10);
    expect(other.granted).toBe(30);
    expect(bg).toBe(90);
  });

  test('backgroundCapacityFor bounds the background in flight (a cluster node\'s background window)', () => {
    let window = 10;
    const s = new RegionScheduler(() => 100, { minGrant: 1, backgroundCapacityFor: () => window });
    let bg = 0;
    const round = s.register('round', 'us1', 1000, (n) => (bg += n), 'background');
    expect(bg).toBe(10);
    window = 50;
    s.poke('us1');
    expect(round.inFlight).toBe(50);
    window = 0; // the other nodes' checks want everything: nothing more, nothing revoked
    round.release(20);
    expect(round.inFlight).toBe(30);
    const c = addJob(s, 'c', 'us1', 70);
    expect(c.granted).toBe(70); // checks are not bound by it
  });

  test('the start budget keeps its reserve for checks', () => {
    const s = new RegionScheduler(() => 1000, { minGrant: 4, globalCapacity: 1000 });
    s.setStartBudget(100); // background may start 100 - max(10, 4) = 90 of it
    let bg = 0;
    s.register('round', 'us1', 1000, (n) => (bg += n), 'background');
    expect(bg).toBe(90);
    const c = addJob(s, 'c', 'us1', 50);
    expect(c.granted).toBe(10); // the budget's reserve, at once
    s.setStartBudget(5); // the next budget: the waiting check takes all of it first
    expect(c.granted).toBe(15);
    expect(bg).toBe(90);
  });

  test('reserve: at least one chunk with no headroom and backgroundShare 1; none in a region of one slot', () => {
    const s = new RegionScheduler(() => 64, { jobShare: 1, backgroundShare: 1, minGrant: 4 });
    expect(s.checkReserve(64)).toBe(4);
    expect(s.checkReserve(1)).toBe(0);
    expect(s.checkReserve(2)).toBe(1);
    const t = new RegionScheduler(capacityFor);
    expect(t.checkReserve(100)).toBe(10); // the defaults: backgroundShare 0.9, no headroom
    let bg = 0;
    const r = t.register('round', 'one', 5, (n) => (bg += n), 'background');
    expect(bg).toBe(1); // one slot: no reserve, background may run
    const c = addJob(t, 'c', 'one', 1);
    expect(c.granted).toBe(0); // ...and a check waits for its probe (documented limit)
    r.release(1);
    expect(c.granted).toBe(1);
  });

  test('a background dispatch that registers a check: the check is served first in the same pass', () => {
    const s = new RegionScheduler(() => 64, { minGrant: 1, maxGrant: 8 });
    const log: string[] = [];
    let registered = false;
    s.register(
      'round',
      'us1',
      1000,
      (n) => {
        log.push(`bg:${n}`);
        if (!registered) {
          registered = true;
          s.register('c', 'us1', 20, (k) => log.push(`check:${k}`));
        }
      },
      'background',
    );
    expect(log.slice(0, 4)).toEqual(['bg:8', 'check:8', 'check:8', 'check:4']);
    expect(s.demand('us1', 'check')).toBe(20);
  });

  test('bad options and classes are refused with codes', () => {
    expect(() => new RegionScheduler(capacityFor, { backgroundShare: 0 })).toThrow(ServiceError);
    expect(() => new RegionScheduler(capacityFor, { backgroundShare: 1.5 })).toThrow('backgroundShare');
    const s = new RegionScheduler(capacityFor);
    try {
      s.register('x', 'us1', 1, () => {}, 'pool' as never);
      expect.unreachable();
    } catch (e) {
      expect((e as ServiceError).code).toBe('scheduler_bad_option');
    }
    expect(s.snapshot('us1').jobs).toEqual([]);
  });
});
