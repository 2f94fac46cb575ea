/**
 * Whether the database the admin command is pointed at exists, asked before
 * it is opened: an admin command never creates a database (run in the wrong
 * directory, or without the server's DATA_DIR, it used to make an empty
 * ./data and answer `{"total":0}`).
 * - embedded: DATA_DIR/pglite holds a database (its PG_VERSION file); asked
 *   only when no server holds the data dir (a starting server may be making it);
 * - PostgreSQL: DATABASE_URL answers and holds the service's tables (the
 *   `accounts` table), asked on a connection that runs no migration.
 * The messages (pure) name the DATA_DIR / DATABASE_URL looked at (never its
 * password) and how to point the command at the right one.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { errorText } from '../errors';

/** How to reach the server's database instead (the end of every message). */
const ELSEWHERE = 'or ADMIN_URL with ADMIN_TOKEN (a running server\'s admin listener, its URL in the server\'s ready line)';

/** The URL with its password replaced by `***` (unparsable: `(unparsable URL)`). Pure. */
export function redactDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return '(unparsable URL)';
  }
}

/** True when `dataDir`/pglite holds a PGlite database. */
export function embeddedDatabaseExists(dataDir: string): boolean {
  return existsSync(join(dataDir, 'pglite', 'PG_VERSION'));
}

/** The message when DATA_DIR holds no database. `dataDirSet`: DATA_DIR was in the environment (else it is the default ./data). Pure. */
export function noEmbeddedDatabaseMessage(dataDir: string, dataDirSet: boolean, cwd: string): string {
  const abs = resolve(cwd, dataDir);
  const which = dataDirSet ? `DATA_DIR ${abs}` : `DATA_DIR ${abs} (DATA_DIR is not set: the default ./data of the directory this runs in)`;
  return (
    `no database in ${which}; the admin command never creates one. ` +
    `Run it with the server's DATA_DIR (\`DATA_DIR=/path/to/the/server/data npm run admin -- ...\`, or from the directory the server was started in), ` +
    `or set DATABASE_URL to the server's PostgreSQL, ${ELSEWHERE}`
  );
}

/** The message when DATABASE_URL does not answer. Pure. */
export function unreachableDatabaseMessage(url: string, why: string): string {
  return `cannot reach the PostgreSQL database DATABASE_URL=${redactDatabaseUrl(url)}: ${why}. Set DATABASE_URL to the server's own value, unset it to use the embedded database in DATA_DIR, ${ELSEWHERE}`;
}

/** The message when DATABASE_URL answers but holds none of the service's tables. Pure. */
export function emptyDatabaseMessage(url: string): string {
  return (
    `the PostgreSQL database DATABASE_URL=${redactDatabaseUrl(url)} holds none of the service's tables; the admin command never creates them ` +
    `(the server does at its first start). Set DATABASE_URL to the server's own database, ${ELSEWHERE}`
  );
}

/** 'found', 'empty' (answers, no `accounts` table) or the reason it could not be reached. */
export async function probePostgres(url: string): Promise<{ state: 'found' | 'empty' } | { state: 'unreachable'; why: string }> {
  const [{ openDatabase, rowsOf }, { sql }] = await Promise.all([import('../../db/client'), import('drizzle-orm')]);
  let database: Awaited<ReturnType<typeof openDatabase>> | undefined;
  try {
    database = await openDatabase({ databaseUrl: url, migrate: false, maxConnections: 1 });
    const res = await database.db.execute(sql`select to_regclass('public.accounts') is not null as found`);
    return { state: rowsOf<{ found: boolean }>(res)[0]?.found === true ? 'found' : 'empty' };
  } catch (err) {
    return { state: 'unreachable', why: errorText(err).split('\n')[0]! };
  } finally {
    await database?.close().catch(() => undefined);
  }
}
