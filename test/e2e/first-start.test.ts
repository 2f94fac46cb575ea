/**
 * End to end: the first start of the real process (`bun src/main.ts`) on an
 * empty DATA_DIR with the embedded database (whatever database the rest of
 * the suite runs on): the new data dir comes from the install's template
 * (db/pglite-template.ts), not from initdb, the demo account is created, and
 * the next start opens the existing data dir. And a SIGTERM that arrives
 * during the start-up (after the database is open, before 'ready') stops the
 * service cleanly once it is up: exit 0, not death by the signal.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureTemplate } from '../../db/pglite-template';
import { readLines, serviceEnv, spawnService, type ServiceProcess, type ServiceStore } from '../helpers/process';

let store: ServiceStore;
const spawned: ServiceProcess[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  // npm's postinstall builds it; build it here when the install skipped scripts
  await ensureTemplate();
  const dataDir = mkdtempSync(join(tmpdir(), 'pc-first-start-'));
  store = { dataDir, databaseUrl: undefined, cleanup: async () => rmSync(dataDir, { recursive: true, force: true }) };
}, 60_000);
afterAll(async () => {
  for (const p of spawned) {
    p.kill('SIGKILL');
    await p.exited;
  }
  await store?.cleanup();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('first start on an empty DATA_DIR (embedded database)', () => {
  test('starts from the template and creates the demo account; the restart opens the existing data dir', async () => {
    const first = await spawnService(store);
    spawned.push(first);
    const ready = await first.waitForLog((l) => l.msg === 'ready', 1000);
    expect(ready).toMatchObject({ driver: 'pglite', database: 'template' });
    expect(first.logs.some((l) => typeof l.msg === 'string' && l.msg.startsWith('Created the demo account demo@localhost'))).toBe(true);
    const health = await fetch(`${first.url}/health`);
    expect(health.status).toBe(200);
    expect(((await health.json()) as { database: string }).database).toBe('ok');
    first.kill('SIGTERM');
    expect((await first.exited).code).toBe(0);

    const again = await spawnService(store);
    spawned.push(again);
    expect(await again.waitForLog((l) => l.msg === 'ready', 1000)).toMatchObject({ driver: 'pglite', database: 'existing' });
    expect(again.logs.some((l) => typeof l.msg === 'string' && l.msg.startsWith('Created the demo account'))).toBe(false);
    again.kill('SIGTERM');
    expect((await again.exited).code).toBe(0);
  }, 60_000);

  test('a SIGTERM during the start-up: the start finishes, then the service stops; exit 0', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'pc-first-start-sig-'));
    dirs.push(dataDir);
    const env = serviceEnv({ dataDir, databaseUrl: undefined, cleanup: async () => {} });
    const child = Bun.spawn([process.execPath, 'src/main.ts'], { cwd: join(import.meta.dir, '..', '..'), env, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' });
    const lines: string[] = [];
    let signalled = false;
    await readLines(child.stdout, (line) => {
      if (line === '') return;
      lines.push(line);
      // logged inside the start-up, with the database open and before 'ready'
      if (!signalled && line.includes('Created the demo account')) {
        signalled = true;
        child.kill('SIGTERM');
      }
    });
    expect(signalled).toBe(true);
    expect(await child.exited).toBe(0);
    expect(child.signalCode).toBeNull();
    const msgs = lines.map((l) => (JSON.parse(l) as { msg: string }).msg);
    expect(msgs).toContain('signal received, shutting down');
    expect(msgs.indexOf('ready')).toBeGreaterThan(-1);
    expect(msgs.at(-1)).toBe('stopped');
  }, 60_000);
});
