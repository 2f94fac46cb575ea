/**
 * The data-dir lock: `${dataDir}/server.lock`, created exclusively, holding
 * JSON {pid, adminUrl?}. PGlite allows one process per data dir; whoever holds
 * this file is that process. A lock whose pid is no longer alive is stale and
 * is taken over: it is renamed away (atomic) and, if the renamed file turns
 * out to be a fresh lock someone else just created, put back with link()
 * (which never overwrites), so two processes can never both hold the dir.
 */
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ServiceError } from '../errors';

export const LOCK_FILE = 'server.lock';

export interface LockInfo {
  pid: number;
  /** Where a running server answers the admin API (loopback URL). */
  adminUrl?: string;
}

export interface DataDirLock {
  readonly path: string;
  /** Rewrites the lock's info (our pid is always kept). */
  update(info: Omit<LockInfo, 'pid'>): void;
  /** Removes the lock if it is still ours; safe to call more than once. */
  release(): void;
}

/** The data dir is held by another live process (the admin command branches on it: then it looks for that server). */
export class LockError extends ServiceError {
  readonly holder: LockInfo;
  constructor(dataDir: string, holder: LockInfo) {
    super('data_dir_locked', `the data dir ${dataDir} is in use by process ${holder.pid}${holder.adminUrl ? ` (admin API ${holder.adminUrl})` : ''}`);
    this.name = 'LockError';
    this.holder = holder;
  }
}

/** Lock paths this process holds (to tell our own lock from a stale one left by an earlier process with our pid). */
const held = new Set<string>();

/**
 * A holder is alive when its process exists. A lock carrying OUR pid that we
 * do not hold was left by an earlier process that had the same pid (typical
 * after a container restart, where the server is always pid 1): stale.
 */
function holderAlive(path: string, info: LockInfo): boolean {
  if (info.pid === process.pid) return held.has(path);
  return isPidAlive(info.pid);
}

export function isPidAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function parseLock(text: string): LockInfo | null {
  try {
    const v = JSON.parse(text) as unknown;
    if (typeof v !== 'object' || v === null) return null;
    const { pid, adminUrl } = v as Record<string, unknown>;
    if (typeof pid !== 'number') return null;
    return typeof adminUrl === 'string' ? { pid, adminUrl } : { pid };
  } catch {
    return null;
  }
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** The lock's info when a live process holds it, else null. */
export function readLiveLock(dataDir: string): LockInfo | null {
  const path = resolve(dataDir, LOCK_FILE);
  const text = readText(path);
  if (text === null) return null;
  const info = parseLock(text);
  // Locks are linked into place fully written, so an unparsable one is garbage.
  if (info === null) return null;
  return holderAlive(path, info) ? info : null;
}

/** Moves a stale lock aside; true when the file we judged stale is gone. */
function takeOverStale(path: string, staleText: string): boolean {
  const aside = `${path}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    renameSync(path, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw err;
  }
  const moved = readText(aside);
  if (moved !== staleText) {
    // We moved someone's fresh lock: put it back unless yet another one appeared.
    try {
      linkSync(aside, path);
    } catch {
      // a newer lock exists; the one we moved lost the race anyway
    }
  }
  try {
    unlinkSync(aside);
  } catch {
    // gone already
  }
  return moved === staleText;
}

export function acquireDataDirLock(dataDir: string, info: Omit<LockInfo, 'pid'> = {}): DataDirLock {
  mkdirSync(dataDir, { recursive: true });
  const path = resolve(dataDir, LOCK_FILE);
  const content = (i: Omit<LockInfo, 'pid'>) => JSON.stringify({ ...i, pid: process.pid });
  for (let attempt = 0; attempt < 5; attempt++) {
    // Write the whole content first, then link() it into place: never a half-written lock.
    const tmp = `${path}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
    writeFileSync(tmp, content(info), { flag: 'wx', mode: 0o644 });
    let won = false;
    try {
      linkSync(tmp, path);
      won = true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      unlinkSync(tmp);
    }
    if (won) {
      held.add(path);
      return makeHandle(path, content);
    }
    const text = readText(path);
    if (text === null) continue;
    const holder = parseLock(text);
    if (holder !== null && holderAlive(path, holder)) throw new LockError(dataDir, holder);
    takeOverStale(path, text);
  }
  throw new LockError(dataDir, { pid: -1 });
}

function makeHandle(path: string, content: (i: Omit<LockInfo, 'pid'>) => string): DataDirLock {
  let released = false;
  const ours = (): boolean => {
    const text = readText(path);
    return text !== null && parseLock(text)?.pid === process.pid;
  };
  return {
    path,
    update(info) {
      if (released) throw new Error('the data-dir lock was released');
      const tmp = `${path}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
      writeFileSync(tmp, content(info), { flag: 'wx', mode: 0o644 });
      renameSync(tmp, path);
    },
    release() {
      if (released) return;
      released = true;
      held.delete(path);
      if (!ours()) return;
      try {
        unlinkSync(path);
      } catch {
        // already gone
      }
    },
  };
}
