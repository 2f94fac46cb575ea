/**
 * Interop harness: runs a real proxy daemon (squid, tinyproxy, danted,
 * microsocks from Debian's packages) in the foreground as a child process on
 * 127.0.0.1, for the length of one test file.
 *
 * - `startDaemon` makes a private temp dir, picks a free loopback port, writes
 *   the daemon's files (config, password file) there, spawns the daemon in its
 *   own process group and waits (bounded) until the port accepts TCP. If the
 *   daemon exits first (for instance: the port was taken in the meantime) it
 *   retries on a fresh port; otherwise it throws a `DaemonStartError` carrying
 *   the daemon's output.
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
 * No system service is ever used: every daemon here is ours, on its own port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
  const child = spawn(spec.bin, spec.args(dir, port), { cwd: dir, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
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
  while (Date.now() < deadline) {
    if (spawnError !== null || child.exitCode !== null || child.signalCode !== null) break;
    if (await canConnect(port)) {
      const daemon: RunningDaemon = { name: spec.name, host: LOOPBACK, port, dir, pid: pid as number, output: () => output, stop };
      self = daemon;
      running.add(daemon);
      return { daemon, failure: '' };
    }
    await sleep(POLL_MS);
  }
  const why =
    spawnError !== null
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
