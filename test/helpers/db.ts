/**
 * A fresh, migrated, empty database for a test file, on the driver the
 * environment selects:
 * - TEST_DATABASE_URL or DATABASE_URL set: a new database with a random name
 *   on that server (created through the URL's own database), dropped again by
 *   cleanup();
 * - otherwise in-memory PGlite, started from a migrated template tarball
 *   (built once per process and cached in the OS temp dir keyed by the
 *   migrations and the PGlite version), because PGlite's initdb takes seconds.
 * Share one per test file (beforeAll/afterAll), not one per test.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import postgres from 'postgres';
import { makePgliteTemplate, openDatabase, type Database } from '../../db/client';
import { MIGRATIONS_FOLDER } from '../../db/migrate';

export type TestDatabase = Database & {
  /** The database's URL in PostgreSQL mode (pass it to subprocesses); undefined for PGlite. */
  url: string | undefined;
  cleanup(): Promise<void>;
};

export function testDatabaseUrl(): string | undefined {
  const u = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
  return u === undefined || u.trim() === '' ? undefined : u.trim();
}

function templateKey(): string {
  const h = createHash('sha256');
  for (const f of readdirSync(MIGRATIONS_FOLDER).sort()) {
    if (f.endsWith('.sql')) h.update(f).update(readFileSync(join(MIGRATIONS_FOLDER, f)));
  }
  const pgliteVersion = (JSON.parse(readFileSync(require.resolve('@electric-sql/pglite/package.json'), 'utf8')) as { version: string }).version;
  h.update(pgliteVersion);
  return h.digest('hex').slice(0, 16);
}

let template: Promise<Blob> | undefined;

async function loadTemplate(): Promise<Blob> {
  const file = join(tmpdir(), `proxycheck-pglite-template-${templateKey()}.tar`);
  if (existsSync(file)) return new Blob([readFileSync(file)]);
  const blob = await makePgliteTemplate();
  const tmp = `${file}.${process.pid}-${randomBytes(4).toString('hex')}`;
  writeFileSync(tmp, new Uint8Array(await blob.arrayBuffer()));
  renameSync(tmp, file);
  return blob;
}

/**
 * Where an in-process test's PGlite runs: on the test's own thread (the
 * service's default, PGLITE_THREAD=main) unless TEST_PGLITE_THREAD=worker
 * (db/pglite-thread.ts; test/integration/pglite-thread.test.ts tests the
 * thread itself; a worker per test file costs each 2-4 s more to open).
 */
const IN_PROCESS_THREAD = process.env.TEST_PGLITE_THREAD === 'worker' ? 'worker' : 'main';

/** An in-memory PGlite database whatever the environment says (tests that run on both drivers in one pass). */
export async function freshPglite(): Promise<TestDatabase> {
  template ??= loadTemplate();
  let database: Database;
  try {
    database = await openDatabase({ inMemory: true, pgliteTemplate: await template, pgliteThread: IN_PROCESS_THREAD });
  } catch {
    // A bad cached template (e.g. truncated): fall back to a plain init.
    database = await openDatabase({ inMemory: true, pgliteThread: IN_PROCESS_THREAD });
  }
  return Object.assign(database, { url: undefined, cleanup: () => database.close() });
}

/** A new, empty database with a random name on the server; `drop()` removes it (safe twice). */
export async function createServerDatabase(serverUrl: string, prefix = 'test'): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => undefined });
  try {
    await admin.unsafe(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end({ timeout: 5 });
  }
  const u = new URL(serverUrl);
  u.pathname = `/${name}`;
  let dropped: Promise<void> | undefined;
  return {
    url: u.toString(),
    drop: () =>
      (dropped ??= (async () => {
        const a = postgres(serverUrl, { max: 1, onnotice: () => undefined });
        try {
          await a.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        } finally {
          await a.end({ timeout: 5 });
        }
      })()),
  };
}

/** A new database on the PostgreSQL server at `serverUrl`; cleanup() drops it. */
export async function freshPostgres(serverUrl: string): Promise<TestDatabase> {
  const created = await createServerDatabase(serverUrl);
  const database = await openDatabase({ databaseUrl: created.url });
  let cleaned: Promise<void> | undefined;
  const cleanup = () =>
    (cleaned ??= (async () => {
      await database.close();
      await created.drop();
    })());
  return Object.assign(database, { url: created.url, cleanup });
}

export async function freshDatabase(): Promise<TestDatabase> {
  const url = testDatabaseUrl();
  return url === undefined ? freshPglite() : freshPostgres(url);
}

/**
 * Initialises `${dataDir}/pglite` from the migrated template (much faster than
 * a first-ever initdb), for tests that run processes on an embedded data dir.
 */
export async function seedPgliteDataDir(dataDir: string): Promise<void> {
  template ??= loadTemplate();
  const dir = join(dataDir, 'pglite');
  mkdirSync(dir, { recursive: true });
  const client = new PGlite(dir, { loadDataDir: await template });
  try {
    await client.waitReady;
  } finally {
    await client.close();
  }
}
