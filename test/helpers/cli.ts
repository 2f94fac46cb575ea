/**
 * Runs the `proxycheck` CLI as a subprocess from the repository's root, as a
 * user runs it (`bun src/cli/main.ts`, or through the Node launcher
 * src/cli/bin.mjs), with exactly the environment given, and collects its
 * exit code, standard output and standard error.
 */
import { resolve } from 'node:path';

export const REPO = resolve(import.meta.dir, '../..');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runCli(args: string[], opts: { env: Record<string, string>; stdin?: string; launcher?: boolean }): Promise<CliRun> {
  const cmd = opts.launcher ? ['node', 'src/cli/bin.mjs', ...args] : [process.execPath, 'src/cli/main.ts', ...args];
  const child = Bun.spawn(cmd, {
    cwd: REPO,
    env: opts.env,
    stdin: opts.stdin === undefined ? 'ignore' : new Blob([opts.stdin]),
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr };
}
