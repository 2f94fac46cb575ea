/**
 * The gateway (src/gateway, issue 24) against its upstream used directly,
 * three processes apart: a target (HTTP, `--role target`), the gateway
 * (`--role gateway`, its pool in memory: the upstreams below) and this
 * process as the client (raw sockets, one request per connection as the
 * gateway serves them); squid and microsocks from the interop harness
 * (test/interop/daemons.ts) on loopback.
 *
 *   latency     a 1 KB GET, sequential, each on a new connection: through
 *               the gateway + squid against through squid directly, in turns
 *               (absolute-form, and CONNECT with the GET in the tunnel);
 *               p50 / p99 of each and the difference
 *   tunnels     2 000 CONNECT tunnels from this one client through the gateway
 *               (upstreams: squid and microsocks in turn), all open at once,
 *               each with a 1 KB GET answered; the gateway's RSS before, with
 *               all open, and after they closed
 *   throughput  a 100 MB download (absolute-form), gateway + squid against
 *               squid directly, in turns, after one warm-up download each;
 *               MB/s, and the gateway process's CPU time per MB (/proc/<pid>/stat)
 *
 * The machine's load average is printed with the figures (the benchmark is
 * meant for a quiet machine).
 *
 * Run: bun bench/gateway.ts [--requests 1000] [--runs 5] [--mb 100] [--tunnels 2000]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { loadavg } from 'node:os';
import { FailureThrottle } from '../src/admin/throttle';
import { startGateway } from '../src/gateway/gateway';
import type { Upstream } from '../src/gateway/upstream-choice';
import { createLogger } from '../src/log';
import { basicAuth } from '../src/probe/codec/http-request';
import { stopAllDaemons } from '../test/interop/daemons';
import { startMicrosocks, startSquid } from '../test/interop/zoo';

function flag(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? dflt : (process.argv[i + 1] ?? dflt);
}

const KEY = 'bench-gateway-key-0123456789';
const POOL = 'benchgateway01';
const TUNNEL_POOL = 'benchtunnels01';
const role = flag('role', 'main');

// ---- the client ---------------------------------------------------------------------------

/** Starts `bun bench/gateway.ts --role <role>`; resolves with it and the port it printed. */
function child(args: string[]): Promise<{ proc: ChildProcess; port: number }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [import.meta.path, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let buf = '';
    proc.stdout?.on('data', (b: Buffer) => {
      buf += b.toString();
      const nl = buf.indexOf('\n');
      if (nl !== -1) resolve({ proc, port: (JSON.parse(buf.slice(0, nl)) as { port: number }).port });
    });
    proc.once('exit', (code) => reject(new Error(`${args.join(' ')} exited (${code})`)));
  });
}

/** CPU seconds (user + system) and RSS (MiB) of a process. */
function procStats(pid: number): { cpuS: number; rssMiB: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(f[11]) + Number(f[12]);
  const rss = Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;
  return { cpuS: ticks / 100, rssMiB: rss };
}

/** One request on a new connection to `port`; resolves with the bytes of the answer and the time (ms) from connect to its end. */
function exchange(port: number, head: string, tunnelHead: string | null = null): Promise<{ bytes: number; ms: number; ok: boolean }> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const s = connect({ host: '127.0.0.1', port });
    s.setNoDelay(true);
    let bytes = 0;
    let first = '';
    let tunnelUp = tunnelHead === null;
    let pendingHead = '';
    s.once('connect', () => s.write(tunnelHead ?? head));
    s.on('data', (b: Buffer) => {
      if (!tunnelUp) {
        pendingHead += b.toString('latin1');
        const end = pendingHead.indexOf('\r\n\r\n');
        if (end === -1) return;
        if (!pendingHead.startsWith('HTTP/1.1 200')) {
          s.destroy();
          return;
        }
        tunnelUp = true;
        s.write(head);
        const rest = pendingHead.slice(end + 4);
        if (rest === '') return;
        b = Buffer.from(rest, 'latin1');
      }
      if (first.length < 12) first += b.toString('latin1', 0, 12);
      bytes += b.length;
    });
    const done = () => resolve({ bytes, ms: performance.now() - t0, ok: first.startsWith('HTTP/1.1 200') });
    s.once('close', done);
    s.once('error', () => {});
  });
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number;
};
const median = (xs: number[]) => pct(xs, 50);
const f1 = (n: number) => n.toFixed(1);
const f2 = (n: number) => n.toFixed(2);
const signed = (n: number) => `${n >= 0 ? '+' : ''}${f2(n)}`;

/** Opens a CONNECT tunnel and keeps it; resolves once the upstream's 200 is in. */
function openTunnel(gwPort: number, user: string, host: string, port: number): Promise<Socket | null> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port: gwPort });
    let head = '';
    const fail = () => resolve(null);
    s.once('error', fail);
    s.once('connect', () => s.write(`CONNECT ${host}:${port} HTTP/1.1\r\nHost: ${host}:${port}\r\nProxy-Authorization: ${basicAuth(user, KEY)}\r\n\r\n`));
    const onData = (b: Buffer) => {
      head += b.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      s.off('data', onData);
      s.off('error', fail);
      s.on('error', () => {});
      resolve(head.startsWith('HTTP/1.1 200') ? s : (s.destroy(), null));
    };
    s.on('data', onData);
  });
}

/** A keep-alive GET in an open tunnel; resolves true once a whole 1 KB answer came. */
function getInTunnel(s: Socket, targetPort: number): Promise<boolean> {
  return new Promise((resolve) => {
    let got = '';
    const onData = (b: Buffer) => {
      got += b.toString('latin1');
      const end = got.indexOf('\r\n\r\n');
      if (end !== -1 && got.length - end - 4 >= 1024) {
        s.off('data', onData);
        resolve(got.startsWith('HTTP/1.1 200'));
      }
    };
    s.on('data', onData);
    s.once('close', () => resolve(false));
    s.write(`GET /kb HTTP/1.1\r\nHost: 127.0.0.1:${targetPort}\r\n\r\n`);
  });
}

async function main(): Promise<void> {
  const REQUESTS = Number(flag('requests', '1000'));
  const RUNS = Number(flag('runs', '5'));
  const MB = Number(flag('mb', '100'));
  const TUNNELS = Number(flag('tunnels', '2000'));
  const load0 = loadavg();
  const children: ChildProcess[] = [];
  try {
    const [target, squid, socks] = await Promise.all([
      child(['--role', 'target', '--mb', String(MB)]),
      startSquid('(bench)', { extra: ['max_filedescriptors 16384'] }),
      startMicrosocks('(bench)'),
    ]);
    children.push(target.proc);
    const up = (d: { host: string; port: number }, type: 'http' | 'socks5'): Upstream => ({ key: `${type}:${d.port}`, host: d.host, port: d.port, type, protocols: [type], country: null });
    const gateway = await child(['--role', 'gateway', '--pools', JSON.stringify({ [POOL]: [up(squid, 'http')], [TUNNEL_POOL]: [up(squid, 'http'), up(socks, 'socks5')] })]);
    children.push(gateway.proc);
    const gwPid = gateway.proc.pid as number;
    const T = target.port;
    const auth = `Proxy-Authorization: ${basicAuth(`pool-${POOL}`, KEY)}\r\n`;
    const absGet = (path: string, withAuth: boolean) => `GET http://127.0.0.1:${T}${path} HTTP/1.1\r\nHost: 127.0.0.1:${T}\r\n${withAuth ? auth : ''}Connection: close\r\n\r\n`;
    const originGet = (path: string) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${T}\r\nConnection: close\r\n\r\n`;
    const connectHead = (withAuth: boolean) => `CONNECT 127.0.0.1:${T} HTTP/1.1\r\nHost: 127.0.0.1:${T}\r\n${withAuth ? auth : ''}\r\n`;

    // warm-up: both paths, JIT and connections
    for (let i = 0; i < 50; i++) {
      await exchange(squid.port, absGet('/kb', false));
      await exchange(gateway.port, absGet('/kb', true));
    }
    const rssIdle = procStats(gwPid).rssMiB;

    // latency
    const lat = { direct: [] as number[], gateway: [] as number[], directT: [] as number[], gatewayT: [] as number[] };
    let failures = 0;
    for (let i = 0; i < REQUESTS; i++) {
      const pair: [keyof typeof lat, () => Promise<{ ms: number; ok: boolean }>][] = [
        ['direct', () => exchange(squid.port, absGet('/kb', false))],
        ['gateway', () => exchange(gateway.port, absGet('/kb', true))],
        ['directT', () => exchange(squid.port, originGet('/kb'), connectHead(false))],
        ['gatewayT', () => exchange(gateway.port, originGet('/kb'), connectHead(true))],
      ];
      if (i % 2 === 1) pair.reverse();
      for (const [k, run] of pair) {
        const r = await run();
        if (!r.ok) failures++;
        lat[k].push(r.ms);
      }
    }

    // 2 000 tunnels (before the downloads, whose garbage would hide the growth)
    const rssBefore = procStats(gwPid).rssMiB;
    const t0 = performance.now();
    const sockets: (Socket | null)[] = [];
    for (let i = 0; i < TUNNELS; i += 200) {
      const batch = await Promise.all(Array.from({ length: Math.min(200, TUNNELS - i) }, () => openTunnel(gateway.port, `pool-${TUNNEL_POOL}`, '127.0.0.1', T)));
      sockets.push(...batch);
    }
    const openMs = performance.now() - t0;
    const open = sockets.filter((s): s is Socket => s !== null);
    const served = (await Promise.all(open.map((s) => getInTunnel(s, T)))).filter(Boolean).length;
    const allMs = performance.now() - t0;
    const rssAll = procStats(gwPid).rssMiB;
    for (const s of open) s.destroy();
    await Bun.sleep(1_000);
    const rssClosed = procStats(gwPid).rssMiB;
    // throughput, after one download each to warm the path
    await exchange(squid.port, absGet('/big', false));
    await exchange(gateway.port, absGet('/big', true));
    const tp = { direct: [] as number[], gateway: [] as number[], cpuPerMb: [] as number[] };
    for (let r = 0; r < RUNS; r++) {
      const d = await exchange(squid.port, absGet('/big', false));
      const c0 = procStats(gwPid).cpuS;
      const g = await exchange(gateway.port, absGet('/big', true));
      const c1 = procStats(gwPid).cpuS;
      if (d.bytes < MB * 1e6 || g.bytes < MB * 1e6) failures++;
      tp.direct.push(d.bytes / 1e6 / (d.ms / 1000));
      tp.gateway.push(g.bytes / 1e6 / (g.ms / 1000));
      tp.cpuPerMb.push(((c1 - c0) * 1000) / (g.bytes / 1e6));
    }

    const load1 = loadavg();

    const addP50 = median(lat.gateway) - median(lat.direct);
    const addP99 = pct(lat.gateway, 99) - pct(lat.direct, 99);
    const addP50T = median(lat.gatewayT) - median(lat.directT);
    const addP99T = pct(lat.gatewayT, 99) - pct(lat.directT, 99);
    const ratio = median(tp.gateway) / median(tp.direct);
    const lines = [
      `load average ${load0.map(f2).join(' ')} at the start, ${load1.map(f2).join(' ')} at the end (${navigator.hardwareConcurrency} cores); failed requests: ${failures}`,
      '',
      '| measure | through squid directly | through the gateway + squid | difference | target |',
      '|---|---|---|---|---|',
      `| 1 KB GET, absolute-form, p50 (${REQUESTS} each) | ${f2(median(lat.direct))} ms | ${f2(median(lat.gateway))} ms | **${signed(addP50)} ms** | <= +1 ms |`,
      `| 1 KB GET, absolute-form, p99 | ${f2(pct(lat.direct, 99))} ms | ${f2(pct(lat.gateway, 99))} ms | **${signed(addP99)} ms** | <= +5 ms |`,
      `| 1 KB GET in a CONNECT tunnel, p50 | ${f2(median(lat.directT))} ms | ${f2(median(lat.gatewayT))} ms | ${signed(addP50T)} ms | |`,
      `| 1 KB GET in a CONNECT tunnel, p99 | ${f2(pct(lat.directT, 99))} ms | ${f2(pct(lat.gatewayT, 99))} ms | ${signed(addP99T)} ms | |`,
      `| ${MB} MB download, median of ${RUNS} | ${f1(median(tp.direct))} MB/s | ${f1(median(tp.gateway))} MB/s | **${f2(ratio)} x** | >= 0.8 x |`,
      `| gateway CPU per MB relayed | | ${f2(median(tp.cpuPerMb))} ms | | |`,
      '',
      `| ${TUNNELS} CONNECT tunnels from one client | |`,
      '|---|---|',
      `| opened (200 from the gateway) | ${open.length} / ${TUNNELS}, in ${f1(openMs / 1000)} s (batches of 200) |`,
      `| served (a 1 KB GET answered in each, all open at once) | **${served} / ${TUNNELS}**, all done ${f1(allMs / 1000)} s after the first |`,
      `| gateway RSS: after the warm-up / after the latency runs / ${TUNNELS} open / closed again | ${f1(rssIdle)} / ${f1(rssBefore)} / ${f1(rssAll)} / ${f1(rssClosed)} MiB |`,
      `| RSS growth with ${TUNNELS} open | **${rssAll >= rssBefore ? '+' : ''}${f1(rssAll - rssBefore)} MiB** (${f1(((rssAll - rssBefore) * 1024) / TUNNELS)} KiB per tunnel) |`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    for (const c of children) c.kill('SIGKILL');
    await stopAllDaemons();
  }
  process.exit(0);
}

// ---- child roles ---------------------------------------------------------------------------

if (role === 'target') {
  const big = new Uint8Array(Number(flag('mb', '100')) * 1_000_000).fill(97);
  const kb = new Uint8Array(1024).fill(98);
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 60,
    fetch(req) {
      const path = new URL(req.url).pathname;
      return new Response(path === '/big' ? big : kb);
    },
  });
  process.stdout.write(`${JSON.stringify({ port: server.port })}\n`);
} else if (role === 'gateway') {
  const pools = JSON.parse(flag('pools', '{}')) as Record<string, Upstream[]>;
  // one WorkingSet object per pool, as the real pool side returns it until it changes (the chooser caches per object)
  const sets = new Map(Object.entries(pools).map(([poolId, upstreams]) => [poolId, { poolId, upstreams }]));
  const gw = startGateway({
    host: '127.0.0.1',
    port: 0,
    pools: {
      authenticate: async (key) => (key === KEY ? { id: 'bench' } : null),
      workingSet: async (_account, poolId) => sets.get(poolId) ?? null,
      reportFailure: () => {},
    },
    throttle: new FailureThrottle(),
    log: createLogger('warn'),
    allowPrivateTargets: true,
    maxConnectionsPerKey: 100_000,
    maxConnections: 100_000,
    idleTimeoutMs: 120_000,
    connectTimeoutMs: 5_000,
  });
  process.stdout.write(`${JSON.stringify({ port: gw.port })}\n`);
} else {
  await main();
}
