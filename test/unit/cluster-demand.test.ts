import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { DemandTable, fairShare, nudgingExecution } from '../../src/cluster/demand';
import { PROTOCOL_VERSION, type NodeDemand } from '../../src/cluster/protocol';
import type { ExecutionHandle, ProbeExecution } from '../../src/jobs/ports';

const nd = (node: string, regions: Record<string, number>): NodeDemand => ({ v: PROTOCOL_VERSION, node, regions });

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

describe('DemandTable', () => {
  test('the other nodes\' demands per region; its own key ignored; changed regions reported', () => {
    const t = new DemandTable('me', 1000);
    expect(t.put(nd('me', { us1: 5 }), 0)).toEqual([]);
    expect(t.put(nd('a', { us1: 100, de1: 3 }), 0).sort()).toEqual(['de1', 'us1']);
    expect(t.put(nd('b', { us1: 7 }), 0)).toEqual(['us1']);
    expect(t.others('us1', 10).sort((x, y) => x - y)).toEqual([7, 100]);
    expect(t.others('de1', 10)).toEqual([3]);
    expect(t.others('fr1', 10)).toEqual([]);
    expect(t.put(nd('a', { us1: 100 }), 10)).toEqual(['de1']); // de1 gone, us1 unchanged
    expect(t.put(nd('a', { us1: 100 }), 20)).toEqual([]);
    expect(t.remove('b')).toEqual(['us1']);
    expect(t.remove('b')).toEqual([]);
    expect(t.others('us1', 30)).toEqual([100]);
  });

  test('an entry not renewed within the TTL stops counting, and expire() reports its regions', () => {
    const t = new DemandTable('me', 1000);
    t.put(nd('a', { us1: 100 }), 0);
    t.put(nd('b', { de1: 4 }), 600);
    expect(t.others('us1', 999)).toEqual([100]);
    expect(t.others('us1', 1000)).toEqual([]); // even before expire() runs
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
