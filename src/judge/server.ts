/**
 * The judge: echoes what a request looked like when it arrived, as JSON (see
 * judge-body.ts): the request line, the raw headers in arrival order with
 * their original case, the remote address (IPv4-mapped IPv6 unwrapped) and
 * the nonce (query parameter `n`). Always 200 application/json with
 * Content-Length and Connection: close.
 *
 * Two front ends share the renderer:
 * - `startJudgeServer`: a raw node:net HTTP/1.1 server (reads the request
 *   head only, bounded to 16 KiB and 10 s) that keeps raw header order and case;
 *   used by tests and usable as a stand-alone JUDGE_URL.
 * - `judgeResponseFor`: a Fetch-API handler mounted by the app at GET /judge.
 *   There the runtime has already parsed the headers, so names arrive
 *   lower-cased and order may differ from the wire; anonymity classification
 *   compares names case-insensitively, so verdicts are unaffected.
 */
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { extractNonce, renderJudgeBody } from './judge-body';

const HEAD_MAX = 16 * 1024;
const IDLE_MS = 10_000;

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

interface ConnState {
  parts: Buffer[];
  len: number;
  done: boolean;
}

/** Serves one judge connection (exported so tests can put it behind TLS). */
export function handleJudgeSocket(socket: Socket): void {
  const st: ConnState = { parts: [], len: 0, done: false };
  socket.setTimeout(IDLE_MS, () => socket.destroy());
  socket.on('error', () => socket.destroy());
  socket.on('data', (chunk: Buffer) => {
    if (st.done) return;
    st.parts.push(chunk);
    st.len += chunk.length;
    const all = st.parts.length === 1 ? chunk : Buffer.concat(st.parts, st.len);
    st.parts = [all];
    let end = all.indexOf('\r\n\r\n');
    if (end === -1) {
      const lf = all.indexOf('\n\n');
      end = lf === -1 ? -1 : lf - 1;
    }
    if (end === -1) {
      if (st.len > HEAD_MAX) {
        st.done = true;
        socket.end(answer('{"error":"request head too large"}', '431 Request Header Fields Too Large'));
      }
      return;
    }
    st.done = true;
    const parsed = parseRequestHead(all.toString('latin1', 0, end + 2));
    if (parsed === null) {
      socket.end(answer('{"error":"bad request"}', '400 Bad Request'));
      return;
    }
    const body = renderJudgeBody({
      requestLine: parsed.requestLine,
      headers: parsed.headers,
      remoteAddress: unwrapMappedAddress(socket.remoteAddress ?? ''),
      nonce: extractNonce(parsed.target),
    });
    socket.end(answer(body));
  });
}

export interface JudgeServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Starts the raw judge on host (default 127.0.0.1) and port (default 0 = any free port). */
export function startJudgeServer(opts: { host?: string; port?: number } = {}): Promise<JudgeServer> {
  const host = opts.host ?? '127.0.0.1';
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    handleJudgeSocket(s);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.removeListener('error', reject);
      const port = (server.address() as AddressInfo).port;
      const h = host.indexOf(':') !== -1 ? `[${host}]` : host;
      resolve({
        url: `http://${h}:${port}/judge`,
        port,
        close: () =>
          new Promise<void>((done) => {
            for (const s of sockets) s.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

/** Fetch-API judge for the app's GET /judge (headers as the runtime parsed them). */
export function judgeResponseFor(request: Request, remoteAddress: string): Response {
  const url = new URL(request.url);
  const pathWithQuery = url.pathname + url.search;
  const headers: [string, string][] = [];
  request.headers.forEach((value, name) => {
    headers.push([name, value]);
  });
  const body = renderJudgeBody({
    requestLine: `${request.method} ${pathWithQuery} HTTP/1.1`,
    headers,
    remoteAddress: unwrapMappedAddress(remoteAddress),
    nonce: extractNonce(pathWithQuery),
  });
  return new Response(body, {
    status: 200,
    headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', Connection: 'close' },
  });
}
