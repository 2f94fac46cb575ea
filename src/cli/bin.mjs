#!/usr/bin/env node
/**
 * The `proxycheck` bin (package.json "bin"). Plain JavaScript that Node runs
 * as well as Bun: the CLI itself (src/cli/main.ts) needs Bun (TypeScript,
 * fetch + WebSocket with headers), and Bun is a devDependency, so on a
 * machine with only Node + npm this launcher finds Bun and runs the CLI in it:
 *   1. already running in Bun: import main.ts directly;
 *   2. else <repo>/node_modules/.bin/bun, then node_modules/bun/bin/bun.exe,
 *      then `bun` on PATH, spawned with stdio inherited (so the child sees
 *      the same TTY) and its exit code passed on.
 * Ctrl-C reaches the child through the terminal's process group; the
 * launcher passes a SIGINT of its own on only if the child has not ended
 * 500 ms later, and exits with the child's code (130). SIGTERM and SIGHUP
 * are passed on at once. The child is told this launcher's pid
 * (PROXYCHECK_LAUNCHER_PID) and ends when it is gone (a SIGKILL cannot be
 * passed on); run by npm (`npx proxycheck`: npm_command is set), the
 * launcher ends the child when its own parent is gone (npm killed by its
 * pid: its shell dies without passing the signal on).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const main = join(here, 'main.ts');

if (process.versions.bun !== undefined) {
  const { cliMain } = await import(pathToFileURL(main).href);
  process.exit(await cliMain(process.argv.slice(2)));
} else {
  const root = join(here, '..', '..');
  const candidates = [join(root, 'node_modules', '.bin', 'bun'), join(root, 'node_modules', 'bun', 'bin', 'bun.exe')];
  const bun = candidates.find((p) => existsSync(p)) ?? 'bun';
  const child = spawn(bun, [main, ...process.argv.slice(2)], { stdio: 'inherit', env: { ...process.env, PROXYCHECK_LAUNCHER_PID: String(process.pid) } });
  if (process.env.npm_command) {
    const parent = process.ppid;
    setInterval(() => {
      if (process.ppid !== parent) child.kill('SIGTERM');
    }, 250).unref();
  }
  // Ctrl-C in a terminal reaches the whole process group, the child included;
  // a SIGINT sent to this launcher alone is passed on if the child is still
  // running half a second later (so the child never sees one Ctrl-C twice).
  let pending;
  const forward = (sig) => () => {
    if (sig !== 'SIGINT') return child.kill(sig);
    pending ??= setTimeout(() => {
      pending = undefined;
      child.kill('SIGINT');
    }, 500);
  };
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, forward(sig));
  child.on('error', (err) => {
    process.stderr.write(
      err.code === 'ENOENT'
        ? 'proxycheck: Bun is needed and was not found; run `npm install` in the project (bun is a devDependency)\n'
        : `proxycheck: cannot start Bun: ${err.message}\n`,
    );
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    clearTimeout(pending);
    if (signal !== null) process.exit(128 + (constants.signals[signal] ?? 15));
    process.exit(code ?? 1);
  });
}
