/**
 * The CLI's exit codes and its one error type. Every failure the CLI reports
 * is a CliError carrying the exit code, a stable `code` and the message shown
 * to the user (README "Command-line client" lists the codes).
 */

export const EXIT = Object.freeze({
  OK: 0,
  /** An unexpected failure (a bug); the message says so. */
  INTERNAL: 1,
  /** Bad command line or unreadable input file. */
  USAGE: 2,
  /** No key, or the server answered 401. */
  AUTH: 3,
  /** The server answered 402: not enough checks. */
  QUOTA: 4,
  /** Any other 4xx answer. */
  CLIENT: 5,
  /** The server could not be reached, answered 5xx, or the job failed. */
  NETWORK: 6,
  /** Ctrl-C. */
  INTERRUPTED: 130,
} as const);
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export class CliError extends Error {
  readonly code: string;
  readonly exitCode: ExitCode;
  constructor(exitCode: ExitCode, code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CliError';
    this.code = code;
    this.exitCode = exitCode;
  }
}

export const usageError = (message: string) => new CliError(EXIT.USAGE, 'cli_usage', message);
