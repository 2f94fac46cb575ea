/**
 * The data-dir lock. PGlite allows one process per data dir; whoever holds
 * this lock is that process.
 *
 * The lock is a listening Unix domain socket, `${dataDir}/server.sock`.
 * The kernel closes it the moment its process dies (kill -9 included, before
 * the process is even reaped), so liveness never comes from a pid: in a
 * container every server is pid 1, and a dead process that is not reaped yet
 * still "exists". To judge a holder we connect to its socket:
 *   - connected -> alive (it answers one JSON line, its LockInfo, then closes);
 *   - ECONNREFUSED -> a socket file left by a dead process: stale, taken over;
 *   - ENOENT -> nobody.
 * bind() fails on an existing path, so two live processes can never both
 * listen on it. A stale socket is renamed aside (atomic) before the retry; if
 * the renamed file turns out to be a fresh socket someone else just bound (its
 * inode is not the one we judged), it is put back with link(), which never
 * overwrites. Works across containers that share the volume (one kernel), not
 * across hosts (a network file system cannot carry a Unix socket).
 *
 * `${dataDir}/server.lock` keeps the holder's JSON ({pid, adminUrl}) for
 * operators to read (`cat`); it is information only, never a liveness test.
 * The admin command asks the socket itself for that JSON (always current).
 */
import { randomBytes } from 'node:crypto';
import { linkSync, lstatSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync, type Stats } from 'node:fs';
import { relative, resolve } from 'node:path';
import { ServiceError } from '../errors';
import { JOB_ERROR_CODES } from '../error-codes';

export const LOCK_FILE = 'server.lock';
export const LOCK_SOCKET = 'server.sock';
/** sun_path holds 108 bytes on Linux (104 on macOS) with the terminating NUL. */
export const MAX_SOCKET_PATH_BYTES = 103;
/** A holder that accepted the connection but has not answered within this is still alive (busy). */
const PROBE_ANSWER_MS = 2000;
const GOING_RETRIES = 50;
const GOING_RETRY_MS = 20;
/** A prober that never reads its answer is dropped after this. */
const ANSWER_IDLE_S = 5;

export interface LockInfo {
  /** The holder's pid, for people (never used to judge liveness). */
  pid: number;
  /** Where a running server answers the admin API. */
  adminUrl?: string;
}

export interface DataDirLock {
  readonly path: string;
  /** Rewrites the lock's info (our pid is always kept). */
  update(info: Omit<LockInfo, 'pid'>): void;
  /** Gives the lock up (closes the socket, removes our files); safe to call more than once. */
  release(): void;
}

/** The data dir is held by another live process (the admin command branches on it: then it looks for that server). */
export class LockError extends ServiceError {
  readonly holder: Partial<LockInfo>;
  constructor(dataDir: string, holder: Partial<LockInfo>) {
    const who = holder.pid === undefined ? 'another process' : `process ${holder.pid}`;
    super(JOB_ERROR_CODES.DATA_DIR_LOCKED, `the data dir ${dataDir} is in use by ${who}${holder.adminUrl ? ` (admin API ${holder.adminUrl})` : ''}`);
    this.name = 'LockError';
    this.holder = holder;
  }
}

type Probe = { state: 'alive'; info: Partial<LockInfo> } | { state: 'dead' } | { state: 'absent' } | { state: 'going' };

function parseInfo(text: string): Partial<LockInfo> {
  try {
    const v = JSON.parse(text) as unknown;
    if (typeof v !== 'object' || v === null) return {};
    const { pid, adminUrl } = v as Record<string, unknown>;
    return { ...(typeof pid === 'number' ? { pid } : {}), ...(typeof adminUrl === 'string' ? { adminUrl } : {}) };
  } catch {
    return {};
  }
}

/**
 * Connects to a lock socket once: alive (with the info line it sends), dead (a
 * stale file: refused), absent, or going (it accepted, then closed without an
 * answer: a holder that is dying or releasing right now).
 */
function probeOnce(path: string): Promise<Probe> {
  return new Promise((done, fail) => {
    let settled = false;
    let connected = false;
    let text = '';
    let timer: ReturnType<typeof setTimeout> | undefined;
    const settle = (p: Probe | Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (p instanceof Error) fail(p);
      else done(p);
    };
    const answered = () => settle({ state: 'alive', info: parseInfo(text.split('\n')[0] ?? '') });
    const closed = () => (text.includes('\n') ? answered() : settle({ state: 'going' }));
    const failed = (err: unknown) => {
      const code = (err as NodeJS.ErrnoException | undefined)?.code;
      if (connected || code === 'ECONNRESET' || code === 'EPIPE') return closed();
      if (code === 'ENOENT') return settle({ state: 'absent' });
      if (code === 'ECONNREFUSED' || code === 'ENOTSOCK') return settle({ state: 'dead' });
      settle(new ServiceError(JOB_ERROR_CODES.DATA_DIR_LOCK_FAILED, `cannot judge the data-dir lock ${path}: ${code ?? String(err)}`, { cause: err }));
    };
    Bun.connect({
      unix: path,
      socket: {
        open() {
          connected = true;
          // accepted but silent: a holder whose event loop is busy is alive all the same
          timer = setTimeout(answered, PROBE_ANSWER_MS);
        },
        data(socket, chunk) {
          text += chunk.toString();
          if (text.includes('\n')) {
            socket.end();
            answered();
          }
        },
        close: closed,
        end: closed,
        error: (_s, err) => failed(err),
        connectError: (_s, err) => failed(err),
      },
    }).catch(failed);
  });
}

/** probeOnce, asked again while the holder is going away (then it is dead or absent within moments). */
async function probe(path: string): Promise<Exclude<Probe, { state: 'going' }>> {
  for (let i = 0; i < GOING_RETRIES; i++) {
    const p = await probeOnce(path);
    if (p.state !== 'going') return p;
    await Bun.sleep(GOING_RETRY_MS);
  }
  // something keeps accepting without answering: do not take the dir from it
  return { state: 'alive', info: {} };
}

function sameFile(a: Stats, b: Stats): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // gone already
  }
}

/**
 * Moves the stale socket file `judged` (the file we found dead) aside. If the
 * file at `path` is no longer that one (someone bound a fresh socket after our
 * probe), it is put back with link(), which never overwrites. All synchronous.
 */
function takeOverStale(path: string, judged: Stats): void {
  const aside = `${path}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    renameSync(path, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  const moved = lstatOrNull(aside);
  if (moved !== null && !sameFile(moved, judged)) {
    try {
      linkSync(aside, path);
    } catch {
      // a newer socket is in place; the one we moved lost the race anyway
    }
  }
  unlinkQuietly(aside);
}

function socketPath(dataDir: string): string {
  const abs = resolve(dataDir, LOCK_SOCKET);
  if (Buffer.byteLength(abs) <= MAX_SOCKET_PATH_BYTES) return abs;
  // a deep DATA_DIR under the working directory (the default ./data is) still fits as a relative path
  const rel = relative(process.cwd(), abs);
  const path = rel.startsWith('.') ? rel : `./${rel}`;
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES) {
    throw new ServiceError(
      JOB_ERROR_CODES.DATA_DIR_PATH_TOO_LONG,
      `the data-dir lock socket ${abs} is longer than ${MAX_SOCKET_PATH_BYTES} bytes (a Unix socket path limit): use a shorter DATA_DIR`,
    );
  }
  return path;
}

/** The holder's info when a live process holds the data dir, else null. */
export async function readLiveLock(dataDir: string): Promise<Partial<LockInfo> | null> {
  const p = await probe(socketPath(dataDir));
  return p.state === 'alive' ? p.info : null;
}

export async function acquireDataDirLock(dataDir: string, info: Omit<LockInfo, 'pid'> = {}): Promise<DataDirLock> {
  mkdirSync(dataDir, { recursive: true });
  const path = socketPath(dataDir);
  const state = { info: { ...info, pid: process.pid } as LockInfo };
  for (let attempt = 0; attempt < 5; attempt++) {
    let listener: ReturnType<typeof Bun.listen>;
    try {
      listener = Bun.listen({
        unix: path,
        socket: {
          open(socket) {
            // the prober closes once it has the line (closing first here can reset the line away)
            socket.write(JSON.stringify(state.info) + '\n');
            socket.timeout(ANSWER_IDLE_S);
          },
          timeout(socket) {
            socket.end();
          },
          data() {},
          error() {},
        },
      });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') {
        throw new ServiceError(JOB_ERROR_CODES.DATA_DIR_LOCK_FAILED, `cannot listen on the data-dir lock ${path}`, { cause: err });
      }
      const before = lstatOrNull(path);
      if (before === null) continue;
      const p = await probe(path);
      if (p.state === 'alive') throw new LockError(dataDir, p.info);
      const after = lstatOrNull(path);
      // take over only the very file we found dead
      if (p.state === 'dead' && after !== null && sameFile(before, after)) takeOverStale(path, after);
      else if (p.state === 'dead') await Bun.sleep(GOING_RETRY_MS);
      continue;
    }
    return makeHandle(dataDir, path, listener, state);
  }
  throw new LockError(dataDir, {});
}

function makeHandle(dataDir: string, socket: string, listener: ReturnType<typeof Bun.listen>, state: { info: LockInfo }): DataDirLock {
  const file = resolve(dataDir, LOCK_FILE);
  let written: string | null = null;
  let released = false;
  const write = () => {
    const text = JSON.stringify(state.info) + '\n';
    const tmp = `${file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
    writeFileSync(tmp, text, { flag: 'wx', mode: 0o644 });
    renameSync(tmp, file);
    written = text;
  };
  write();
  return {
    path: socket,
    update(info) {
      if (released) throw new Error('the data-dir lock was released');
      state.info = { ...info, pid: process.pid };
      write();
    },
    release() {
      if (released) return;
      released = true;
      // The info file first, while the socket still keeps others out; only if it is still ours.
      try {
        if (readFileSync(file, 'utf8') === written) unlinkSync(file);
      } catch {
        // gone already
      }
      // Bun removes the socket file as it stops listening; a file left behind would only be judged stale.
      listener.stop(true);
    },
  };
}
