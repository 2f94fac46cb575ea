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
 * (the first byte decides; reading them is handshake.ts, pure). After the
 * request is read the proxy waits its delay, then connects to the target from
 * its own address (so the judge sees the proxy's address as the origin) and
 * relays both ways. Targets must be loopback: anything else gets 403 / a
 * SOCKS refusal. Black holes accept and never answer. This file is the
 * plumbing: listeners, the connection's phases, delay, upstream connect,
 * relay with back-pressure.
 *
 * Connection phases: HEAD -> (SOCKS5_AUTH) -> (SOCKS5_REQ) -> WAITING (the
 * delay) -> CONNECTING (to the target) -> RELAY -> CLOSED; any -> CLOSED.
 *
 * Config: env FARM_CONFIG = JSON {portsPerBehaviour, latency: LatencyModel, slowMs}.
 */
import type { Socket, TCPSocketListener } from 'bun';
import { BEHAVIOURS, LISTENING, idOf, latencyOf, type Behaviour, type LatencyModel } from './entries';
import { connectFailedReply, readClient, Stage, type StageValue } from './handshake';

interface FarmConfig {
  portsPerBehaviour: number;
  latency: LatencyModel;
  slowMs: number;
}

const cfg = JSON.parse(process.env.FARM_CONFIG ?? '{}') as FarmConfig;

/** The handshake stages (handshake.ts), then the connection's own. */
const Phase = Object.freeze({ ...Stage, WAITING: 3, CONNECTING: 4, RELAY: 5, CLOSED: 6 } as const);
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
    c.client.write(connectFailedReply(c.toClient));
    closeConn(c);
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

/** Reads what the client sent so far (handshake.ts) and acts on it, until more bytes are needed. */
function onClientBytes(c: Conn, d: Buffer): void {
  let buf = c.buf === null ? d : Buffer.concat([c.buf, d]);
  for (;;) {
    const step = readClient(c.phase as StageValue, buf);
    switch (step.kind) {
      case 'more':
        c.buf = buf;
        return;
      case 'refuse':
        if (step.refusedTarget) stats.refusedTargets++;
        c.buf = null;
        c.client.write(step.reply);
        closeConn(c);
        return;
      case 'reply':
        c.client.write(step.reply);
        c.phase = step.next;
        c.buf = step.rest;
        if (step.rest === null) return;
        buf = step.rest; // bytes the client sent ahead: the next stage's
        continue;
      case 'tunnel':
        c.buf = null;
        c.targetHost = step.host;
        c.targetPort = step.port;
        c.toClient = step.toClient;
        c.toUpstream = step.toUpstream;
        proceed(c);
        return;
    }
  }
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
