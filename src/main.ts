/**
 * The process: reads the config (a bad value stops it with one line on
 * stderr, exit 1), starts the service, and stops it gracefully on SIGTERM /
 * SIGINT (exit 0 once running jobs finished or were failed and refunded).
 */
import { ConfigError, parseConfig } from './config';
import { createLogger } from './log';
import { startService } from './server';

async function main(): Promise<void> {
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
  const log = createLogger(config.logLevel);
  let service;
  try {
    service = await startService(config, { log });
  } catch (err) {
    const e = err as Error & { code?: string };
    process.stderr.write(`start failed: ${e.message}${e.code ? ` (${e.code})` : ''}\n`);
    log.debug('start failed', { err });
    process.exit(1);
  }
  let signalled = false;
  const onSignal = (sig: string) => {
    if (signalled) return;
    signalled = true;
    log.info('signal received, shutting down', { signal: sig });
    void service.stop().then(() => process.exit(0));
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
}

void main();
