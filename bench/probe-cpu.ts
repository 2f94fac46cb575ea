/**
 * CPU per probe of the checker, reproducibly (issue 5, target B: <= 150 µs of
 * our process's CPU per check, all threads, in a CPU-bound run).
 *
 *   bun bench/probe-cpu.ts [--mode inline|pool] [--scenarios http,socks5,...]
 *                          [--n 20000] [--concurrency 512] [--threads 2]
 *                          [--timeout 2000] [--hole-timeout 300] [--json]
 *
 * The farm (bench/probe-cpu-farm.ts: working judge-proxies, black holes, a
 * refused port) runs in a CHILD process, so the CPU measured here
 * (getrusage of this process: every thread, user + system) is the checker's
 * alone. Each scenario is warmed up first (JIT), then measured over N probes
 * at the given concurrency; the farm's own CPU is reported beside it.
 *
 * Modes: `inline` runs runProbe on the main thread (the probe path alone);
 * `pool` runs the real ProbePool (piscina workers, MessagePort batches) fed
 * like the region scheduler feeds it (shards of 16..64 as slots free up).
 *
 * Scenarios: http, socks5, socks4 (working, plain http judge), https (http
 * proxy, CONNECT + TLS to the judge), refused, hole (black holes, short
 * timeout), mix (10% working http, 50% refused, 40% black hole).
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { readFileSync } from 'node:fs';
import { runProbe } from '../src/probe/probe';
import { ProbePool } from '../src/probe/pool';
import { parseJudgeUrl } from '../src/judge/calibrate';
import type { ProbeResult, ProbeSettings, ProbeTask } from '../src/probe/types';
import type { ProxyType } from '../src/proxy/types';
import { TEST_CERT } from '../test/fixtures/tls-cert';

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i !== -1 && process.argv[i + 1] !== undefined ? (process.argv[i + 1] as string) : dflt;
}
const MODE = arg('mode', 'inline');
const N = Number(arg('n', '20000'));
const CONC = Number(arg('concurrency', '512'));
const THREADS = Number(arg('threads', '2'));
const TIMEOUT = Number(arg('timeout', '2000'));
const HOLE_TIMEOUT = Number(arg('hole-timeout', '300'));
const SCENARIOS = arg('scenarios', 'http,socks5,socks4,https,refused,hole,mix').split(',');
const JSON_OUT = process.argv.includes('--json');

// ---- the farm (child process) ----
const farm = spawn(process.execPath, [new URL('./probe-cpu-farm.ts', import.meta.url).pathname], { stdio: ['pipe', 'pipe', 'inherit'] });
const lines = createInterface({ input: farm.stdout! });
const waiting: ((l: string) => void)[] = [];
lines.on('line', (l) => waiting.shift()?.(l));
const nextLine = () => new Promise<string>((r) => waiting.push(r));
const { ports } = JSON.parse(await nextLine()) as { ports: Record<'http' | 'socks' | 'hole' | 'refused', number[]> };
async function farmCpuUs(): Promise<number> {
  const p = nextLine();
  farm.stdin!.write('cpu\n');
  return (JSON.parse(await p) as { cpuUs: number }).cpuUs;
}

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

function settingsFor(sc: Scenario): ProbeSettings {
  return {
    type: sc.type,
    timeoutMs: sc.timeoutMs,
    judge: parseJudgeUrl(sc.judge),
    checkerIps: ['127.0.0.1'],
    baselineHeaders: [],
    allowPrivateTargets: true,
    tlsCa: TEST_CERT,
  };
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
  const c = r.error?.code ?? 'ok';
  t.codes[c] = (t.codes[c] ?? 0) + 1;
}

function tasksFor(sc: Scenario, n: number): ProbeTask[] {
  const out: ProbeTask[] = new Array(n);
  for (let i = 0; i < n; i++) out[i] = { index: i, proxy: { host: '127.0.0.1', port: sc.port(i) } };
  return out;
}

/** TLS handshakes cost ~1 ms of CPU on each side: fewer at once, or the 2 cores time them out. */
const concFor = (sc: Scenario): number => (sc.judge.startsWith('https:') ? Math.min(CONC, 64) : CONC);

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

let pool: ProbePool | null = null;
function runPool(sc: Scenario, n: number, t: Tally): Promise<void> {
  const CONC = concFor(sc);
  const p = pool as ProbePool;
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

const run = MODE === 'pool' ? runPool : runInline;
if (MODE === 'pool') pool = await ProbePool.start({ threads: THREADS });

const rows: Record<string, unknown>[] = [];
for (const name of SCENARIOS) {
  const sc = scenarios[name];
  if (sc === undefined) throw new Error(`unknown scenario ${name}`);
  const n = name === 'https' ? Math.min(N, 4000) : name === 'hole' || name === 'mix' ? Math.min(N, 10_000) : N;
  await run(sc, Math.min(n, 2000), tallyOf()); // warm-up
  Bun.gc(true);
  const t = tallyOf();
  const farm0 = await farmCpuUs();
  const c0 = cpuUs();
  const s0 = sysUs();
  const p0 = procCpuUs();
  const w0 = performance.now();
  await run(sc, n, t);
  const wall = performance.now() - w0;
  const c1 = cpuUs();
  const s1 = sysUs();
  const p1 = procCpuUs();
  const farm1 = await farmCpuUs();
  const row = {
    mode: MODE,
    scenario: name,
    n,
    concurrency: concFor(sc),
    cpuPerProbeUs: Math.round((c1 - c0) / n),
    cpuPerProbeProcUs: Math.round((p1 - p0) / n),
    sysPerProbeUs: Math.round((s1 - s0) / n),
    farmCpuPerProbeUs: Math.round((farm1 - farm0) / n),
    wallMs: Math.round(wall),
    probesPerSec: Math.round((n / wall) * 1000),
    working: t.working,
    falsePositives: t.falsePositive,
    missed: t.missed,
    codes: t.codes,
  };
  rows.push(row);
  if (JSON_OUT) console.log(JSON.stringify(row));
  else
    console.log(
      `${MODE.padEnd(6)} ${name.padEnd(8)} n=${n} cpu/probe=${row.cpuPerProbeUs} µs (sys ${row.sysPerProbeUs}, /proc ${row.cpuPerProbeProcUs}) farm=${row.farmCpuPerProbeUs} µs ` +
        `wall=${row.wallMs} ms ${row.probesPerSec}/s working=${t.working} fp=${t.falsePositive} missed=${t.missed} ${JSON.stringify(t.codes)}`,
    );
}
await pool?.close();
farm.stdin!.end();
process.exit(rows.some((r) => (r.falsePositives as number) > 0 || (r.missed as number) > 0) ? 1 : 0);
