/**
 * The data-dir lock: exclusive, stale locks (dead pid, our own pid left by an
 * earlier process) are taken over, release is idempotent, and a second
 * process can never take a live lock.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireDataDirLock, isPidAlive, LockError, readLiveLock } from '../../src/admin/lock';

const root = mkdtempSync(join(tmpdir(), 'lock-test-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const freshDir = () => {
  const d = join(root, String(++n));
  mkdirSync(d);
  return d;
};

async function deadPid(): Promise<number> {
  const p = Bun.spawn([process.execPath, '-e', '0']);
  await p.exited;
  return p.pid;
}

describe('data-dir lock', () => {
  test('acquire, publish the admin URL, refuse a second holder, release twice', () => {
    const dir = freshDir();
    const lock = acquireDataDirLock(dir);
    expect(JSON.parse(readFileSync(join(dir, 'server.lock'), 'utf8'))).toEqual({ pid: process.pid });
    expect(readLiveLock(dir)).toEqual({ pid: process.pid });
    lock.update({ adminUrl: 'http://127.0.0.1:1234' });
    expect(readLiveLock(dir)).toEqual({ pid: process.pid, adminUrl: 'http://127.0.0.1:1234' });
    expect(() => acquireDataDirLock(dir)).toThrow(LockError);
    lock.release();
    lock.release();
    expect(existsSync(join(dir, 'server.lock'))).toBe(false);
    expect(readLiveLock(dir)).toBeNull();
    const again = acquireDataDirLock(dir);
    again.release();
  });

  test('a lock left by a dead process is stale and taken over', async () => {
    const dir = freshDir();
    const pid = await deadPid();
    expect(isPidAlive(pid)).toBe(false);
    writeFileSync(join(dir, 'server.lock'), JSON.stringify({ pid, adminUrl: 'http://127.0.0.1:9' }));
    expect(readLiveLock(dir)).toBeNull();
    const lock = acquireDataDirLock(dir);
    expect(readLiveLock(dir)?.pid).toBe(process.pid);
    lock.release();
  });

  test('garbage or our own pid not held by us (container restart) is stale', () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'server.lock'), 'not json');
    acquireDataDirLock(dir).release();
    writeFileSync(join(dir, 'server.lock'), JSON.stringify({ pid: process.pid }));
    expect(readLiveLock(dir)).toBeNull();
    const lock = acquireDataDirLock(dir);
    expect(readLiveLock(dir)).toEqual({ pid: process.pid });
    lock.release();
  });

  test('another process cannot take a live lock, and gets it once released', async () => {
    const dir = freshDir();
    const script = `import { acquireDataDirLock } from '${join(import.meta.dir, '../../src/admin/lock')}';
try { const l = acquireDataDirLock(process.argv[2]); console.log('acquired'); l.release(); } catch (e) { console.log(e.code); }`;
    const scriptPath = join(root, 'try-lock.ts');
    writeFileSync(scriptPath, script);
    const run = async () => {
      const p = Bun.spawn([process.execPath, scriptPath, dir], { stdout: 'pipe', stderr: 'pipe' });
      const out = await new Response(p.stdout).text();
      await p.exited;
      return out.trim();
    };
    const lock = acquireDataDirLock(dir);
    expect(await run()).toBe('data_dir_locked');
    lock.release();
    expect(await run()).toBe('acquired');
  });
});
