/**
 * The messages between the main thread and the judge's TLS thread
 * (tls-judge-thread.ts starts it, tls-thread.ts is its entry). Types only;
 * a failure crosses as src/errors.ts's WireError (its `code` kept: EADDRINUSE
 * must survive, compose/bind.ts names the setting by it).
 *
 *   main ──workerData: TlsThreadData──> thread
 *   thread ──{ kind: 'listening', port }──> main     (bound: the port, 0 resolved)
 *   thread ──{ kind: 'failed', error }──> main       (could not bind; the thread ends)
 *   main ──{ kind: 'stop' }──> thread
 *   thread ──{ kind: 'stopped' }──> main             (the listener closed; main ends the thread)
 */

import type { WireError } from '../errors';

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

export type FromThread = { kind: 'listening'; port: number } | { kind: 'failed'; error: WireError } | { kind: 'stopped' };
export type ToThread = { kind: 'stop' };
