/**
 * docs/proxycheck.service, the systemd unit docs/OPERATIONS.md gives:
 *
 * - `systemd-analyze verify` accepts it, its /opt/proxycheck being this
 *   checkout (when systemd-analyze is there);
 * - its ExecStart, run as systemd runs it (only the unit's Environment= and
 *   PATH, LimitNOFILE= as the open-file limit via prlimit, lowered to this
 *   machine's hard limit when that is lower: raising it needs privileges a
 *   test does not have; WorkingDirectory the checkout), starts the service:
 *   the runtime settings are in force
 *   (BUN_JSC_dumpOptions), the probes in flight follow LimitNOFILE
 *   ((limit - 1000) x 0.9 with the built-in judge), and its KillSignal stops
 *   it with exit 0 well within TimeoutStopSec.
 *
 * Only what a test must change is changed: the checkout's path, a temp
 * DATA_DIR, PORT=0 and HOST=127.0.0.1 (loopback), BASE_URL dropped (the
 * example's address is not this machine's).
 */
import { afterAll, expect, test } from 'bun:test';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { seedPgliteDataDir } from '../helpers/db';
import { readLines } from '../helpers/process';

const ROOT = resolve(import.meta.dir, '../..');
const UNIT = join(ROOT, 'docs/proxycheck.service');

/** The [Service] section's keys (Environment= may repeat). Pure enough for this test. */
function serviceSection(text: string): { env: Record<string, string>; keys: Record<string, string> } {
  const env: Record<string, string> = {};
  const keys: Record<string, string> = {};
  let inService = false;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('[')) inService = line === '[Service]';
    if (!inService || line === '' || line.startsWith('#') || !line.includes('=')) continue;
    const at = line.indexOf('=');
    const key = line.slice(0, at);
    const value = line.slice(at + 1);
    if (key === 'Environment') {
      const eq = value.indexOf('=');
      env[value.slice(0, eq)] = value.slice(eq + 1);
    } else keys[key] = value;
  }
  return { env, keys };
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test.skipIf(!existsSync('/usr/bin/systemd-analyze'))('systemd-analyze verify accepts the unit', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pc-unit-verify-'));
  dirs.push(dir);
  const unit = join(dir, 'proxycheck.service');
  writeFileSync(unit, readFileSync(UNIT, 'utf8').replaceAll('/opt/proxycheck', ROOT));
  const r = spawnSync('/usr/bin/systemd-analyze', ['verify', unit], { encoding: 'utf8' });
  expect(`${r.stdout}${r.stderr}`.trim()).toBe('');
  expect(r.status).toBe(0);
});

test.skipIf(!existsSync('/usr/bin/prlimit'))(
  'its ExecStart, run as systemd runs it, starts with the runtime settings and LimitNOFILE, and stops on KillSignal',
  async () => {
    const { env, keys } = serviceSection(readFileSync(UNIT, 'utf8'));
    expect(keys).toMatchObject({ Type: 'exec', WorkingDirectory: '/opt/proxycheck', KillSignal: 'SIGTERM', LimitNOFILE: '65536' });
    expect(Object.keys(env).sort()).toEqual(['BASE_URL', 'DATA_DIR', 'PORT']);
    const hard = Number(spawnSync('/bin/sh', ['-c', 'ulimit -Hn'], { encoding: 'utf8' }).stdout.trim());
    const limit = Math.min(Number(keys.LimitNOFILE), Number.isFinite(hard) ? hard : Number(keys.LimitNOFILE));
    const dataDir = mkdtempSync(join(tmpdir(), 'pc-unit-'));
    dirs.push(dataDir);
    await seedPgliteDataDir(dataDir);
    const { BASE_URL: _example, ...unitEnv } = env;
    const command = keys.ExecStart!.replace('/opt/proxycheck/', `${ROOT}/`).split(' ');
    expect(command.slice(1)).toEqual(['src/main.ts']);
    const child = Bun.spawn(['/usr/bin/prlimit', `--nofile=${limit}:${limit}`, ...command], {
      cwd: keys.WorkingDirectory!.replace('/opt/proxycheck', ROOT),
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...unitEnv, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', BUN_JSC_dumpOptions: '1' },
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    });
    const lines: string[] = [];
    let onReady: (l: Record<string, unknown>) => void = () => {};
    const ready = new Promise<Record<string, unknown>>((r) => (onReady = r));
    const seen = (line: string) => {
      lines.push(line);
      if (line.includes('"msg":"ready"')) onReady(JSON.parse(line) as Record<string, unknown>);
    };
    const pumps = Promise.all([readLines(child.stdout, seen), readLines(child.stderr, seen)]);
    try {
      const readyLine = await Promise.race([ready, child.exited.then((c) => Promise.reject(new Error(`exited ${c}:\n${lines.join('\n')}`)))]);
      expect(readyLine.maxInFlight).toBe(Math.floor((limit - 1000) * 0.9));
      expect(lines.join('\n')).toContain('useFTLJIT=false');
      expect(lines.join('\n')).toContain('forceRAMSize=268435456');
      const t0 = performance.now();
      child.kill(keys.KillSignal as NodeJS.Signals);
      expect(await child.exited).toBe(0);
      expect(performance.now() - t0).toBeLessThan(Number(keys.TimeoutStopSec) * 1000);
    } finally {
      child.kill('SIGKILL');
      await pumps;
    }
  },
  60_000,
);
