/**
 * The CLI's exit codes and its one error type. Every failure the CLI reports
 * is a CliError carrying the exit code, a stable `code` and the message shown
 * to the user (docs/CLI.md lists the codes).
 */
import { ServiceError } from '../errors';
import { ENTRY_ERROR_CODES } from '../error-codes';

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
  /** The process that started it is gone (its launcher, or the npm that ran it, was killed): 128 + SIGTERM. */
  ORPHANED: 143,
} as const);
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The CLI's failure with its exit code (the CLI's main and the commands branch on it). */
export class CliError extends ServiceError {
  readonly exitCode: ExitCode;
  constructor(exitCode: ExitCode, code: string, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

export const usageError = (message: string) => new CliError(EXIT.USAGE, ENTRY_ERROR_CODES.CLI_USAGE, message);
