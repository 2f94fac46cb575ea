/**
 * The judge: echoes what a request looked like when it arrived, as JSON (see
 * judge-body.ts): the request line, the raw headers in arrival order with
 * their original case, the remote address (IPv4-mapped IPv6 unwrapped) and
 * the nonce (query parameter `n`). Always 200 application/json with
 * Content-Length and Connection: close.
 *
 * Two front ends share the renderer:
 * - `startJudgeServer`: a raw HTTP/1.1 server (Bun.listen under Bun, node:net
 *   elsewhere; reads the request head only, bounded to 16 KiB and 10 s idle)
 *   that keeps raw header order and case; used by tests, the benchmark and
 *   usable as a stand-alone JUDGE_URL; with `tls` (a key and certificate)
 *   the same judge over TLS: the service's TLS listener (JUDGE_TLS_URL,
 *   src/server.ts). Both drivers feed `JudgeRequest`, the
 *   pure per-connection core; `handleJudgeSocket` is its node:net driver
 *   (also behind TLS in tests).
 * - `judgeResponseFor`: a Fetch-API handler mounted by the app at GET /judge.
 *   There the runtime has already parsed the headers, so names arrive
 *   lower-cased and order may differ from the wire; anonymity classification
 *   compares names case-insensitively, so verdicts are unaffected.
 *
 * With a key, both sign the exact body bytes (src/probe/codec/integrity.ts:
 * an HMAC-SHA256 over the body, nonce included, as its last member `sig`),
 * so a probe can tell a proxy that changed the answer (`tampered`). The raw
 * judge signs when started with `key`; the /judge route signs with the
 * service's judge key (JUDGE_KEY, or a random key of the service, handed in
 * by the composition root).
 */
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { extractNonce, renderJudgeBody, type JudgeEcho } from '../probe/codec/judge-body';
import { signJudgeBody } from '../probe/codec/integrity';

const HEAD_MAX = 16 * 1024;

/**
 * TLS handshakes the judge's TLS listeners of this process completed, full
 * (a certificate sent and signed) or resumed (a ticket: issue 30, /metrics
 * proxycheck_tls_handshakes_total{side="judge"}). Process-wide: a process
 * serves one TLS judge (tests may start several; they read differences).
 * The counts live on a SharedArrayBuffer ([full, resumed]): the judge's TLS
 * thread (tls-thread.ts) counts into the main thread's (handshakeCounts /
 * countHandshakesInto), so /metrics sees them wherever the listener runs.
 */
let counts: Int32Array = new Int32Array(new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT));
const FULL = 0;
const RESUMED = 1;

export const judgeTlsHandshakes = {
  get full(): number {
    return Atomics.load(counts, FULL);
  },
  set full(n: number) {
    Atomics.store(counts, FULL, n);
  },
  get resumed(): number {
    return Atomics.load(counts, RESUMED);
  },
  set resumed(n: number) {
    Atomics.store(counts, RESUMED, n);
  },
};

/** This thread's counts (shared memory), to hand to the judge's TLS thread. */
export function handshakeCounts(): Int32Array {
  return counts;
}

/** This thread counts into `shared` (another thread's handshakeCounts()) from now on. */
export function countHandshakesInto(shared: Int32Array): void {
  counts = shared;
}

function countJudgeHandshake(resumed: boolean): void {
  Atomics.add(counts, resumed ? RESUMED : FULL, 1);
}
const IDLE_MS = 10_000;

/** The judge's body for an echo: signed when there is a key. */
export function judgeBody(echo: JudgeEcho, key: string | undefined): string {
  const body = renderJudgeBody(echo);
  return key === undefined ? body : signJudgeBody(body, key);
}

/** "::ffff:1.2.3.4" -> "1.2.3.4"; anything else unchanged. */
export function unwrapMappedAddress(a: string): string {
  return a.toLowerCase().startsWith('::ffff:') && a.indexOf('.') !== -1 ? a.slice(7) : a;
}

function answer(body: string, status = '200 OK'): string {
  return (
    `HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nCache-Control: no-store\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

/** Parses a request head (latin1 text up to the blank line) into request line + raw headers. */
export function parseRequestHead(head: string): { requestLine: string; target: string; headers: [string, string][] } | null {
  const lines = head.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  let i = 0;
  while (i < lines.length && lines[i] === '') i++;
  const requestLine = lines[i] ?? '';
  const parts = requestLine.split(' ');
  if (parts.length !== 3 || !/^HTTP\/1\.[0-9]$/.test(parts[2] as string) || (parts[0] as string).length === 0) return null;
  const headers: [string, string][] = [];
  for (i++; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line === '') break;
    const c0 = line.charCodeAt(0);
    const last = headers[headers.length - 1];
    if ((c0 === 32 || c0 === 9) && last !== undefined) {
      last[1] = `${last[1]} ${line.trim()}`;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) return null;
    headers.push([line.slice(0, colon), line.slice(colon + 1).trim()]);
  }
  return { requestLine, target: parts[1] as string, headers };
}

/**
 * One judge connection's request head, fed as bytes arrive (pure: no
 * sockets). `feed` returns the whole HTTP response to send before closing
 * once the head is complete (or too large, or malformed), null while it is
 * not; after that it ignores more bytes.
 */
export class JudgeRequest {
  private parts: Buffer[] = [];
  private len = 0;
  private done = false;

  /** `key`: sign the answer (absent: an unsigned judge). */
  constructor(
    private readonly remoteAddress: string,
    private readonly key?: string,
  ) {}

  feed(chunk: Buffer): string | null {
    if (this.done) return null;
    this.parts.push(chunk);
    this.len += chunk.length;
    const all = this.parts.length === 1 ? chunk : Buffer.concat(this.parts, this.len);
    this.parts = [all];
    let end = all.indexOf('\r\n\r\n');
    if (end === -1) {
      const lf = all.indexOf('\n\n');
      end = lf === -1 ? -1 : lf - 1;
    }
    if (end === -1) {
      if (this.len <= HEAD_MAX) return null;
      this.done = true;
      return answer('{"error":"request head too large"}', '431 Request Header Fields Too Large');
    }
    this.done = true;
    this.parts = [];
    const parsed = parseRequestHead(all.toString('latin1', 0, end + 2));
    if (parsed === null) return answer('{"error":"bad request"}', '400 Bad Request');
    const body = judgeBody(
      {
        requestLine: parsed.requestLine,
        headers: parsed.headers,
        remoteAddress: unwrapMappedAddress(this.remoteAddress),
        nonce: extractNonce(parsed.target),
      },
      this.key,
    );
    return answer(body);
  }
}

/** Serves one judge connection over node:net (exported so tests can put it behind TLS). */
export function handleJudgeSocket(socket: Socket, key?: string, idleMs = IDLE_MS): void {
  const req = new JudgeRequest(socket.remoteAddress ?? '', key);
  socket.setTimeout(idleMs, () => socket.destroy());
  socket.on('error', () => socket.destroy());
  socket.on('data', (chunk: Buffer) => {
    const reply = req.feed(chunk);
    if (reply !== null) socket.end(reply);
  });
}

export interface JudgeServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

export interface JudgeServerOptions {
  /** default 127.0.0.1 */
  host?: string;
  /** default 0 = any free port */
  port?: number;
  /** sign every answer with this key (the checker's JUDGE_KEY); absent: answers are unsigned */
  key?: string;
  /** serve over TLS with this key and certificate (PEM); the url is then https */
  tls?: { key: string; cert: string };
  /** a connection that sends nothing this long is closed (default 10 s; tests shorten it) */
  idleMs?: number;
}

/** Starts the raw judge. */
export function startJudgeServer(opts: JudgeServerOptions = {}): Promise<JudgeServer> {
  const host = opts.host ?? '127.0.0.1';
  return typeof globalThis.Bun !== 'undefined'
    ? startOnBun(host, opts.port ?? 0, opts.key, opts.tls, opts.idleMs ?? IDLE_MS)
    : startOnNodeNet(host, opts.port ?? 0, opts.key, opts.tls, opts.idleMs ?? IDLE_MS);
}

/** The URL of a judge listening on host:port. */
export function judgeUrl(host: string, port: number, tls: boolean): string {
  return `${tls ? 'https' : 'http'}://${host.indexOf(':') !== -1 ? `[${host}]` : host}:${port}/judge`;
}

/**
 * Bun's own listener: no node:net streams per connection, so less CPU per
 * request than the node:net server below (bench/RESULTS.md, session 2,
 * "The judge on Bun.listen").
 */
async function startOnBun(host: string, port: number, key: string | undefined, tls: JudgeServerOptions['tls'], idleMs: number): Promise<JudgeServer> {
  const listener = Bun.listen<JudgeRequest>({
    hostname: host,
    port,
    ...(tls !== undefined ? { tls: { key: tls.key, cert: tls.cert } } : {}),
    socket: {
      open(s) {
        s.data = new JudgeRequest(s.remoteAddress, key);
        s.timeout(Math.max(1, Math.round(idleMs / 1000)));
      },
      // Over TLS, Bun calls `open` at accept only when there is a `handshake` handler; without one, `open`
      // waits for a completed handshake, so a connection that never sends a ClientHello (a proxy's tunnel
      // kept open after the probe gave up on it) had no idle timeout and held its descriptor for good.
      ...(tls !== undefined
        ? {
            handshake(s: Bun.Socket<JudgeRequest>, success: boolean) {
              if (!success) s.terminate();
              else countJudgeHandshake(s.isSessionReused());
            },
          }
        : {}),
      data(s, chunk) {
        const reply = s.data.feed(chunk);
        if (reply !== null) s.end(reply);
      },
      timeout(s) {
        s.terminate();
      },
      error(s) {
        s.terminate();
      },
    },
  });
  return {
    url: judgeUrl(host, listener.port, tls !== undefined),
    port: listener.port,
    close: async () => {
      listener.stop(true);
    },
  };
}

function startOnNodeNet(host: string, port: number, key: string | undefined, tls: JudgeServerOptions['tls'], idleMs: number): Promise<JudgeServer> {
  const sockets = new Set<Socket>();
  const onSocket = (s: Socket): void => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    handleJudgeSocket(s, key, idleMs);
  };
  const server: Server =
    tls === undefined
      ? createServer(onSocket)
      : createTlsServer({ key: tls.key, cert: tls.cert }, (s) => {
          countJudgeHandshake(s.isSessionReused());
          onSocket(s);
        });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.removeListener('error', reject);
      const bound = (server.address() as AddressInfo).port;
      resolve({
        url: judgeUrl(host, bound, tls !== undefined),
        port: bound,
        close: () =>
          new Promise<void>((done) => {
            for (const s of sockets) s.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

/**
 * Fetch-API judge for the app's GET /judge (headers as the runtime parsed
 * them), signed with `key` (the service's judge key).
 */
export function judgeResponseFor(request: Request, remoteAddress: string, key: string): Response {
  const url = new URL(request.url);
  const pathWithQuery = url.pathname + url.search;
  const headers: [string, string][] = [];
  request.headers.forEach((value, name) => {
    headers.push([name, value]);
  });
  const body = judgeBody(
    {
      requestLine: `${request.method} ${pathWithQuery} HTTP/1.1`,
      headers,
      remoteAddress: unwrapMappedAddress(remoteAddress),
      nonce: extractNonce(pathWithQuery),
    },
    key,
  );
  return new Response(body, {
    status: 200,
    headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', Connection: 'close' },
  });
}
