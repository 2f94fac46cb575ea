/**
 * CPU per probe of the checker, reproducibly (issue 5, target B: <= 150 µs of
 * our process's CPU per check, all threads, in a CPU-bound run).
 *
 *   bun bench/probe-cpu.ts [--mode workers|inline] [--scenarios http,socks5,...]
 *                          [--n 20000] [--concurrency 512] [--threads 2]
 *                          [--timeout 2000] [--hole-timeout 300]
 *                          [--reps 3] [--warmup 2000] [--drivers native,node]
 *                          [--https-check on|off] [--json]
 *
 * The farm (bench/probe-cpu-farm.ts: working judge-proxies, black holes, a
 * refused port) runs in a CHILD process, so the CPU measured here
 * (getrusage of this process: every thread, user + system; /proc/self/stat
 * as a cross-check) is the checker's alone. Each scenario is warmed up first
 * (JIT), then measured `reps` times over N probes at the given concurrency;
 * the median (and min) per probe is printed, with the farm's own CPU beside
 * it (a rough gauge of how loaded the machine was: on an idle machine it is
 * constant per probe).
 *
 * Modes: `workers` (default; `pool` before the probe workers were renamed)
 * runs the real ProbeWorkers (piscina workers,
 * MessagePort batches) fed like the region scheduler feeds it (shards of
 * 16..64 as slots free up): what the service spends. `inline` runs runProbe
 * on the main thread (the probe path alone). Both can interleave the socket
 * links (`--drivers native,node`: PROBE_SOCKET_DRIVER's two values; in
 * workers mode one ProbeWorkers per driver) rep by rep, an A/B in one process.
 *
 * Scenarios: http, socks5, socks4 (all working, plain http judge), https
 * (http proxy, CONNECT + TLS to the judge, concurrency 16), refused, hole
 * (black holes, --hole-timeout), mix (10% working http, 50% refused, 40%
 * black hole, --hole-timeout). Exit code 1 on any false positive.
 *
 * --https-check on (default): the settings carry a TLS judge (settings.
 * tlsJudge, as the service always has with its built-in judge), so every
 * working probe also runs the https check: a tunnel (CONNECT / SOCKS) to
 * port TLS_JUDGE_PORT, where the farm answers with TLS (the test
 * certificate, pinned) and the signed judge answer. Failed probes never run
 * it. `off`: the probe path without it (as before https detection).
 */
import { readFileSync } from 'node:fs';
import { runProbe } from '../src/probe/probe';
import { setSocketDriver, type SocketDriver } from '../src/probe/net/exchange';
import { ProbeWorkers } from '../src/probe/workers/probe-workers';
import type { ProbeResult, ProtocolSettings, ProbeTask } from '../src/probe/types';
import type { ProxyType } from '../src/proxy/types';
import { farmSettings, startProbeFarm } from './probe-farm-client';

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i !== -1 && process.argv[i + 1] !== undefined ? (process.argv[i + 1] as string) : dflt;
}
const MODE = arg('mode', 'workers') === 'inline' ? 'inline' : 'workers';
const N = Number(arg('n', '20000'));
const CONC = Number(arg('concurrency', '512'));
const THREADS = Number(arg('threads', '2'));
const TIMEOUT = Number(arg('timeout', '2000'));
const HOLE_TIMEOUT = Number(arg('hole-timeout', '300'));
const SCENARIOS = arg('scenarios', 'http,socks5,socks4,https,refused,hole,mix').split(',');
const JSON_OUT = process.argv.includes('--json');
const REPS = Number(arg('reps', '3'));
const WARMUP = Number(arg('warmup', '2000'));
/** inline mode: the plain-TCP links to compare, interleaved rep by rep */
const DRIVERS = arg('drivers', 'native').split(',') as SocketDriver[];
const HTTPS_CHECK = arg('https-check', 'on') === 'on';

// ---- the farm (child process) ----
const farm = await startProbeFarm();
const { ports } = farm;
const farmStats = farm.stats;

// ---- CPU of this process, all threads ----
const TICK_US = 1e6 / 100; // USER_HZ
function procCpuUs(): number {
  const s = readFileSync('/proc/self/stat', 'latin1');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * TICK_US; // utime, stime (fields 14, 15)
}
function cpuUs(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}
function sysUs(): number {
  return process.cpuUsage().system;
}

// ---- scenarios ----
interface Scenario {
  type: ProxyType;
  judge: string;
  timeoutMs: number;
  /** i -> proxy port */
  port(i: number): number;
  expectWorking(i: number): boolean;
}
const pick = (list: number[], i: number) => list[i % list.length] as number;
const scenarios: Record<string, Scenario> = {
  http: { type: 'http', judge: 'http://127.0.0.1:9/judge', timeoutMs: TIMEOUT, port: (i) => pick(ports.http, i), expectWorking: () => true },
  socks5: { type: 'socks5', judge: 'http://127.0.0.1:9/judge', timeoutMs: TIMEOUT, port: (i) => pick(ports.socks, i), expectWorking: () => true },
  socks4: { type: 'socks4', judge: 'http://127.0.0.1:9/judge', timeoutMs: TIMEOUT, port: (i) => pick(ports.socks, i), expectWorking: () => true },
  https: { type: 'http', judge: 'https://localhost:9/judge', timeoutMs: TIMEOUT, port: (i) => pick(ports.http, i), expectWorking: () => true },
  refused: { type: 'http', judge: 'http://127.0.0.1:9/judge', timeoutMs: TIMEOUT, port: (i) => pick(ports.refused, i), expectWorking: () => false },
  hole: { type: 'http', judge: 'http://127.0.0.1:9/judge', timeoutMs: HOLE_TIMEOUT, port: (i) => pick(ports.hole, i), expectWorking: () => false },
  mix: {
    type: 'http',
    judge: 'http://127.0.0.1:9/judge',
    timeoutMs: HOLE_TIMEOUT,
    port: (i) => (i % 10 === 0 ? pick(ports.http, i) : i % 10 <= 5 ? pick(ports.refused, i) : pick(ports.hole, i)),
    expectWorking: (i) => i % 10 === 0,
  },
};

function settingsFor(sc: Scenario): ProtocolSettings {
  return farmSettings(farm, { timeoutMs: sc.timeoutMs, httpsCheck: HTTPS_CHECK, type: sc.type, judge: sc.judge });
}

interface Tally {
  working: number;
  falsePositive: number;
  missed: number;
  codes: Record<string, number>;
}
function tallyOf(): Tally {
  return { working: 0, falsePositive: 0, missed: 0, codes: {} };
}
function count(t: Tally, sc: Scenario, r: ProbeResult): void {
  const want = sc.expectWorking(r.index);
  if (r.status === 'working') {
    t.working++;
    if (!want) t.falsePositive++;
  } else if (want) t.missed++;
  const c = r.error?.code ?? (r.https === undefined ? 'ok' : r.https ? 'ok+https' : 'ok-https');
  t.codes[c] = (t.codes[c] ?? 0) + 1;
}

function tasksFor(sc: Scenario, n: number): ProbeTask[] {
  const out: ProbeTask[] = new Array(n);
  for (let i = 0; i < n; i++) out[i] = { index: i, proxy: { host: '127.0.0.1', port: sc.port(i) } };
  return out;
}

/** TLS handshakes cost ~1 ms of CPU on each side: fewer at once, or the 2 cores time them out. */
const concFor = (sc: Scenario): number => (sc.judge.startsWith('https:') ? Math.min(CONC, 16) : CONC);

function runInline(sc: Scenario, n: number, t: Tally): Promise<void> {
  const CONC = concFor(sc);
  const settings = settingsFor(sc);
  const tasks = tasksFor(sc, n);
  let next = 0;
  let done = 0;
  return new Promise((resolve) => {
    const onResult = (r: ProbeResult): void => {
      count(t, sc, r);
      done++;
      if (next < n) runProbe(tasks[next++] as ProbeTask, settings).then(onResult);
      else if (done === n) resolve();
    };
    const first = Math.min(CONC, n);
    for (; next < first; ) runProbe(tasks[next++] as ProbeTask, settings).then(onResult);
  });
}

/** workers mode: one ProbeWorkers per socket link compared, and the one the current rep uses */
const allWorkers = new Map<SocketDriver, ProbeWorkers>();
let workers: ProbeWorkers | null = null;
function runWorkers(sc: Scenario, n: number, t: Tally): Promise<void> {
  const CONC = concFor(sc);
  const p = workers as ProbeWorkers;
  const settings = settingsFor(sc);
  const tasks = tasksFor(sc, n);
  let next = 0;
  let inFlight = 0;
  let done = 0;
  return new Promise((resolve, reject) => {
    const feed = (): void => {
      // like the region scheduler: grants of 16..64 slots as they free up
      while (next < n && CONC - inFlight >= Math.min(16, n - next)) {
        const size = Math.min(64, CONC - inFlight, n - next);
        const shard = tasks.slice(next, next + size);
        next += size;
        inFlight += size;
        p.runShard({ kind: 'probe', tasks: shard, settings }, (batch) => {
          for (const r of batch) count(t, sc, r);
          inFlight -= batch.length;
          done += batch.length;
          if (done === n) resolve();
          else feed();
        }).catch(reject);
      }
    };
    feed();
  });
}

const run = MODE === 'workers' ? runWorkers : runInline;
if (MODE === 'workers') {
  for (const d of DRIVERS) {
    const w = await ProbeWorkers.start({ threads: THREADS, socketDriver: d, ...(process.env.PROBE_WORKER_FILE ? { filename: process.env.PROBE_WORKER_FILE } : {}) });
    allWorkers.set(w.socketDriver, w);
  }
}
/** Uses driver `d` for the next rep: the main thread's exchanges (inline), the workers of that link (workers). */
function useDriver(d: SocketDriver): SocketDriver {
  if (MODE !== 'workers') return setSocketDriver(d);
  workers = allWorkers.get(d) ?? (allWorkers.values().next().value as ProbeWorkers);
  return workers.socketDriver;
}

interface Sample {
  cpu: number;
  sys: number;
  proc: number;
  farm: number;
  wall: number;
  /** share of this run's TLS handshakes that resumed a session */
  resumed: number | null;
  t: Tally;
}
async function measure(name: string, sc: Scenario, n: number): Promise<Sample> {
  Bun.gc(true);
  const t = tallyOf();
  const farm0 = await farmStats();
  const c0 = cpuUs();
  const s0 = sysUs();
  const p0 = procCpuUs();
  const w0 = performance.now();
  await run(sc, n, t);
  const wall = performance.now() - w0;
  const c1 = cpuUs();
  const s1 = sysUs();
  const p1 = procCpuUs();
  const farm1 = await farmStats();
  const handshakes = (farm1.handshakes ?? 0) - (farm0.handshakes ?? 0);
  const resumed = handshakes > 0 ? ((farm1.resumed ?? 0) - (farm0.resumed ?? 0)) / handshakes : null;
  return { cpu: (c1 - c0) / n, sys: (s1 - s0) / n, proc: (p1 - p0) / n, farm: (farm1.cpuUs - farm0.cpuUs) / n, wall, resumed, t };
}
const median = (xs: number[]): number => {
  const a = [...xs].sort((x, y) => x - y);
  return a.length % 2 === 1 ? (a[(a.length - 1) / 2] as number) : ((a[a.length / 2 - 1] as number) + (a[a.length / 2] as number)) / 2;
};

const rows: Record<string, unknown>[] = [];
for (const name of SCENARIOS) {
  const sc = scenarios[name];
  if (sc === undefined) throw new Error(`unknown scenario ${name}`);
  const n = name === 'https' ? Math.min(N, 2000) : name === 'hole' || name === 'mix' ? Math.min(N, 10_000) : N;
  const samples = new Map<string, Sample[]>();
  for (const d of DRIVERS) {
    useDriver(d);
    await run(sc, Math.min(n, WARMUP), tallyOf()); // warm-up (JIT)
  }
  for (let rep = 0; rep < REPS; rep++) {
    for (const d of DRIVERS) {
      const key = useDriver(d);
      const list = samples.get(key) ?? [];
      list.push(await measure(name, sc, n));
      samples.set(key, list);
    }
  }
  for (const [driver, list] of samples) {
    const tally = tallyOf();
    for (const x of list) {
      tally.working += x.t.working;
      tally.falsePositive += x.t.falsePositive;
      tally.missed += x.t.missed;
      for (const [c, k] of Object.entries(x.t.codes)) tally.codes[c] = (tally.codes[c] ?? 0) + k;
    }
    const row = {
      mode: MODE,
      threads: MODE === 'workers' ? THREADS : 1,
      driver,
      httpsCheck: HTTPS_CHECK,
      scenario: name,
      n,
      reps: list.length,
      concurrency: concFor(sc),
      cpuPerProbeUs: Math.round(median(list.map((x) => x.cpu))),
      cpuPerProbeMinUs: Math.round(Math.min(...list.map((x) => x.cpu))),
      sysPerProbeUs: Math.round(median(list.map((x) => x.sys))),
      procPerProbeUs: Math.round(median(list.map((x) => x.proc))),
      farmCpuPerProbeUs: Math.round(median(list.map((x) => x.farm))),
      wallMs: Math.round(median(list.map((x) => x.wall))),
      tlsResumed: list.every((x) => x.resumed === null) ? null : median(list.map((x) => x.resumed ?? 0)),
      probesPerSec: Math.round((n / median(list.map((x) => x.wall))) * 1000),
      working: tally.working,
      falsePositives: tally.falsePositive,
      missed: tally.missed,
      codes: tally.codes,
    };
    rows.push(row);
    if (JSON_OUT) console.log(JSON.stringify(row));
    else
      console.log(
        `${MODE.padEnd(6)} ${driver.padEnd(6)} ${name.padEnd(8)} https-check=${HTTPS_CHECK ? 'on ' : 'off'} n=${n}x${list.length} cpu/probe median=${row.cpuPerProbeUs} min=${row.cpuPerProbeMinUs} µs ` +
          `(sys ${row.sysPerProbeUs}, /proc ${row.procPerProbeUs}) farm=${row.farmCpuPerProbeUs} µs wall=${row.wallMs} ms ${row.probesPerSec}/s ` +
          `${row.tlsResumed === null ? '' : `tls resumed ${(row.tlsResumed * 100).toFixed(0)}% `}` +
          `working=${tally.working} fp=${tally.falsePositive} missed=${tally.missed} ${JSON.stringify(tally.codes)}`,
      );
  }
}
for (const w of allWorkers.values()) await w.close();
farm.stop();
process.exit(rows.some((r) => (r.falsePositives as number) > 0) ? 1 : 0);
