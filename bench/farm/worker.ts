/**
 * One farm process: fake proxies on loopback for the end-to-end benchmark.
 *
 * It listens on 0.0.0.0 with `portsPerBehaviour` listeners for each of
 * working / instant / blackhole / slow (port 0 = any free port), prints one
 * JSON line `{"ports": {...}}` on stdout and serves until its stdin closes
 * (the launcher died or stopped it) or it gets SIGTERM.
 *
 * A connection's behaviour is its listener's; a working entry's latency comes
 * from the local (destination) address it arrived on (entries.ts), so one
 * listener serves any number of 127.A.B.C addresses.
 *
 * Working / instant / slow connections are real forward proxies: HTTP
 * absolute-form (rewritten to origin-form) and CONNECT, SOCKS4/4a and SOCKS5
 * (the first byte decides). After the request is read the proxy waits its
 * delay, then connects to the target from its own address (so the judge sees
 * the proxy's address as the origin) and relays both ways. Targets must be
 * loopback: anything else gets 403 / a SOCKS refusal. Black holes accept and
 * never answer.
 *
 * Config: env FARM_CONFIG = JSON {portsPerBehaviour, latency: LatencyModel, slowMs}.
 */
import type { Socket, TCPSocketListener } from 'bun';
import { BEHAVIOURS, LISTENING, idOf, latencyOf, type Behaviour, type LatencyModel } from './entries';

interface FarmConfig {
  portsPerBehaviour: number;
  latency: LatencyModel;
  slowMs: number;
}

const cfg = JSON.parse(process.env.FARM_CONFIG ?? '{}') as FarmConfig;
const HEAD_MAX = 16 * 1024;

const Phase = Object.freeze({ HEAD: 0, SOCKS5_AUTH: 1, SOCKS5_REQ: 2, WAITING: 3, CONNECTING: 4, RELAY: 5, CLOSED: 6 } as const);
type PhaseValue = (typeof Phase)[keyof typeof Phase];

interface Conn {
  behaviour: Behaviour;
  phase: PhaseValue;
  buf: Buffer | null;
  client: Socket<Conn>;
  upstream: Socket<Conn> | null;
  timer: ReturnType<typeof setTimeout> | null;
  /** what to send upstream once connected (rewritten head + rest) */
  toUpstream: Buffer | null;
  /** what to send the client once upstream is connected (CONNECT / SOCKS success) */
  toClient: Buffer | null;
  /** pending bytes the kernel did not take yet */
  clientOut: Buffer | null;
  upOut: Buffer | null;
  targetHost: string;
  targetPort: number;
  isUpstream: boolean;
  peer: Conn | null;
}

const stats = { accepted: 0, relayed: 0, refusedTargets: 0 };

function isLoopbackTarget(host: string): boolean {
  return host === 'localhost' || /^127\.\d+\.\d+\.\d+$/.test(host) || host === '::1' || host === '[::1]';
}

function write(sock: Socket<Conn>, data: Buffer, conn: Conn, upstream: boolean): void {
  const pending = upstream ? conn.upOut : conn.clientOut;
  if (pending !== null) {
    const all = Buffer.concat([pending, data]);
    if (upstream) conn.upOut = all;
    else conn.clientOut = all;
    return;
  }
  const n = sock.write(data);
  if (n < data.length) {
    const rest = data.subarray(Math.max(0, n));
    if (upstream) conn.upOut = rest;
    else conn.clientOut = rest;
  }
}

function flush(sock: Socket<Conn>, conn: Conn, upstream: boolean): void {
  const pending = upstream ? conn.upOut : conn.clientOut;
  if (pending === null) return;
  const n = sock.write(pending);
  const rest = n < pending.length ? pending.subarray(Math.max(0, n)) : null;
  if (upstream) conn.upOut = rest;
  else conn.clientOut = rest;
}

function closeConn(c: Conn): void {
  if (c.phase === Phase.CLOSED) return;
  c.phase = Phase.CLOSED;
  if (c.timer !== null) {
    clearTimeout(c.timer);
    c.timer = null;
  }
  c.upstream?.end();
  // Bun does not buffer what the kernel did not take: hand the rest to end()
  if (c.clientOut !== null) c.client.end(c.clientOut);
  else c.client.end();
}

function httpError(c: Conn, status: string): void {
  c.client.write(`HTTP/1.1 ${status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
  closeConn(c);
}

function delayOf(c: Conn): number {
  if (c.behaviour === BEHAVIOURS.INSTANT) return 0;
  if (c.behaviour === BEHAVIOURS.SLOW) return cfg.slowMs;
  const g = idOf(c.client.localAddress);
  return g < 0 ? 0 : latencyOf(g, cfg.latency);
}

/** The request is read: wait the entry's delay, then connect to the target. */
function proceed(c: Conn): void {
  c.phase = Phase.WAITING;
  const d = delayOf(c);
  if (d <= 0) connectUpstream(c);
  else c.timer = setTimeout(connectUpstream, d, c);
}

function connectUpstream(c: Conn): void {
  c.timer = null;
  if (c.phase !== Phase.WAITING) return;
  c.phase = Phase.CONNECTING;
  const local = c.client.localAddress;
  const up: Conn = { ...c, isUpstream: true, peer: c };
  Bun.connect<Conn>({
    hostname: c.targetHost,
    port: c.targetPort,
    ...(local.startsWith('127.') ? { localAddress: local } : {}),
    data: up,
    socket: upstreamHandlers,
  } as unknown as Parameters<typeof Bun.connect<Conn>>[0]).catch(() => {
    if (c.phase !== Phase.CONNECTING) return;
    if (c.toClient !== null && c.toClient[0] !== 0x48) {
      // SOCKS: general failure
      c.client.write(c.toClient[0] === 0x05 ? Buffer.from([5, 1, 0, 1, 0, 0, 0, 0, 0, 0]) : Buffer.from([0, 0x5b, 0, 0, 0, 0, 0, 0]));
      closeConn(c);
    } else httpError(c, '502 Bad Gateway');
  });
}

const upstreamHandlers = {
  open(s: Socket<Conn>) {
    const c = s.data.peer!;
    if (c.phase !== Phase.CONNECTING) {
      s.end();
      return;
    }
    c.upstream = s;
    c.phase = Phase.RELAY;
    stats.relayed++;
    if (c.toClient !== null) write(c.client, c.toClient, c, false);
    if (c.toUpstream !== null && c.toUpstream.length > 0) write(s, c.toUpstream, c, true);
    c.toClient = null;
    c.toUpstream = null;
  },
  data(s: Socket<Conn>, d: Buffer) {
    const c = s.data.peer!;
    if (c.phase === Phase.RELAY) write(c.client, d, c, false);
  },
  drain(s: Socket<Conn>) {
    flush(s, s.data.peer!, true);
  },
  end(s: Socket<Conn>) {
    closeConn(s.data.peer!);
  },
  close(s: Socket<Conn>) {
    closeConn(s.data.peer!);
  },
  error(s: Socket<Conn>) {
    closeConn(s.data.peer!);
  },
  connectError() {
    // handled by the promise's catch
  },
};

/** Parses what the client sent so far; returns once more bytes are needed. */
function onClientBytes(c: Conn, d: Buffer): void {
  const buf = c.buf === null ? d : Buffer.concat([c.buf, d]);
  c.buf = buf;
  if (c.phase === Phase.HEAD) {
    const b0 = buf[0];
    if (b0 === 0x05) return socks5Greeting(c, buf);
    if (b0 === 0x04) return socks4(c, buf);
    return httpHead(c, buf);
  }
  if (c.phase === Phase.SOCKS5_AUTH) return socks5Auth(c, buf);
  if (c.phase === Phase.SOCKS5_REQ) return socks5Request(c, buf);
}

function httpHead(c: Conn, buf: Buffer): void {
  const end = buf.indexOf('\r\n\r\n');
  if (end === -1) {
    if (buf.length > HEAD_MAX) httpError(c, '431 Request Header Fields Too Large');
    return;
  }
  const head = buf.toString('latin1', 0, end);
  const rest = buf.subarray(end + 4);
  c.buf = null;
  const lines = head.split('\r\n');
  const [method, target, version] = (lines[0] ?? '').split(' ');
  if (method === undefined || target === undefined || version === undefined) return httpError(c, '400 Bad Request');
  if (method === 'CONNECT') {
    const colon = target.lastIndexOf(':');
    c.targetHost = target.slice(0, colon).replace(/^\[|\]$/g, '');
    c.targetPort = Number(target.slice(colon + 1));
    c.toClient = Buffer.from('HTTP/1.1 200 Connection established\r\n\r\n');
    c.toUpstream = rest;
  } else {
    const m = /^http:\/\/(\[[^\]]+\]|[^/:]+)(?::(\d+))?(\/.*)?$/.exec(target);
    if (m === null) return httpError(c, '400 Bad Request');
    c.targetHost = m[1]!.replace(/^\[|\]$/g, '');
    c.targetPort = m[2] === undefined ? 80 : Number(m[2]);
    let out = `${method} ${m[3] ?? '/'} ${version}\r\n`;
    for (let i = 1; i < lines.length; i++) {
      const l = lines[i]!;
      const lower = l.slice(0, 17).toLowerCase();
      if (lower.startsWith('proxy-connection:') || lower.startsWith('proxy-authorizat')) continue;
      out += l + '\r\n';
    }
    out += '\r\n';
    c.toUpstream = rest.length > 0 ? Buffer.concat([Buffer.from(out, 'latin1'), rest]) : Buffer.from(out, 'latin1');
  }
  if (!isLoopbackTarget(c.targetHost)) {
    stats.refusedTargets++;
    return httpError(c, '403 Forbidden');
  }
  proceed(c);
}

function socks4(c: Conn, buf: Buffer): void {
  if (buf.length < 9) return;
  const nul = buf.indexOf(0, 8);
  if (nul === -1) return;
  const port = buf.readUInt16BE(2);
  const ip = `${buf[4]}.${buf[5]}.${buf[6]}.${buf[7]}`;
  let host = ip;
  let restAt = nul + 1;
  if (buf[4] === 0 && buf[5] === 0 && buf[6] === 0 && buf[7] !== 0) {
    const nul2 = buf.indexOf(0, nul + 1);
    if (nul2 === -1) return;
    host = buf.toString('latin1', nul + 1, nul2);
    restAt = nul2 + 1;
  }
  c.buf = null;
  c.targetHost = host;
  c.targetPort = port;
  c.toClient = Buffer.from([0, 0x5a, 0, 0, 0, 0, 0, 0]);
  c.toUpstream = buf.subarray(restAt);
  if (buf[1] !== 1 || !isLoopbackTarget(host)) {
    c.client.write(Buffer.from([0, 0x5b, 0, 0, 0, 0, 0, 0]));
    return closeConn(c);
  }
  proceed(c);
}

function socks5Greeting(c: Conn, buf: Buffer): void {
  if (buf.length < 2 || buf.length < 2 + buf[1]!) return;
  const methods = buf.subarray(2, 2 + buf[1]!);
  const rest = buf.subarray(2 + buf[1]!);
  c.buf = rest.length > 0 ? rest : null;
  if (methods.includes(0)) {
    c.client.write(Buffer.from([5, 0]));
    c.phase = Phase.SOCKS5_REQ;
  } else if (methods.includes(2)) {
    c.client.write(Buffer.from([5, 2]));
    c.phase = Phase.SOCKS5_AUTH;
  } else {
    c.client.write(Buffer.from([5, 0xff]));
    return closeConn(c);
  }
  if (c.buf !== null) onClientBytes(c, Buffer.alloc(0));
}

function socks5Auth(c: Conn, buf: Buffer): void {
  if (buf.length < 2) return;
  const ul = buf[1]!;
  if (buf.length < 3 + ul) return;
  const pl = buf[2 + ul]!;
  if (buf.length < 3 + ul + pl) return;
  const rest = buf.subarray(3 + ul + pl);
  c.buf = rest.length > 0 ? rest : null;
  c.client.write(Buffer.from([1, 0]));
  c.phase = Phase.SOCKS5_REQ;
  if (c.buf !== null) onClientBytes(c, Buffer.alloc(0));
}

function socks5Request(c: Conn, buf: Buffer): void {
  if (buf.length < 5) return;
  const atyp = buf[3];
  let host: string;
  let at: number;
  if (atyp === 1) {
    if (buf.length < 10) return;
    host = `${buf[4]}.${buf[5]}.${buf[6]}.${buf[7]}`;
    at = 8;
  } else if (atyp === 3) {
    const len = buf[4]!;
    if (buf.length < 5 + len + 2) return;
    host = buf.toString('latin1', 5, 5 + len);
    at = 5 + len;
  } else if (atyp === 4) {
    if (buf.length < 22) return;
    const parts: string[] = [];
    for (let i = 0; i < 8; i++) parts.push(buf.readUInt16BE(4 + i * 2).toString(16));
    host = parts.join(':');
    at = 20;
  } else {
    c.client.write(Buffer.from([5, 8, 0, 1, 0, 0, 0, 0, 0, 0]));
    return closeConn(c);
  }
  c.targetHost = host;
  c.targetPort = buf.readUInt16BE(at);
  c.buf = null;
  c.toClient = Buffer.from([5, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
  c.toUpstream = buf.subarray(at + 2);
  if (buf[1] !== 1 || !isLoopbackTarget(host)) {
    c.client.write(Buffer.from([5, 2, 0, 1, 0, 0, 0, 0, 0, 0]));
    return closeConn(c);
  }
  proceed(c);
}

function proxyHandlers(behaviour: Behaviour) {
  return {
    open(s: Socket<Conn>) {
      stats.accepted++;
      s.data = {
        behaviour,
        phase: Phase.HEAD,
        buf: null,
        client: s,
        upstream: null,
        timer: null,
        toUpstream: null,
        toClient: null,
        clientOut: null,
        upOut: null,
        targetHost: '',
        targetPort: 0,
        isUpstream: false,
        peer: null,
      };
      s.data.peer = s.data;
    },
    data(s: Socket<Conn>, d: Buffer) {
      const c = s.data;
      if (c.phase === Phase.RELAY) {
        if (c.upstream !== null) write(c.upstream, d, c, true);
        return;
      }
      if (c.phase === Phase.WAITING || c.phase === Phase.CONNECTING) {
        // bytes before the tunnel is up: keep them for upstream
        c.toUpstream = c.toUpstream === null ? d : Buffer.concat([c.toUpstream, d]);
        return;
      }
      if (c.phase === Phase.CLOSED) return;
      onClientBytes(c, d);
    },
    drain(s: Socket<Conn>) {
      flush(s, s.data, false);
    },
    close(s: Socket<Conn>) {
      closeConn(s.data);
    },
    error(s: Socket<Conn>) {
      closeConn(s.data);
    },
  };
}

const blackholeHandlers = {
  open() {
    stats.accepted++;
  },
  data() {},
  close() {},
  error() {},
};

const listeners: TCPSocketListener<Conn>[] = [];
const ports: Record<string, number[]> = {};
for (const b of LISTENING) {
  ports[b] = [];
  for (let i = 0; i < cfg.portsPerBehaviour; i++) {
    const l = Bun.listen<Conn>({
      hostname: '0.0.0.0',
      port: 0,
      socket: (b === BEHAVIOURS.BLACKHOLE ? blackholeHandlers : proxyHandlers(b)) as never,
    });
    listeners.push(l);
    ports[b]!.push(l.port);
  }
}

let stopping = false;
function stop(): void {
  if (stopping) return;
  stopping = true;
  for (const l of listeners) l.stop(true);
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.on('data', (d: Buffer) => {
  if (d.toString().includes('stats')) process.stdout.write(JSON.stringify({ stats }) + '\n');
});
process.stdin.resume();
process.stdout.write(JSON.stringify({ ports, pid: process.pid }) + '\n');
