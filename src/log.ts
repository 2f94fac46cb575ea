/**
 * Structured logs: one JSON object per line on stdout (stderr for warn/error).
 * Never log an API key, a password or a result token: callers pass ids only.
 */
import type { LogLevel } from './config';

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** A line written whatever the level, LOG_LEVEL=silent too (level "info"): what a person must see once, the demo key. */
  always(msg: string, fields?: LogFields): void;
  /** A logger that adds these fields to every line. */
  child(fields: LogFields): Logger;
}

export type LogSink = (line: string, level: LogLevel) => void;

const defaultSink: LogSink = (line, level) => {
  if (level === 'warn' || level === 'error') process.stderr.write(line + '\n');
  else process.stdout.write(line + '\n');
};

/** Errors become {name, message, code, stack, cause} instead of "{}"; an error met again (a cause cycle) becomes "[Circular]". */
function makeReplacer(): (key: string, value: unknown) => unknown {
  const seen = new WeakSet<Error>();
  return (_key, value) => {
    if (value instanceof Error) {
      if (seen.has(value)) return '[Circular]';
      seen.add(value);
      const e = value as Error & { code?: unknown; cause?: unknown };
      return { name: e.name, message: e.message, code: e.code, stack: e.stack, cause: e.cause };
    }
    if (typeof value === 'bigint') return Number(value);
    return value;
  };
}

export function createLogger(level: LogLevel = 'info', sink: LogSink = defaultSink, base: LogFields = {}): Logger {
  const min = ORDER[level];
  const emit = (lvl: LogLevel, msg: string, fields?: LogFields, always = false) => {
    if (ORDER[lvl] < min && !always) return;
    const time = new Date().toISOString();
    const rec: LogFields = { time, level: lvl, msg, ...base, ...fields };
    // a field named time/level/msg must not falsify the line (assignment keeps key order)
    rec.time = time;
    rec.level = lvl;
    rec.msg = msg;
    let line: string;
    try {
      line = JSON.stringify(rec, makeReplacer());
    } catch (err) {
      // cyclic plain objects: logging must never throw into the caller
      line = JSON.stringify({ time, level: lvl, msg, log_error: `fields not serialisable: ${String(err)}` });
    }
    sink(line, lvl);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    always: (m, f) => emit('info', m, f, true),
    child: (fields) => createLogger(level, sink, { ...base, ...fields }),
  };
}

/** A logger that keeps lines in memory: for tests. */
export function memoryLogger(level: LogLevel = 'debug'): Logger & { lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger(level, (line) => lines.push(JSON.parse(line) as Record<string, unknown>));
  return Object.assign(logger, { lines });
}
