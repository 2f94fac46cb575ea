/**
 * The process's start-up as an operator meets it (real processes, `bun
 * src/main.ts`):
 *
 * - `--help` lists the settings (the five you set, then tuning) and
 *   `--version` the version; neither starts anything;
 * - the runtime settings (src/runtime-settings.ts) apply however the service
 *   is started: JavaScriptCore reports them in force (BUN_JSC_dumpOptions),
 *   a value set in the environment is kept;
 * - no listener shares its port: a second instance on the public, admin or
 *   judge TLS port of a running one stops at start with one line naming the
 *   setting, and the first still answers.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { refusedPort } from '../fixtures/fake-servers';
import { ProcessBed, serviceEnv, type ServiceProcess } from '../helpers/process';
import { call } from '../helpers/service';

const ROOT = resolve(import.meta.dir, '../..');

async function run(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = Bun.spawn([process.execPath, 'src/main.ts', ...args], { cwd: ROOT, env, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr };
}

test('--help and --version answer and start nothing', async () => {
  const dataDir = join(mkdtempSync(join(tmpdir(), 'pc-help-')), 'data');
  try {
    const help = await run(['--help'], { PATH: process.env.PATH ?? '', DATA_DIR: dataDir });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('The five you set:');
    expect(help.stdout.indexOf('  BASE_URL ')).toBeLessThan(help.stdout.indexOf('Tuning:'));
    expect(help.stdout).toContain('  SHUTDOWN_GRACE_MS ');
    const version = await run(['--version'], { PATH: process.env.PATH ?? '' });
    expect(version).toMatchObject({ code: 0, stdout: expect.stringMatching(/^proxycheck-service \d+\.\d+\.\d+\n$/) });
    expect(existsSync(dataDir)).toBe(false);
  } finally {
    rmSync(resolve(dataDir, '..'), { recursive: true, force: true });
  }
});

describe('processes', () => {
  const bed = new ProcessBed();
  let first: ServiceProcess;
  let tlsPort: number;
  beforeAll(async () => {
    tlsPort = await refusedPort();
    first = await bed.spawn(await bed.store(), { env: { JUDGE_TLS_PORT: String(tlsPort), BUN_JSC_dumpOptions: '1' } });
  }, 60_000);
  afterAll(async () => {
    await bed.cleanup();
  }, 30_000);

  test('the runtime settings are in force when started as bun src/main.ts (same process, replaced once)', async () => {
    // the options JavaScriptCore reports as set, in the process that answers
    expect(first.rawOutput()).toContain('useFTLJIT=false');
    expect(first.rawOutput()).toContain('forceRAMSize=268435456');
    const kept = await bed.spawn(await bed.store(), { env: { BUN_JSC_dumpOptions: '1', BUN_JSC_forceRAMSize: '536870912', BUN_JSC_useFTLJIT: '1' } });
    expect(kept.rawOutput()).toContain('forceRAMSize=536870912');
    expect(kept.rawOutput()).not.toContain('useFTLJIT=false');
    expect(kept.rawOutput()).not.toContain('forceRAMSize=268435456');
  }, 60_000);

  test('a second instance on a port in use stops at start with one line naming the setting; the first still answers', async () => {
    const adminPort = new URL(String(first.logs.find((l) => l.msg === 'ready')!.adminUrl)).port;
    for (const [setting, port] of [
      ['PORT', String(first.port)],
      ['ADMIN_PORT', adminPort],
      ['JUDGE_TLS_PORT', String(tlsPort)],
    ] as const) {
      // PORT's own judge TLS port would be PORT + 443, an ephemeral port another process may hold: a free one
      const env = serviceEnv(await bed.store(), { JUDGE_TLS_PORT: '0', [setting]: port });
      const second = await run([], env);
      expect(second.code, setting).toBe(1);
      const lines = second.stderr.split('\n').filter((l) => l.startsWith('start failed:'));
      expect(lines, second.stderr).toHaveLength(1);
      expect(lines[0]).toContain(`${setting}=${port}`);
      expect(lines[0]).toContain('in use by another process');
      expect(lines[0]).toContain('(port_in_use)');
    }
    expect((await call(`${first.url}/health`)).status).toBe(200);
  }, 90_000);
});
