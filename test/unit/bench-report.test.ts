/**
 * The end-to-end report's Markdown (bench/e2e/report.ts renderSection, pure):
 * the targets table (met / not met at the thresholds), run rows (bound and
 * ratio formatting, CPU-bound and missing-field cases, accuracy text),
 * stamps, the PostgreSQL variant kept apart, start-up medians; and the
 * committed last-results.json renders without NaN / undefined.
 */
import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import type { Accuracy } from '../../bench/e2e/accuracy';
import { renderSection } from '../../bench/e2e/report';
import type { RunResult } from '../../bench/e2e/run';

type Stored = Parameters<typeof renderSection>[0];
type Scenario = Stored['scenarios'][string];

function accuracy(over: Partial<Accuracy> = {}): Accuracy {
  return {
    expectedWorking: 1948,
    foundWorking: 1948,
    borderline: 0,
    borderlineFound: 0,
    falsePositives: 0,
    lateAccepted: 0,
    missingRecords: 0,
    examples: [],
    codes: {},
    overheadMs: null,
    overheadP99ByFifth: [],
    timeMs: {},
    ...over,
  };
}

function run(over: Partial<RunResult> = {}): RunResult {
  return {
    name: 'A',
    size: 20_000,
    slots: 1024,
    timeoutMs: 2000,
    type: 'http',
    status: 200,
    error: null,
    wallMs: 16_500,
    processingTime: '16.50s',
    bound: { formulaMs: 16_000, tightMs: 16_000, sumMs: 16_384_000, fifoMs: 16_400 },
    ratio: 1.03125,
    ratioTight: 1.03125,
    cpuMs: 3000,
    cpuUserMs: 2000,
    cpuSysMs: 1000,
    cpuPerCheckUs: 150,
    threads: { main: 900, Worker: 2000, JITWorker: 100 },
    judgeCpuMs: 600,
    farmCpuMs: 1700,
    machineCpuMs: 8000,
    otherCpuMs: 2700,
    peakRssMiB: 300.4,
    peakFds: 1100,
    accuracy: accuracy(),
    totalWorking: 1948,
    timeline: null,
    ...over,
  };
}

function scenario(runs: RunResult[], over: Partial<Scenario> = {}): Scenario {
  return {
    runs,
    startups: [],
    notes: [],
    stamp: { date: '2025-01-02 03:04 UTC', loadavg: [0.5, 0.25, 0.125], scale: 1, defaultSlots: 512, database: 'pglite' },
    ...over,
  };
}

function stored(scenarios: Stored['scenarios'], firstStartMs: number | null = null): Stored {
  return { machine: { cpu: 'Test CPU', cores: 2, memGiB: 8, bun: '1.4.5' }, firstStartMs, scenarios };
}

const lines = (md: string, needle: string) => md.split('\n').filter((l) => l.includes(needle));

describe('renderSection', () => {
  test('header names the machine', () => {
    const md = renderSection(stored({}));
    expect(md.startsWith('## End-to-end (farm benchmark)\n')).toBe(true);
    expect(md).toContain('Machine: 2 cores, `Test CPU` (lscpu), 8 GiB RAM, Bun 1.4.5');
    expect(md).not.toContain('### Start-up');
    expect(md).not.toContain('PostgreSQL instead');
  });

  test('scenario A: target row, stamp and run row', () => {
    const md = renderSection(stored({ A: scenario([run()]) }));
    expect(md).toContain('| A: wall / lower bound | <= 1.05 | 1.031 (16.50 s vs bound 16.00 s) | met |');
    expect(md).toContain('_run 2025-01-02 03:04 UTC, database pglite, load average at start 0.50 / 0.25 / 0.13_');
    expect(md).toContain(
      '| A | 20,000 | 1024 | **16.50 s** | 16.00 s / 16.00 s | 1.031 / **1.031** | 16.40 s (1.006) | 3.00 s | 150 µs | 0.60 s / 1.70 s / 2.70 s | 300 MiB | 1948/1948, FP 0 |',
    );
    expect(md).toContain('CPU per check by thread (µs), A: probe workers 100, main thread 45, JITWorker 5.');
    expect(md).toContain('| verdicts | 0 false positives; every working proxy under the timeout found | 0 false positives; 1948 / 1948 found | met |');
  });

  test('targets not met are marked', () => {
    const md = renderSection(stored({ A: scenario([run({ ratioTight: 1.2, wallMs: 19_200 })]) }));
    expect(md).toContain('| A: wall / lower bound | <= 1.05 | 1.200 (19.20 s vs bound 16.00 s) | **not met** |');
  });

  test('scenario A with the order-blind ideal: its range beside the target, and whether any such checker meets it', () => {
    const bound = { formulaMs: 16_000, tightMs: 16_000, sumMs: 16_384_000, fifoMs: 16_960, orderBlind: { orders: 200, minMs: 16_848, p50Ms: 16_912, maxMs: 17_008, clairvoyantMs: 16_160 } };
    const md = renderSection(stored({ A: scenario([run({ bound, ratioTight: 1.072, wallMs: 17_152 })]) }));
    expect(md).toContain(
      '| A: wall / lower bound | <= 1.05 | 1.072 (17.15 s vs bound 16.00 s); a zero-overhead checker that cannot tell black holes in advance: 1.053-1.063 over 200 orders of this list (list order 1.060); one that can (longest first): 1.010 | **not met** (no order-blind checker meets it on this list) |',
    );
    const easy = { ...bound, orderBlind: { ...bound.orderBlind, minMs: 16_640 } };
    expect(lines(renderSection(stored({ A: scenario([run({ bound: easy, ratioTight: 1.072, wallMs: 17_152 })]) })), '| A: wall')[0]).toEndWith('| **not met** |');
  });

  test('accuracy text: borderline, late answers, missing records; verdict row sums every run', () => {
    const a1 = accuracy({ borderline: 11, borderlineFound: 9, falsePositives: 2, lateAccepted: 1, missingRecords: 3, foundWorking: 1940 });
    const md = renderSection(stored({ A: scenario([run({ accuracy: a1 })]), C: scenario([run({ name: 'C', accuracy: accuracy({ falsePositives: 1 }) })]) }));
    expect(md).toContain('| 1940/1948 (+9/11 borderline), FP 2, 1 late answer accepted, 3 missing |');
    expect(md).toContain(
      '| verdicts | 0 false positives; every working proxy under the timeout found | 3 false positives (+1 working proxies slower than the timeout reported working); 3888 / 3896 found | **not met** |',
    );
  });

  test('a run without accuracy shows its error', () => {
    const md = renderSection(stored({ A: scenario([run({ accuracy: null, error: 'HTTP 503' })]) }));
    expect(lines(md, '| A | 20,000 |')[0]!.endsWith('| HTTP 503 |')).toBe(true);
  });

  test('CPU-bound run (formula bound 0, no list-order figure, old file without otherCpuMs)', () => {
    const b = run({ name: 'B', bound: { formulaMs: 0, tightMs: 0, sumMs: 0, fifoMs: 0 }, cpuPerCheckUs: 140 });
    delete (b as Partial<RunResult>).otherCpuMs;
    const md = renderSection(stored({ B: scenario([run({ name: 'B', cpuPerCheckUs: 220 }), b]) }));
    const row = lines(md, '| B | 20,000 |')[1]!;
    expect(row).toContain('| **16.50 s** | 0 | n/a (CPU-bound) | n/a |');
    expect(row).toContain('| 0.60 s / 1.70 s / ? |');
    expect(md).toContain('| B: our CPU per check (all threads) | <= 150 µs | 140 µs (steady state, pass 2 of 2; pass 1: 220 µs) | met |');
    // throughput 20 000 / 16.5 s; all processes 3 + 0.6 + 1.7 = 5.3 s of CPU on 2 cores
    expect(md).toContain('Throughput 1212 checks/s.');
    expect(md).toContain('CPU bound of the whole set-up = 2.65 s.');
  });

  test('C target checks wall and RSS in MB', () => {
    const c = run({ name: 'C', size: 100_000, slots: 8192, wallMs: 11_000, peakRssMiB: 390 });
    const md = renderSection(stored({ C: scenario([c]) }));
    // 390 MiB = 408.9 MB > 400 MB
    expect(md).toContain('wall met, RSS **not met** |');
    expect(md).toContain('C: 100 000 proxies, mix of A, default capacity (SLOTS_PER_ENDPOINT default 512 -> 8192 slots)');
  });

  test('smoke-run scale is stated', () => {
    const s = scenario([run()]);
    s.stamp.scale = 0.1;
    expect(renderSection(stored({ A: s }))).toContain(', SCALE 0.1 (smoke run, not the issue\'s sizes)_');
  });

  test('start-ups: median over the sorted restarts, first start shown', () => {
    const md = renderSection(stored({ A: scenario([run()], { startups: [900, 3000] }), B: scenario([run({ name: 'B' })], { startups: [700] }) }, 5055.5));
    expect(md).toContain('| start-up to ready (existing data dir) | <= 2 s | median 0.90 s, range 0.70 s - 3.00 s over 3 starts | met |');
    expect(md).toContain('- first start, empty data dir (the database from the install-time template, db/pglite-template.ts, then migrated): 5.06 s');
    expect(md).toContain('- restarts with the existing data dir (spawn -> first 200 from /health): 0.70 s, 0.90 s, 3.00 s');
  });

  test('PostgreSQL runs are a separate variant and do not leak into the default tables', () => {
    const md = renderSection(stored({ A: scenario([run()]), 'A/pg': scenario([run({ name: 'A-pg', ratioTight: 1.5 })]) }));
    const pgAt = md.indexOf('### With PostgreSQL instead of the embedded PGlite');
    expect(pgAt).toBeGreaterThan(0);
    const before = md.slice(0, pgAt);
    const after = md.slice(pgAt);
    expect(before).toContain('### Targets\n');
    expect(before).not.toContain('| A-pg |');
    expect(after).toContain('#### Targets (PostgreSQL)');
    expect(after).toContain('| A-pg |');
    expect(after).toContain('1.500 (16.50 s vs bound 16.00 s) | **not met** |');
  });

  test('the committed last-results.json renders without NaN or undefined', () => {
    const file = new URL('../../bench/e2e/last-results.json', import.meta.url);
    const st = JSON.parse(readFileSync(file, 'utf8')) as Stored;
    const md = renderSection(st);
    expect(md).toContain('### Targets');
    expect(md).not.toMatch(/NaN|undefined|Infinity/);
  });
});
