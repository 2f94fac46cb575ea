/**
 * Tests for src/results/spill.ts on real temp files: buffered appends reach
 * the file in order, flushed at the threshold; copyBytes from an offset;
 * copySorted writes the working records in sorted order with separators
 * (first one without the comma) whatever the memory budget; a spill shorter
 * than its index says fails with `spill_short`.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync, truncateSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isServiceError } from '../../src/errors';
import { copyBytes, copySorted, Out, Spill } from '../../src/results/spill';
import { WorkingIndex } from '../../src/results/working-index';

const dir = mkdtempSync(join(tmpdir(), 'result-spill-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

async function spillOf(lines: string[], flushBytes = 8): Promise<Spill> {
  const s = new Spill(join(dir, `s${n++}.tmp`));
  await s.open();
  for (const l of lines) await s.append(l, Buffer.byteLength(l), flushBytes);
  await s.flush();
  return s;
}

/** Runs `fill` against an Out on a fresh file and returns the file's text. */
async function output(fill: (out: Out) => Promise<void>): Promise<string> {
  const path = join(dir, `o${n++}.tmp`);
  const fh = await open(path, 'w');
  try {
    const out = new Out(fh);
    await fill(out);
    await out.flush();
  } finally {
    await fh.close(); // a FileHandle left to the GC fails some later test
  }
  return readFileSync(path, 'utf8');
}

describe('Spill', () => {
  test('appends reach the file in order; a write starts once flushBytes are pending', async () => {
    const s = new Spill(join(dir, 'order.tmp'));
    await s.open();
    expect(s.append('ab', 2, 4)).toBeUndefined();
    const started = s.append('cdé', 4, 4);
    expect(started).toBeInstanceOf(Promise);
    await started;
    expect(s.append('f', 1, 4)).toBeUndefined();
    await s.flush();
    expect(s.size).toBe(7);
    expect(readFileSync(s.path, 'utf8')).toBe('abcdéf');
    await s.fh!.close();
  });

  test('copyBytes copies from an offset to the end', async () => {
    const s = await spillOf([',\n{"a":1}', ',\n{"b":2}']);
    expect(await output((out) => copyBytes(out, s, 1, () => {}))).toBe('\n{"a":1},\n{"b":2}');
    await s.fh!.close();
  });
});

describe('copySorted', () => {
  const records = ['{"t":3}', '{"t":1,"long":"xxxxxxxxxx"}', '{"t":2}', '{"t":1}'];
  const times = ['3 ms', '1 ms', '2 ms', '1 ms'];

  async function setup(): Promise<{ spill: Spill; index: WorkingIndex }> {
    const spill = await spillOf(records.map((r) => `${r}\n`), 5);
    const index = new WorkingIndex();
    let off = 0;
    records.forEach((r, i) => {
      index.add(times[i]!, off, Buffer.byteLength(r));
      off += Buffer.byteLength(r) + 1;
    });
    return { spill, index };
  }

  test('sorted, separated, the first without a comma; the same for every budget; one step per batch', async () => {
    const expected = '\n{"t":1,"long":"xxxxxxxxxx"},\n{"t":1},\n{"t":2},\n{"t":3}';
    for (const budget of [1, 12, 40, 1 << 20]) {
      const { spill, index } = await setup();
      let steps = 0;
      expect(await output((out) => copySorted(out, spill, index, budget, () => steps++))).toBe(expected);
      expect(steps).toBe([...index.batches(budget)].length);
      await spill.fh!.close();
    }
  });

  test('a spill shorter than the index fails with spill_short', async () => {
    const { spill, index } = await setup();
    truncateSync(spill.path, 10);
    let code = '';
    try {
      await output((out) => copySorted(out, spill, index, 1 << 20, () => {}));
    } catch (err) {
      code = isServiceError(err) ? err.code : String(err);
    }
    expect(code).toBe('spill_short');
    await spill.fh!.close();
  });
});
