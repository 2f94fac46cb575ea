/**
 * The messages between the main thread and the judge's TLS thread
 * (tls-judge-thread.ts starts it, tls-thread.ts is its entry). Types only,
 * plus the one pure helper both sides use for a failure.
 *
 *   main ──workerData: TlsThreadData──> thread
 *   thread ──{ kind: 'listening', port }──> main     (bound: the port, 0 resolved)
 *   thread ──{ kind: 'failed', error }──> main       (could not bind; the thread ends)
 *   main ──{ kind: 'stop' }──> thread
 *   thread ──{ kind: 'stopped' }──> main             (the listener closed; main ends the thread)
 */

/** What the thread is started with (structured clone; `counts` is shared memory). */
export interface TlsThreadData {
  host: string;
  port: number;
  /** the judge's signing key */
  key: string | undefined;
  tls: { key: string; cert: string };
  /** idle connections are closed after this long (ms); absent: the judge's default */
  idleMs?: number;
  /** the main thread's handshake counts (server.ts handshakeCounts): the thread counts into them */
  counts: Int32Array;
}

/** A failure as it crosses threads: the message and the code (EADDRINUSE must survive: compose/bind.ts names the setting). */
export interface WireError {
  message: string;
  code?: string;
}

export type FromThread = { kind: 'listening'; port: number } | { kind: 'failed'; error: WireError } | { kind: 'stopped' };
export type ToThread = { kind: 'stop' };

/** An error as a WireError (its code when it has a string one). */
export function toWireError(err: unknown): WireError {
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? { message, code } : { message };
}

/** A WireError as an Error again, with its code. */
export function fromWireError(w: WireError): Error & { code?: string } {
  return Object.assign(new Error(w.message), w.code !== undefined ? { code: w.code } : {});
}
