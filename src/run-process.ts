/**
 * The running process (src/main.ts loads it once the runtime settings are
 * in place): reads the config (a bad value stops it with one line on stderr,
 * exit 1), starts what ROLE runs, and stops it gracefully on SIGTERM /
 * SIGINT (exit 0 once running jobs finished or were failed and refunded).
 *
 * Stopping always ends: a second SIGTERM / SIGINT exits at once (exit 1), and
 * 10 s after the grace (SHUTDOWN_GRACE_MS) from the first signal the
 * process exits whatever still hangs (a database that stopped answering, a
 * stuck socket; exit 1). Jobs cut off that way keep their scan `running` and
 * are refunded in full by the orphan sweep, as after a crash (the next start
 * of this node, or another node once this one's lease expired).
 */
import { ConfigError, parseConfig } from './config';
import { createLogger } from './log';
import { startService } from './server';
import { startAgent } from './agent';

interface Stoppable {
  stop(): Promise<void>;
}

/** Starts what the role runs; stop() stops it in reverse order. */
async function startRole(config: ReturnType<typeof parseConfig>, log: ReturnType<typeof createLogger>): Promise<Stoppable> {
  if (config.cluster.role === 'agent') return startAgent(config, { log });
  const api = await startService(config, { log });
  if (config.cluster.role !== 'all') return api;
  try {
    // PORT and JUDGE_TLS_PORT are the API's: the agent's listeners take free ports on HOST
    const agent = await startAgent(config, { log, port: 0, judgeTlsPort: 0 });
    return {
      stop: async () => {
        await api.stop();
        await agent.stop();
      },
    };
  } catch (err) {
    await api.stop();
    throw err;
  }
}

export async function runProcess(): Promise<void> {
  let config;
  try {
    config = parseConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`config: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const log = createLogger(config.process.logLevel);
  // Handlers go in before the start, not after it: a SIGTERM that arrived while
  // the database was open but the handlers not yet installed killed the process
  // outright (no stop, no lock release). One during start-up now lets the start
  // finish and then stops the service as any other.
  let service: Stoppable | null = null;
  let signalled = false;
  const stopAndExit = (s: NonNullable<typeof service>) => void s.stop().then(() => process.exit(0));
  const forceExit = (why: string) => {
    log.error('forced exit', { why });
    process.exit(1);
  };
  const onSignal = (sig: string) => {
    if (signalled) return forceExit(`second ${sig}`);
    signalled = true;
    log.info('signal received, shutting down', { signal: sig, starting: service === null, timeoutMs: config.process.shutdownTimeoutMs });
    setTimeout(() => forceExit(`shutdown took longer than the grace + 10 s (${config.process.shutdownTimeoutMs} ms)`), config.process.shutdownTimeoutMs).unref();
    if (service !== null) stopAndExit(service);
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  try {
    service = await startRole(config, log);
  } catch (err) {
    const e = err as Error & { code?: string };
    process.stderr.write(`start failed: ${e.message}${e.code ? ` (${e.code})` : ''}\n`);
    log.debug('start failed', { err });
    process.exit(1);
  }
  if (signalled) stopAndExit(service);
}

