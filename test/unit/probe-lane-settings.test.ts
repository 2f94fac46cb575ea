/**
 * src/probe/workers/lane-settings.ts against a model of the lane: every message the
 * mirror produces is applied to a simulated lane cache (forget first, then
 * settings, as the worker does), and every shard sent must find its settings.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { LaneSettings } from '../../src/probe/workers/lane-settings';
import type { ProbeSettings } from '../../src/probe/types';

const settingsFor = (id: number) => ({ timeoutMs: id }) as unknown as ProbeSettings;

describe('LaneSettings', () => {
  test('a job\'s settings go to the lane once, however many shards use them', () => {
    const m = new LaneSettings(4);
    m.use(1, settingsFor(1));
    m.use(1, settingsFor(1));
    expect(m.take()).toEqual({ settings: [{ id: 1, settings: settingsFor(1) }], forget: [] });
    m.use(1, settingsFor(1));
    expect(m.take()).toEqual({ settings: [], forget: [] });
  });

  test('only unused settings are forgotten, one per new id beyond the capacity', () => {
    const m = new LaneSettings(2);
    m.use(1, settingsFor(1));
    m.use(2, settingsFor(2));
    m.use(3, settingsFor(3)); // 1 and 2 in use: nothing to forget, the cache grows
    expect(m.take().forget).toEqual([]);
    m.done(1);
    m.use(4, settingsFor(4));
    expect(m.take()).toEqual({ settings: [{ id: 4, settings: settingsFor(4) }], forget: [1] });
    expect(m.held.sort()).toEqual([2, 3, 4]);
  });

  test('model: every shard finds its settings on the lane; the lane holds what the mirror says', () => {
    type Op = { kind: 'use'; id: number } | { kind: 'done' } | { kind: 'flush' };
    const op = fc.oneof(
      fc.record({ kind: fc.constant('use' as const), id: fc.integer({ min: 1, max: 12 }) }),
      fc.record({ kind: fc.constant('done' as const) }),
      fc.record({ kind: fc.constant('flush' as const) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.array(op as fc.Arbitrary<Op>, { maxLength: 200 }), (cap, ops) => {
        const m = new LaneSettings(cap);
        const lane = new Map<number, ProbeSettings>();
        const running: number[] = []; // settings ids of running shards
        const unsent: number[] = []; // shards queued for the next message
        const flush = () => {
          const { settings, forget } = m.take();
          for (const id of forget) lane.delete(id);
          for (const { id, settings: s } of settings) lane.set(id, s);
          for (const id of unsent.splice(0)) expect(lane.get(id)).toEqual(settingsFor(id));
        };
        for (const o of ops) {
          if (o.kind === 'use') {
            m.use(o.id, settingsFor(o.id));
            running.push(o.id);
            unsent.push(o.id);
          } else if (o.kind === 'done') {
            flush(); // a shard ends only after it was sent
            const id = running.shift();
            if (id !== undefined) m.done(id);
          } else flush();
        }
        flush();
        expect([...lane.keys()].sort((a, b) => a - b)).toEqual(m.held.sort((a, b) => a - b));
        for (const id of running) expect(lane.has(id)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
