/**
 * Verdict accuracy against the farm manifest (bench/e2e/accuracy.ts): expected
 * working vs borderline (delay in [timeout - margin, timeout)) vs slower than
 * the timeout (not a miss; 'late accepted' when reported working), false
 * positives for refused / black-hole / slow entries, missing records, the
 * per-behaviour verdict codes, response-time and overhead quantiles.
 */
import { describe, expect, test } from 'bun:test';
import { assess } from '../../bench/e2e/accuracy';
import type { ResultRecord } from '../../bench/e2e/service';
import { type Behaviour, type Entry, addressOf } from '../../bench/farm/entries';

let nextId = 0;
function entry(behaviour: Behaviour, delayMs: number | null): Entry {
  const g = nextId++;
  return { g, host: addressOf(g), port: 8000 + (g % 7), behaviour, delayMs };
}

function ok(e: Entry, ms: number): ResultRecord {
  return { proxy: { host: e.host, port: e.port }, status: 'working', responseTime: `${ms} ms` };
}

function fail(e: Entry, code: string | null, ms = 2000): ResultRecord {
  const r: ResultRecord = { proxy: { host: e.host, port: e.port }, status: 'failed', responseTime: `${ms} ms` };
  if (code !== null) r.error = { code, message: `${code} happened` };
  return r;
}

const T = 2000;

describe('assess: classification', () => {
  test('working under timeout - margin found / missed', () => {
    const a = entry('working', 100);
    const b = entry('working', 1749);
    const c = entry('instant', 0);
    const d = entry('working', 300);
    const acc = assess([a, b, c, d], [ok(a, 130), ok(b, 1790), ok(c, 12), fail(d, 'timeout')], T);
    expect(acc.expectedWorking).toBe(4);
    expect(acc.foundWorking).toBe(3);
    expect(acc.borderline).toBe(0);
    expect(acc.falsePositives).toBe(0);
    expect(acc.lateAccepted).toBe(0);
    expect(acc.missingRecords).toBe(0);
    expect(acc.examples).toEqual([`missed ${d.host}:${d.port} (delay 300 ms): timeout timeout happened`]);
  });

  test('delay in [timeout - margin, timeout) is borderline: either verdict is right', () => {
    const a = entry('working', 1750);
    const b = entry('working', 1999);
    const c = entry('working', 1800);
    const acc = assess([a, b, c], [ok(a, 1800), fail(b, 'timeout'), ok(c, 1850)], T);
    expect(acc.expectedWorking).toBe(0);
    expect(acc.borderline).toBe(3);
    expect(acc.borderlineFound).toBe(2);
    expect(acc.examples).toEqual([]);
  });

  test('a working entry at or over the timeout is not a miss; reported working it is a late answer accepted', () => {
    const a = entry('working', 2000);
    const b = entry('working', 5000);
    const c = entry('working', 2400);
    const acc = assess([a, b, c], [fail(a, 'timeout'), fail(b, 'timeout'), ok(c, 2450)], T);
    expect(acc.expectedWorking).toBe(0);
    expect(acc.borderline).toBe(0);
    expect(acc.falsePositives).toBe(0);
    expect(acc.lateAccepted).toBe(1);
    expect(acc.examples).toEqual([`late answer accepted ${c.host}:${c.port} (delay 2400 ms >= timeout): working in 2450 ms`]);
  });

  test('refused, black-hole and slow entries reported working are false positives', () => {
    const r = entry('refused', null);
    const bh = entry('blackhole', null);
    const s = entry('slow', 3000);
    const r2 = entry('refused', null);
    const acc = assess([r, bh, s, r2], [ok(r, 5), ok(bh, 1999), ok(s, 1990), fail(r2, 'connect_refused', 1)], T);
    expect(acc.falsePositives).toBe(3);
    expect(acc.lateAccepted).toBe(0);
    expect(acc.expectedWorking).toBe(0);
    expect(acc.examples).toEqual([
      `false positive ${r.host}:${r.port} (refused, delay null): working in 5 ms`,
      `false positive ${bh.host}:${bh.port} (blackhole, delay null): working in 1999 ms`,
      `false positive ${s.host}:${s.port} (slow, delay 3000): working in 1990 ms`,
    ]);
  });

  test('the margin is a parameter', () => {
    const a = entry('working', 1800);
    expect(assess([a], [ok(a, 1850)], T).borderline).toBe(1);
    const wide = assess([a], [ok(a, 1850)], T, 100);
    expect(wide.expectedWorking).toBe(1);
    expect(wide.foundWorking).toBe(1);
    expect(wide.borderline).toBe(0);
  });

  test('entries without a record are counted as missing and nothing else', () => {
    const a = entry('working', 100);
    const b = entry('refused', null);
    const c = entry('working', 120);
    const acc = assess([a, b, c], [ok(c, 150)], T);
    expect(acc.missingRecords).toBe(2);
    expect(acc.expectedWorking).toBe(1);
    expect(acc.foundWorking).toBe(1);
    expect(acc.codes).toEqual({ working: { working: 1 } });
  });

  test('records are matched by host and port, not by order', () => {
    const a = entry('working', 100);
    const b = entry('blackhole', null);
    const recs = [fail(b, 'timeout'), ok(a, 140), { ...ok(a, 1), proxy: { host: a.host, port: a.port + 1 } }];
    const acc = assess([a, b], recs, T);
    expect(acc.foundWorking).toBe(1);
    expect(acc.falsePositives).toBe(0);
  });

  test('examples are capped at 10', () => {
    const es = Array.from({ length: 15 }, () => entry('refused', null));
    const acc = assess(es, es.map((e) => ok(e, 3)), T);
    expect(acc.falsePositives).toBe(15);
    expect(acc.examples.length).toBe(10);
  });
});

describe('assess: codes and times', () => {
  test('verdict codes per behaviour; a failure without an error is "failed"', () => {
    const w1 = entry('working', 100);
    const w2 = entry('working', 100);
    const r1 = entry('refused', null);
    const r2 = entry('refused', null);
    const bh = entry('blackhole', null);
    const acc = assess([w1, w2, r1, r2, bh], [ok(w1, 120), fail(w2, null), fail(r1, 'connect_refused'), fail(r2, 'connect_refused'), fail(bh, 'timeout')], T);
    expect(acc.codes).toEqual({
      working: { working: 1, failed: 1 },
      refused: { connect_refused: 2 },
      blackhole: { timeout: 1 },
    });
  });

  test('response time per behaviour: mean, p50, p99 and max', () => {
    const es = Array.from({ length: 10 }, () => entry('blackhole', null));
    const acc = assess(es, es.map((e, i) => fail(e, 'timeout', 2000 + i * 10)), T);
    // sorted 2000..2090: p50 = index 5, p99 = index floor(9.9) = 9
    expect(acc.timeMs).toEqual({ blackhole: { mean: 2045, p50: 2050, p99: 2090, max: 2090 } });
  });

  test('overhead of found working proxies = response time minus own delay', () => {
    const es = [entry('working', 100), entry('working', 200), entry('instant', 0), entry('working', 1900)];
    const acc = assess(es, [ok(es[0]!, 103.5), ok(es[1]!, 210), ok(es[2]!, 2), ok(es[3]!, 1990)], T);
    // the borderline entry (1900) is not part of the overhead
    expect(acc.overheadMs).toEqual({ p50: 3.5, p90: 10, p99: 10, max: 10 });
  });

  test('overhead p99 per fifth of the list, in list order; a fifth with no found working proxy is null', () => {
    // 10 entries: fifths of 2; the third fifth has no working entry, the last one's working proxy is missed
    const es = [
      entry('working', 100),
      entry('working', 100),
      entry('working', 100),
      entry('refused', null),
      entry('refused', null),
      entry('blackhole', null),
      entry('working', 100),
      entry('working', 100),
      entry('working', 100),
      entry('refused', null),
    ];
    const times = [110, 130, 150, 0, 0, 0, 105, 101, 0, 0];
    const acc = assess(es, es.map((e, i) => (e.behaviour === 'working' && i !== 8 ? ok(e, times[i]!) : fail(e, 'timeout'))), T);
    expect(acc.overheadP99ByFifth).toEqual([30, 50, null, 5, null]);
  });

  test('no found working proxy: overhead is null; empty input: all zero', () => {
    const a = entry('working', 100);
    expect(assess([a], [fail(a, 'timeout')], T).overheadMs).toBeNull();
    expect(assess([], [], T)).toEqual({
      expectedWorking: 0,
      foundWorking: 0,
      borderline: 0,
      borderlineFound: 0,
      falsePositives: 0,
      lateAccepted: 0,
      missingRecords: 0,
      examples: [],
      codes: {},
      overheadMs: null,
      overheadP99ByFifth: [null, null, null, null, null],
      timeMs: {},
    });
  });
});
