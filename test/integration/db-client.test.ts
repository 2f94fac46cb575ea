/**
 * db/client.ts: both drivers behind one interface, migrations applied at
 * open, ping never hangs, close is idempotent, the embedded database persists
 * in DATA_DIR and reopens quickly.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Socket, TCPSocketListener } from 'bun';
import { count, sql } from 'drizzle-orm';
import { openDatabase, PGLITE_SETTINGS, PGLITE_WAL_SETTINGS, type Database } from '../../db/client';
import { ensureTemplate, readTemplate } from '../../db/pglite-template';
import { accounts } from '../../db/schema';
import { createAccount, findAccountByEmail } from '../../src/accounts/accounts';
import { freshDatabase, seedPgliteDataDir, testDatabaseUrl, type TestDatabase } from '../helpers/db';
import { DB_ERROR_CODES } from '../../src/error-codes';

/** SHOW name on an embedded database (PGlite's execute() answers {rows}). */
async function show(d: Database, name: string): Promise<string | undefined> {
  const res = (await d.db.execute(sql.raw(`show ${name}`))) as unknown as { rows: Record<string, string>[] };
  return res.rows[0]?.[name];
}

const root = mkdtempSync(join(tmpdir(), 'db-client-test-'));
let tdb: TestDatabase;
let blackhole: TCPSocketListener<undefined>;
const held: Socket<undefined>[] = [];

beforeAll(async () => {
  tdb = await freshDatabase();
  // Accepts connections and never answers: a database that hangs.
  blackhole = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { open: (s) => void held.push(s), data: () => undefined } });
}, 60_000);
afterAll(async () => {
  for (const s of held) s.end();
  blackhole.stop(true);
  await tdb.cleanup();
  rmSync(root, { recursive: true, force: true });
});

describe('openDatabase', () => {
  test('the selected driver is migrated and answers', async () => {
    expect(tdb.driver).toBe(testDatabaseUrl() === undefined ? 'pglite' : 'postgres');
    expect(await tdb.ping()).toBe(true);
    const [row] = await tdb.db.select({ n: count() }).from(accounts);
    expect(Number(row?.n)).toBe(0);
    const applied = await tdb.db.execute(sql`select count(*)::int as n from drizzle.__drizzle_migrations`);
    const rows = (Array.isArray(applied) ? applied : (applied as unknown as { rows: unknown[] }).rows) as { n: number }[];
    expect(rows[0]?.n).toBeGreaterThanOrEqual(1);
  });

  test('close is safe twice and ping afterwards is false, not an exception', async () => {
    const d = await freshDatabase();
    await d.close();
    await d.close();
    expect(await d.ping(500)).toBe(false);
    await d.cleanup();
  }, 30_000);

  test('ping resolves false within its timeout when the server does not answer; close does not hang', async () => {
    const d = await openDatabase({ databaseUrl: `postgres://nobody@127.0.0.1:${blackhole.port}/none`, migrate: false });
    const t0 = performance.now();
    expect(await d.ping(300)).toBe(false);
    expect(performance.now() - t0).toBeLessThan(1000);
    const t1 = performance.now();
    await d.close();
    expect(performance.now() - t1).toBeLessThan(3000);
  }, 15_000);

  test.if(testDatabaseUrl() !== undefined)('PostgreSQL: statement_timeout ends a statement that runs too long (storage.statementTimeoutMs)', async () => {
    const d = await openDatabase({ databaseUrl: testDatabaseUrl()!, migrate: false, statementTimeoutMs: 300 });
    try {
      const t0 = performance.now();
      const err = (await (async () => d.db.execute(sql`select pg_sleep(5)`))().then(
        () => null,
        (e: unknown) => e,
      )) as { code?: string; cause?: { code?: string } } | null;
      expect(err?.cause?.code ?? err?.code).toBe('57014'); // query_canceled: statement timeout
      expect(performance.now() - t0).toBeLessThan(3000);
      expect(await d.ping()).toBe(true); // the connection is still usable
    } finally {
      await d.close();
    }
  }, 15_000);

  test('an unreachable server is a db_open_failed ServiceError', async () => {
    const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data: () => undefined } });
    const port = probe.port;
    probe.stop(true);
    await expect(openDatabase({ databaseUrl: `postgres://nobody@127.0.0.1:${port}/none` })).rejects.toMatchObject({ name: 'ServiceError', code: DB_ERROR_CODES.DB_OPEN_FAILED });
  }, 15_000);
});

describe('embedded PGlite in DATA_DIR', () => {
  test('persists across reopen; reopening an existing data dir is fast', async () => {
    const dataDir = join(root, 'data');
    await seedPgliteDataDir(dataDir);
    const d1 = await openDatabase({ dataDir });
    expect(d1.driver).toBe('pglite');
    await createAccount(d1.db, { email: 'persist@example.test', checks: 3 });
    await d1.close();
    const t0 = performance.now();
    const d2 = await openDatabase({ dataDir });
    const reopenMs = performance.now() - t0;
    try {
      expect((await findAccountByEmail(d2.db, 'persist@example.test'))?.rootBalance).toBe(3);
      // Measured ~0.2-0.6 s on an idle 2-core machine; generous bound for loaded CI.
      expect(reopenMs).toBeLessThan(5000);
    } finally {
      await d2.close();
    }
  }, 60_000);

  test('runs with the memory settings (PGLITE_SETTINGS), also where postgresql.conf says otherwise', async () => {
    const dataDir = join(root, 'settings');
    await seedPgliteDataDir(dataDir);
    // A data dir made before the settings existed: PostgreSQL's defaults in its postgresql.conf.
    appendFileSync(join(dataDir, 'pglite', 'postgresql.conf'), '\nshared_buffers = 128MB\nmax_connections = 100\nmaintenance_work_mem = 64MB\n');
    const d = await openDatabase({ dataDir });
    try {
      for (const [name, value] of Object.entries(PGLITE_SETTINGS)) expect(await show(d, name)).toBe(value);
      // and the WAL sized for an embedded database (a steady pool's flushes: issue 29), the defaults' 1 GB no more
      for (const [name, value] of Object.entries(PGLITE_WAL_SETTINGS)) expect(await show(d, name)).toBe(value);
      // What they are for: PGlite's shared memory is resident for the process's lifetime (145MB with the defaults).
      expect(Number.parseInt((await show(d, 'shared_memory_size')) ?? '', 10)).toBeLessThanOrEqual(32);
    } finally {
      await d.close();
    }
    if (tdb.driver === 'pglite') expect(await show(tdb, 'shared_buffers')).toBe(PGLITE_SETTINGS.shared_buffers);
  }, 60_000);

  test('first start on an empty data dir: initdb writes the settings into postgresql.conf (also when the template is unusable)', async () => {
    const dataDir = join(root, 'fresh');
    // a cached template that is not a gzipped data dir counts as none: initdb runs
    const bad = join(root, 'bad-template.tar.gz');
    writeFileSync(bad, Bun.gzipSync(new Uint8Array(4096).fill(7)));
    const d = await openDatabase({ dataDir, pgliteTemplate: () => readTemplate(bad) });
    try {
      expect(d.origin).toBe('initdb');
      expect(await show(d, 'shared_buffers')).toBe(PGLITE_SETTINGS.shared_buffers);
      const conf = readFileSync(join(dataDir, 'pglite', 'postgresql.conf'), 'utf8');
      for (const [name, value] of Object.entries(PGLITE_SETTINGS)) expect(conf).toMatch(new RegExp(`^${name} = ${value}\\b`, 'm'));
    } finally {
      await d.close();
    }
  }, 120_000);

  test('a new data dir starts from the install template (db/pglite-template.ts); an existing one never reads it', async () => {
    const file = join(root, 'cache', 'template.tar.gz');
    expect(readTemplate(file)).toBeUndefined();
    const built = await ensureTemplate(file);
    expect(built).toMatchObject({ file, built: true });
    expect(built.bytes).toBeGreaterThan(100_000);
    expect(await ensureTemplate(file)).toEqual({ file, built: false, bytes: built.bytes });
    const dataDir = join(root, 'from-template');
    const d1 = await openDatabase({ dataDir, pgliteTemplate: () => readTemplate(file) });
    try {
      expect(d1.origin).toBe('template');
      // the template is initdb's output with the service's settings; the migrations ran at open
      for (const [name, value] of Object.entries(PGLITE_SETTINGS)) expect(await show(d1, name)).toBe(value);
      await createAccount(d1.db, { email: 'template@example.test', checks: 2 });
    } finally {
      await d1.close();
    }
    const d2 = await openDatabase({
      dataDir,
      pgliteTemplate: () => {
        throw new Error('read the template for an existing data dir');
      },
    });
    try {
      expect(d2.origin).toBe('existing');
      expect((await findAccountByEmail(d2.db, 'template@example.test'))?.rootBalance).toBe(2);
    } finally {
      await d2.close();
    }
  }, 120_000);

  test('openDatabase without databaseUrl, dataDir or inMemory is refused', async () => {
    await expect(openDatabase({})).rejects.toMatchObject({ name: 'ServiceError', code: DB_ERROR_CODES.DB_OPEN_FAILED });
  });
});
