/**
 * The TLS sessions of this thread's pinned targets (the judge's TLS
 * listener), for TLS 1.3 session resumption: the https check of every
 * working proxy opens a new connection to the same target, and a resumed
 * session skips the certificate, its signature and its verification on both
 * sides (bench/RESULTS.md "The https check" has what it saves).
 *
 * Why the pin stays sound: a session is kept only from a link that proved
 * its peer (the pinned certificate compared, or itself a resumed session:
 * src/probe/net/exchange.ts), and a peer can resume a session only with the
 * ticket key of the server that issued it. A resumed session therefore
 * proves the same server as the certificate that began it; an interceptor
 * cannot resume it, must present a certificate of its own, and that one is
 * compared with the pin (tls_intercepted).
 *
 * One session per (host, port, pin), the latest kept; at most MAX_TARGETS
 * targets (a thread talks to one TLS judge: the bound is for a pin that
 * changes), the oldest dropped first. Module state: one store per thread,
 * each lane resumes its own sessions.
 *
 * It also counts the thread's pinned handshakes, full or resumed
 * (countHandshake from the exchange, takeHandshakes by the lane with each
 * batch: /metrics proxycheck_tls_handshakes_total{side="client"}), to see
 * that resumption really happens under load.
 */

/** Targets remembered per thread. */
export const MAX_TARGETS = 16;

const sessions = new Map<string, Buffer>();

/** The store's key of a pinned target. */
export function sessionKey(host: string, port: number, pin: string): string {
  return `${host}\n${port}\n${pin}`;
}

/** The session to offer to `key`'s target, if one is kept. */
export function sessionFor(key: string): Buffer | undefined {
  return sessions.get(key);
}

/** Keeps `session` for `key`'s target (the caller proved the peer: see the header). */
export function keepSession(key: string, session: Buffer): void {
  if (!sessions.has(key) && sessions.size >= MAX_TARGETS) sessions.delete(sessions.keys().next().value as string);
  sessions.set(key, session);
}

/** This thread's pinned TLS handshakes since the last takeHandshakes(): full (the certificate compared) or resumed. */
let full = 0;
let resumed = 0;

/** A pinned TLS handshake completed (src/probe/net/exchange.ts), resumed or full. */
export function countHandshake(wasResumed: boolean): void {
  if (wasResumed) resumed++;
  else full++;
}

/** The handshakes counted since the last call, and starts counting again (the lane sends them with its results: /metrics). */
export function takeHandshakes(): { full: number; resumed: number } {
  const out = { full, resumed };
  full = 0;
  resumed = 0;
  return out;
}

/** Forgets every session of this thread (tests; a pin that must not be resumed). */
export function clearSessions(): void {
  sessions.clear();
}
