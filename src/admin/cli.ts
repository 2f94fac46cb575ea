/**
 * The admin command: `bun src/admin/cli.ts <command> [--flags]` (npm run admin).
 * Where it runs the command (the first that applies):
 *  0. ADMIN_URL set (with ADMIN_TOKEN) -> through the admin HTTP API of the
 *     server it names: the admin listener of any API node of a cluster, or of
 *     an embedded server on another host. Nothing else of the environment is
 *     read (no database, no data dir).
 *  1. DATABASE_URL set -> directly on PostgreSQL (any number of processes may).
 *  2. embedded mode, a live server holds the data-dir lock (src/admin/lock.ts:
 *     the socket DATA_DIR/server.sock answers) -> through that server's admin
 *     HTTP API (the adminUrl the lock answers with: the admin listener,
 *     ADMIN_HOST/ADMIN_PORT; ADMIN_TOKEN or DATA_DIR/admin-token), because
 *     PGlite allows one process per data dir.
 *  3. embedded mode, no live holder -> takes the lock, opens PGlite itself,
 *     runs the command, releases the lock.
 * It never creates a database (src/admin/database-found.ts): a DATA_DIR
 * without one (and no live server), a DATABASE_URL that does not answer or
 * holds none of the service's tables, is exit 1 with a message naming what it
 * looked at and how to point it at the server's.
 * Prints the result as one JSON line on stdout. Errors: one line on stderr;
 * exit code 2 for usage errors (bad argv, bad env, 400), 1 for everything else.
 */
import { AccountError } from '../accounts/errors';
import { ConfigError, parseConfig, type Config } from '../config';
import { errorText, ServiceError } from '../errors';
import { DOMAIN_ERROR_CODES, ENTRY_ERROR_CODES } from '../error-codes';
import { resolveSecrets } from '../secrets';
import { parseArgv, toAdminBody, UsageError, USAGE, type AdminRequest } from './args';
import { embeddedDatabaseExists, emptyDatabaseMessage, noEmbeddedDatabaseMessage, probePostgres, unreachableDatabaseMessage } from './database-found';
import { acquireDataDirLock, LockError, readLiveLock } from './lock';

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** How long to wait for a starting server (lock held, admin URL not yet published). */
const WAIT_FOR_ADMIN_URL_MS = 3000;
const HTTP_TIMEOUT_MS = 30_000;

/** A failure that carries its own exit code (main() branches on it). */
class CliFailure extends ServiceError {
  readonly exitCode: number;
  constructor(code: string, message: string, exitCode: number, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'CliFailure';
    this.exitCode = exitCode;
  }
}

/** PostgreSQL: the database must answer and hold the service's tables (never created here). */
async function requirePostgres(url: string): Promise<void> {
  const found = await probePostgres(url);
  if (found.state === 'unreachable') throw new CliFailure(ENTRY_ERROR_CODES.ADMIN_NO_DATABASE, unreachableDatabaseMessage(url, found.why), EXIT_FAILURE);
  if (found.state === 'empty') throw new CliFailure(ENTRY_ERROR_CODES.ADMIN_NO_DATABASE, emptyDatabaseMessage(url), EXIT_FAILURE);
}

async function runDirect(config: Config, req: AdminRequest): Promise<unknown> {
  // Loaded lazily: the HTTP path needs neither the drivers nor the queries.
  const [{ openDatabase }, { runAdminCommand }] = await Promise.all([import('../../db/client'), import('./commands')]);
  const database = await openDatabase({ databaseUrl: config.storage.databaseUrl, dataDir: config.storage.dataDir });
  try {
    return await runAdminCommand(database.db, req);
  } finally {
    await database.close();
  }
}

/**
 * ADMIN_URL and ADMIN_TOKEN when ADMIN_URL is set (null otherwise). Pure; a
 * bad value is a ConfigError (exit 2): ADMIN_URL must be an http(s) URL, and
 * it needs ADMIN_TOKEN (a token generated here could never be the server's).
 */
export function adminUrlTarget(env: Record<string, string | undefined>): { adminUrl: string; adminToken: string } | null {
  const raw = env.ADMIN_URL?.trim();
  if (raw === undefined || raw === '') return null;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError(`ADMIN_URL must be an http(s) URL (the admin listener of a running server), got ${JSON.stringify(raw)}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new ConfigError(`ADMIN_URL must be an http(s) URL, got ${JSON.stringify(raw)}`);
  const adminToken = env.ADMIN_TOKEN;
  if (adminToken === undefined || adminToken === '') throw new ConfigError('ADMIN_URL needs ADMIN_TOKEN (the admin token of the server it names)');
  return { adminUrl: raw, adminToken };
}

async function runViaServer(config: Config, adminUrl: string, req: AdminRequest): Promise<unknown> {
  const { adminToken } = (await resolveSecrets(config)).http;
  return runViaAdminApi(adminUrl, adminToken!, req); // resolveSecrets always fills it
}

async function runViaAdminApi(adminUrl: string, adminToken: string, req: AdminRequest): Promise<unknown> {
  const url = `${adminUrl.replace(/\/+$/, '')}/admin/${req.command}`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(toAdminBody(req)),
      signal: AbortSignal.timeout(HTTP_TIMEOUT_MS),
    });
  } catch (err) {
    throw new CliFailure(ENTRY_ERROR_CODES.ADMIN_SERVER_UNREACHABLE, `the server at ${adminUrl} did not answer: ${errorText(err)}`, EXIT_FAILURE, { cause: err });
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = { message: text };
  }
  if (!res.ok) {
    const message = (body as { message?: unknown }).message;
    const why = typeof message === 'string' ? message : `HTTP ${res.status}`;
    throw new CliFailure(ENTRY_ERROR_CODES.ADMIN_REQUEST_REFUSED, why, res.status === 400 ? EXIT_USAGE : EXIT_FAILURE);
  }
  return body;
}

async function runEmbedded(config: Config, req: AdminRequest, dataDirSet: boolean): Promise<unknown> {
  const deadline = Date.now() + WAIT_FOR_ADMIN_URL_MS;
  for (;;) {
    const live = await readLiveLock(config.storage.dataDir);
    if (live?.adminUrl !== undefined) return runViaServer(config, live.adminUrl, req);
    if (live === null) {
      if (!embeddedDatabaseExists(config.storage.dataDir)) {
        throw new CliFailure(ENTRY_ERROR_CODES.ADMIN_NO_DATABASE, noEmbeddedDatabaseMessage(config.storage.dataDir, dataDirSet, process.cwd()), EXIT_FAILURE);
      }
      let lock;
      try {
        lock = await acquireDataDirLock(config.storage.dataDir);
      } catch (err) {
        if (!(err instanceof LockError)) throw err;
        lock = undefined; // someone else got there first: look again
      }
      if (lock !== undefined) {
        try {
          return await runDirect(config, req);
        } finally {
          lock.release();
        }
      }
    }
    if (Date.now() >= deadline) {
      throw new CliFailure(
        ENTRY_ERROR_CODES.DATA_DIR_BUSY,
        `the data dir ${config.storage.dataDir} is held by process ${live?.pid ?? '?'} which publishes no admin URL; retry when the server has started, or stop it`,
        EXIT_FAILURE,
      );
    }
    await Bun.sleep(100);
  }
}

export async function main(argv: readonly string[], env: Record<string, string | undefined>): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    (argv.length === 0 ? process.stderr : process.stdout).write(USAGE + '\n');
    return argv.length === 0 ? EXIT_USAGE : EXIT_OK;
  }
  try {
    const req = parseArgv(argv);
    const target = adminUrlTarget(env);
    let result: unknown;
    if (target !== null) result = await runViaAdminApi(target.adminUrl, target.adminToken, req);
    else {
      const config = parseConfig(env);
      const databaseUrl = config.storage.databaseUrl;
      if (databaseUrl !== undefined) {
        await requirePostgres(databaseUrl);
        result = await runDirect(config, req);
      } else {
        result = await runEmbedded(config, req, (env.DATA_DIR ?? '').trim() !== '');
      }
    }
    process.stdout.write(JSON.stringify(result) + '\n');
    return EXIT_OK;
  } catch (err) {
    const usage = err instanceof UsageError || err instanceof ConfigError || (err instanceof AccountError && err.code === DOMAIN_ERROR_CODES.INVALID_INPUT);
    const code = err instanceof CliFailure ? err.exitCode : usage ? EXIT_USAGE : EXIT_FAILURE;
    const message = errorText(err);
    process.stderr.write(`admin: ${message.split('\n')[0]}${usage && !(err instanceof ConfigError) ? ' (run with --help for usage)' : ''}\n`);
    return code;
  }
}

if (import.meta.main) {
  const code = await main(process.argv.slice(2), process.env);
  process.exit(code);
}
