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
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { migratePgliteDb, migratePostgresDb } from './migrate';
import * as schema from './schema';

export type Schema = typeof schema;
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
export type DriverName = 'pglite' | 'postgres';

export interface Database {
  db: Db;
  driver: DriverName;
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
  /** Embedded in-memory mode: start from this dumpDataDir() tarball instead of running initdb (test speed-up). */
  pgliteTemplate?: Blob | undefined;
  /** Apply migrations before resolving (default true). */
  migrate?: boolean | undefined;
  /** postgres.js pool size (default 10). */
  maxConnections?: number | undefined;
}

export class DatabaseOpenError extends Error {
  readonly code = 'db_open_failed';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DatabaseOpenError';
  }
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

async function openPglite(opts: OpenDatabaseOptions): Promise<Database> {
  let client: PGlite;
  if (opts.inMemory === true) {
    client = opts.pgliteTemplate !== undefined ? new PGlite({ loadDataDir: opts.pgliteTemplate }) : new PGlite();
  } else {
    if (opts.dataDir === undefined) throw new DatabaseOpenError('openDatabase: dataDir or inMemory is required without databaseUrl');
    const dir = join(opts.dataDir, 'pglite');
    mkdirSync(dir, { recursive: true });
    client = new PGlite(dir);
  }
  try {
    await client.waitReady;
    const db = drizzlePglite({ client, schema });
    if (opts.migrate !== false) await migratePgliteDb(db);
    return {
      db: db as unknown as Db,
      driver: 'pglite',
      ping: makePing(db as unknown as Db),
      close: once(async () => {
        if (!client.closed) await client.close();
      }),
    };
  } catch (err) {
    await client.close().catch(() => undefined);
    throw new DatabaseOpenError(`cannot open the embedded database: ${(err as Error).message}`, { cause: err });
  }
}

async function openPostgres(url: string, opts: OpenDatabaseOptions): Promise<Database> {
  const client = postgres(url, {
    max: opts.maxConnections ?? 10,
    connect_timeout: 10,
    onnotice: () => undefined,
  });
  try {
    const db = drizzlePostgres({ client, schema });
    if (opts.migrate !== false) await migratePostgresDb(db);
    return {
      db: db as unknown as Db,
      driver: 'postgres',
      ping: makePing(db as unknown as Db),
      close: once(async () => {
        await client.end({ timeout: 2 });
      }),
    };
  } catch (err) {
    await client.end({ timeout: 1 }).catch(() => undefined);
    throw new DatabaseOpenError(`cannot open the PostgreSQL database: ${(err as Error).message}`, { cause: err });
  }
}

/** A migrated, empty in-memory database as a tarball, for pgliteTemplate. */
export async function makePgliteTemplate(): Promise<Blob> {
  const client = new PGlite();
  try {
    await client.waitReady;
    await migratePgliteDb(drizzlePglite({ client, schema }));
    return await client.dumpDataDir('none');
  } finally {
    await client.close();
  }
}

export async function openDatabase(opts: OpenDatabaseOptions): Promise<Database> {
  if (opts.databaseUrl !== undefined) return openPostgres(opts.databaseUrl, opts);
  return openPglite(opts);
}
