/**
 * A benchmark runner's way out (bench/e2e.ts, bench/cluster.ts): SIGINT /
 * SIGTERM run its cleanup and exit 130; a hard time limit does the same and
 * exits 124; at process exit every child still running is killed
 * synchronously. `interrupted` tells the runner's loops to stop early.
 */
export interface StopHandlers {
  readonly interrupted: boolean;
  /** The run ended normally: the hard limit no longer applies. */
  clearHardLimit(): void;
}

export function installStopHandlers(o: {
  cleanup: () => Promise<unknown>;
  stopAllSync: () => void;
  log: (line: string) => void;
  hardLimitMs: number;
}): StopHandlers {
  let interrupted = false;
  const onSignal = (sig: string) => {
    interrupted = true;
    o.log(`${sig}: stopping every process`);
    void o.cleanup().finally(() => process.exit(130));
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('exit', () => o.stopAllSync());
  const hard = setTimeout(() => {
    o.log(`hard time limit ${o.hardLimitMs / 60_000} min reached: stopping`);
    void o.cleanup().finally(() => process.exit(124));
  }, o.hardLimitMs);
  return {
    get interrupted() {
      return interrupted;
    },
    clearHardLimit: () => clearTimeout(hard),
  };
}

/**
 * A bench script's last lines: `main()`, a failure logged with its stack
 * (exit code 1), then `finish()` whatever happened (stop the children,
 * remove what the run wrote).
 */
export async function runMain(main: () => Promise<void>, log: (line: string) => void, finish: () => Promise<unknown> | void): Promise<void> {
  try {
    await main();
  } catch (err) {
    log(`FAILED: ${(err as Error).stack ?? String(err)}`);
    process.exitCode = 1;
  } finally {
    await finish();
  }
}
