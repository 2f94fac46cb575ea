/**
 * The admin command as a subprocess (`bun src/admin/cli.ts ...`):
 * - directly on the database the environment selects (PostgreSQL via
 *   DATABASE_URL, or an embedded DATA_DIR nobody holds);
 * - through a running server's admin HTTP API when a live process holds the
 *   data-dir lock (embedded mode), including a server still starting up;
 * - bad input -> one line on stderr and a non-zero exit;
 * - no database where it looks (a DATA_DIR without one, the default ./data
 *   of another directory, a DATABASE_URL that does not answer or holds none
 *   of the service's tables): exit 1 naming what it looked at, nothing created.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Elysia } from 'elysia';
import { findAccountByEmail } from '../../src/accounts/accounts';
import { acquireDataDirLock, readLiveLock } from '../../src/admin/lock';
import { adminRoutes } from '../../src/admin/routes';
import { readOrCreateSecret } from '../../src/secrets';
import { createServerDatabase, freshDatabase, seedPgliteDataDir, testDatabaseUrl, type TestDatabase } from '../helpers/db';

const REPO = join(import.meta.dir, '../..');
const root = mkdtempSync(join(tmpdir(), 'admin-cli-test-'));
const directDir = join(root, 'direct');
const serverDir = join(root, 'server');

let directDb: TestDatabase | undefined; // PostgreSQL mode only
let serverDb: TestDatabase;
let server: { stop(): Promise<void> | void };
let serverUrl = '';
let adminRequests = 0;

function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !['DATABASE_URL', 'TEST_DATABASE_URL', 'ADMIN_TOKEN', 'DATA_DIR'].includes(k)) env[k] = v;
  }
  env.LOG_LEVEL = 'silent';
  return env;
}

async function cli(args: string[], env: Record<string, string>, cwd = REPO) {
  const p = Bun.spawn([process.execPath, join(REPO, 'src/admin/cli.ts'), ...args], { cwd, env, stdout: 'pipe', stderr: 'pipe' });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr };
}

/** Env for running the CLI directly on the selected driver. */
function directEnv(): Record<string, string> {
  const env = baseEnv();
  env.DATA_DIR = directDir;
  if (directDb?.url !== undefined) env.DATABASE_URL = directDb.url;
  return env;
}

beforeAll(async () => {
  const test = await freshDatabase();
  if (test.url !== undefined) directDb = test;
  else {
    await test.cleanup();
    await seedPgliteDataDir(directDir);
  }
  // A "server": the admin routes over its own database, holding serverDir's lock.
  serverDb = await freshDatabase();
  const token = readOrCreateSecret(serverDir, 'admin-token');
  const app = new Elysia()
    .onRequest(({ request }) => {
      if (new URL(request.url).pathname.startsWith('/admin/')) adminRequests++;
    })
    .use(adminRoutes({ database: serverDb, adminToken: token }))
    .listen({ hostname: '127.0.0.1', port: 0 });
  server = app as unknown as { stop(): Promise<void> };
  serverUrl = `http://127.0.0.1:${app.server?.port}`;
}, 60_000);

afterAll(async () => {
  await server.stop();
  await serverDb.cleanup();
  await directDb?.cleanup();
  rmSync(root, { recursive: true, force: true });
});

describe('admin CLI, direct', () => {
  test('create-account, top-up, show', async () => {
    const env = directEnv();
    const created = await cli(['create-account', '--email', 'Cli@Example.test', '--checks', '10', '--temp', '2', '--unlimited-until', '2030-01-01'], env);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const c = JSON.parse(created.stdout) as Record<string, string>;
    expect(Object.keys(c).sort()).toEqual(['apiKey', 'email', 'id']);
    expect(c.email).toBe('cli@example.test');
    expect(c.apiKey).toMatch(/^pc_[0-9A-Za-z]{32}$/);
    const topped = await cli(['top-up', '--email', 'cli@example.test', '--checks', '5', '--temp'], env);
    expect(JSON.parse(topped.stdout)).toMatchObject({ checks: 17, temp_balance: 7, root_balance: 10 });
    const shown = await cli(['show', '--email', 'cli@example.test'], env);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({
      checks: 17,
      unlimited_pro: true,
      unlimited_until: '2030-01-01T00:00:00.000Z',
      keys: [{ label: 'admin', revoked_at: null }],
    });
    // The CLI released the data dir.
    expect(await readLiveLock(directDir)).toBeNull();
  }, 30_000);

  test('list-accounts: every account, oldest first, with its balance and active keys; --limit', async () => {
    const env = directEnv();
    expect((await cli(['create-account', '--email', 'list-a@example.test', '--checks', '4'], env)).code).toBe(0);
    const b = JSON.parse((await cli(['create-account', '--email', 'list-b@example.test'], env)).stdout) as { apiKey: string };
    expect((await cli(['issue-key', '--email', 'list-b@example.test'], env)).code).toBe(0);
    expect((await cli(['revoke-key', '--key', b.apiKey], env)).code).toBe(0);
    const r = await cli(['list-accounts'], env);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const all = JSON.parse(r.stdout) as { total: number; accounts: { email: string; checks: number; active_keys: number; last_used_at: string | null }[] };
    const emails = all.accounts.map((a) => a.email);
    expect(all.total).toBe(all.accounts.length);
    expect(emails.indexOf('list-a@example.test')).toBeLessThan(emails.indexOf('list-b@example.test'));
    expect(all.accounts.find((a) => a.email === 'list-a@example.test')).toMatchObject({ checks: 4, active_keys: 1, last_used_at: null });
    expect(all.accounts.find((a) => a.email === 'list-b@example.test')).toMatchObject({ checks: 0, active_keys: 1 });
    expect(Object.keys(all.accounts[0]!).sort()).toEqual(['active_keys', 'checks', 'checks_used', 'created_at', 'email', 'id', 'last_used_at', 'subscription_detail']);
    const one = JSON.parse((await cli(['list-accounts', '--limit', '1'], env)).stdout) as { total: number; accounts: unknown[] };
    expect(one.total).toBe(all.total);
    expect(one.accounts).toEqual([all.accounts[0]]);
  }, 30_000);

  test('bad input: stderr one line, exit 2 for usage, 1 for failures', async () => {
    const env = directEnv();
    const unknown = await cli(['frobnicate'], env);
    expect([unknown.code, unknown.stdout]).toEqual([2, '']);
    expect(unknown.stderr).toMatch(/^admin: unknown command "frobnicate"; commands: create-account, .*\n$/);
    const usage = await cli(['top-up', '--email', 'cli@example.test', '--checks', 'many'], env);
    expect(usage.code).toBe(2);
    expect(usage.stderr.trim().split('\n')).toHaveLength(1);
    const missing = await cli(['show', '--email', 'ghost@example.test'], env);
    expect([missing.code, missing.stdout, missing.stderr]).toEqual([1, '', 'admin: no account with e-mail ghost@example.test\n']);
    const badEnv = await cli(['show', '--email', 'cli@example.test'], { ...env, PORT: 'abc' });
    expect(badEnv.code).toBe(2);
    expect(badEnv.stderr).toContain('PORT must be an integer');
    const none = await cli([], env);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('usage: admin <command>');
  }, 30_000);
});

describe('admin CLI while a server holds the data dir (embedded mode)', () => {
  test('goes through the admin HTTP API, never opening the data dir', async () => {
    const env = baseEnv();
    env.DATA_DIR = serverDir;
    const lock = await acquireDataDirLock(serverDir, { adminUrl: serverUrl });
    try {
      const before = adminRequests;
      const r = await cli(['create-account', '--email', 'via-http@example.test', '--checks', '3'], env);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ email: 'via-http@example.test' });
      expect((await findAccountByEmail(serverDb.db, 'via-http@example.test'))?.rootBalance).toBe(3);
      const issued = await cli(['issue-key', '--email', 'via-http@example.test', '--label', 'ci'], env);
      const key = (JSON.parse(issued.stdout) as { apiKey: string }).apiKey;
      expect(key).toMatch(/^pc_/);
      expect(JSON.parse((await cli(['revoke-key', '--key', key], env)).stdout)).toMatchObject({ revoked: true, alreadyRevoked: false });
      expect(JSON.parse((await cli(['set-plan', '--email', 'via-http@example.test', '--unlimited-until', '2031-02-03'], env)).stdout)).toMatchObject({
        subscription_detail: { UnlimitedPro: true, unlimited_expired_at: '2031-02-03T00:00:00.000Z' },
      });
      expect(JSON.parse((await cli(['clear-plan', '--email', 'via-http@example.test'], env)).stdout)).toMatchObject({
        subscription_detail: { UnlimitedPro: false },
      });
      const listed = JSON.parse((await cli(['list-accounts'], env)).stdout) as { accounts: { email: string }[] };
      expect(listed.accounts.map((a) => a.email)).toContain('via-http@example.test');
      expect(adminRequests).toBe(before + 6);
      // Errors coming back over HTTP keep their exit codes.
      const missing = await cli(['show', '--email', 'ghost@example.test'], env);
      expect([missing.code, missing.stderr]).toEqual([1, 'admin: no account with e-mail ghost@example.test\n']);
      const dup = await cli(['create-account', '--email', 'via-http@example.test'], env);
      expect(dup.code).toBe(1);
      // A wrong token is refused by the server.
      const wrong = await cli(['show', '--email', 'via-http@example.test'], { ...env, ADMIN_TOKEN: 'x'.repeat(20) });
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toContain('valid admin token');
    } finally {
      lock.release();
    }
  }, 30_000);

  test('waits for a starting server to publish its admin URL', async () => {
    const env = baseEnv();
    env.DATA_DIR = serverDir;
    const lock = await acquireDataDirLock(serverDir);
    try {
      const before = adminRequests;
      const pending = cli(['show', '--email', 'via-http@example.test'], env);
      await Bun.sleep(600);
      lock.update({ adminUrl: serverUrl });
      const r = await pending;
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ email: 'via-http@example.test', checks: 3 });
      expect(adminRequests).toBe(before + 1);
    } finally {
      lock.release();
    }
  }, 30_000);
});

describe('admin CLI with ADMIN_URL (any API node of a cluster)', () => {
  /** ADMIN_URL wins over DATABASE_URL and over the data dir (directEnv selects both). */
  const urlEnv = (extra: Record<string, string> = {}) => ({ ...directEnv(), ADMIN_URL: serverUrl, ADMIN_TOKEN: readOrCreateSecret(serverDir, 'admin-token'), ...extra });

  test('goes through that server\'s admin API, ahead of DATABASE_URL and the data dir', async () => {
    const before = adminRequests;
    const r = await cli(['create-account', '--email', 'via-url@example.test', '--checks', '4'], urlEnv());
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ email: 'via-url@example.test' });
    expect(adminRequests).toBe(before + 1);
    expect((await findAccountByEmail(serverDb.db, 'via-url@example.test'))?.rootBalance).toBe(4);
    // not in the database DATABASE_URL / DATA_DIR name
    const direct = await cli(['show', '--email', 'via-url@example.test'], directEnv());
    expect(direct.code).toBe(1);
    // a trailing slash is fine; errors keep their exit codes
    const shown = await cli(['show', '--email', 'via-url@example.test'], urlEnv({ ADMIN_URL: `${serverUrl}/` }));
    expect(JSON.parse(shown.stdout)).toMatchObject({ checks: 4 });
    const missing = await cli(['show', '--email', 'ghost@example.test'], urlEnv());
    expect([missing.code, missing.stderr]).toEqual([1, 'admin: no account with e-mail ghost@example.test\n']);
    const usage = await cli(['top-up', '--email', 'via-url@example.test', '--checks', 'many'], urlEnv());
    expect(usage.code).toBe(2);
  }, 30_000);

  test('a wrong token is refused; no token, a bad URL: exit 2; nobody listening: exit 1', async () => {
    const wrong = await cli(['show', '--email', 'via-url@example.test'], urlEnv({ ADMIN_TOKEN: 'x'.repeat(20) }));
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('valid admin token');
    const env = urlEnv();
    delete (env as Record<string, string>).ADMIN_TOKEN;
    const noToken = await cli(['show', '--email', 'via-url@example.test'], env);
    expect([noToken.code, noToken.stderr]).toEqual([2, 'admin: ADMIN_URL needs ADMIN_TOKEN (the admin token of the server it names)\n']);
    for (const bad of ['not a url', 'ftp://127.0.0.1/']) {
      const r = await cli(['show', '--email', 'via-url@example.test'], urlEnv({ ADMIN_URL: bad }));
      expect(r.code, bad).toBe(2);
      expect(r.stderr, bad).toContain('ADMIN_URL must be an http(s) URL');
    }
    const gone = await cli(['show', '--email', 'via-url@example.test'], urlEnv({ ADMIN_URL: 'http://127.0.0.1:1' }));
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('the server at http://127.0.0.1:1 did not answer');
  }, 30_000);
});

describe('admin CLI never creates a database', () => {
  test('a DATA_DIR without one: exit 1 naming it, nothing made there', async () => {
    const missing = join(root, 'no-such-data');
    const r = await cli(['list-accounts'], { ...baseEnv(), DATA_DIR: missing });
    expect([r.code, r.stdout]).toEqual([1, '']);
    expect(r.stderr).toStartWith(`admin: no database in DATA_DIR ${missing}; the admin command never creates one.`);
    expect(r.stderr).toContain('DATA_DIR=/path/to/the/server/data npm run admin -- ...');
    expect(r.stderr).toContain('DATABASE_URL');
    expect(r.stderr).toContain('ADMIN_URL with ADMIN_TOKEN');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(existsSync(missing)).toBe(false);
    // an existing but empty data dir: the same, and it stays empty
    const empty = join(root, 'empty-data');
    mkdirSync(empty);
    const e = await cli(['create-account', '--email', 'nobody@example.test'], { ...baseEnv(), DATA_DIR: empty });
    expect(e.code).toBe(1);
    expect(e.stderr).toContain(`no database in DATA_DIR ${empty};`);
    expect(readdirSync(empty)).toEqual([]);
  }, 30_000);

  test('no DATA_DIR, run in another directory: names the default ./data there, makes none', async () => {
    const elsewhere = mkdtempSync(join(root, 'cwd-'));
    const r = await cli(['list-accounts'], baseEnv(), elsewhere);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`no database in DATA_DIR ${join(elsewhere, 'data')} (DATA_DIR is not set: the default ./data of the directory this runs in)`);
    expect(readdirSync(elsewhere)).toEqual([]);
  }, 30_000);

  test('a DATABASE_URL nobody answers: exit 1 naming it without its password', async () => {
    const r = await cli(['list-accounts'], { ...baseEnv(), DATABASE_URL: 'postgres://pc:secret@127.0.0.1:1/pc' });
    expect([r.code, r.stdout]).toEqual([1, '']);
    expect(r.stderr).toStartWith('admin: cannot reach the PostgreSQL database DATABASE_URL=postgres://pc:***@127.0.0.1:1/pc: ');
    expect(r.stderr).not.toContain('secret');
    expect(r.stderr).toContain("Set DATABASE_URL to the server's own value");
  }, 30_000);

  test.skipIf(testDatabaseUrl() === undefined)('a DATABASE_URL without the service\'s tables: exit 1, no table created', async () => {
    const empty = await createServerDatabase(testDatabaseUrl()!, 'admin_empty');
    try {
      const r = await cli(['list-accounts'], { ...baseEnv(), DATABASE_URL: empty.url });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("holds none of the service's tables; the admin command never creates them");
      const again = await cli(['list-accounts'], { ...baseEnv(), DATABASE_URL: empty.url });
      expect(again.stderr).toContain("holds none of the service's tables");
    } finally {
      await empty.drop();
    }
  }, 30_000);
});
