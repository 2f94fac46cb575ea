/**
 * The gateway's listener (DECISIONS "Gateway", issue 24): one port speaking
 * HTTP proxy (absolute-form and CONNECT) and SOCKS5 with username/password,
 * each client connection driven by a ClientConnection (connection.ts) over
 * the pure codecs, its upstreams from the pool port (ports.ts).
 *
 * - Bun.listen with half-open sockets (a tunnel carries each direction's FIN
 *   on its own), no per-connection timer: one tick every TICK_MS on the
 *   clock (default monotonic) while any connection is open runs the
 *   deadlines (handshake, connect, idle, close grace); an idle gateway holds
 *   no timer.
 * - At most `maxConnections` client connections at once (the process's
 *   descriptors: each relayed connection holds two); one more is closed at
 *   once. Per key, `maxConnectionsPerKey` (admit.ts KeySlots, from admission on).
 * - Bun.listen's error (a port in use: EADDRINUSE) is thrown as it is; the
 *   start step (src/compose/gateway.ts) makes it the one start error every
 *   listener has (compose/bind.ts, `port_in_use`, naming GATEWAY_PORT).
 * - stop(): the listener closes, open connections are reset.
 */
import type { Socket, SocketHandler, TCPSocketListener } from 'bun';
import { monotonicClock, type Clock } from '../clock';
import type { Logger } from '../log';
import { dnsCache, type DnsAnswer } from '../probe/net/dns-cache';
import type { Random } from '../pools/schedule';
import { KeySlots } from './admit';
import { ClientConnection, type GatewayContext } from './connection';
import { NO_COUNTERS, type FailureGate, type GatewayCounters, type GatewayPools } from './ports';
import { UpstreamChooser } from './upstream-choice';

const TICK_MS = 250;
/** The chooser's old sessions and suspects are pruned this often. */
const PRUNE_MS = 60_000;

export interface GatewayOptions {
  host: string;
  /** 0: a free port. */
  port: number;
  pools: GatewayPools;
  throttle: FailureGate;
  counters?: GatewayCounters;
  log: Logger;
  allowPrivateTargets: boolean;
  maxConnectionsPerKey: number;
  /** Client connections open at once, all keys and unauthenticated ones together. */
  maxConnections: number;
  idleTimeoutMs: number;
  /** Each try of an upstream: connect and its handshake. */
  connectTimeoutMs: number;
  /** The client's request head or SOCKS5 dialog and the credential check (default 10 s). */
  handshakeTimeoutMs?: number;
  /** Target names (default: the probe's DNS cache). */
  resolve?: (host: string) => Promise<DnsAnswer>;
  /** The chooser's random source (-rotate-random). */
  random?: Random;
  /** Deadlines, idle times and sessions (default: the monotonic system clock). */
  clock?: Clock;
}

export interface RunningGateway {
  readonly host: string;
  readonly port: number;
  /** Client connections open now. */
  readonly open: number;
  /** Bytes the open connections hold for writing (the relay's bound, for tests and the benchmark). */
  buffered(): number;
  stop(): Promise<void>;
}

type ClientSocket = Socket<ClientConnection | undefined>;

export function startGateway(opts: GatewayOptions): RunningGateway {
  const connections = new Set<ClientConnection>();
  const clock = opts.clock ?? monotonicClock;
  let cancelTick: (() => void) | null = null;
  let lastPrune = clock.now();
  const chooser = new UpstreamChooser(opts.random === undefined ? {} : { random: opts.random });
  const ctx: GatewayContext = {
    pools: opts.pools,
    chooser,
    throttle: opts.throttle,
    counters: opts.counters ?? NO_COUNTERS,
    log: opts.log,
    allowPrivateTargets: opts.allowPrivateTargets,
    slots: new KeySlots(opts.maxConnectionsPerKey),
    handshakeTimeoutMs: opts.handshakeTimeoutMs ?? 10_000,
    connectTimeoutMs: opts.connectTimeoutMs,
    idleTimeoutMs: opts.idleTimeoutMs,
    clock,
    resolve: opts.resolve ?? ((h) => dnsCache.resolve(h)),
    closed(conn) {
      connections.delete(conn);
      if (connections.size === 0 && cancelTick !== null) {
        cancelTick();
        cancelTick = null;
      }
    },
  };
  const tick = () => {
    cancelTick = null;
    const now = clock.now();
    for (const c of connections) c.tick(now);
    if (now - lastPrune >= PRUNE_MS) {
      lastPrune = now;
      chooser.prune(now);
    }
    if (connections.size > 0) cancelTick ??= clock.after(TICK_MS, tick);
  };

  const handlers: SocketHandler<ClientConnection | undefined> = {
    open(s: ClientSocket) {
      if (connections.size >= opts.maxConnections) {
        s.terminate();
        return;
      }
      s.setNoDelay(true);
      const conn = new ClientConnection(ctx, s, s.remoteAddress, clock.now());
      s.data = conn;
      connections.add(conn);
      cancelTick ??= clock.after(TICK_MS, tick);
    },
    data(s: ClientSocket, chunk: Buffer) {
      s.data?.received(chunk, clock.now());
    },
    drain(s: ClientSocket) {
      s.data?.drained(clock.now());
    },
    end(s: ClientSocket) {
      s.data?.ended();
    },
    close(s: ClientSocket) {
      s.data?.closedByClient();
    },
    error(s: ClientSocket, err: Error) {
      opts.log.error('gateway: a connection handler failed', { err });
      s.data?.close(false);
    },
  };

  const listener: TCPSocketListener<ClientConnection | undefined> = Bun.listen<ClientConnection | undefined>({
    hostname: opts.host,
    port: opts.port,
    socket: handlers,
    allowHalfOpen: true,
  });

  let stopped: Promise<void> | null = null;
  return {
    host: opts.host,
    port: listener.port,
    get open() {
      return connections.size;
    },
    buffered() {
      let n = 0;
      for (const c of connections) n += c.buffered;
      return n;
    },
    stop() {
      stopped ??= (async () => {
        listener.stop(true);
        for (const c of [...connections]) c.close(false);
        cancelTick?.();
        cancelTick = null;
      })();
      return stopped;
    },
  };
}
