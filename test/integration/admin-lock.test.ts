/**
 * The data-dir lock (a listening Unix socket in DATA_DIR): exclusive, a live
 * holder is refused whatever its lock file says (its pid looking dead, or equal
 * to ours as with pid 1 in two containers), a holder killed with SIGKILL is
 * taken over at once (before it is reaped), stale or garbage files are taken
 * over, release is idempotent, and another process can take the lock once
 * it is released.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireDataDirLock, LockError, readLiveLock } from '../../src/admin/lock';

const root = mkdtempSync(join(tmpdir(), 'lock-test-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const freshDir = () => {
  const d = join(root, String(++n));
  mkdirSync(d);
  return d;
};

/** A child that takes the lock (argv: dir, mode): `hold` keeps it until killed, `try` releases at once; prints the outcome. */
const holderScript = join(root, 'holder.ts');
writeFileSync(
  holderScript,
  `import { acquireDataDirLock } from '${join(import.meta.dir, '../../src/admin/lock')}';
try {
  const l = await acquireDataDirLock(process.argv[2], { adminUrl: 'http://127.0.0.1:7' });
  console.log('acquired');
  if (process.argv[3] === 'hold') setInterval(() => {}, 1000); else l.release();
} catch (e) { console.log(e.code); }
`,
);

/** Reads a child's stdout until `want` lines came (or it ended). */
async function readLines(stream: ReadableStream<Uint8Array>, want: number): Promise<string[]> {
  const reader = stream.getReader();
  let text = '';
  while (text.split('\n').length <= want) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return text.split('\n').filter((l) => l !== '');
}

async function deadPid(): Promise<number> {
  const p = Bun.spawn([process.execPath, '-e', '0']);
  await p.exited;
  return p.pid;
}

/** A child process holding the lock until killed. */
async function spawnHolder(dir: string) {
  const p = Bun.spawn([process.execPath, holderScript, dir, 'hold'], { stdout: 'pipe', stderr: 'inherit' });
  expect(await readLines(p.stdout, 1)).toEqual(['acquired']);
  return p;
}

async function tryInChild(dir: string): Promise<string> {
  const p = Bun.spawn([process.execPath, holderScript, dir, 'try'], { stdout: 'pipe', stderr: 'pipe' });
  const out = await new Response(p.stdout).text();
  await p.exited;
  return out.trim();
}

const lockFile = (dir: string) => join(dir, 'server.lock');
const socketFile = (dir: string) => join(dir, 'server.sock');

describe('data-dir lock', () => {
  test('acquire, publish the admin URL, refuse a second holder, release twice', async () => {
    const dir = freshDir();
    const lock = await acquireDataDirLock(dir);
    expect(JSON.parse(readFileSync(lockFile(dir), 'utf8'))).toEqual({ pid: process.pid });
    expect(await readLiveLock(dir)).toEqual({ pid: process.pid });
    lock.update({ adminUrl: 'http://127.0.0.1:1234' });
    expect(await readLiveLock(dir)).toEqual({ pid: process.pid, adminUrl: 'http://127.0.0.1:1234' });
    expect(JSON.parse(readFileSync(lockFile(dir), 'utf8'))).toEqual({ pid: process.pid, adminUrl: 'http://127.0.0.1:1234' });
    const second = await acquireDataDirLock(dir).catch((e: unknown) => e);
    expect(second).toBeInstanceOf(LockError);
    expect((second as LockError).holder).toEqual({ pid: process.pid, adminUrl: 'http://127.0.0.1:1234' });
    lock.release();
    lock.release();
    expect(existsSync(lockFile(dir))).toBe(false);
    expect(existsSync(socketFile(dir))).toBe(false);
    expect(await readLiveLock(dir)).toBeNull();
    expect(() => lock.update({ adminUrl: 'http://127.0.0.1:1' })).toThrow();
    const again = await acquireDataDirLock(dir);
    again.release();
  });

  test('a live holder is refused although its lock file names a dead pid, or our own pid (pid 1 in two containers)', async () => {
    const dir = freshDir();
    const child = await spawnHolder(dir);
    try {
      expect(await readLiveLock(dir)).toEqual({ pid: child.pid, adminUrl: 'http://127.0.0.1:7' });
      for (const pid of [await deadPid(), process.pid]) {
        writeFileSync(lockFile(dir), JSON.stringify({ pid }));
        expect(await readLiveLock(dir)).not.toBeNull();
        const err = await acquireDataDirLock(dir).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(LockError);
        expect((err as LockError).code).toBe('data_dir_locked');
      }
      // the holder is untouched
      expect(existsSync(socketFile(dir))).toBe(true);
      expect(await tryInChild(dir)).toBe('data_dir_locked');
    } finally {
      child.kill('SIGKILL');
      await child.exited;
    }
  });

  test('a holder killed with SIGKILL is taken over at once, before it is reaped', async () => {
    const dir = freshDir();
    // sh starts the holder in the background, prints its pid and becomes `sleep`, which never reaps it: a zombie after kill -9
    const sh = Bun.spawn(['sh', '-c', '"$0" "$1" "$2" hold & echo $!; exec sleep 30', process.execPath, holderScript, dir], {
      stdout: 'pipe',
      stderr: 'inherit',
    });
    try {
      const [pidLine, acquired] = await readLines(sh.stdout, 2);
      expect(acquired).toBe('acquired');
      const pid = Number(pidLine);
      process.kill(pid, 'SIGKILL');
      // wait for the kernel to finish killing it (a zombie), never for reaping; Linux shows that in /proc
      const stat = `/proc/${pid}/stat`;
      if (existsSync('/proc/self/stat')) {
        const until = Date.now() + 5000;
        while (readFileSync(stat, 'utf8').split(') ')[1]?.[0] !== 'Z') {
          if (Date.now() > until) throw new Error('the holder did not die');
          await Bun.sleep(5);
        }
      } else {
        await Bun.sleep(200);
      }
      // its lock file is still there, and its pid still "exists" (a zombie); yet nobody holds the dir
      expect(JSON.parse(readFileSync(lockFile(dir), 'utf8'))).toEqual({ pid, adminUrl: 'http://127.0.0.1:7' });
      expect(await readLiveLock(dir)).toBeNull();
      const lock = await acquireDataDirLock(dir);
      expect(await readLiveLock(dir)).toEqual({ pid: process.pid });
      lock.release();
    } finally {
      sh.kill('SIGKILL');
      await sh.exited;
    }
  });

  test('stale and garbage files are taken over; the lock file alone holds nothing', async () => {
    const dir = freshDir();
    // a socket left by a process that died
    const child = await spawnHolder(dir);
    child.kill('SIGKILL');
    await child.exited;
    expect(existsSync(socketFile(dir))).toBe(true);
    expect(await readLiveLock(dir)).toBeNull();
    (await acquireDataDirLock(dir)).release();
    // garbage where the socket goes
    writeFileSync(socketFile(dir), 'not a socket');
    expect(await readLiveLock(dir)).toBeNull();
    (await acquireDataDirLock(dir)).release();
    // a lock file naming a live pid (ours), no socket: nobody holds the dir
    writeFileSync(lockFile(dir), JSON.stringify({ pid: process.pid, adminUrl: 'http://127.0.0.1:9' }));
    expect(await readLiveLock(dir)).toBeNull();
    const lock = await acquireDataDirLock(dir);
    expect(await readLiveLock(dir)).toEqual({ pid: process.pid });
    lock.release();
  });

  test('another process cannot take a live lock, and gets it once released', async () => {
    const dir = freshDir();
    const lock = await acquireDataDirLock(dir);
    expect(await tryInChild(dir)).toBe('data_dir_locked');
    lock.release();
    expect(await tryInChild(dir)).toBe('acquired');
    // the child released it in turn: ours again
    (await acquireDataDirLock(dir)).release();
  });

  test('a deep DATA_DIR under the working directory still locks (through the relative path)', async () => {
    const cwd = join(root, 'w'.repeat(60), 'v'.repeat(40));
    mkdirSync(cwd, { recursive: true });
    const script = `
      import { acquireDataDirLock, readLiveLock } from ${JSON.stringify(join(import.meta.dir, '../../src/admin/lock'))};
      const l = await acquireDataDirLock(${JSON.stringify(join(cwd, 'data'))});
      const held = await readLiveLock('data');
      await l.release();
      console.log(JSON.stringify({ held: held?.pid === process.pid, after: await readLiveLock('data') }));
    `;
    const child = Bun.spawn([process.execPath, '-e', script], { cwd, stdout: 'pipe', stderr: 'pipe' });
    const out = await new Response(child.stdout).text();
    expect(await child.exited).toBe(0);
    expect(JSON.parse(out.trim())).toEqual({ held: true, after: null });
  });

  test('a DATA_DIR too long for a Unix socket path is a clear error', async () => {
    const dir = join(root, 'x'.repeat(120));
    const err = await acquireDataDirLock(dir).catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe('data_dir_path_too_long');
  });
});
