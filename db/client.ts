/**
 * One database interface over two drivers:
 * - embedded PGlite in `${dataDir}/pglite` (or in memory) when no DATABASE_URL;
 * - PostgreSQL through postgres.js when DATABASE_URL is set.
 * `db` is a drizzle PgDatabase typed with db/schema.ts and is used the same
 * way for both (query builder and transactions; avoid `db.execute` results,
 * whose shape differs per driver). Migrations are applied before
 * openDatabase resolves. PGlite allows ONE process per data dir: callers guard
 * the dir with src/admin/lock.ts.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { migratePgliteDb, migratePostgresDb } from './migrate';
import { collectInitdbGarbage, compiledPgliteModules, newPglite, pgliteOptions } from './pglite-instance';
import { PgliteThread } from './pglite-thread';
import * as schema from './schema';
import { errorText, ServiceError } from '../src/errors';
export { PGLITE_SETTINGS, PGLITE_WAL_SETTINGS } from './pglite-instance';
import { DB_ERROR_CODES } from '../src/error-codes';

export type Schema = typeof schema;
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
export type DriverName = 'pglite' | 'postgres';
export type PgliteThreadMode = 'worker' | 'main';

/** The rows of a `db.execute()` result: drizzle answers `{rows}` on PGlite and an array on postgres.js. */
export function rowsOf<T>(res: unknown): T[] {
  return (Array.isArray(res) ? res : (res as { rows: T[] }).rows) as T[];
}

export interface Database {
  db: Db;
  driver: DriverName;
  /**
   * How the database came to be: 'initdb' / 'template' (a new PGlite data dir,
   * made by initdb or from a template tarball), 'existing' (a PGlite data dir
   * opened again), 'memory' (PGlite in memory), 'server' (PostgreSQL).
   */
  origin: 'initdb' | 'template' | 'existing' | 'memory' | 'server';
  /** true when `select 1` answers within timeoutMs (default 1000); never rejects, never hangs. */
  ping(timeoutMs?: number): Promise<boolean>;
  /** Closes the connection(s); safe to call more than once. */
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** postgres:// URL; absent = embedded PGlite. */
  databaseUrl?: string | undefined;
  /** Embedded mode: the database lives in `${dataDir}/pglite`. */
  dataDir?: string | undefined;
  /** Embedded mode without files (tests). */
  inMemory?: boolean | undefined;
  /**
   * Embedded mode: a dumpDataDir() tarball to start a NEW database from instead
   * of running initdb (in memory: tests; in a data dir: db/pglite-template.ts,
   * whose readTemplate checks it first). Ignored for a data dir that already
   * holds a database. A function is called only when a new data dir needs it
   * (the template is a few MB).
   */
  pgliteTemplate?: Blob | (() => Blob | undefined) | undefined;
  /** PostgreSQL: statement_timeout (ms) of every connection. PGlite runs in-process and has none. */
  statementTimeoutMs?: number | undefined;
  /**
   * Embedded mode: where PGlite runs. 'main' (default): on the calling
   * thread; 'worker': in its own thread (db/pglite-thread.ts), so its
   * statements do not hold up the main thread, at a measured price
   * (docs/DESIGN.md "The embedded database's thread").
   */
  pgliteThread?: PgliteThreadMode | undefined;
  /** Apply migrations before resolving (default true). */
  migrate?: boolean | undefined;
  /** postgres.js pool size (default 10). */
  maxConnections?: number | undefined;
}

function makePing(db: Db): (timeoutMs?: number) => Promise<boolean> {
  return (timeoutMs = 1000) =>
    new Promise<boolean>((resolve) => {
      let done = false;
      const finish = (ok: boolean) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve(ok);
      };
      const timer = setTimeout(() => finish(false), timeoutMs);
      db.execute(sql`select 1`).then(
        () => finish(true),
        () => finish(false),
      );
    });
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let p: Promise<void> | undefined;
  return () => (p ??= fn());
}

/** Where a new or existing embedded database comes from, decided on the main thread (the data dir's files, the template). */
interface PgliteSource {
  /** `${dataDir}/pglite`; null = in memory. */
  dir: string | null;
  template: Blob | undefined;
  origin: 'initdb' | 'template' | 'existing' | 'memory';
}

function pgliteSource(opts: OpenDatabaseOptions): PgliteSource {
  const template = () => (typeof opts.pgliteTemplate === 'function' ? opts.pgliteTemplate() : opts.pgliteTemplate);
  if (opts.inMemory === true) return { dir: null, template: template(), origin: 'memory' };
  if (opts.dataDir === undefined) throw new ServiceError(DB_ERROR_CODES.DB_OPEN_FAILED, 'openDatabase: dataDir or inMemory is required without databaseUrl');
  const dir = join(opts.dataDir, 'pglite');
  mkdirSync(dir, { recursive: true });
  if (existsSync(join(dir, 'PG_VERSION'))) return { dir, template: undefined, origin: 'existing' };
  // No fallback to initdb after a failed template start: PGlite leaves an unhandled rejection
  // behind a failed start, so the template is checked before (db/pglite-template.ts readTemplate).
  const t = template();
  return { dir, template: t, origin: t !== undefined ? 'template' : 'initdb' };
}

/** The embedded database's client: PGlite itself (main thread) or its thread's (db/pglite-thread.ts). */
type PgliteClient = Pick<PGlite, 'waitReady' | 'close' | 'closed'> | PgliteThread;

async function openPglite(opts: OpenDatabaseOptions): Promise<Database> {
  const src = pgliteSource(opts);
  const fresh = src.origin === 'initdb' || src.origin === 'template';
  let client: PgliteClient;
  if (opts.pgliteThread !== 'worker') {
    client = newPglite(src.dir, src.template);
  } else {
    const template = src.template !== undefined ? await src.template.arrayBuffer() : null;
    client = new PgliteThread({ dataDir: src.dir, template, modules: await compiledPgliteModules(), collectGarbage: fresh });
  }
  try {
    await client.waitReady;
    // the thread's client offers what drizzle's PGlite session calls (query, transaction; db/pglite-thread.ts)
    const db = drizzlePglite({ client: client as PGlite, schema });
    if (opts.migrate !== false) await migratePgliteDb(db);
    if (fresh) await collectInitdbGarbage();
    return {
      db: db,
      driver: 'pglite',
      origin: src.origin,
      ping: makePing(db),
      close: once(async () => {
        if (!client.closed) await client.close();
      }),
    };
  } catch (err) {
    await client.close().catch(() => undefined);
    throw new ServiceError(DB_ERROR_CODES.DB_OPEN_FAILED, `cannot open the embedded database: ${errorText(err)}`, { cause: err });
  }
}

async function openPostgres(url: string, opts: OpenDatabaseOptions): Promise<Database> {
  const client = postgres(url, {
    max: opts.maxConnections ?? 10,
    connect_timeout: 10,
    onnotice: () => undefined,
    // every statement of the service ends by then (a lock wait, a slow plan): nothing waits on the database forever
    ...(opts.statementTimeoutMs !== undefined ? { connection: { statement_timeout: opts.statementTimeoutMs } } : {}),
  });
  try {
    const db = drizzlePostgres({ client, schema });
    if (opts.migrate !== false) await migratePostgresDb(db);
    return {
      db: db,
      driver: 'postgres',
      origin: 'server',
      ping: makePing(db),
      close: once(async () => {
        await client.end({ timeout: 2 });
      }),
    };
  } catch (err) {
    await client.end({ timeout: 1 }).catch(() => undefined);
    throw new ServiceError(DB_ERROR_CODES.DB_OPEN_FAILED, `cannot open the PostgreSQL database: ${errorText(err)}`, { cause: err });
  }
}

/**
 * A new in-memory database with the service's settings as a dumpDataDir()
 * tarball, for pgliteTemplate: migrated and uncompressed by default (tests);
 * `{ migrate: false, gzip: true }` is initdb's output alone, the install
 * template of db/pglite-template.ts.
 */
export async function makePgliteTemplate(o: { migrate?: boolean; gzip?: boolean } = {}): Promise<Blob> {
  const client = new PGlite(pgliteOptions());
  try {
    await client.waitReady;
    if (o.migrate !== false) await migratePgliteDb(drizzlePglite({ client, schema }));
    return await client.dumpDataDir(o.gzip === true ? 'gzip' : 'none');
  } finally {
    await client.close();
  }
}

export async function openDatabase(opts: OpenDatabaseOptions): Promise<Database> {
  if (opts.databaseUrl !== undefined) return openPostgres(opts.databaseUrl, opts);
  return openPglite(opts);
}
