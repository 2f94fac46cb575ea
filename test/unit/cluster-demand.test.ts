import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { backgroundWindow, DemandTable, fairShare, nudgingExecution } from '../../src/cluster/demand';
import { PROTOCOL_VERSION, type NodeDemand } from '../../src/cluster/protocol';
import type { ExecutionHandle, ProbeExecution } from '../../src/jobs/ports';

const nd = (node: string, regions: Record<string, number>, background?: Record<string, number>): NodeDemand => ({
  v: PROTOCOL_VERSION,
  node,
  regions,
  ...(background !== undefined ? { background } : {}),
});

describe('fairShare', () => {
  test('alone: every slot; beside a small job: all but what it wants; beside big ones: an even split', () => {
    expect(fairShare(200, [])).toBe(200);
    expect(fairShare(200, [10])).toBe(190);
    expect(fairShare(200, [100_000])).toBe(100);
    expect(fairShare(200, [10, 100_000])).toBe(95);
    expect(fairShare(200, [50, 60, 100_000])).toBe(50); // 50 <= 200 / 4 keeps its 50; 60 > 150 / 3: 150 split three ways
    expect(fairShare(300, [30, 40, 100_000])).toBe(115); // 300 - 30 - 40 = 230 over 2
  });

  test('no slots: 0; always at least 1 when there are slots (a job can register)', () => {
    expect(fairShare(0, [5])).toBe(0);
    expect(fairShare(Number.NaN, [])).toBe(0);
    expect(fairShare(3, [100, 100, 100, 100])).toBe(1);
  });

  test('fuzz: the nodes\' shares, each computed from the others\' demands, never sum above the slots (beyond the 1-slot floor)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000 }), fc.array(fc.integer({ min: 1, max: 100_000 }), { minLength: 1, maxLength: 8 }), (cap, demands) => {
        let used = 0;
        for (let i = 0; i < demands.length; i++) {
          const others = demands.filter((_, j) => j !== i);
          const share = fairShare(cap, others);
          expect(share).toBeGreaterThanOrEqual(1);
          expect(share).toBeLessThanOrEqual(cap);
          used += Math.min(share, demands[i]!);
        }
        expect(used).toBeLessThanOrEqual(Math.max(cap, demands.length));
      }),
    );
  });
});

describe('backgroundWindow', () => {
  const none = { checks: [], background: [] };
  test('what the reserve and every node\'s checks leave, shared fairly with the other nodes\' background', () => {
    expect(backgroundWindow(200, 20, 0, none)).toBe(180); // alone: everything but the checks' reserve
    expect(backgroundWindow(200, 20, 30, none)).toBe(150); // its own checks first
    expect(backgroundWindow(200, 20, 0, { checks: [10], background: [] })).toBe(170); // another node's checks first
    expect(backgroundWindow(200, 20, 0, { checks: [], background: [100_000] })).toBe(90); // two big rounds: half each
    expect(backgroundWindow(200, 20, 0, { checks: [], background: [30] })).toBe(150); // a small round keeps what it wants
    expect(backgroundWindow(200, 20, 0, { checks: [5000], background: [] })).toBe(0); // the checks want every slot: none
    expect(backgroundWindow(0, 0, 0, none)).toBe(0);
  });

  test('fuzz: the nodes\' windows, each from the others\' demands, with the checks\' demands never sum above slots - reserve (beyond the 1-slot floor)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.double({ min: 0, max: 0.5, noNaN: true }),
        fc.array(fc.record({ checks: fc.nat({ max: 5000 }), background: fc.nat({ max: 100_000 }) }), { minLength: 1, maxLength: 8 }),
        (slots, reserveShare, nodes) => {
          const reserve = Math.floor(slots * reserveShare);
          const checks = nodes.reduce((a, n) => a + n.checks, 0);
          let held = 0;
          for (let i = 0; i < nodes.length; i++) {
            const others = nodes.filter((_, j) => j !== i);
            const w = backgroundWindow(slots, reserve, nodes[i]!.checks, {
              checks: others.map((n) => n.checks).filter((d) => d > 0),
              background: others.map((n) => n.background).filter((d) => d > 0),
            });
            expect(w).toBeGreaterThanOrEqual(0);
            if (slots - reserve - checks < 1) expect(w).toBe(0);
            held += Math.min(w, nodes[i]!.background);
          }
          expect(held).toBeLessThanOrEqual(Math.max(0, slots - reserve - checks) + nodes.length);
        },
      ),
    );
  });
});

describe('DemandTable', () => {
  test('the other nodes\' demands per region; its own key ignored; changed regions reported', () => {
    const t = new DemandTable('me', 1000);
    expect(t.put(nd('me', { us1: 5 }), 0)).toEqual([]);
    expect(t.put(nd('a', { us1: 100, de1: 3 }), 0).sort()).toEqual(['de1', 'us1']);
    expect(t.put(nd('b', { us1: 7 }), 0)).toEqual(['us1']);
    expect(t.others('us1', 10).checks.sort((x, y) => x - y)).toEqual([7, 100]);
    expect(t.others('de1', 10)).toEqual({ checks: [3], background: [] });
    expect(t.others('fr1', 10)).toEqual({ checks: [], background: [] });
    expect(t.put(nd('a', { us1: 100 }), 10)).toEqual(['de1']); // de1 gone, us1 unchanged
    expect(t.put(nd('a', { us1: 100 }), 20)).toEqual([]);
    expect(t.remove('b')).toEqual(['us1']);
    expect(t.remove('b')).toEqual([]);
    expect(t.others('us1', 30).checks).toEqual([100]);
  });

  test('background demand: its part of a node\'s demand is apart; a change of it alone is a change', () => {
    const t = new DemandTable('me', 1000);
    t.put(nd('a', { us1: 100 }, { us1: 90 }), 0);
    t.put(nd('b', { us1: 5, de1: 7 }, { de1: 7 }), 0);
    expect(t.others('us1', 1)).toEqual({ checks: [10, 5], background: [90] });
    expect(t.others('de1', 1)).toEqual({ checks: [], background: [7] });
    expect(t.put(nd('a', { us1: 100 }, { us1: 100 }), 2)).toEqual(['us1']); // the total is the same, the split is not
    expect(t.others('us1', 3)).toEqual({ checks: [5], background: [100] });
    expect(t.put(nd('a', { us1: 100 }), 4)).toEqual(['us1']); // no background any more: all checks
    expect(t.others('us1', 5).checks).toEqual([100, 5]);
  });

  test('an entry not renewed within the TTL stops counting, and expire() reports its regions', () => {
    const t = new DemandTable('me', 1000);
    t.put(nd('a', { us1: 100 }), 0);
    t.put(nd('b', { de1: 4 }), 600);
    expect(t.others('us1', 999).checks).toEqual([100]);
    expect(t.others('us1', 1000).checks).toEqual([]); // even before expire() runs
    expect(t.expire(1000)).toEqual(['us1']);
    expect(t.expire(1000)).toEqual([]);
    expect(t.expire(1600)).toEqual(['de1']);
  });
});

test('nudgingExecution: the board hears of every job opened', () => {
  let nudges = 0;
  const handle = {} as ExecutionHandle;
  const inner: ProbeExecution = { open: () => handle };
  const exec = nudgingExecution(inner, { nudge: () => nudges++ });
  expect(exec.open({} as never)).toBe(handle);
  exec.open({} as never);
  expect(nudges).toBe(2);
});
