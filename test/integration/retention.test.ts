/**
 * Tests for src/results/retention.ts over the directory result store
 * (src/results/dir-store.ts) in a real temporary data dir: files whose mtime
 * is past the retention age are deleted (at start, by the interval timer and
 * by runOnce), newer files and directories are kept, a missing directory is
 * harmless, and stop() ends the timer (twice is safe).
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { memoryLogger } from '../../src/log';
import { openDirResultStore } from '../../src/results/dir-store';
import { startRetentionSweep, type RetentionSweep } from '../../src/results/retention';

const DAY = 86_400_000;
const root = mkdtempSync(join(tmpdir(), 'retention-test-'));
const sweeps: RetentionSweep[] = [];

afterAll(() => {
  for (const s of sweeps) s.stop();
  rmSync(root, { recursive: true, force: true });
});

let dirCount = 0;
/** A fresh data dir's results directory. */
function freshDir(): string {
  const d = join(root, `d${dirCount++}`, 'results');
  mkdirSync(d, { recursive: true });
  return d;
}

/** The directory store whose results directory is `dir`. */
const storeOf = (dir: string) => openDirResultStore({ dataDir: dirname(dir) });

/** A file whose mtime is `ageMs` before `now`. */
function fileAged(dir: string, name: string, ageMs: number, now = Date.now()): string {
  const p = join(dir, name);
  writeFileSync(p, `{"name":"${name}"}`);
  const t = new Date(now - ageMs);
  utimesSync(p, t, t);
  return p;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function until(cond: () => boolean, timeoutMs = 2000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > timeoutMs) throw new Error('condition not reached in time');
    await sleep(5);
  }
}

/**
 * Starts a sweep whose first (start-up) pass sees a clock at epoch 0, so it
 * deletes nothing whatever the directory holds; later passes see `clock()`.
 * Resolves once the start-up pass has read its clock, so runOnce() counts are exact.
 */
async function startQuiet(dir: string, maxAgeMs: number, clock: () => number, intervalMs?: number) {
  const log = memoryLogger();
  let calls = 0;
  const sweep = startRetentionSweep({
    store: await storeOf(dir),
    maxAgeMs,
    log,
    ...(intervalMs !== undefined ? { intervalMs } : {}),
    now: () => (calls++ === 0 ? 0 : clock()),
  });
  sweeps.push(sweep);
  await until(() => calls > 0);
  return { sweep, log };
}

describe('runOnce', () => {
  test('deletes only files older than the retention age and reports the count', async () => {
    const dir = freshDir();
    const now = Date.now();
    const maxAge = 7 * DAY;
    const old1 = fileAged(dir, 'old1.json', 8 * DAY, now);
    const old2 = fileAged(dir, 'old2.json', 30 * DAY, now);
    const justOld = fileAged(dir, 'just-old.json', maxAge + 60_000, now);
    const justNew = fileAged(dir, 'just-new.json', maxAge - 60_000, now);
    const fresh = fileAged(dir, 'fresh.json', 0, now);
    const { sweep, log } = await startQuiet(dir, maxAge, () => now);
    expect(readdirSync(dir)).toHaveLength(5);

    expect(await sweep.runOnce()).toBe(3);
    for (const p of [old1, old2, justOld]) expect(existsSync(p)).toBe(false);
    for (const p of [justNew, fresh]) expect(existsSync(p)).toBe(true);
    expect(log.lines.filter((l) => l.msg === 'result files past retention deleted')).toEqual([
      expect.objectContaining({ level: 'info', deleted: 3 }),
    ]);

    // nothing left to delete: 0 and no further log line
    expect(await sweep.runOnce()).toBe(0);
    expect(log.lines).toHaveLength(1);
    sweep.stop();
  });

  test('the age is measured against the injected clock', async () => {
    const dir = freshDir();
    const realNow = Date.now();
    const f = fileAged(dir, 'a.json', 2 * DAY, realNow);
    let clock = realNow;
    const { sweep } = await startQuiet(dir, 3 * DAY, () => clock);
    expect(await sweep.runOnce()).toBe(0);
    expect(existsSync(f)).toBe(true);
    clock = realNow + 2 * DAY;
    expect(await sweep.runOnce()).toBe(1);
    expect(existsSync(f)).toBe(false);
    sweep.stop();
  });

  test('directories are never deleted, however old', async () => {
    const dir = freshDir();
    const sub = join(dir, 'nested');
    mkdirSync(sub);
    fileAged(sub, 'inner.json', 100 * DAY);
    const t = new Date(Date.now() - 100 * DAY);
    utimesSync(sub, t, t);
    const old = fileAged(dir, 'old.json', 100 * DAY);
    const { sweep } = await startQuiet(dir, DAY, Date.now);
    expect(await sweep.runOnce()).toBe(1);
    expect(existsSync(old)).toBe(false);
    expect(existsSync(join(sub, 'inner.json'))).toBe(true);
    sweep.stop();
  });

  test('a missing directory is harmless (0, no throw), and is swept once it exists', async () => {
    const dir = join(root, 'not-yet-created', 'results');
    const store = await storeOf(dir);
    rmSync(dir, { recursive: true }); // the store made it: gone again (an operator, a wiped disk)
    const sweep = startRetentionSweep({ store, maxAgeMs: DAY, log: memoryLogger() });
    sweeps.push(sweep);
    expect(await sweep.runOnce()).toBe(0);
    // the start-up pass must be over before the directory appears: its readdir, queued
    // before mkdirSync, may run after it on a busy machine and take the file itself
    expect(await sweep.startup).toBe(0);
    mkdirSync(dir);
    const old = fileAged(dir, 'x.json', 2 * DAY);
    expect(await sweep.runOnce()).toBe(1);
    expect(existsSync(old)).toBe(false);
    sweep.stop();
  });
});

describe('a failing store', () => {
  test('a pass whose sweep rejects is logged as a warning and counts 0; the next pass runs', async () => {
    const log = memoryLogger();
    let calls = 0;
    const sweep = startRetentionSweep({
      store: {
        sweep: async () => {
          if (++calls <= 2) throw new Error('disk on fire');
          return 2;
        },
      },
      maxAgeMs: DAY,
      log,
    });
    sweeps.push(sweep);
    expect(await sweep.startup).toBe(0);
    expect(await sweep.runOnce()).toBe(0);
    expect(await sweep.runOnce()).toBe(2);
    expect(log.lines.map((l) => [l.level, l.msg])).toEqual([
      ['warn', 'result retention pass failed'],
      ['warn', 'result retention pass failed'],
      ['info', 'result files past retention deleted'],
    ]);
    sweep.stop();
  });
});

describe('timers', () => {
  test('the start-up pass deletes old files without being asked', async () => {
    const dir = freshDir();
    const old = fileAged(dir, 'old.json', 10 * DAY);
    const keep = fileAged(dir, 'keep.json', DAY);
    const log = memoryLogger();
    const sweep = startRetentionSweep({ store: await storeOf(dir), maxAgeMs: 7 * DAY, log });
    sweeps.push(sweep);
    await until(() => !existsSync(old));
    expect(existsSync(keep)).toBe(true);
    await until(() => log.lines.length > 0);
    expect(log.lines[0]).toMatchObject({ level: 'info', msg: 'result files past retention deleted', deleted: 1 });
    sweep.stop();
  });

  test('the interval sweeps again; after stop() it does not; stop() twice is safe', async () => {
    const dir = freshDir();
    const { sweep } = await startQuiet(dir, DAY, Date.now, 20);
    const a = fileAged(dir, 'a.json', 2 * DAY);
    await until(() => !existsSync(a));
    sweep.stop();
    sweep.stop();
    const b = fileAged(dir, 'b.json', 2 * DAY);
    await sleep(80);
    expect(existsSync(b)).toBe(true);
    // runOnce still works after stop (one explicit pass)
    expect(await sweep.runOnce()).toBe(1);
    expect(existsSync(b)).toBe(false);
  });
});
