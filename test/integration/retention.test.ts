/**
 * Tests for src/results/retention.ts over the directory result store
 * (src/results/dir-store.ts) in a real temporary data dir: files whose mtime
 * is past the retention age are deleted (at start, by the interval timer and
 * by runOnce), newer files and directories are kept, a missing directory is
 * harmless, and stop() ends the timer (twice is safe); the disk cap
 * (RESULT_MAX_BYTES) takes the oldest first; crash leftovers go after
 * minutes, not days; a wall clock that jumps forward deletes nothing early.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { memoryLogger } from '../../src/log';
import { openDirResultStore } from '../../src/results/dir-store';
import { newResultId } from '../../src/results/links';
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

/** A wall clock and a monotonic clock: `advance` moves both (time passes), `jump` only the wall clock. */
class FakeClock {
  wall: number;
  mono = 1_000;
  constructor(wall = Date.now()) {
    this.wall = wall;
  }
  advance(ms: number): void {
    this.wall += ms;
    this.mono += ms;
  }
  jump(ms: number): void {
    this.wall += ms;
  }
  readonly now = () => this.wall;
  readonly monotonic = () => this.mono;
}

/**
 * Starts a sweep on the fake clock and waits for its start-up pass, so the
 * files a test makes afterwards are seen by its runOnce() calls only.
 */
async function startQuiet(dir: string, maxAgeMs: number, clock: FakeClock, extra: { intervalMs?: number; maxBytes?: number } = {}) {
  const log = memoryLogger();
  const sweep = startRetentionSweep({ store: await storeOf(dir), maxAgeMs, log, now: clock.now, monotonic: clock.monotonic, ...extra });
  sweeps.push(sweep);
  await sweep.startup;
  return { sweep, log };
}

const NONE = { expired: 0, overCap: 0, orphans: 0, bytes: 0 };
const files = (dir: string) => readdirSync(dir).sort();

describe('runOnce', () => {
  test('deletes only files older than the retention age and reports the count', async () => {
    const dir = freshDir();
    const now = Date.now();
    const maxAge = 7 * DAY;
    const { sweep, log } = await startQuiet(dir, maxAge, new FakeClock(now));
    const old1 = fileAged(dir, 'old1.json', 8 * DAY, now);
    const old2 = fileAged(dir, 'old2.json', 30 * DAY, now);
    const justOld = fileAged(dir, 'just-old.json', maxAge + 60_000, now);
    const justNew = fileAged(dir, 'just-new.json', maxAge - 60_000, now);
    const fresh = fileAged(dir, 'fresh.json', 0, now);
    expect(readdirSync(dir)).toHaveLength(5);

    expect((await sweep.runOnce()).expired).toBe(3);
    for (const p of [old1, old2, justOld]) expect(existsSync(p)).toBe(false);
    for (const p of [justNew, fresh]) expect(existsSync(p)).toBe(true);
    expect(log.lines.filter((l) => l.msg === 'result files past retention (RESULT_RETENTION_DAYS) deleted')).toEqual([
      expect.objectContaining({ level: 'info', deleted: 3 }),
    ]);

    // nothing left to delete: 0 and no further log line
    expect(await sweep.runOnce()).toEqual(NONE);
    expect(log.lines).toHaveLength(1);
    sweep.stop();
  });

  test('the age is measured against the injected clock', async () => {
    const dir = freshDir();
    const realNow = Date.now();
    const f = fileAged(dir, 'a.json', 2 * DAY, realNow);
    const clock = new FakeClock(realNow);
    const { sweep } = await startQuiet(dir, 3 * DAY, clock);
    expect((await sweep.runOnce()).expired).toBe(0);
    expect(existsSync(f)).toBe(true);
    clock.advance(2 * DAY);
    expect((await sweep.runOnce()).expired).toBe(1);
    expect(existsSync(f)).toBe(false);
    sweep.stop();
  });

  test('directories are never deleted, however old', async () => {
    const dir = freshDir();
    const { sweep } = await startQuiet(dir, DAY, new FakeClock());
    const sub = join(dir, 'nested');
    mkdirSync(sub);
    fileAged(sub, 'inner.json', 100 * DAY);
    const t = new Date(Date.now() - 100 * DAY);
    utimesSync(sub, t, t);
    const old = fileAged(dir, 'old.json', 100 * DAY);
    expect((await sweep.runOnce()).expired).toBe(1);
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
    expect(await sweep.runOnce()).toEqual(NONE);
    // the start-up pass must be over before the directory appears: its readdir, queued
    // before mkdirSync, may run after it on a busy machine and take the file itself
    expect(await sweep.startup).toEqual(NONE);
    mkdirSync(dir);
    const old = fileAged(dir, 'x.json', 2 * DAY);
    expect((await sweep.runOnce()).expired).toBe(1);
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
          return { expired: 2, overCap: 0, orphans: 0, bytes: 20 };
        },
      },
      maxAgeMs: DAY,
      log,
    });
    sweeps.push(sweep);
    expect(await sweep.startup).toEqual(NONE);
    expect(await sweep.runOnce()).toEqual(NONE);
    expect((await sweep.runOnce()).expired).toBe(2);
    expect(log.lines.map((l) => [l.level, l.msg])).toEqual([
      ['warn', 'result retention pass failed'],
      ['warn', 'result retention pass failed'],
      ['info', 'result files past retention (RESULT_RETENTION_DAYS) deleted'],
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
    expect(log.lines[0]).toMatchObject({ level: 'info', msg: 'result files past retention (RESULT_RETENTION_DAYS) deleted', deleted: 1 });
    sweep.stop();
  });

  test('the interval sweeps again; after stop() it does not; stop() twice is safe', async () => {
    const dir = freshDir();
    const { sweep } = await startQuiet(dir, DAY, new FakeClock(), { intervalMs: 20 });
    const a = fileAged(dir, 'a.json', 2 * DAY);
    await until(() => !existsSync(a));
    sweep.stop();
    sweep.stop();
    const b = fileAged(dir, 'b.json', 2 * DAY);
    await sleep(80);
    expect(existsSync(b)).toBe(true);
    // runOnce still works after stop (one explicit pass)
    expect((await sweep.runOnce()).expired).toBe(1);
    expect(existsSync(b)).toBe(false);
  });
});

describe('the disk cap (RESULT_MAX_BYTES)', () => {
  test('over the cap the oldest results go first, whatever their age; the rest stay', async () => {
    const dir = freshDir();
    const clock = new FakeClock();
    const { sweep, log } = await startQuiet(dir, 7 * DAY, clock, { maxBytes: 3 * 1024 });
    const ids = [newResultId(), newResultId(), newResultId(), newResultId()];
    // four 1 KiB results, an hour apart: 4 KiB against a 3 KiB cap
    ids.forEach((id, i) => {
      const p = join(dir, `${id}.json`);
      writeFileSync(p, 'x'.repeat(1024));
      const t = new Date(clock.wall - (4 - i) * 3_600_000);
      utimesSync(p, t, t);
    });
    expect(await sweep.runOnce()).toEqual({ expired: 0, overCap: 1, orphans: 0, bytes: 1024 });
    expect(files(dir)).toEqual(ids.slice(1).map((id) => `${id}.json`).sort());
    expect(log.lines.filter((l) => l.msg === 'oldest result files deleted for the disk cap (RESULT_MAX_BYTES)')).toEqual([
      expect.objectContaining({ level: 'info', deleted: 1, maxBytes: 3 * 1024 }),
    ]);
    expect(await sweep.runOnce()).toEqual(NONE);
    sweep.stop();
  });
});

describe('crash leftovers', () => {
  test("spill and temp files of a dead writer go after 15 minutes, not after the retention days", async () => {
    const dir = freshDir();
    const clock = new FakeClock();
    const { sweep, log } = await startQuiet(dir, 7 * DAY, clock);
    const id = newResultId();
    const spill = fileAged(dir, `${id}.json.0a1b2c3d4e5f.working.tmp`, 20 * 60_000, clock.wall);
    const temp = fileAged(dir, `${id}.json.0a1b2c3d4e5f.tmp`, 16 * 60_000, clock.wall);
    const young = fileAged(dir, `${newResultId()}.json.0a1b2c3d4e5f.failed.tmp`, 60_000, clock.wall);
    expect(await sweep.runOnce()).toMatchObject({ expired: 0, overCap: 0, orphans: 2 });
    expect(existsSync(spill) || existsSync(temp)).toBe(false);
    expect(existsSync(young)).toBe(true);
    expect(log.lines.filter((l) => l.msg === 'leftover spill and temp files deleted')).toEqual([
      expect.objectContaining({ level: 'info', deleted: 2 }),
    ]);
    clock.advance(15 * 60_000);
    expect((await sweep.runOnce()).orphans).toBe(1);
    expect(existsSync(young)).toBe(false);
    sweep.stop();
  });

  test('the start-up pass takes them too', async () => {
    const dir = freshDir();
    const old = fileAged(dir, `${newResultId()}.json.abcdef012345.working.tmp`, 3_600_000);
    const sweep = startRetentionSweep({ store: await storeOf(dir), maxAgeMs: 7 * DAY, log: memoryLogger() });
    sweeps.push(sweep);
    expect((await sweep.startup).orphans).toBe(1);
    expect(existsSync(old)).toBe(false);
    sweep.stop();
  });
});

describe('a wall clock that jumps', () => {
  test('a forward jump of a year deletes nothing early, warns, and ages keep to the time that really passed', async () => {
    const dir = freshDir();
    const clock = new FakeClock();
    const { sweep, log } = await startQuiet(dir, 7 * DAY, clock);
    const dayOld = fileAged(dir, 'day-old.json', DAY, clock.wall);
    const sixDays = fileAged(dir, 'six-days.json', 6 * DAY, clock.wall);
    clock.advance(3_600_000);
    clock.jump(365 * DAY);
    expect(await sweep.runOnce()).toEqual(NONE);
    expect(files(dir)).toEqual(['day-old.json', 'six-days.json']);
    expect(log.lines.filter((l) => l.level === 'warn')).toEqual([
      expect.objectContaining({ msg: 'wall clock jumped forward: result ages keep to the monotonic clock', jumpMs: 365 * DAY }),
    ]);
    // later passes go on from the monotonic time: a day on, only the six-day-old file is due
    clock.advance(DAY);
    expect((await sweep.runOnce()).expired).toBe(1);
    expect(existsSync(sixDays)).toBe(false);
    expect(existsSync(dayOld)).toBe(true);
    expect(log.lines.filter((l) => l.level === 'warn')).toHaveLength(1);
    // the clock is set right again: nothing changes, no new warning
    clock.jump(-365 * DAY);
    expect(await sweep.runOnce()).toEqual(NONE);
    clock.advance(5 * DAY);
    expect((await sweep.runOnce()).expired).toBe(1);
    expect(existsSync(dayOld)).toBe(false);
    expect(log.lines.filter((l) => l.level === 'warn')).toHaveLength(1);
    sweep.stop();
  });

  test('a clock that runs a little ahead (within the tolerance) is followed', async () => {
    const dir = freshDir();
    const clock = new FakeClock();
    const { sweep, log } = await startQuiet(dir, 7 * DAY, clock);
    const f = fileAged(dir, 'a.json', 7 * DAY - 60_000, clock.wall);
    clock.advance(3_600_000);
    clock.jump(-60_000);
    clock.jump(4 * 60_000); // net 3 min ahead of the monotonic clock: an NTP step, not a jump
    expect((await sweep.runOnce()).expired).toBe(1);
    expect(existsSync(f)).toBe(false);
    expect(log.lines.filter((l) => l.level === 'warn')).toEqual([]);
    sweep.stop();
  });
});
