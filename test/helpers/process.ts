/**
 * The service as a real process for end-to-end tests (signals, kill -9,
 * restarts): `bun src/main.ts` with PORT=0 on 127.0.0.1, its JSON log lines
 * collected (stdout and stderr), the bound port read from the 'ready' line.
 *
 * serviceStore() makes the persistent part a process runs on and that
 * survives restarts: a temp DATA_DIR plus, when DATABASE_URL /
 * TEST_DATABASE_URL is set, a fresh PostgreSQL database (else embedded
 * PGlite in the data dir, pre-seeded from the migrated template for speed).
 * openStore() opens that database in the test process, for assertions, once
 * no service process holds it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { SQL } from 'drizzle-orm';
import { openDatabase, rowsOf, type Database } from '../../db/client';
import { seedPgliteDataDir, testDatabaseUrl } from './db';
import { createTestDatabase, TEST_KEY } from './service';

const REPO_ROOT = resolve(import.meta.dir, '../..');

export interface ServiceStore {
  dataDir: string;
  /** undefined = embedded PGlite in dataDir. */
  databaseUrl: string | undefined;
  /** Removes the data dir and drops the database. Safe twice. */
  cleanup(): Promise<void>;
}

export async function serviceStore(): Promise<ServiceStore> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pc-proc-'));
  const server = testDatabaseUrl();
  const pg = server !== undefined ? await createTestDatabase(server) : null;
  if (pg === null) await seedPgliteDataDir(dataDir);
  let done: Promise<void> | null = null;
  return {
    dataDir,
    databaseUrl: pg?.url,
    cleanup: () =>
      (done ??= (async () => {
        await pg?.drop();
        rmSync(dataDir, { recursive: true, force: true });
      })()),
  };
}

/** The store's database, opened in this process (no service may be running on an embedded store). */
export function openStore(store: ServiceStore): Promise<Database> {
  return openDatabase(store.databaseUrl !== undefined ? { databaseUrl: store.databaseUrl } : { dataDir: store.dataDir });
}

/** The rows of one statement on the store's database, opened and closed around it. */
export async function queryStore<T = Record<string, unknown>>(store: ServiceStore, text: SQL): Promise<T[]> {
  const d = await openStore(store);
  try {
    return rowsOf<T>(await d.db.execute(text));
  } finally {
    await d.close();
  }
}

export type LogLine = Record<string, unknown> & { msg?: string; level?: string };

export interface ServiceProcess {
  pid: number;
  port: number;
  /** http://127.0.0.1:<port> */
  url: string;
  key: string;
  /** Every JSON log line so far (stdout and stderr), in arrival order per stream. */
  logs: LogLine[];
  /** Non-JSON output (e.g. a start failure), for error messages. */
  rawOutput(): string;
  /** Resolves with the exit code (null when killed by a signal) and the signal. */
  exited: Promise<{ code: number | null; signal: string | null }>;
  kill(signal: NodeJS.Signals): void;
  /** Resolves with the first log line (past or future) matching `pred`. */
  waitForLog(pred: (l: LogLine) => boolean, timeoutMs: number): Promise<LogLine>;
}

export interface SpawnOptions {
  env?: Record<string, string>;
  /** How long to wait for the 'ready' line (default 15 s). */
  readyTimeoutMs?: number;
  /** Run the service under this command (e.g. ['prlimit', '--nofile=600:600']). */
  wrapper?: string[];
}

/** Calls onLine for every line of `stream` (the last one too, unterminated) until it ends. */
export async function readLines(stream: ReadableStream<Uint8Array>, onLine: (line: string) => void): Promise<void> {
  const decoder = new TextDecoder();
  let buf = '';
  for await (const chunk of stream) {
    buf += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buf.indexOf('\n')) !== -1) {
      onLine(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
    }
  }
  onLine(buf);
}

/** The environment of a service process on `store`: this process's, minus its database, plus the test settings. */
export function serviceEnv(store: ServiceStore, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && k !== 'DATABASE_URL' && k !== 'TEST_DATABASE_URL') env[k] = v;
  }
  return Object.assign(env, {
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: store.dataDir,
    BOOTSTRAP_API_KEY: TEST_KEY,
    ALLOW_PRIVATE_TARGETS: 'true',
    LOG_LEVEL: 'info',
    PROBE_THREADS: '1',
    ...(store.databaseUrl !== undefined ? { DATABASE_URL: store.databaseUrl } : {}),
    ...extra,
  });
}

export async function spawnService(store: ServiceStore, opts: SpawnOptions = {}): Promise<ServiceProcess> {
  const env = serviceEnv(store, opts.env);
  const child = Bun.spawn([...(opts.wrapper ?? []), process.execPath, 'src/main.ts'], {
    cwd: REPO_ROOT,
    env,
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });

  const logs: LogLine[] = [];
  let raw = '';
  const waiters = new Set<{ pred: (l: LogLine) => boolean; resolve: (l: LogLine) => void }>();
  const onLine = (line: string) => {
    if (line.trim() === '') return;
    let parsed: LogLine;
    try {
      parsed = JSON.parse(line) as LogLine;
    } catch {
      raw += line + '\n';
      return;
    }
    logs.push(parsed);
    for (const w of waiters) {
      if (w.pred(parsed)) {
        waiters.delete(w);
        w.resolve(parsed);
      }
    }
  };
  const pumps = Promise.all([readLines(child.stdout, onLine), readLines(child.stderr, onLine)]);
  const exited = child.exited.then(async (code) => {
    await pumps;
    const sig = child.signalCode;
    return { code: sig === null ? code : null, signal: sig === null ? null : String(sig) };
  });

  const waitForLog = (pred: (l: LogLine) => boolean, timeoutMs: number): Promise<LogLine> => {
    const hit = logs.find(pred);
    if (hit !== undefined) return Promise.resolve(hit);
    return new Promise((resolvePromise, reject) => {
      const w = {
        pred,
        resolve: (l: LogLine) => {
          clearTimeout(timer);
          resolvePromise(l);
        },
      };
      const timer = setTimeout(() => {
        waiters.delete(w);
        reject(new Error(`no matching log line within ${timeoutMs} ms; output so far:\n${raw}${logs.map((l) => JSON.stringify(l)).join('\n')}`));
      }, timeoutMs);
      waiters.add(w);
    });
  };

  const readyLine = waitForLog((l) => l.msg === 'ready', opts.readyTimeoutMs ?? 15_000).then(
    (line) => ({ line }),
    (error: unknown) => ({ error }),
  );
  const first = await Promise.race([readyLine, exited.then((e) => ({ exit: e }))]);
  if (!('line' in first)) {
    child.kill('SIGKILL');
    const e = await exited;
    const why = 'exit' in first ? `exited before ready (code ${e.code}, signal ${e.signal})` : String((first as { error: unknown }).error);
    throw new Error(`the service ${why}:\n${raw}`);
  }
  const ready = first.line;
  const port = Number(ready.port);
  return {
    pid: child.pid,
    port,
    url: `http://127.0.0.1:${port}`,
    key: TEST_KEY,
    logs,
    rawOutput: () => raw,
    exited,
    kill: (signal) => child.kill(signal),
    waitForLog,
  };
}

/**
 * What a test file of real service processes keeps: the processes it spawned
 * and the stores it made, all killed and removed by `cleanup()` (afterAll).
 */
export class ProcessBed {
  readonly spawned: ServiceProcess[] = [];
  readonly stores: ServiceStore[] = [];

  /** A new store, removed at cleanup. */
  async store(): Promise<ServiceStore> {
    const s = await serviceStore();
    this.stores.push(s);
    return s;
  }

  /** Another API node's store on the same database: a data dir of its own, removed at cleanup. */
  sibling(store: ServiceStore): ServiceStore {
    const dataDir = mkdtempSync(join(tmpdir(), 'pc-node-'));
    const s: ServiceStore = { dataDir, databaseUrl: store.databaseUrl, cleanup: async () => rmSync(dataDir, { recursive: true, force: true }) };
    this.stores.push(s);
    return s;
  }

  /** spawnService, killed at cleanup. */
  async spawn(store: ServiceStore, opts: SpawnOptions = {}): Promise<ServiceProcess> {
    const p = await spawnService(store, opts);
    this.spawned.push(p);
    return p;
  }

  async cleanup(): Promise<void> {
    for (const p of this.spawned) {
      p.kill('SIGKILL');
      await p.exited;
    }
    for (const s of this.stores) await s.cleanup();
  }
}

/**
 * Polls `f` every `stepMs` until it is true (a throw counts as false); rejects
 * naming `what` after `ms`. Resolves with the milliseconds it took.
 */
export async function until(what: string, f: () => boolean | Promise<boolean>, ms: number, stepMs = 50): Promise<number> {
  const t0 = performance.now();
  while (!(await Promise.resolve().then(f).catch(() => false))) {
    if (performance.now() - t0 > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await Bun.sleep(stepMs);
  }
  return performance.now() - t0;
}
