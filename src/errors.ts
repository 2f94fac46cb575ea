/**
 * The one error root (undici's lib/core/errors.js is the model). Every error
 * this code base throws on purpose is a ServiceError: a stable snake_case
 * `code` a caller may branch on, a message for the log, and the `cause` it
 * wraps. Subclasses exist only where a caller branches on the class (the HTTP
 * layer's ApiError, which carries the contract's status and body).
 *
 * Users never see `message` or `cause` of an internal error: the HTTP layer
 * (src/http/errors.ts) maps codes to the contract's fixed bodies, and history
 * rows keep the code (publicReason). The log gets everything (errorText).
 */

export class ServiceError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ServiceError';
    this.code = code;
  }
}

/** True for a ServiceError (optionally of one code). */
export function isServiceError(err: unknown, code?: string): err is ServiceError {
  return err instanceof ServiceError && (code === undefined || err.code === code);
}

/** The stable code of any thrown value: its own, a Node system error's (`ECONNRESET`), or `internal`. */
export function errorCode(err: unknown): string {
  if (err instanceof ServiceError) return err.code;
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code !== '' ? code : 'internal';
}

/**
 * An error as it crosses to another thread (structured clone keeps no class):
 * its name, message and stack, and every own field whose value is a string
 * or number (a system error's `code`: EADDRINUSE; PostgreSQL's `code`,
 * `constraint`, `detail`, ... as PGlite sets them). db/pglite-protocol.ts and
 * src/judge/tls-thread-protocol.ts send errors this way.
 */
export interface WireError {
  name: string;
  message: string;
  stack: string | undefined;
  fields: Record<string, string | number>;
}

export function toWireError(err: unknown): WireError {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err), stack: undefined, fields: {} };
  const fields: Record<string, string | number> = {};
  for (const key of Object.keys(err)) {
    const v = (err as unknown as Record<string, unknown>)[key];
    if (key !== 'message' && key !== 'name' && key !== 'stack' && (typeof v === 'string' || typeof v === 'number')) fields[key] = v;
  }
  return { name: err.name, message: err.message, stack: err.stack, fields };
}

/** A WireError as an Error again: the same name, message, stack and fields (`code` included). */
export function fromWireError(w: WireError): Error & Record<string, unknown> {
  const e = Object.assign(new Error(w.message), w.fields);
  e.name = w.name;
  if (w.stack !== undefined) e.stack = w.stack;
  return e;
}

/** The one error-to-text function, for logs and local diagnostics (never for an API body). */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
