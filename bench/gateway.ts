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
 * Two ways to run the gateway (issue 35's targets hold "with the pool's
 * re-checks running in the same process"):
 *
 *   --bare      (the default) the gateway alone: `--role gateway`,
 *               startGateway over a pool in memory
 *   --service   the real service as users start it (bench/e2e/service.ts:
 *               `bun src/main.ts`, ALLOW_PRIVATE_TARGETS=true, GATEWAY_PORT=0,
 *               read from GET /health): the gateway's pools made over the API
 *               (squid; squid and microsocks for the tunnels) and found
 *               working by their owner; beside them pool R of
 *               `--recheck-proxies` (20 000) farm proxies (bench/farm, mix
 *               A, where 90 % fail and back off; `--recheck-mix working`:
 *               all working, the schedule's full rate) at interval_s
 *               `--interval-s` (60), whose first pass is awaited; the
 *               latency phase then runs at least `--latency-s` (the
 *               interval) so every wave of re-checks falls in it; pool R's
 *               checks/s from its round.completed events (GET /ws?pool=,
 *               one per POOL_FLUSH_S), the latency of the samples taken
 *               while it checked >= `--busy-rate` (100) checks/s beside
 *               all of them, and the service's CPU (its process tree: the
 *               re-checks included) are printed
 *
 * Run: bun bench/gateway.ts [--bare | --service [--recheck-proxies 20000]
 *      [--recheck-mix A|working] [--interval-s 60] [--latency-s 60] [--busy-rate 100]]
 *      [--requests 1000] [--runs 5] [--mb 100] [--tunnels 2000]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { FailureThrottle } from '../src/admin/throttle';
import { startGateway } from '../src/gateway/gateway';
import type { Upstream } from '../src/gateway/upstream-choice';
import { createLogger } from '../src/log';
import { basicAuth } from '../src/probe/codec/http-request';
import { stopAllDaemons, type RunningDaemon } from '../test/interop/daemons';
import { startMicrosocks, startSquid } from '../test/interop/zoo';
import { stopAll, treeCpuMs } from './e2e/proc';
import { MIX_A, SLOW_MS, TIMEOUT_MS } from './e2e/scenarios';
import { BENCH_KEY, startService } from './e2e/service';
import { BEHAVIOURS, buildEntries, listText } from './farm/entries';
import { startFarm } from './farm/launcher';

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
function openTunnel(gwPort: number, user: string, key: string, host: string, port: number): Promise<Socket | null> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port: gwPort });
    let head = '';
    const fail = () => resolve(null);
    s.once('error', fail);
    s.once('connect', () => s.write(`CONNECT ${host}:${port} HTTP/1.1\r\nHost: ${host}:${port}\r\nProxy-Authorization: ${basicAuth(user, key)}\r\n\r\n`));
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

/** The gateway under test: its port, the process to watch, the usernames and key to use. */
interface Rig {
  label: string;
  port: number;
  /** the process whose CPU and RSS are read: the bare gateway, or the whole service */
  pid: number;
  key: string;
  poolUser: string;
  tunnelUser: string;
  /** CPU (ms) of what runs the gateway: the bare gateway's process, or the service's process tree */
  cpuMs(): number;
  /** pool R's check rate (checks/s) in the flush period holding time `at` (performance.now()): the checked count of the first round.completed at or after it, within one POOL_FLUSH_S; 0 when none; absent when no re-checks run */
  recheckRateAt?(at: number): number;
  /** pool R's round.completed events so far */
  recheckEvents?(): { at: number; checked: number }[];
  /** how long the latency phase runs at least (ms): a whole interval of pool R, so every wave of its re-checks falls in it */
  latencyMinMs: number;
  /** lines for the report (before the tables) */
  notes: string[];
  stop(): Promise<void>;
}

const up = (d: { host: string; port: number }, type: 'http' | 'socks5'): Upstream => ({ key: `${type}:${d.port}`, host: d.host, port: d.port, type, protocols: [type], country: null });

async function bareRig(squid: RunningDaemon, socks: RunningDaemon): Promise<Rig> {
  const gateway = await child(['--role', 'gateway', '--pools', JSON.stringify({ [POOL]: [up(squid, 'http')], [TUNNEL_POOL]: [up(squid, 'http'), up(socks, 'socks5')] })]);
  const pid = gateway.proc.pid as number;
  return {
    label: 'the gateway alone (--bare: startGateway, its pool in memory)',
    port: gateway.port,
    pid,
    key: KEY,
    poolUser: `pool-${POOL}`,
    tunnelUser: `pool-${TUNNEL_POOL}`,
    cpuMs: () => procStats(pid).cpuS * 1000,
    latencyMinMs: 0,
    notes: [],
    stop: async () => void gateway.proc.kill('SIGKILL'),
  };
}

interface PoolCounts {
  counts: { total: number; working: number; failed: number; unchecked: number };
}

async function serviceRig(squid: RunningDaemon, socks: RunningDaemon): Promise<Rig> {
  const N = Number(flag('recheck-proxies', '20000'));
  const INTERVAL_S = Number(flag('interval-s', '60'));
  const LATENCY = { seed: 20261122, medianMs: 150, p90Ms: 800 };
  const t0 = performance.now();
  const farm = N > 0 ? await startFarm({ processes: 2, portsPerBehaviour: 8, refusedPorts: 16, latency: LATENCY, slowMs: SLOW_MS }) : null;
  const dataDir = mkdtempSync(join(tmpdir(), 'pc-gateway-bench-'));
  const svc = await startService({
    dataDir,
    slotsPerEndpoint: null,
    judgeUrl: '',
    judgeKey: '',
    env: {
      GATEWAY_PORT: '0',
      // one key opens the 2 000 tunnels: the per-key cap (256) and the idle close lifted as the bare gateway has them
      GATEWAY_MAX_CONNECTIONS: '100000',
      GATEWAY_MAX_CLIENTS: '100000',
      GATEWAY_IDLE_TIMEOUT_S: '120',
      ...(INTERVAL_S < 60 ? { POOL_MIN_INTERVAL_S: String(INTERVAL_S) } : {}),
    },
  });
  const stopAllOf = async () => {
    await svc.stop();
    await farm?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const headers = { 'X-API-Key': BENCH_KEY, 'Content-Type': 'application/json' };
    const health = (await (await fetch(`${svc.url}/health`)).json()) as { gateway?: { port: number } };
    const gwPort = health.gateway?.port;
    if (gwPort === undefined) throw new Error('GET /health has no gateway');
    const makePool = async (body: Record<string, unknown>): Promise<string> => {
      const r = await fetch(`${svc.url}/pools`, { method: 'POST', headers, body: JSON.stringify(body) });
      const j = (await r.json()) as { id?: string };
      if (r.status !== 201 || j.id === undefined) throw new Error(`POST /pools: ${r.status} ${JSON.stringify(j).slice(0, 300)}`);
      return j.id;
    };
    const getPool = async (id: string): Promise<PoolCounts> => (await (await fetch(`${svc.url}/pools/${id}`, { headers })).json()) as PoolCounts;
    const waitFor = async (what: string, id: string, ok: (p: PoolCounts) => boolean, ms: number): Promise<PoolCounts> => {
      const until = performance.now() + ms;
      for (;;) {
        const p = await getPool(id);
        if (ok(p)) return p;
        if (performance.now() > until) throw new Error(`${what}: not within ${ms / 1000} s: ${JSON.stringify(p.counts)}`);
        await Bun.sleep(1000);
      }
    };
    const gPool = await makePool({ name: 'gateway squid', type: 'auto', proxies: [`127.0.0.1:${squid.port}`] });
    const tPool = await makePool({ name: 'gateway tunnels', type: 'auto', proxies: [`127.0.0.1:${squid.port}`, `127.0.0.1:${socks.port}`] });
    await waitFor('the gateway pools found working', gPool, (p) => p.counts.working === 1, 60_000);
    await waitFor('the tunnels pool found working', tPool, (p) => p.counts.working === 2, 60_000);
    const notes: string[] = [];
    const rounds: { at: number; checked: number }[] = [];
    let ws: WebSocket | null = null;
    if (farm !== null) {
      // mix A: 90 % fail and back off (the owner re-checks them less often); `working`: every proxy works, the schedule's full rate
      const mixName = flag('recheck-mix', 'A');
      const mix = mixName === 'working' ? { [BEHAVIOURS.WORKING]: 1 } : MIX_A;
      const entries = buildEntries({ firstId: 0, size: N, mix, seed: 103, latency: LATENCY, slowMs: SLOW_MS }, farm.ports);
      const p0 = performance.now();
      const rPool = await makePool({ name: 'gateway bench re-checks', text: listText(entries), interval_s: INTERVAL_S, timeout: TIMEOUT_MS, region: 'us1' });
      ws = new WebSocket(`${svc.url.replace('http', 'ws')}/ws?pool=${rPool}&apiKey=${BENCH_KEY}`);
      let firstPassEnd: (() => void) | null = null;
      const firstPass = new Promise<void>((resolve) => (firstPassEnd = resolve));
      ws.onclose = (e) => log(`pool R's event feed closed (${e.code} ${e.reason})`);
      ws.onmessage = (m) => {
        const e = JSON.parse(String(m.data)) as { event: string; round?: { checked: number }; counts?: PoolCounts['counts'] };
        if (e.event !== 'round.completed' || !e.round) return;
        rounds.push({ at: performance.now(), checked: e.round.checked });
        if (e.counts?.unchecked === 0) firstPassEnd?.();
      };
      let giveUp: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([firstPass, new Promise<void>((resolve) => (giveUp = setTimeout(resolve, 900_000)))]);
      clearTimeout(giveUp);
      const r = await getPool(rPool);
      if (r.counts.unchecked !== 0) throw new Error(`pool R's first pass not done in 15 min: ${JSON.stringify(r.counts)}`);
      notes.push(
        `pool R: ${N} farm proxies (mix ${mixName}) at interval_s ${INTERVAL_S} (nominal need ${(N / INTERVAL_S).toFixed(0)} checks/s); its first pass took ${((performance.now() - p0) / 1000).toFixed(0)} s (${r.counts.working} working, ${r.counts.failed} failed); the phases below start after it, with its re-checks running`,
      );
      // its first re-checks fall due from 0.9 x interval_s after the POST (the schedule's jitter shortens a delay by up to 10 %)
      const opens = p0 + 0.9 * INTERVAL_S * 1000;
      if (performance.now() < opens) {
        log(`waiting ${((opens - performance.now()) / 1000).toFixed(0)} s for pool R's first re-checks`);
        await Bun.sleep(opens - performance.now());
      }
    }
    log(`service ready (pid ${svc.pid}), gateway on ${gwPort}, set up in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    return {
      label: `the service (--service: bun src/main.ts, its pools over the API${farm !== null ? `, pool R's re-checks running` : ', no re-checks'})`,
      port: gwPort,
      pid: svc.pid,
      key: BENCH_KEY,
      poolUser: `pool-${gPool}`,
      tunnelUser: `pool-${tPool}`,
      cpuMs: () => treeCpuMs(svc.pid),
      recheckRateAt: farm === null ? undefined : (at) => (rounds.find((r) => r.at >= at && r.at - at <= FLUSH_MS)?.checked ?? 0) / (FLUSH_MS / 1000),
      recheckEvents: () => rounds,
      latencyMinMs: farm === null ? 0 : Number(flag('latency-s', String(INTERVAL_S))) * 1000,
      notes,
      stop: async () => {
        ws?.close();
        await stopAllOf();
      },
    };
  } catch (err) {
    await stopAllOf();
    throw err;
  }
}

const started = performance.now();
/** the service's POOL_FLUSH_S (default 10): a pool's round.completed comes at most once per this period */
const FLUSH_MS = 10_000;
const log = (l: string) => process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s] ${l}\n`);

async function main(): Promise<void> {
  const REQUESTS = Number(flag('requests', '1000'));
  const RUNS = Number(flag('runs', '5'));
  const MB = Number(flag('mb', '100'));
  const TUNNELS = Number(flag('tunnels', '2000'));
  const SERVICE = process.argv.includes('--service');
  const load0 = loadavg();
  const children: ChildProcess[] = [];
  let rig: Rig | null = null;
  try {
    const [target, squid, socks] = await Promise.all([
      child(['--role', 'target', '--mb', String(MB)]),
      startSquid('(bench)', { extra: ['max_filedescriptors 16384'] }),
      startMicrosocks('(bench)'),
    ]);
    children.push(target.proc);
    rig = SERVICE ? await serviceRig(squid, socks) : await bareRig(squid, socks);
    const gwPid = rig.pid;
    const gwPort = rig.port;
    const T = target.port;
    const auth = `Proxy-Authorization: ${basicAuth(rig.poolUser, rig.key)}\r\n`;
    const absGet = (path: string, withAuth: boolean) => `GET http://127.0.0.1:${T}${path} HTTP/1.1\r\nHost: 127.0.0.1:${T}\r\n${withAuth ? auth : ''}Connection: close\r\n\r\n`;
    const originGet = (path: string) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${T}\r\nConnection: close\r\n\r\n`;
    const connectHead = (withAuth: boolean) => `CONNECT 127.0.0.1:${T} HTTP/1.1\r\nHost: 127.0.0.1:${T}\r\n${withAuth ? auth : ''}\r\n`;

    // warm-up: both paths, JIT and connections
    for (let i = 0; i < 50; i++) {
      await exchange(squid.port, absGet('/kb', false));
      await exchange(gwPort, absGet('/kb', true));
    }
    const rssIdle = procStats(gwPid).rssMiB;
    const loadLat0 = loadavg();

    // latency
    const lat = { direct: [] as number[], gateway: [] as number[], directT: [] as number[], gatewayT: [] as number[] };
    const when = { direct: [] as number[], gateway: [] as number[], directT: [] as number[], gatewayT: [] as number[] };
    let failures = 0;
    const l0 = performance.now();
    const lc0 = rig.cpuMs();
    for (let i = 0; i < REQUESTS || performance.now() - l0 < rig.latencyMinMs; i++) {
      const pair: [keyof typeof lat, () => Promise<{ ms: number; ok: boolean }>][] = [
        ['direct', () => exchange(squid.port, absGet('/kb', false))],
        ['gateway', () => exchange(gwPort, absGet('/kb', true))],
        ['directT', () => exchange(squid.port, originGet('/kb'), connectHead(false))],
        ['gatewayT', () => exchange(gwPort, originGet('/kb'), connectHead(true))],
      ];
      if (i % 2 === 1) pair.reverse();
      for (const [k, run] of pair) {
        const at = performance.now();
        const r = await run();
        if (!r.ok) failures++;
        lat[k].push(r.ms);
        when[k].push(at);
      }
    }
    const latMs = performance.now() - l0;
    const latCpuMs = rig.cpuMs() - lc0;
    const loadLat1 = loadavg();

    // 2 000 tunnels (before the downloads, whose garbage would hide the growth)
    const rssBefore = procStats(gwPid).rssMiB;
    const t0 = performance.now();
    const sockets: (Socket | null)[] = [];
    for (let i = 0; i < TUNNELS; i += 200) {
      const batch = await Promise.all(Array.from({ length: Math.min(200, TUNNELS - i) }, () => openTunnel(gwPort, rig!.tunnelUser, rig!.key, '127.0.0.1', T)));
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
    await exchange(gwPort, absGet('/big', true));
    const tp = { direct: [] as number[], gateway: [] as number[], cpuPerMb: [] as number[] };
    for (let r = 0; r < RUNS; r++) {
      const d = await exchange(squid.port, absGet('/big', false));
      const c0 = rig.cpuMs();
      const g = await exchange(gwPort, absGet('/big', true));
      const c1 = rig.cpuMs();
      if (d.bytes < MB * 1e6 || g.bytes < MB * 1e6) failures++;
      tp.direct.push(d.bytes / 1e6 / (d.ms / 1000));
      tp.gateway.push(g.bytes / 1e6 / (g.ms / 1000));
      tp.cpuPerMb.push((c1 - c0) / (g.bytes / 1e6));
    }
    // with re-checks: the samples taken in flush periods where pool R checked at least `--busy-rate` checks/s (its round.completed events come within POOL_FLUSH_S)
    const busyRows: string[] = [];
    let recheckTail = '';
    if (rig.recheckRateAt !== undefined) {
      await Bun.sleep(Math.max(0, l0 + latMs + FLUSH_MS + 1000 - performance.now()));
      const BUSY = Number(flag('busy-rate', '100'));
      const busy = (k: keyof typeof lat) => lat[k].filter((_, j) => rig!.recheckRateAt!(when[k][j]!) >= BUSY);
      const events = rig.recheckEvents!().filter((e) => e.at >= l0 && e.at <= l0 + latMs + FLUSH_MS);
      const checks = events.reduce((n, e) => n + e.checked, 0);
      const busyPeriods = events.filter((e) => e.checked / (FLUSH_MS / 1000) >= BUSY);
      recheckTail = `; pool R's round.completed events in it (and one flush after): ${events.length}, ${checks} checks = ${((checks * 1000) / (latMs + FLUSH_MS)).toFixed(0)} checks/s on average, ${busyPeriods.length} flush periods at >= ${BUSY} checks/s (${busyPeriods.map((e) => (e.checked / (FLUSH_MS / 1000)).toFixed(0)).join(', ')} checks/s)`;
      // where the slow ones fall: the gateway's samples over the direct p99 + 5 ms, against the flushes (a round.completed is published as a flush ends)
      const slowAt = [...when.gateway.filter((_, j) => lat.gateway[j]! > pct(lat.direct, 99) + 5), ...when.gatewayT.filter((_, j) => lat.gatewayT[j]! > pct(lat.directT, 99) + 5)];
      const nearFlush = (at: number) => events.some((e) => at >= e.at - 2000 && at <= e.at + 100);
      const nearShare = Math.min(1, (events.length * 2100) / latMs);
      recheckTail += `; the gateway's samples over the direct p99 + 5 ms: ${slowAt.length}, of which ${slowAt.filter(nearFlush).length} in the 2 s before a round.completed (the flush's end), a span holding ${f1(nearShare * 100)} % of the phase`;
      const [bd, bg, bdt, bgt] = [busy('direct'), busy('gateway'), busy('directT'), busy('gatewayT')];
      if (bg.length > 0 && bd.length > 0)
        busyRows.push(
          `| the same, only the samples taken while pool R checked >= ${BUSY}/s: absolute-form p50 (${bd.length} / ${bg.length}) | ${f2(median(bd))} ms | ${f2(median(bg))} ms | **${signed(median(bg) - median(bd))} ms** | <= +1 ms |`,
          `| ... absolute-form p99 | ${f2(pct(bd, 99))} ms | ${f2(pct(bg, 99))} ms | **${signed(pct(bg, 99) - pct(bd, 99))} ms** | <= +5 ms |`,
          `| ... CONNECT tunnel p50 / p99 | ${f2(median(bdt))} / ${f2(pct(bdt, 99))} ms | ${f2(median(bgt))} / ${f2(pct(bgt, 99))} ms | ${signed(median(bgt) - median(bdt))} / ${signed(pct(bgt, 99) - pct(bdt, 99))} ms | |`,
        );
    }

    const load1 = loadavg();

    const addP50 = median(lat.gateway) - median(lat.direct);
    const addP99 = pct(lat.gateway, 99) - pct(lat.direct, 99);
    const addP50T = median(lat.gatewayT) - median(lat.directT);
    const addP99T = pct(lat.gatewayT, 99) - pct(lat.directT, 99);
    const ratio = median(tp.gateway) / median(tp.direct);
    const who = SERVICE ? 'service' : 'gateway';
    const lines = [
      `${rig.label}`,
      ...rig.notes,
      `load average ${load0.map(f2).join(' ')} at the start, ${loadLat0.map(f2).join(' ')} / ${loadLat1.map(f2).join(' ')} before / after the latency phase, ${load1.map(f2).join(' ')} at the end (${navigator.hardwareConcurrency} cores); failed requests: ${failures}`,
      `latency phase: ${f1(latMs / 1000)} s; the ${who}'s CPU in it ${f1(latCpuMs / 1000)} s = ${f1((latCpuMs / latMs) * 100)} % of a core${recheckTail}`,
      '',
      '| measure | through squid directly | through the gateway + squid | difference | target |',
      '|---|---|---|---|---|',
      `| 1 KB GET, absolute-form, p50 (${lat.gateway.length} each) | ${f2(median(lat.direct))} ms | ${f2(median(lat.gateway))} ms | **${signed(addP50)} ms** | <= +1 ms |`,
      `| 1 KB GET, absolute-form, p99 | ${f2(pct(lat.direct, 99))} ms | ${f2(pct(lat.gateway, 99))} ms | **${signed(addP99)} ms** | <= +5 ms |`,
      `| 1 KB GET in a CONNECT tunnel, p50 | ${f2(median(lat.directT))} ms | ${f2(median(lat.gatewayT))} ms | ${signed(addP50T)} ms | |`,
      `| 1 KB GET in a CONNECT tunnel, p99 | ${f2(pct(lat.directT, 99))} ms | ${f2(pct(lat.gatewayT, 99))} ms | ${signed(addP99T)} ms | |`,
      ...busyRows,
      `| ${MB} MB download, median of ${RUNS} | ${f1(median(tp.direct))} MB/s | ${f1(median(tp.gateway))} MB/s | **${f2(ratio)} x** | >= 0.8 x |`,
      `| ${who} CPU per MB relayed${SERVICE ? ' (re-checks included)' : ''} | | ${f2(median(tp.cpuPerMb))} ms | | |`,
      '',
      `| ${TUNNELS} CONNECT tunnels from one client | |`,
      '|---|---|',
      `| opened (200 from the gateway) | ${open.length} / ${TUNNELS}, in ${f1(openMs / 1000)} s (batches of 200) |`,
      `| served (a 1 KB GET answered in each, all open at once) | **${served} / ${TUNNELS}**, all done ${f1(allMs / 1000)} s after the first |`,
      `| ${who} RSS: after the warm-up / after the latency runs / ${TUNNELS} open / closed again | ${f1(rssIdle)} / ${f1(rssBefore)} / ${f1(rssAll)} / ${f1(rssClosed)} MiB |`,
      `| RSS growth with ${TUNNELS} open | **${rssAll >= rssBefore ? '+' : ''}${f1(rssAll - rssBefore)} MiB** (${f1(((rssAll - rssBefore) * 1024) / TUNNELS)} KiB per tunnel) |`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await rig?.stop();
    for (const c of children) c.kill('SIGKILL');
    await stopAllDaemons();
    await stopAll();
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
