/**
 * The environment `npm start` gives the service: the leading VAR=value words
 * of package.json's "start" script. The benchmarks and the cluster demo start
 * the service with it, so they run what users run. Today's script has none
 * (the service applies its runtime settings itself: src/runtime-settings.ts);
 * a checkout from before (bench/e2e's `root`, an older version compared) set
 * them there.
 */
import { readFileSync } from 'node:fs';

/** The leading VAR=value words of a script, up to the command. Pure. */
export function startScriptEnv(script: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const word of script.trim().split(/\s+/)) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(\S*)$/.exec(word);
    if (m === null) break;
    env[m[1]!] = m[2]!;
  }
  return env;
}

/** The start script's environment of the checkout at `root` (a directory path ending in "/"). */
export function npmStartEnv(root: string): Record<string, string> {
  return startScriptEnv((JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { scripts: { start: string } }).scripts.start);
}
