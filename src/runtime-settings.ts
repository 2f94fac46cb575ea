/**
 * The runtime settings the service runs with, however it is started (`npm
 * start`, `bun src/main.ts` under systemd, a container): JavaScriptCore reads
 * its BUN_JSC_* options from the environment once, as the process starts, so
 * src/main.ts puts the missing ones in and replaces the process with itself
 * (process.execve: the same pid, before anything else is loaded).
 *
 * - BUN_JSC_forceRAMSize=268435456: a heap hint (256 MiB), so the lanes'
 *   garbage is collected before RSS grows on a machine with much RAM.
 * - BUN_JSC_useFTLJIT=0: no fourth JIT tier (it kept compiling all through
 *   a job for a few per cent less CPU at best).
 *
 * docs/OPERATIONS.md "Runtime settings" says why, bench/RESULTS.md what was
 * measured. A value set in the environment is kept (another heap hint, the
 * FTL tier back on with BUN_JSC_useFTLJIT=1). Pure but for `applyRuntimeSettings`.
 */

export const RUNTIME_SETTINGS: Readonly<Record<string, string>> = Object.freeze({
  BUN_JSC_forceRAMSize: '268435456',
  BUN_JSC_useFTLJIT: '0',
});

/** The runtime settings `env` lacks, with their values. */
export function missingRuntimeSettings(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(RUNTIME_SETTINGS)) if (env[k] === undefined) out[k] = v;
  return out;
}

type Execve = (file: string, args: string[], env: Record<string, string | undefined>) => never;

/**
 * Replaces this process with itself plus the missing settings; returns when
 * nothing is missing (or the runtime cannot exec: then the process runs
 * without them and says so in `why`).
 */
export function applyRuntimeSettings(): { why: string } | null {
  const missing = missingRuntimeSettings(process.env);
  if (Object.keys(missing).length === 0) return null;
  const execve = (process as unknown as { execve?: Execve }).execve;
  if (typeof execve !== 'function') return { why: 'this runtime has no process.execve: set them in the environment (docs/OPERATIONS.md "Runtime settings")' };
  execve(process.execPath, [process.execPath, ...process.execArgv, ...process.argv.slice(1)], { ...process.env, ...missing });
  return null; // not reached
}
