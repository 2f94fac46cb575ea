/**
 * Test doubles around the gateway (src/gateway): the pool port in memory,
 * a target that records who reached it, and the gateway started over them.
 *
 * - MemoryGatewayPools: keys -> accounts, pools -> working sets, and on
 *   reportFailure what a pool does: it re-checks the upstream at once (here a
 *   TCP connect) and drops it from the working set (a new WorkingSet object)
 *   when that fails.
 * - startTarget: an HTTP server on 127.0.0.1:0 that answers every request
 *   with JSON of what it saw (method, path, Via, X-Forwarded-For, the peer's
 *   address, the body's length) and keeps the list; `/bytes/<n>` answers n
 *   bytes (a download), `/slow/<ms>` answers after that long.
 * - upstreamOf: an Upstream of a running daemon.
 * - curl: curl as a user runs it, the answer's heads (a CONNECT answer's
 *   first) and body.
 */
import { connect } from 'node:net';
import type { Server } from 'bun';
import { FailureThrottle } from '../../src/admin/throttle';
import { createLogger } from '../../src/log';
import { startGateway, type GatewayOptions, type RunningGateway } from '../../src/gateway/gateway';
import type { GatewayAccount, GatewayPools } from '../../src/gateway/ports';
import type { Upstream, WorkingSet } from '../../src/gateway/upstream-choice';
import type { ProxyType } from '../../src/proxy/types';

export class MemoryGatewayPools implements GatewayPools {
  readonly #keys = new Map<string, GatewayAccount>();
  readonly #pools = new Map<string, { accountId: string; working: WorkingSet }>();
  /** Every report, in order. */
  readonly reports: { poolId: string; upstream: string }[] = [];
  /** Re-checks finished (a test waits for the pool to have dropped an upstream). */
  rechecks = 0;
  authentications = 0;

  addKey(key: string, accountId: string): void {
    this.#keys.set(key, { id: accountId });
  }

  setPool(poolId: string, accountId: string, upstreams: Upstream[]): void {
    this.#pools.set(poolId, { accountId, working: { poolId, upstreams } });
  }

  working(poolId: string): readonly Upstream[] {
    return this.#pools.get(poolId)?.working.upstreams ?? [];
  }

  async authenticate(key: string): Promise<GatewayAccount | null> {
    this.authentications++;
    return this.#keys.get(key) ?? null;
  }

  async workingSet(accountId: string, poolId: string): Promise<WorkingSet | null> {
    const p = this.#pools.get(poolId);
    return p === undefined || p.accountId !== accountId ? null : p.working;
  }

  reportFailure(poolId: string, upstream: Upstream): void {
    this.reports.push({ poolId, upstream: `${upstream.host}:${upstream.port}` });
    void tcpReachable(upstream.host, upstream.port).then((ok) => {
      const p = this.#pools.get(poolId);
      if (!ok && p !== undefined) {
        p.working = { poolId, upstreams: p.working.upstreams.filter((u) => u.key !== upstream.key) };
      }
      this.rechecks++;
    });
  }
}

function tcpReachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host, port });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(2_000, () => done(false));
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}

export function upstreamOf(d: { host: string; port: number }, type: ProxyType, country: string | null = null, creds?: { user: string; password: string }): Upstream {
  return {
    key: `${type}://${d.host}:${d.port}`,
    host: d.host,
    port: d.port,
    type,
    protocols: [type],
    country,
    ...(creds === undefined ? {} : { username: creds.user, password: creds.password }),
  };
}

export interface SeenRequest {
  method: string;
  path: string;
  via: string | null;
  forwardedFor: string | null;
  peer: string;
  bodyLength: number;
  authorization: string | null;
  proxyAuthorization: string | null;
}

export interface Target {
  port: number;
  url: string;
  seen: SeenRequest[];
  /** Bytes the `/stream/<n>` answers produced so far (they are produced as the reader takes them). */
  streamed(): number;
  stop(): Promise<void>;
}

const STREAM_CHUNK = new Uint8Array(64 * 1024).fill(98);

export function startTarget(host = '127.0.0.1'): Target {
  const seen: SeenRequest[] = [];
  let streamed = 0;
  const server: Server<undefined> = Bun.serve({
    hostname: host,
    port: 0,
    idleTimeout: 30,
    async fetch(req, srv) {
      const url = new URL(req.url);
      const body = req.body === null ? 0 : (await req.arrayBuffer()).byteLength;
      const peer = srv.requestIP(req)?.address ?? '';
      const s: SeenRequest = {
        method: req.method,
        path: url.pathname + url.search,
        via: req.headers.get('via'),
        forwardedFor: req.headers.get('x-forwarded-for'),
        peer,
        bodyLength: body,
        authorization: req.headers.get('authorization'),
        proxyAuthorization: req.headers.get('proxy-authorization'),
      };
      seen.push(s);
      const bytes = /^\/bytes\/(\d+)$/.exec(url.pathname);
      if (bytes !== null) return new Response(new Uint8Array(Number(bytes[1])).fill(97));
      const stream = /^\/stream\/(\d+)$/.exec(url.pathname);
      if (stream !== null) {
        let left = Number(stream[1]);
        const body = new ReadableStream<Uint8Array>(
          {
            pull(c) {
              if (left <= 0) return c.close();
              const n = Math.min(left, STREAM_CHUNK.length);
              left -= n;
              streamed += n;
              c.enqueue(n === STREAM_CHUNK.length ? STREAM_CHUNK : STREAM_CHUNK.subarray(0, n));
            },
          },
          { highWaterMark: 1 },
        );
        return new Response(body, { headers: { 'content-length': stream[1] as string } });
      }
      const slow = /^\/slow\/(\d+)$/.exec(url.pathname);
      if (slow !== null) await Bun.sleep(Number(slow[1]));
      return Response.json(s);
    },
  });
  const port = server.port as number;
  return { port, url: `http://${host}:${port}`, seen, streamed: () => streamed, stop: () => server.stop(true) };
}

export const GATEWAY_KEY = 'gw-test-key-0123456789abcdef';
export const OTHER_KEY = 'gw-other-key-0123456789abcdef';

/** A gateway on 127.0.0.1:0 over `pools` with the test defaults; `over` changes any option. */
export function startTestGateway(pools: GatewayPools, over: Partial<GatewayOptions> = {}): RunningGateway {
  return startGateway({
    host: '127.0.0.1',
    port: 0,
    pools,
    throttle: new FailureThrottle(),
    log: createLogger('silent'),
    allowPrivateTargets: true,
    maxConnectionsPerKey: 256,
    maxConnections: 10_000,
    idleTimeoutMs: 30_000,
    connectTimeoutMs: 3_000,
    ...over,
  });
}

export interface CurlResult {
  exit: number;
  /** The last head's status (0: none). */
  status: number;
  /** The last head's headers, lower-case names. */
  headers: Map<string, string>;
  /** Every head curl printed, in order (a CONNECT answer's, a 100 Continue, the response's). */
  blocks: string[];
  body: string;
  stderr: string;
}

/** Runs curl with `args` (-sS, a 15 s cap, heads on stdout). */
export async function curl(args: string[]): Promise<CurlResult> {
  const p = Bun.spawn(['curl', '-sS', '--max-time', '15', '-D', '-', ...args], { stdout: 'pipe', stderr: 'pipe' });
  const [out, stderr, exit] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  const blocks: string[] = [];
  let rest = out;
  while (rest.startsWith('HTTP/')) {
    const end = rest.indexOf('\r\n\r\n');
    if (end === -1) break;
    blocks.push(rest.slice(0, end));
    rest = rest.slice(end + 4);
  }
  const last = blocks[blocks.length - 1] ?? '';
  const headers = new Map<string, string>();
  for (const line of last.split('\r\n').slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) headers.set(line.slice(0, i).toLowerCase(), line.slice(i + 1).trim());
  }
  const status = Number(/^HTTP\/\S+ (\d{3})/.exec(last)?.[1] ?? 0);
  return { exit, status, headers, blocks, body: rest, stderr };
}
