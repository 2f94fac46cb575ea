/**
 * The farm for bench/probe-cpu.ts, run as a CHILD process so that the
 * checker's CPU is measured alone. Cheap on purpose (Bun.listen, no upstream
 * hop): every "working proxy" answers the probe as the judge would have if it
 * had forwarded the request, so the checker does exactly the work of a real
 * check (connect, handshake, request, parse, judge body, anonymity) while the
 * farm costs as little as possible on a 2-core machine.
 *
 *   http   absolute-form GET -> judge echo of the origin-form request line;
 *          CONNECT -> 200, then TLS (node:tls server on the same socket) and
 *          the judge answer from inside the tunnel
 *   socks  SOCKS4/4a/5 (no auth) handshake, then the judge answer (plain);
 *          a tunnel to port TLS_JUDGE_PORT (10) gets TLS and the judge answer
 *          inside it, as the judge's TLS listener would (the https check)
 *   hole   accepts, never answers
 *   refused  a port that was bound once and closed (nothing listens)
 *
 * Judge answers are signed with JUDGE_KEY from the environment (as the
 * service's judge signs them), so the checker verifies each one.
 *
 * The TLS answers share one secure context, as a real TLS listener does, so
 * the checker's session tickets resume (the judge's listener resumes them).
 *
 * Prints one JSON line {ports: {...}} when ready; on stdin "cpu\n" prints
 * {cpuUs, handshakes, resumed} (its own CPU so far, the TLS handshakes so
 * far and how many resumed a session); exits when stdin closes.
 */
import { Duplex } from 'node:stream';
import { createSecureContext, TLSSocket } from 'node:tls';
import { createServer, type Socket as NetSocket } from 'node:net';
import type { Socket } from 'bun';
import { extractNonce } from '../src/probe/codec/judge-body';
import { handleJudgeSocket, judgeBody } from '../src/judge/server';
import { TEST_CERT, TEST_KEY } from '../test/fixtures/tls-cert';

const PORTS_PER_KIND = Number(process.env.FARM_PORTS ?? 8);
/**
 * FARM_DELAY_MS=D: an http proxy waits a uniform 0..D ms before its first
 * answer (the judge's, or a CONNECT's 200), as real proxies take their time:
 * the checker's socket events then come one at a time instead of together
 * (bench/probe-trickle.ts --delay-ms). 0 (default): at once.
 */
const DELAY_MS = Number(process.env.FARM_DELAY_MS ?? 0);
const later = (fn: () => void): void => {
  if (DELAY_MS > 0) setTimeout(fn, Math.random() * DELAY_MS);
  else fn();
};
/** The port the checker's https check tunnels to (bench/probe-cpu.ts TLS_JUDGE_PORT). */
const TLS_JUDGE_PORT = 10;
const JUDGE_KEY = process.env.JUDGE_KEY || undefined;
/** One context for every TLS connection, as a TLS listener has: its session tickets resume on any connection. */
const TLS_CONTEXT = createSecureContext({ cert: TEST_CERT, key: TEST_KEY });
/** TLS handshakes done, and how many of them resumed a session (reported with the CPU). */
const tlsStats = { handshakes: 0, resumed: 0 };

function answer(body: string): string {
  return (
    `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nCache-Control: no-store\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

/** The judge answer for a request head as a forwarding proxy would have delivered it. */
function judgeAnswer(head: string): string {
  const lines = head.split('\r\n');
  const [method = 'GET', target = '/', version = 'HTTP/1.1'] = (lines[0] ?? '').split(' ');
  let path = target;
  if (target.startsWith('http://')) {
    const slash = target.indexOf('/', 7);
    path = slash === -1 ? '/' : target.slice(slash);
  }
  const headers: [string, string][] = [];
  for (let i = 1; i < lines.length; i++) {
    const l = lines[i] as string;
    if (l === '') break;
    const c = l.indexOf(':');
    const name = l.slice(0, c);
    if (name.toLowerCase().startsWith('proxy-')) continue;
    headers.push([name, l.slice(c + 1).trim()]);
  }
  return answer(
    judgeBody({ requestLine: `${method} ${path} ${version}`, headers, remoteAddress: '127.0.0.1', nonce: extractNonce(path) }, JUDGE_KEY),
  );
}

const St = Object.freeze({ HEAD: 0, S5_GREET: 1, S5_REQ: 2, S4_REQ: 3, HTTP: 4, DONE: 5, TLS: 6 } as const);
type Conn = { st: number; buf: Buffer | null; kind: 'http' | 'socks' };

function take(c: Conn, chunk: Buffer): Buffer {
  const b = c.buf === null ? chunk : Buffer.concat([c.buf, chunk]);
  c.buf = b;
  return b;
}

/** A node Duplex over a Bun socket, so node:tls can run a server handshake on it. */
function tlsOver(s: Socket<Conn>): (chunk: Buffer) => void {
  const d = new Duplex({
    read() {},
    write(chunk: Buffer, _enc, cb) {
      s.write(chunk);
      cb();
    },
    final(cb) {
      s.end();
      cb();
    },
  });
  const t = new TLSSocket(d, { isServer: true, secureContext: TLS_CONTEXT });
  t.on('error', () => s.end());
  t.on('secure', () => {
    tlsStats.handshakes++;
    if (t.isSessionReused()) tlsStats.resumed++;
  });
  handleJudgeSocket(t as unknown as NetSocket, JUDGE_KEY);
  return (chunk) => d.push(chunk);
}
const tlsFeed = new WeakMap<object, (chunk: Buffer) => void>();

function onHttpData(s: Socket<Conn>, c: Conn, chunk: Buffer): void {
  if (c.st === St.TLS) {
    tlsFeed.get(s)?.(chunk);
    return;
  }
  const b = take(c, chunk);
  const end = b.indexOf('\r\n\r\n');
  if (end === -1) return;
  const head = b.toString('latin1', 0, end);
  c.buf = null;
  if (head.startsWith('CONNECT ')) {
    c.st = St.TLS;
    tlsFeed.set(s, tlsOver(s));
    later(() => void s.write('HTTP/1.1 200 Connection established\r\n\r\n'));
    return;
  }
  c.st = St.DONE;
  const reply = judgeAnswer(head);
  later(() => void s.end(reply));
}

const S5_METHOD = Buffer.from([5, 0]);
const S5_OK = Buffer.from([5, 0, 0, 1, 127, 0, 0, 1, 0, 80]);
const S4_OK = Buffer.from([0, 0x5a, 0, 80, 127, 0, 0, 1]);

/** After a SOCKS reply: TLS for a tunnel to the TLS judge's port, else the plain judge. */
function socksTunnel(s: Socket<Conn>, c: Conn, port: number, ok: Buffer): void {
  s.write(ok);
  if (port !== TLS_JUDGE_PORT) {
    c.st = St.HTTP;
    if (c.buf !== null) onSocksData(s, c, Buffer.alloc(0));
    return;
  }
  c.st = St.TLS;
  const feed = tlsOver(s);
  tlsFeed.set(s, feed);
  const rest = c.buf;
  c.buf = null;
  if (rest !== null) feed(rest);
}

function onSocksData(s: Socket<Conn>, c: Conn, chunk: Buffer): void {
  if (c.st === St.TLS) {
    tlsFeed.get(s)?.(chunk);
    return;
  }
  const b = take(c, chunk);
  switch (c.st) {
    case St.HEAD: {
      if (b[0] === 5) c.st = St.S5_GREET;
      else if (b[0] === 4) c.st = St.S4_REQ;
      else return void s.end();
      return onSocksData(s, c, Buffer.alloc(0));
    }
    case St.S5_GREET: {
      if (b.length < 2 || b.length < 2 + (b[1] as number)) return;
      c.buf = b.length > 2 + (b[1] as number) ? b.subarray(2 + (b[1] as number)) : null;
      c.st = St.S5_REQ;
      s.write(S5_METHOD);
      if (c.buf !== null) onSocksData(s, c, Buffer.alloc(0));
      return;
    }
    case St.S5_REQ: {
      if (b.length < 5) return;
      const atyp = b[3];
      const len = atyp === 1 ? 10 : atyp === 4 ? 22 : 7 + (b[4] as number);
      if (b.length < len) return;
      c.buf = b.length > len ? b.subarray(len) : null;
      socksTunnel(s, c, b.readUInt16BE(len - 2), S5_OK);
      return;
    }
    case St.S4_REQ: {
      if (b.length < 9) return;
      let z = b.indexOf(0, 8);
      if (z === -1) return;
      if (b[4] === 0 && b[5] === 0 && b[6] === 0 && b[7] !== 0) {
        z = b.indexOf(0, z + 1); // 4a: host follows
        if (z === -1) return;
      }
      c.buf = b.length > z + 1 ? b.subarray(z + 1) : null;
      socksTunnel(s, c, b.readUInt16BE(2), S4_OK);
      return;
    }
    case St.HTTP: {
      const end = b.indexOf('\r\n\r\n');
      if (end === -1) return;
      c.st = St.DONE;
      c.buf = null;
      s.end(judgeAnswer(b.toString('latin1', 0, end)));
      return;
    }
    default:
      return;
  }
}

function listen(kind: 'http' | 'socks' | 'hole'): number {
  const l = Bun.listen<Conn>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(s) {
        s.data = { st: St.HEAD, buf: null, kind: kind === 'socks' ? 'socks' : 'http' };
      },
      data(s, chunk) {
        if (kind === 'hole') return;
        const c = s.data;
        if (c.kind === 'socks') onSocksData(s, c, chunk);
        else onHttpData(s, c, chunk);
      },
      error() {},
      close() {},
    },
  });
  return l.port;
}

async function refusedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

const ports = {
  http: Array.from({ length: PORTS_PER_KIND }, () => listen('http')),
  socks: Array.from({ length: PORTS_PER_KIND }, () => listen('socks')),
  hole: Array.from({ length: PORTS_PER_KIND }, () => listen('hole')),
  refused: [await refusedPort()],
};
process.stdout.write(JSON.stringify({ ports }) + '\n');
process.stdin.on('data', (d: Buffer) => {
  if (d.toString().includes('cpu')) {
    const u = process.cpuUsage();
    process.stdout.write(JSON.stringify({ cpuUs: u.user + u.system, ...tlsStats }) + '\n');
  }
});
process.stdin.on('end', () => process.exit(0));
