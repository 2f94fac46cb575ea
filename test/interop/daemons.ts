/**
 * Interop harness: runs a real proxy daemon (squid, tinyproxy, danted,
 * microsocks from Debian's packages) in the foreground as a child process on
 * 127.0.0.1, for the length of one test file.
 *
 * - `startDaemon` makes a private temp dir, picks a free loopback port, writes
 *   the daemon's files (config, password file) there, spawns the daemon in its
 *   own process group and waits (bounded) until the port accepts TCP AND the
 *   listener on it is one of the daemon's own sockets. If the daemon exits
 *   first, or the port turns out to be someone else's (taken between our
 *   probe bind and the daemon's bind), it retries on a fresh port; otherwise it
 *   throws a `DaemonStartError` carrying the daemon's output.
 * - `stop()` sends SIGTERM to the whole process group (squid's auth helpers,
 *   dante's children), SIGKILL after a grace period, then removes the temp
 *   dir. It may be called any number of times. `stopAllDaemons` (every test
 *   file's afterAll) stops whatever is still running, including daemons a
 *   failed beforeAll started. SIGINT/SIGTERM/SIGHUP and process exit kill the
 *   remaining process groups (they are not in the test run's own group, so a
 *   Ctrl-C would not reach them).
 * - `findBinary` / `reportUnavailable`: a daemon that is not installed is
 *   reported in one line with the apt-get command; under CI=true that is a
 *   failing test, elsewhere a passing one (the house rules forbid skips).
 *
 * Isolation: no system service is ever used, and a test daemon shares nothing
 * with other software on the machine (another squid, another copy of this
 * suite running at the same time):
 *
 * - every daemon: its own temp dir (mkdtemp) as cwd and as TMPDIR; a port the
 *   kernel chose (bind 127.0.0.1:0) and, before it counts as ready, proof that
 *   the listener on that port is a socket of the daemon's own process group
 *   (/proc/net/tcp inode vs /proc/<pid>/fd), so a port taken by someone else
 *   in the meantime is never mistaken for ours; its own process group, and
 *   only that group is ever signalled.
 * - squid: a service name of its own per instance (`-n`, `uniqueServiceName`:
 *   alphanumeric, <= 32 chars). Squid names its shared-memory segments after
 *   it (/dev/shm/<name>-cf__metadata.shm, ...): with the default name `squid`
 *   every instance on the machine uses the same segments, a start unlinks the
 *   segments of any running squid it is allowed to unlink, and fails with
 *   `FATAL: Ipc::Mem::Segment::create failed to shm_open(/squid-cf__metadata.shm):
 *   (17) File exists` when it is not (another user's squid) or when another
 *   squid re-creates them between its unlink and its open. pid_filename,
 *   cache_log and coredump_dir in the temp dir; no cache_dir, access_log and
 *   cache_store_log none, netdb_filename none (no /var/spool/squid state),
 *   pinger off (configs.ts).
 * - tinyproxy: -d (foreground), -c our config; PidFile in the temp dir, no
 *   LogFile (it logs to stderr), Listen 127.0.0.1.
 * - danted: -f our config, -p a pid file in the temp dir (its default is
 *   /var/run/sockd.pid), logoutput stderr; its shared-memory and lock files
 *   (mkstemp'd .sockdshmem* / .sockslock*) go to TMPDIR, i.e. the temp dir.
 *   The username method's system user has a name unique to the run
 *   (credentials.ts `testUserName`), so two runs never change or delete each
 *   other's user.
 * - microsocks: no files at all; -i 127.0.0.1 -p <port>.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { createConnection, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { expect, test } from 'bun:test';

export const LOOPBACK = '127.0.0.1';
const READY_TIMEOUT_MS = 10_000;
const POLL_MS = 25;
const CONNECT_ATTEMPT_MS = 1_000;
const STOP_GRACE_MS = 3_000;
const OUTPUT_KEEP = 8 * 1024;
const START_ATTEMPTS = 3;

export class DaemonStartError extends Error {
  readonly code = 'daemon_start_failed';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DaemonStartError';
  }
}

export interface DaemonSpec {
  /** Label used in messages, e.g. "squid forwarded_for=off". */
  name: string;
  /** Absolute path of the binary (see findBinary). */
  bin: string;
  /** Files to write into the daemon's dir before start: relative name -> content. */
  files?: (dir: string, port: number) => Record<string, string>;
  args: (dir: string, port: number) => string[];
  /** Files in the dir whose content is appended to a start failure message (logs). */
  logFiles?: string[];
}

export interface RunningDaemon {
  name: string;
  host: string;
  port: number;
  dir: string;
  pid: number;
  /** Recent stdout+stderr of the daemon (capped). */
  output(): string;
  stop(): Promise<void>;
}

/** Absolute path of a program in PATH or the sbin dirs (not in a plain user's PATH), or null. */
export function findBinary(name: string): string | null {
  const dirs = (process.env.PATH ?? '').split(delimiter).concat(['/usr/local/sbin', '/usr/sbin', '/sbin', '/usr/bin', '/bin']);
  for (const d of dirs) {
    if (d === '') continue;
    const p = join(d, name);
    if (existsSync(p)) return p;
  }
  return null;
}

export const isRoot = (): boolean => typeof process.getuid === 'function' && process.getuid() === 0;

/** Binds 127.0.0.1:0, reads the port the kernel chose, closes. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, LOOPBACK, () => {
      const port = (srv.address() as AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/** One TCP connect attempt (bounded); true when the port accepted. Socket closed either way. */
function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ host: LOOPBACK, port });
    const done = (ok: boolean) => {
      clearTimeout(timer);
      s.removeAllListeners();
      s.on('error', () => {});
      s.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), CONNECT_ATTEMPT_MS);
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}

/**
 * Who listens on 127.0.0.1:port (Linux /proc): 'ours' when every listening
 * socket on it belongs to a process of the group `pgid`, 'foreign' when one
 * does not, 'none' when nothing listens yet, 'unknown' without /proc.
 */
export function listenerOwner(port: number, pgid: number): 'ours' | 'foreign' | 'none' | 'unknown' {
  let table: string;
  try {
    table = readFileSync('/proc/net/tcp', 'utf8');
  } catch {
    return 'unknown';
  }
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const inodes = new Set<string>();
  for (const line of table.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
    if (f[1] === local && f[3] === '0A' && f[9] !== undefined) inodes.add(`socket:[${f[9]}]`);
  }
  if (inodes.size === 0) return 'none';
  const ours = new Set<string>();
  for (const pid of groupMembers(pgid)) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // exited meanwhile
    }
    for (const fd of fds) {
      try {
        const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
        if (inodes.has(target)) ours.add(target);
      } catch {
        // closed meanwhile
      }
    }
  }
  return ours.size === inodes.size ? 'ours' : 'foreign';
}

/** Pids whose process group is `pgid` (from /proc/<pid>/stat; the comm field may hold spaces and parens). */
function groupMembers(pgid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // state ppid pgrp ...
      if (Number(rest[2]) === pgid) out.push(Number(name));
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

let serviceSeq = 0;
/**
 * A squid service name (`-n`) no other instance on the machine uses: squid
 * names its shared-memory segments after it. Alphanumeric only, <= 32
 * characters (squid refuses anything else): "pcit" + our pid + a counter +
 * 8 random hex digits.
 */
export function uniqueServiceName(): string {
  serviceSeq++;
  return `pcit${process.pid.toString(36)}x${serviceSeq.toString(36)}${randomBytes(4).toString('hex')}`;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

const live = new Map<number, string>(); // process-group id -> temp dir, still running
const running = new Set<RunningDaemon>(); // started, ready, not yet stopped
function killAllLive(): void {
  for (const [pgid, dir] of live) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // already gone
    }
    rmSync(dir, { recursive: true, force: true });
  }
  live.clear();
}
process.on('exit', killAllLive);
// The daemons run in their own process groups, so a Ctrl-C on the test run
// does not reach them: kill them, then let the signal take its default course.
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(sig, () => {
    killAllLive();
    process.kill(process.pid, sig);
  });
}

/** Signals the daemon's process group (spawned detached: its pid is the group id). */
function signalGroup(pgid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pgid, sig);
  } catch {
    // group already gone
  }
}

function waitExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const t = setTimeout(() => {
      child.removeListener('exit', onExit);
      resolve(false);
    }, ms);
    const onExit = () => {
      clearTimeout(t);
      resolve(true);
    };
    child.once('exit', onExit);
  });
}

function readLogs(dir: string, names: string[] | undefined): string {
  let out = '';
  for (const n of names ?? []) {
    const p = join(dir, n);
    if (!existsSync(p)) continue;
    const text = readFileSync(p, 'utf8');
    out += `\n--- ${n} ---\n${text.slice(-OUTPUT_KEEP)}`;
  }
  return out;
}

async function startOnce(spec: DaemonSpec): Promise<{ daemon: RunningDaemon | null; failure: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'interop-'));
  // Daemons drop root for an unprivileged user that must write logs/pid files here.
  chmodSync(dir, 0o777);
  const port = await freePort();
  for (const [name, content] of Object.entries(spec.files?.(dir, port) ?? {})) {
    writeFileSync(join(dir, name), content, { mode: 0o644 });
  }
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-OUTPUT_KEEP);
  };
  // TMPDIR: files a daemon makes for itself (dante's shared-memory and lock files) stay in its own dir
  const child = spawn(spec.bin, spec.args(dir, port), {
    cwd: dir,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, TMPDIR: dir },
  });
  const pid = child.pid;
  let spawnError: Error | null = null;
  child.once('error', (e) => {
    spawnError = e;
  });
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  if (pid !== undefined) live.set(pid, dir);

  let self: RunningDaemon | null = null;
  let stopped: Promise<void> | null = null;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      if (self !== null) running.delete(self);
      if (pid !== undefined) {
        signalGroup(pid, 'SIGTERM');
        if (!(await waitExit(child, STOP_GRACE_MS))) {
          signalGroup(pid, 'SIGKILL');
          await waitExit(child, STOP_GRACE_MS);
        }
        // children (dante's, squid's helpers) may outlive the leader by a moment
        signalGroup(pid, 'SIGKILL');
        live.delete(pid);
      }
      child.stdout?.destroy();
      child.stderr?.destroy();
      rmSync(dir, { recursive: true, force: true });
    })();
    return stopped;
  };

  const deadline = Date.now() + READY_TIMEOUT_MS;
  let foreign = false;
  while (Date.now() < deadline) {
    if (spawnError !== null || child.exitCode !== null || child.signalCode !== null) break;
    if (await canConnect(port)) {
      const owner = pid === undefined ? 'unknown' : listenerOwner(port, pid);
      if (owner === 'foreign') {
        foreign = true;
        break;
      }
      if (owner === 'none') {
        await sleep(POLL_MS); // accepted, then gone: look again
        continue;
      }
      const daemon: RunningDaemon = { name: spec.name, host: LOOPBACK, port, dir, pid: pid as number, output: () => output, stop };
      self = daemon;
      running.add(daemon);
      return { daemon, failure: '' };
    }
    await sleep(POLL_MS);
  }
  const why = foreign
    ? `port ${LOOPBACK}:${port} is held by another process (taken after we picked it): not ours`
    : spawnError !== null
      ? `could not spawn ${spec.bin}: ${(spawnError as Error).message}`
      : child.exitCode !== null || child.signalCode !== null
        ? `exited (code ${child.exitCode}, signal ${child.signalCode}) before accepting connections on ${LOOPBACK}:${port}`
        : `did not accept connections on ${LOOPBACK}:${port} within ${READY_TIMEOUT_MS} ms`;
  const failure = `${spec.name}: ${why}\n--- output ---\n${output}${readLogs(dir, spec.logFiles)}`;
  await stop();
  return { daemon: null, failure };
}

/** Starts the daemon and resolves once it accepts TCP on its port; throws DaemonStartError otherwise. */
export async function startDaemon(spec: DaemonSpec): Promise<RunningDaemon> {
  let failure = '';
  for (let i = 0; i < START_ATTEMPTS; i++) {
    const r = await startOnce(spec);
    if (r.daemon !== null) return r.daemon;
    failure = r.failure;
  }
  throw new DaemonStartError(`${failure}\n(gave up after ${START_ATTEMPTS} attempts)`);
}

/**
 * Stops every daemon started and not yet stopped, in parallel. Each test
 * file's afterAll calls it: it also catches daemons a failed beforeAll
 * started but never handed to the file (test files run one after another).
 */
export async function stopAllDaemons(): Promise<void> {
  await Promise.all([...running].map((d) => d.stop()));
}

export interface Requirement {
  /** Debian package that provides it. */
  pkg: string;
  /** Program name looked up with findBinary. */
  bin: string;
}

/** Packages whose binary is not on this machine. */
export function missingPackages(reqs: Requirement[]): string[] {
  return [...new Set(reqs.filter((r) => findBinary(r.bin) === null).map((r) => r.pkg))];
}

/**
 * Registers the one test a suite runs when it cannot run for real: it says why
 * in one line and passes, except under CI=true, where it fails.
 */
export function reportUnavailable(suite: string, reason: string): void {
  test(`${suite}: interop prerequisites (missing: reported here; a failure under CI=true)`, () => {
    const line = `interop ${suite}: ${reason}`;
    if (process.env.CI === 'true') throw new Error(`${line} (CI=true: a missing interop daemon is a failure)`);
    console.warn(`${line} -- interop tests for ${suite} not run`);
    expect(process.env.CI).not.toBe('true');
  });
}

/** The reason text for missing packages, with the command that fixes it. */
export function missingReason(pkgs: string[]): string {
  return `missing Debian package(s) ${pkgs.join(', ')}; install with: apt-get install -y ${pkgs.join(' ')}`;
}
