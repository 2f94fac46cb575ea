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
import * as schema from './schema';
import { errorText, ServiceError } from '../src/errors';
import { DB_ERROR_CODES } from '../src/error-codes';

export type Schema = typeof schema;
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
export type DriverName = 'pglite' | 'postgres';

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

/**
 * PostgreSQL settings of the embedded database, chosen for memory.
 *
 * PGlite's postgres runs in a WASM memory that grows and never shrinks, and
 * the shared memory sized from these settings is zero-filled at start, so
 * all of it is resident from the first second. PostgreSQL's defaults
 * (shared_buffers 128MB, max_connections 100) grow it far beyond the 128 MiB
 * the module declares; these keep it near that (bench/pglite-memory.ts
 * measures it; the figures: bench/RESULTS.md "PGlite sized for memory"):
 * - shared_buffers 16MB: 2048 pages, far more than the per-job queries touch
 *   and enough for /me over ~25 000 scans; bigger scans read through the OS
 *   page cache (not in our RSS). wal_buffers and the SLRU caches are sized
 *   from it. Smaller makes /me slower.
 * - max_connections 5: single-user mode has one backend; the per-backend
 *   arrays and lock tables are sized from it (must exceed the 3 reserved).
 * - maintenance_work_mem 16MB: bounds what a CREATE INDEX in a migration
 *   adds to the never-shrinking heap (default 64MB).
 * Given on the command line (it wins over postgresql.conf, so existing data
 * dirs get them too) and to initdb (a new data dir's postgresql.conf).
 * PGlite's `initialMemory` cannot help: below the module's 128 MiB the WASM
 * link fails (and waitReady never settles); the part never touched costs nothing.
 */
export const PGLITE_SETTINGS: Readonly<Record<string, string>> = Object.freeze({
  shared_buffers: '16MB',
  max_connections: '5',
  maintenance_work_mem: '16MB',
});

/**
 * The embedded database's WAL, sized for an embedded database (issue 29: a
 * pool's owner rewrites its state every POOL_FLUSH_S): PostgreSQL's default
 * max_wal_size (1 GB) let pg_wal grow to 800 MiB under a steady pool.
 * A single-user backend never asks for a checkpoint by itself (neither by
 * WAL volume nor by time): db/pglite-checkpoints.ts runs them, and a
 * checkpoint keeps max_wal_size of segments and recycles no more than
 * min_wal_size 32MB. Given on the command line only
 * (not to initdb): the template's name (db/pglite-template.ts) does not change.
 */
export const PGLITE_WAL_SETTINGS: Readonly<Record<string, string>> = Object.freeze({
  max_wal_size: '64MB',
  min_wal_size: '32MB',
  checkpoint_timeout: '2min',
});

/** PGlite options shared by every embedded instance (data dir, in memory, template). */
function pgliteOptions(): { startParams: string[]; initDbStartParams: string[] } {
  const pairs = Object.entries(PGLITE_SETTINGS).map(([k, v]) => `${k}=${v}`);
  const wal = Object.entries(PGLITE_WAL_SETTINGS).map(([k, v]) => `${k}=${v}`);
  return {
    startParams: [...PGlite.defaultStartParams, ...[...pairs, ...wal].flatMap((p) => ['-c', p])],
    initDbStartParams: pairs.flatMap((p) => ['--set', p]),
  };
}

/**
 * After a new data dir was made (initdb or template): initdb ran in a second
 * PGlite instance (its own WASM memory, a copy of it, the data dir as a
 * tarball), or the template's tarball was read and inflated. Either is
 * garbage once open resolves, but the GC of an idle server may leave it for a
 * long time. Collected here, once per new data dir (the figures:
 * bench/RESULTS.md "PGlite sized for memory").
 */
async function collectInitdbGarbage(): Promise<void> {
  // After a timer turn: collected right away (or after setImmediate) half of it stays.
  await new Promise<void>((resolve) => setTimeout(resolve, 0));
  Bun.gc(true);
}

async function openPglite(opts: OpenDatabaseOptions): Promise<Database> {
  const template = () => (typeof opts.pgliteTemplate === 'function' ? opts.pgliteTemplate() : opts.pgliteTemplate);
  if (opts.inMemory === true) {
    const t = template();
    return startPglite(new PGlite({ ...pgliteOptions(), ...(t !== undefined ? { loadDataDir: t } : {}) }), 'memory', opts);
  }
  if (opts.dataDir === undefined) throw new ServiceError(DB_ERROR_CODES.DB_OPEN_FAILED, 'openDatabase: dataDir or inMemory is required without databaseUrl');
  const dir = join(opts.dataDir, 'pglite');
  mkdirSync(dir, { recursive: true });
  if (existsSync(join(dir, 'PG_VERSION'))) return startPglite(new PGlite(dir, pgliteOptions()), 'existing', opts);
  // No fallback to initdb after a failed template start: PGlite leaves an unhandled rejection
  // behind a failed start, so the template is checked before (db/pglite-template.ts readTemplate).
  const t = template();
  if (t !== undefined) return startPglite(new PGlite(dir, { ...pgliteOptions(), loadDataDir: t }), 'template', opts);
  return startPglite(new PGlite(dir, pgliteOptions()), 'initdb', opts);
}

async function startPglite(client: PGlite, origin: 'initdb' | 'template' | 'existing' | 'memory', opts: OpenDatabaseOptions): Promise<Database> {
  try {
    await client.waitReady;
    const db = drizzlePglite({ client, schema });
    if (opts.migrate !== false) await migratePgliteDb(db);
    if (origin === 'initdb' || origin === 'template') await collectInitdbGarbage();
    return {
      db: db,
      driver: 'pglite',
      origin,
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
