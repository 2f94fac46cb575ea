/**
 * Starts the whole service in-process for end-to-end tests: port 0 on
 * 127.0.0.1 (the public and the admin listener), a temp DATA_DIR, one probe thread, private targets allowed (the
 * fakes live on loopback), a deterministic demo key. The database is the one
 * the environment selects (test/helpers/db.ts): a fresh PostgreSQL database
 * when DATABASE_URL / TEST_DATABASE_URL is set, else PGlite in the data dir
 * in memory (from the migrated template, since initdb takes seconds).
 *
 * The built-in judge's TLS listener is always up; the https check through it
 * is off unless a test sets JUDGE_TLS=true (test/e2e/https.test.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig, type Config } from '../../src/config';
import { memoryLogger } from '../../src/log';
import { startService, type RunningService } from '../../src/server';
import { createServerDatabase, freshDatabase, testDatabaseUrl } from './db';

export const TEST_KEY = 'pc_TestKeyForEndToEndTests000001';

export interface TestService {
  service: RunningService;
  /** http://127.0.0.1:<port> */
  url: string;
  /** The admin API's own listener: http://127.0.0.1:<admin port> */
  adminUrl: string;
  key: string;
  dataDir: string;
  databaseUrl: string | undefined;
  logs: Record<string, unknown>[];
  /** Stops the service, drops its database, removes the data dir. Safe twice. */
  stop(): Promise<void>;
}

/** A fresh database on the test PostgreSQL server (see test/helpers/db.ts). */
export const createTestDatabase = (serverUrl: string) => createServerDatabase(serverUrl, 'e2e');

/**
 * `env` is the environment the service reads; `opts.configure` changes the
 * parsed Config before the start (the constants that are no setting, e.g.
 * `c.http.idleTimeoutS = 1`).
 */
export async function startTestService(env: Record<string, string> = {}, opts: { dataDir?: string; configure?: (c: Config) => void } = {}): Promise<TestService> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'pc-e2e-'));
  const server = testDatabaseUrl();
  const pg = server !== undefined && env.DATABASE_URL === undefined ? await createTestDatabase(server) : null;
  // Embedded mode: an in-memory PGlite from the migrated template (initdb takes seconds), injected.
  const embedded = pg === null && server === undefined && opts.dataDir === undefined ? await freshDatabase() : null;
  const config = parseConfig(
    {
      PORT: '0',
      HOST: '127.0.0.1',
      ADMIN_PORT: '0',
      ADMIN_HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      ALLOW_PRIVATE_TARGETS: 'true',
      BOOTSTRAP_API_KEY: TEST_KEY,
      LOG_LEVEL: 'debug',
      SHUTDOWN_GRACE_MS: '2000',
      ...(pg !== null ? { DATABASE_URL: pg.url } : {}),
      ...env,
    },
    process.cwd(),
  );
  opts.configure?.(config);
  const log = memoryLogger('debug');
  const service = await startService(config, { log, threads: 1, ...(embedded !== null ? { database: embedded } : {}) });
  const url = `http://127.0.0.1:${service.port}`;
  let stopped: Promise<void> | null = null;
  return {
    service,
    url,
    adminUrl: service.adminUrl,
    key: TEST_KEY,
    dataDir,
    databaseUrl: config.storage.databaseUrl,
    logs: log.lines,
    stop: () =>
      (stopped ??= (async () => {
        await service.stop();
        await embedded?.cleanup();
        await pg?.drop();
        if (opts.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
      })()),
  };
}

export interface CallResult {
  status: number;
  headers: Headers;
  /** The body parsed as JSON, or its text when it is not JSON. */
  body: any;
  text: string;
  response: Response;
}

/** fetch + JSON body, for terse assertions. */
export async function call(url: string, init: RequestInit & { json?: unknown } = {}): Promise<CallResult> {
  const { json, ...rest } = init;
  const res = await fetch(url, {
    ...rest,
    ...(json !== undefined ? { body: JSON.stringify(json), headers: { 'content-type': 'application/json', ...(rest.headers as Record<string, string>) } } : {}),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, headers: res.headers, body, text, response: res };
}
