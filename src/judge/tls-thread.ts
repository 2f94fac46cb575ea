/**
 * The judge's TLS thread: the entry of the worker thread that serves the
 * built-in judge's TLS listener (tls-judge-thread.ts starts it; the messages
 * are tls-thread-protocol.ts). The listener is startJudgeServer's, as on the
 * main thread; only the thread differs.
 *
 * Why a thread of its own (issue 29, bench/RESULTS.md "The judge's TLS
 * listener in its own thread"): on the main thread, under a pool's load, TLS
 * handshakes at the listener stalled for 3-15 s at a time while its timers
 * and plain sockets were served within ~100-240 ms (the same with Bun.listen
 * and node:tls), so the https step of working proxies ran out of budget and
 * they were reported `https: false` for our own overload. Here the thread
 * does nothing else.
 *
 * States: (loaded) --bound--> listening --stop--> stopped (the main thread
 * then ends the thread); --bind failed--> failed (reported; the main thread
 * ends the thread).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { countHandshakesInto, startJudgeServer, type JudgeServer } from './server';
import { toWireError } from '../errors';
import type { FromThread, TlsThreadData, ToThread } from './tls-thread-protocol';

const port = parentPort;
if (port === null) throw new Error('src/judge/tls-thread.ts is a worker thread\'s entry');
const data = workerData as TlsThreadData;
countHandshakesInto(data.counts);
const post = (m: FromThread): void => port.postMessage(m);

let server: JudgeServer | null = null;
port.on('message', (m: ToThread) => {
  if (m.kind !== 'stop') return;
  const s = server;
  server = null;
  void (s === null ? Promise.resolve() : s.close()).finally(() => post({ kind: 'stopped' }));
});

try {
  server = await startJudgeServer({ host: data.host, port: data.port, key: data.key, tls: data.tls, ...(data.idleMs !== undefined ? { idleMs: data.idleMs } : {}) });
  post({ kind: 'listening', port: server.port });
} catch (err) {
  post({ kind: 'failed', error: toWireError(err) });
}
