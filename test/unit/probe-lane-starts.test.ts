/**
 * src/probe/workers/lane-starts.ts with fake runs and a hand-driven event loop: the
 * per-turn budget covers first starts and replacements, queued runs of a
 * group start oldest first, groups take turns, and nothing is left waiting
 * without a turn armed. A model test drives random adds, probe endings,
 * cancels and turns.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { LaneStarts, QUANTUM, type StartableRun } from '../../src/probe/workers/lane-starts';

class FakeRun implements StartableRun {
  next = 0;
  inFlight = 0;
  cancelled = false;
  constructor(
    readonly name: string,
    readonly total: number,
    readonly limit: number,
    private readonly log: string[],
    readonly group = 0,
  ) {}
  get startable(): boolean {
    return !this.cancelled && this.inFlight < this.limit && this.next < this.total;
  }
  pump(max: number): number {
    let n = 0;
    while (n < max && this.startable) {
      this.next++;
      this.inFlight++;
      n++;
      this.log.push(this.name);
    }
    return n;
  }
  /** one of its probes ended */
  endOne(): void {
    if (this.inFlight === 0) throw new Error('nothing in flight');
    this.inFlight--;
  }
}

/** A hand-driven event loop: `turn()` runs what was armed for the next turn. */
function loop() {
  let armed: (() => void)[] = [];
  return {
    nextTurn: (fn: () => void) => armed.push(fn),
    get armed() {
      return armed.length;
    },
    turn() {
      const now = armed;
      armed = [];
      for (const fn of now) fn();
    },
  };
}

describe('LaneStarts', () => {
  test('a big run starts perTurn probes per turn, in order, until all are started', () => {
    const log: string[] = [];
    const l = loop();
    const drained: string[] = [];
    const s = new LaneStarts<FakeRun>(4, l.nextTurn, (r) => drained.push(r.name));
    const a = new FakeRun('a', 10, 100, log);
    s.add(a);
    expect(a.next).toBe(4);
    expect(l.armed).toBe(1);
    l.turn();
    expect(a.next).toBe(8);
    l.turn();
    expect(a.next).toBe(10);
    expect(drained).toEqual(['a']);
    expect(s.isQueued(a)).toBe(false);
    expect(l.armed).toBe(0);
    expect(s.waiting).toBe(0);
  });

  test('replacements spend the same budget: past it, the run queues for the next turn', () => {
    const log: string[] = [];
    const l = loop();
    const s = new LaneStarts<FakeRun>(3, l.nextTurn, () => {});
    const a = new FakeRun('a', 100, 3, log);
    s.add(a); // 3 in flight, budget 0, run drained (not startable: at its limit)
    expect(a.next).toBe(3);
    expect(s.isQueued(a)).toBe(false);
    a.endOne();
    s.replace(a); // budget spent in this turn: waits
    expect(a.next).toBe(3);
    expect(s.isQueued(a)).toBe(true);
    expect(l.armed).toBe(1);
    a.endOne();
    s.replace(a); // already queued: nothing happens now
    expect(a.next).toBe(3);
    l.turn(); // new budget of 3; the run has room for 2
    expect(a.next).toBe(5);
    expect(s.isQueued(a)).toBe(false);
    a.endOne();
    s.replace(a); // 1 left in this turn's budget
    expect(a.next).toBe(6);
  });

  test('queued runs start oldest first; a new run waits behind them', () => {
    const log: string[] = [];
    const l = loop();
    const s = new LaneStarts<FakeRun>(2, l.nextTurn, () => {});
    const a = new FakeRun('a', 3, 10, log);
    const b = new FakeRun('b', 2, 10, log);
    const c = new FakeRun('c', 1, 10, log);
    s.add(a);
    s.add(b);
    s.add(c);
    l.turn();
    l.turn();
    l.turn();
    expect(log).toEqual(['a', 'a', 'a', 'b', 'b', 'c']);
  });

  test('groups take turns: a small job queued behind a big one starts in the next turn, not after it', () => {
    const log: string[] = [];
    const l = loop();
    const s = new LaneStarts<FakeRun>(32, l.nextTurn, () => {});
    const big = Array.from({ length: 10 }, (_, i) => new FakeRun(`b${i}`, 64, 64, log, 1));
    for (const r of big) s.add(r); // 32 start now, 608 wait in 10 runs
    const small = new FakeRun('s', 3, 3, log, 2);
    s.add(small); // budget spent: waits
    expect(small.next).toBe(0);
    log.length = 0;
    l.turn();
    // the big job is at the head of the rotation: one quantum, then the small job's 3, then the big job again
    expect(log.slice(0, QUANTUM + 3)).toEqual([...Array<string>(QUANTUM).fill('b0'), 's', 's', 's']);
    expect(log).toHaveLength(32);
    expect(small.next).toBe(3);
  });

  test('a cancelled run leaves the queue when reached, and the lane is told', () => {
    const log: string[] = [];
    const l = loop();
    const drained: string[] = [];
    const s = new LaneStarts<FakeRun>(1, l.nextTurn, (r) => drained.push(r.name));
    const a = new FakeRun('a', 5, 10, log);
    const b = new FakeRun('b', 1, 10, log);
    s.add(a);
    s.add(b);
    a.cancelled = true;
    l.turn();
    expect(drained).toEqual(['a', 'b']);
    expect(log).toEqual(['a', 'b']);
  });

  test('a replacement for a run with nothing left to start does nothing', () => {
    const l = loop();
    const s = new LaneStarts<FakeRun>(2, l.nextTurn, () => {});
    const a = new FakeRun('a', 1, 1, []);
    s.add(a);
    a.endOne();
    s.replace(a);
    expect(s.isQueued(a)).toBe(false);
    expect(l.armed).toBe(0);
  });

  test('perTurn must be a positive integer', () => {
    expect(() => new LaneStarts(0, () => {}, () => {})).toThrow(RangeError);
    expect(() => new LaneStarts(1.5, () => {}, () => {})).toThrow(RangeError);
  });

  test('model: never more than perTurn starts in a turn; every probe starts; nothing waits without a turn armed', () => {
    type Op = { k: 'add'; total: number; limit: number; group: number } | { k: 'end'; pick: number } | { k: 'turn' } | { k: 'cancel'; pick: number };
    const GROUPS = 3;
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({
        k: fc.constant('add' as const),
        total: fc.integer({ min: 0, max: 30 }),
        limit: fc.integer({ min: 1, max: 12 }),
        group: fc.integer({ min: 0, max: GROUPS - 1 }),
      }),
      fc.record({ k: fc.constant('end' as const), pick: fc.nat() }),
      fc.record({ k: fc.constant('end' as const), pick: fc.nat() }),
      fc.record({ k: fc.constant('turn' as const) }),
      fc.record({ k: fc.constant('cancel' as const), pick: fc.nat() }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), fc.array(op, { maxLength: 120 }), (perTurn, ops) => {
        const log: string[] = [];
        const l = loop();
        const runs: FakeRun[] = [];
        const s = new LaneStarts<FakeRun>(perTurn, l.nextTurn, () => {});
        let startedBefore = 0;
        const checkTurnInvariant = () => {
          expect(log.length - startedBefore).toBeLessThanOrEqual(perTurn);
          if (s.waiting > 0) expect(l.armed).toBeGreaterThan(0);
        };
        // a group waiting at the start of a turn is served within this many turns (the others' quanta ahead of it)
        const maxWait = Math.ceil((GROUPS * QUANTUM) / perTurn);
        const starved = new Array<number>(GROUPS).fill(0);
        const turn = () => {
          const waitingGroups = new Set(runs.filter((r) => s.isQueued(r) && r.startable).map((r) => r.group));
          startedBefore = log.length;
          l.turn();
          const served = new Set(log.slice(startedBefore).map((name) => runs[Number(name.slice(1))]!.group));
          for (let g = 0; g < GROUPS; g++) {
            starved[g] = waitingGroups.has(g) && !served.has(g) ? starved[g]! + 1 : 0;
            expect(starved[g]).toBeLessThanOrEqual(maxWait);
          }
        };
        for (const o of ops) {
          if (o.k === 'add') {
            const r = new FakeRun(`r${runs.length}`, o.total, o.limit, log, o.group);
            runs.push(r);
            s.add(r);
          } else if (o.k === 'end') {
            const busy = runs.filter((r) => r.inFlight > 0);
            if (busy.length === 0) continue;
            const r = busy[o.pick % busy.length]!;
            r.endOne();
            s.replace(r);
          } else if (o.k === 'cancel') {
            if (runs.length === 0) continue;
            runs[o.pick % runs.length]!.cancelled = true;
          } else {
            turn();
          }
          checkTurnInvariant();
        }
        // drain: end everything in flight, one turn at a time; all probes of uncancelled runs start
        for (let guard = 0; guard < 10_000; guard++) {
          turn();
          checkTurnInvariant();
          const busy = runs.filter((r) => r.inFlight > 0);
          if (busy.length === 0 && l.armed === 0) break;
          for (const r of busy) {
            r.endOne();
            s.replace(r);
          }
        }
        for (const r of runs) {
          if (!r.cancelled) expect(r.next).toBe(r.total);
          expect(s.isQueued(r)).toBe(false);
        }
        expect(s.waiting).toBe(0);
      }),
      { numRuns: 400 },
    );
  });
});
