/**
 * The farm's entries (bench/farm/entries.ts): loopback address <-> id mapping,
 * the seeded log-normal latency (deterministic, median / p90 as requested),
 * exact and seeded-shuffled behaviour mixes, entry building, and the three
 * lower bounds (issue formula, tight bound, ideal list-order makespan) on
 * hand-made manifests and against a naive simulation.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import {
  BEHAVIOURS,
  type Behaviour,
  type Entry,
  type FarmPorts,
  type ListSpec,
  type Mix,
  addressOf,
  assignBehaviours,
  buildEntries,
  fifoMakespanMs,
  orderBlindMakespans,
  idOf,
  latencyOf,
  listText,
  lowerBound,
  ownDurationMs,
  prng,
} from '../../bench/farm/entries';

const MIX_A: Mix = { [BEHAVIOURS.WORKING]: 0.1, [BEHAVIOURS.REFUSED]: 0.5, [BEHAVIOURS.BLACKHOLE]: 0.3, [BEHAVIOURS.SLOW]: 0.1 };
const MAX_ID = 126 * 256 * 254 - 1;

function counts(list: readonly Behaviour[]): Partial<Record<Behaviour, number>> {
  const out: Partial<Record<Behaviour, number>> = {};
  for (const b of list) out[b] = (out[b] ?? 0) + 1;
  return out;
}

function entry(behaviour: Behaviour, delayMs: number | null, g = 0): Entry {
  return { g, host: addressOf(g), port: 1000, behaviour, delayMs };
}

describe('addressOf / idOf', () => {
  test('hand-computed addresses at block and row edges', () => {
    expect(addressOf(0)).toBe('127.1.0.1');
    expect(addressOf(253)).toBe('127.1.0.254');
    expect(addressOf(254)).toBe('127.1.1.1');
    expect(addressOf(256 * 254 - 1)).toBe('127.1.255.254');
    expect(addressOf(256 * 254)).toBe('127.2.0.1');
  });

  test('idOf inverts addressOf, also for IPv4-mapped IPv6', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: MAX_ID }), (g) => {
        expect(idOf(addressOf(g))).toBe(g);
        expect(idOf(`::ffff:${addressOf(g)}`)).toBe(g);
      }),
    );
  });

  test('addresses never use .0 or .255 as the last octet and are distinct', () => {
    const seen = new Set<string>();
    for (let g = 0; g < 70_000; g++) {
      const a = addressOf(g);
      const last = Number(a.split('.')[3]);
      expect(last >= 1 && last <= 254).toBe(true);
      seen.add(a);
    }
    expect(seen.size).toBe(70_000);
  });

  test('addresses outside the scheme give -1', () => {
    for (const a of ['10.0.0.1', '127.0.0.1', '127.1.0.0', '127.1.0.255', '127.1.256.1', '127.1.0', 'localhost', '::1', '127.x.0.1']) {
      expect(idOf(a)).toBe(-1);
    }
  });
});

describe('latencyOf', () => {
  const model = { seed: 42, medianMs: 150, p90Ms: 800 };

  test('deterministic integer >= 1, depends on the seed', () => {
    let differs = 0;
    for (let g = 0; g < 500; g++) {
      const l = latencyOf(g, model);
      expect(Number.isInteger(l)).toBe(true);
      expect(l).toBeGreaterThanOrEqual(1);
      expect(latencyOf(g, model)).toBe(l);
      if (latencyOf(g, { ...model, seed: 43 }) !== l) differs++;
    }
    expect(differs).toBeGreaterThan(450);
  });

  test('median and p90 close to the requested ones for a large n', () => {
    const n = 20_000;
    const xs = Array.from({ length: n }, (_, g) => latencyOf(g, model)).sort((a, b) => a - b);
    const median = xs[Math.floor(n * 0.5)]!;
    const p90 = xs[Math.floor(n * 0.9)]!;
    expect(Math.abs(median / 150 - 1)).toBeLessThan(0.05);
    expect(Math.abs(p90 / 800 - 1)).toBeLessThan(0.05);
  });

  test('p90 equal to the median gives a constant latency', () => {
    for (let g = 0; g < 100; g++) expect(latencyOf(g, { seed: 1, medianMs: 300, p90Ms: 300 })).toBe(300);
  });
});

describe('prng', () => {
  test('same seed same sequence, values in [0, 1)', () => {
    const a = prng(7);
    const b = prng(7);
    const c = prng(8);
    let same = 0;
    for (let i = 0; i < 1000; i++) {
      const x = a();
      expect(x).toBe(b());
      expect(x >= 0 && x < 1).toBe(true);
      if (c() === x) same++;
    }
    expect(same).toBe(0);
  });
});

describe('assignBehaviours', () => {
  test('mix of scenario A at 20 000 gives exact counts', () => {
    const list = assignBehaviours(20_000, MIX_A, 1);
    expect(list.length).toBe(20_000);
    expect(counts(list)).toEqual({ working: 2000, refused: 10_000, blackhole: 6000, slow: 2000 });
  });

  test('largest remainders on a small n (7 x mix A = 0.7 / 3.5 / 2.1 / 0.7)', () => {
    // floors 0/3/2/0 leave 2; the two largest remainders (0.7, 0.7; ties by key order) get them
    expect(counts(assignBehaviours(7, MIX_A, 3))).toEqual({ working: 1, refused: 3, blackhole: 2, slow: 1 });
  });

  test('any mix: n entries, each count within 1 of its exact share, zero shares absent', () => {
    const kinds: Behaviour[] = Object.values(BEHAVIOURS);
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 500 }),
        fc.array(fc.integer({ min: 0, max: 20 }), { minLength: kinds.length, maxLength: kinds.length }),
        fc.integer(),
        (n, weights, seed) => {
          fc.pre(weights.some((w) => w > 0));
          const mix: Mix = {};
          kinds.forEach((k, i) => (mix[k] = weights[i]!));
          const sum = weights.reduce((a, b) => a + b, 0);
          const list = assignBehaviours(n, mix, seed);
          expect(list.length).toBe(n);
          const c = counts(list);
          kinds.forEach((k, i) => {
            const exact = (weights[i]! / sum) * n;
            const got = c[k] ?? 0;
            expect(Math.abs(got - exact)).toBeLessThan(1);
            if (weights[i] === 0) expect(got).toBe(0);
          });
        },
      ),
      { numRuns: 200 },
    );
  });

  test('same seed same list; another seed is a different order of the same multiset', () => {
    const a = assignBehaviours(1000, MIX_A, 11);
    const b = assignBehaviours(1000, MIX_A, 11);
    const c = assignBehaviours(1000, MIX_A, 12);
    expect(b).toEqual(a);
    expect(c).not.toEqual(a);
    expect([...c].sort()).toEqual([...a].sort());
  });
});

describe('buildEntries', () => {
  const ports: FarmPorts = {
    listen: { working: [10, 11, 12], instant: [20], blackhole: [30, 31], slow: [40] },
    refused: [50, 51, 52, 53],
  };
  const spec: ListSpec = {
    firstId: 1000,
    size: 300,
    mix: { ...MIX_A, [BEHAVIOURS.INSTANT]: 0.1 },
    seed: 5,
    latency: { seed: 9, medianMs: 150, p90Ms: 800 },
    slowMs: 3000,
  };

  test('ids, hosts, ports and delays follow the behaviour', () => {
    const entries = buildEntries(spec, ports);
    const kinds = assignBehaviours(spec.size, spec.mix, spec.seed);
    expect(entries.length).toBe(300);
    entries.forEach((e, i) => {
      expect(e.g).toBe(1000 + i);
      expect(e.host).toBe(addressOf(e.g));
      expect(e.behaviour).toBe(kinds[i]!);
      const pool = e.behaviour === 'refused' ? ports.refused : ports.listen[e.behaviour];
      expect(e.port).toBe(pool[e.g % pool.length]!);
      const want = { working: latencyOf(e.g, spec.latency), instant: 0, slow: 3000, refused: null, blackhole: null }[e.behaviour];
      expect(e.delayMs).toBe(want);
    });
  });

  test('deterministic: same spec, same list', () => {
    expect(buildEntries(spec, ports)).toEqual(buildEntries(spec, ports));
  });

  test('listText is one host:port line per entry', () => {
    const entries = buildEntries({ ...spec, size: 3 }, ports);
    expect(listText(entries)).toBe(entries.map((e) => `${e.host}:${e.port}\n`).join(''));
    expect(listText([])).toBe('');
  });
});

describe('bounds', () => {
  test('ownDurationMs: refused 0, no answer = timeout, else the delay capped at the timeout', () => {
    expect(ownDurationMs(entry('refused', null), 2000)).toBe(0);
    expect(ownDurationMs(entry('blackhole', null), 2000)).toBe(2000);
    expect(ownDurationMs(entry('instant', 0), 2000)).toBe(0);
    expect(ownDurationMs(entry('working', 150), 2000)).toBe(150);
    expect(ownDurationMs(entry('working', 2500), 2000)).toBe(2000);
    expect(ownDurationMs(entry('slow', 3000), 2000)).toBe(2000);
    // two connections one after the other (the https check): each waits the delay, the whole capped at the timeout
    expect(ownDurationMs(entry('working', 150), 2000, 2)).toBe(300);
    expect(ownDurationMs(entry('working', 1500), 2000, 2)).toBe(2000);
    expect(ownDurationMs(entry('refused', null), 2000, 2)).toBe(0);
    expect(ownDurationMs(entry('blackhole', null), 2000, 2)).toBe(2000);
  });

  test('fifoMakespanMs on hand-made lists', () => {
    // slots 2: 5 -> [0,5]; 3 -> [0,3]; 2 -> [3,5]; 4 -> [5,9]
    expect(fifoMakespanMs([5, 3, 2, 4], 2)).toBe(9);
    // list order matters: the long entry last cannot overlap
    expect(fifoMakespanMs([1, 1, 1, 1, 4], 2)).toBe(6);
    expect(fifoMakespanMs([4, 1, 1, 1, 1], 2)).toBe(4);
    expect(fifoMakespanMs([3, 1, 2], 1)).toBe(6);
    expect(fifoMakespanMs([3, 1, 2], 5)).toBe(3);
    expect(fifoMakespanMs([], 4)).toBe(0);
  });

  test('fifoMakespanMs equals a naive list-order simulation', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 3000 }), { maxLength: 200 }), fc.integer({ min: 1, max: 40 }), (ds, slots) => {
        const free = new Array<number>(slots).fill(0);
        let end = 0;
        for (const d of ds) {
          let k = 0;
          for (let i = 1; i < slots; i++) if (free[i]! < free[k]!) k = i;
          free[k] = free[k]! + d;
          end = Math.max(end, free[k]!);
        }
        expect(fifoMakespanMs(ds, slots)).toBe(end);
      }),
      { numRuns: 300 },
    );
  });

  test('lowerBound on a hand-made manifest', () => {
    const entries = [
      entry('working', 100, 0),
      entry('instant', 0, 1),
      entry('refused', null, 2),
      entry('blackhole', null, 3),
      entry('slow', 3000, 4),
      entry('working', 2500, 5),
    ];
    // own durations 100, 0, 0, 2000, 2000, 2000 -> sum 6100
    // list order on 2 slots: 100@A, 0@B, 0@B, 2000@B [0,2000], 2000@A [100,2100], 2000@B [2000,4000]
    expect(lowerBound(entries, 2000, 2)).toEqual({ formulaMs: 3050, tightMs: 3050, sumMs: 6100, fifoMs: 4000 });
    // many slots: the formula drops under the longest entry, the tight bound does not
    expect(lowerBound(entries, 2000, 10)).toEqual({ formulaMs: 610, tightMs: 2000, sumMs: 6100, fifoMs: 2000 });
    // two connections per answering entry: 200 instead of 100, the rest as it was (capped or no answer)
    expect(lowerBound(entries, 2000, 10, 0, 2)).toEqual({ formulaMs: 620, tightMs: 2000, sumMs: 6200, fifoMs: 2000 });
  });

  test('orderBlindMakespans: the best and worst orders of a small list, the clairvoyant one, a fixed seed', () => {
    // slots 2: [1, 1, 2] in list order ends at 3; with the 2 first it ends at 2
    const o = orderBlindMakespans([1, 1, 2], 2, 60);
    expect(o).toEqual({ orders: 60, minMs: 2, p50Ms: o.p50Ms, maxMs: 3, clairvoyantMs: 2 });
    expect([2, 3]).toContain(o.p50Ms);
    expect(orderBlindMakespans([5, 0, 2, 2, 7, 1], 3, 20, 9)).toEqual(orderBlindMakespans([5, 0, 2, 2, 7, 1], 3, 20, 9));
    expect(lowerBound([entry('blackhole', null, 0)], 2000, 1, 3).orderBlind).toEqual({ orders: 3, minMs: 2000, p50Ms: 2000, maxMs: 2000, clairvoyantMs: 2000 });
    expect(lowerBound([entry('blackhole', null, 0)], 2000, 1).orderBlind).toBeUndefined();
  });

  test('order-blind makespans lie between the clairvoyant order and the worst; none beats the tight bound', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 3000 }), { maxLength: 120 }), fc.integer({ min: 1, max: 16 }), fc.integer({ min: 1, max: 12 }), (ds, slots, orders) => {
        const o = orderBlindMakespans(ds, slots, orders);
        const sum = ds.reduce((a, b) => a + b, 0);
        const tight = Math.max(sum / slots, ...ds, 0);
        expect(o.clairvoyantMs).toBeGreaterThanOrEqual(tight - 1e-9);
        expect(o.minMs).toBeGreaterThanOrEqual(tight - 1e-9);
        expect(o.minMs).toBeLessThanOrEqual(o.p50Ms);
        expect(o.p50Ms).toBeLessThanOrEqual(o.maxMs);
        // every order's makespan is a list-order makespan of some permutation: at most the sum
        expect(o.maxMs).toBeLessThanOrEqual(sum);
      }),
      { numRuns: 200 },
    );
  });

  test('formula = sum(min(duration, timeout)) / slots, tight >= formula, fifo >= tight', () => {
    const ports: FarmPorts = { listen: { working: [1], instant: [2], blackhole: [3], slow: [4] }, refused: [5] };
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 400 }), fc.integer({ min: 1, max: 64 }), fc.integer(), (size, slots, seed) => {
        const entries = buildEntries(
          { firstId: 0, size, mix: { ...MIX_A, instant: 0.1 }, seed, latency: { seed, medianMs: 150, p90Ms: 800 }, slowMs: 3000 },
          ports,
        );
        const b = lowerBound(entries, 2000, slots);
        const sum = entries.reduce((s, e) => s + Math.min(e.delayMs ?? 2000, 2000) * (e.behaviour === 'refused' ? 0 : 1), 0);
        expect(b.sumMs).toBe(sum);
        expect(b.formulaMs).toBeCloseTo(sum / slots, 9);
        expect(b.tightMs).toBeGreaterThanOrEqual(b.formulaMs);
        expect(b.fifoMs).toBeGreaterThanOrEqual(b.tightMs - 1e-9);
      }),
      { numRuns: 100 },
    );
  });
});
