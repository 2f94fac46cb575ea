/**
 * A probe thread's CPU per probe when it is fed a trickle, as a pool's owner
 * feeds it, against a burst of the same probes (issue 29: a pool check's
 * probe threads cost ~270 µs against a one-shot's ~170 µs; the suspicion is
 * costs per second, not per probe, while probes are always in flight).
 *
 *   bun bench/probe-trickle.ts [--rate 750] [--seconds 20] [--modes trickle,trickle:64,burst]
 *        [--shard 8] [--reps 2] [--threads 2] [--working 0.25] [--holes 0.3]
 *        [--timeout 2000] [--delay-ms 0] [--json]
 *
 * The real ProbeWorkers (piscina threads, lanes) and the farm of
 * bench/probe-cpu.ts (bench/probe-cpu-farm.ts, a child process: not counted).
 * The list: `--working` share of working http proxies (the https check on, as
 * a pool's default), `--holes` black holes (hold their slot for the whole
 * `--timeout`), the rest refused.
 *
 * - trickle: the probes fall due at `--rate` a second, evenly; as the pool's
 *   owner does (src/jobs/pool-actor.ts), the feeder looks at what is due
 *   within DUE_EARLY_MS at every results batch and every FEED_MS, and starts it in
 *   shards of exactly `--shard` probes (fixed, so that a busier machine does
 *   not change the shards: the owner's feed before issue 29's fix made
 *   shards of ~6 at 750/s, one per results batch; 64 is the scheduler's
 *   maxGrant);
 * - burst: the same probes at once, 1 024 in flight at most, shards of 64 as
 *   slots free (a one-shot /check-raw).
 * `--delay-ms D`: the farm's http proxies wait a uniform 0..D ms before their first
 * answer (FARM_DELAY_MS), so that their answers do not come together.
 * `trickle:K`: a trickle in shards of K. The modes interleave rep by rep (a busier machine moves both). Per thread
 * (/proc/self/task: main, the probe threads, the allocator's scavenger, GC),
 * µs of CPU per probe, and the total.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { ProbeWorkers } from '../src/probe/workers/probe-workers';
import type { ProbeResult, ProbeTask } from '../src/probe/types';
import { farmSettings, startProbeFarm } from './probe-farm-client';

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i !== -1 && process.argv[i + 1] !== undefined ? (process.argv[i + 1] as string) : dflt;
}
const RATE = Number(arg('rate', '750'));
const SECONDS = Number(arg('seconds', '20'));
const MODES = arg('modes', 'trickle,burst').split(',');
const SHARD = Number(arg('shard', '8'));
const REPS = Number(arg('reps', '2'));
const THREADS = Number(arg('threads', '2'));
const WORKING = Number(arg('working', '0.25'));
const HOLES = Number(arg('holes', '0.3'));
const TIMEOUT = Number(arg('timeout', '2000'));
const JSON_OUT = process.argv.includes('--json');
process.env.FARM_DELAY_MS = arg('delay-ms', '0');
const MAX_SHARD = 64;
const DUE_EARLY_MS = 1000;
const FEED_MS = 10;
const BURST_CONC = 1024;

const farm = await startProbeFarm();
const settings = farmSettings(farm, { timeoutMs: TIMEOUT, httpsCheck: true });

/** Probe i's kind, spread evenly over the list (working, hole, refused). */
function portOf(i: number): number {
  const x = (i * 0.6180339887) % 1;
  const list = x < WORKING ? farm.ports.http : x < WORKING + HOLES ? farm.ports.hole : farm.ports.refused;
  return list[i % list.length]!;
}
const N = Math.round(RATE * SECONDS);
const tasks: ProbeTask[] = Array.from({ length: N }, (_, i) => ({ index: i, proxy: { host: '127.0.0.1', port: portOf(i) } }));

// ---- CPU per thread of this process ----
const TICK_MS = 1000 / 100; // USER_HZ
function threads(): Map<number, { name: string; ms: number }> {
  const out = new Map<number, { name: string; ms: number }>();
  for (const t of readdirSync('/proc/self/task')) {
    try {
      const name = readFileSync(`/proc/self/task/${t}/comm`, 'latin1').trim();
      const s = readFileSync(`/proc/self/task/${t}/stat`, 'latin1');
      const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
      out.set(Number(t), { name: Number(t) === process.pid ? 'main' : name, ms: (Number(f[11]) + Number(f[12])) * TICK_MS });
    } catch {
      continue;
    }
  }
  return out;
}
function delta(a: Map<number, { name: string; ms: number }>, b: Map<number, { name: string; ms: number }>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [tid, t] of b) {
    const d = t.ms - (a.get(tid)?.ms ?? 0);
    if (d > 0) out[t.name] = (out[t.name] ?? 0) + d;
  }
  return out;
}

let workers = await ProbeWorkers.start({ threads: THREADS });

interface Run {
  wallMs: number;
  shards: number;
  working: number;
  /** results messages received (a lane's batch per shard in it) */
  batches: number;
}

/** The pool owner's feed: due at RATE/s, taken DUE_EARLY_MS ahead, in shards of `shard`. */
function trickle(list: ProbeTask[], shard = SHARD): Promise<Run> {
  const t0 = performance.now();
  let next = 0;
  let done = 0;
  let shards = 0;
  let working = 0;
  let batches = 0;
  return new Promise((resolve, reject) => {
    const feed = (): void => {
      const horizon = performance.now() - t0 + DUE_EARLY_MS;
      const dueCount = Math.min(list.length, Math.floor((horizon * RATE) / 1000)) - next;
      for (let left = dueCount; left >= Math.min(shard, list.length - next) && left > 0; ) {
        const size = Math.min(shard, left);
        const tasks = list.slice(next, next + size);
        next += size;
        left -= size;
        shards++;
        workers.runShard({ kind: 'probe', tasks, settings }, onBatch).catch(reject);
      }
    };
    const onBatch = (batch: ProbeResult[]): void => {
      batches++;
      for (const r of batch) if (r.status === 'working') working++;
      done += batch.length;
      if (done === list.length) {
        clearInterval(timer);
        resolve({ wallMs: performance.now() - t0, shards, working, batches });
      } else feed();
    };
    const timer = setInterval(feed, FEED_MS);
    feed();
  });
}

/** A one-shot: everything at once, BURST_CONC in flight, shards of 64 as slots free. */
function burst(list: ProbeTask[]): Promise<Run> {
  const t0 = performance.now();
  let next = 0;
  let inFlight = 0;
  let done = 0;
  let shards = 0;
  let working = 0;
  let batches = 0;
  return new Promise((resolve, reject) => {
    const feed = (): void => {
      while (next < list.length && BURST_CONC - inFlight >= Math.min(16, list.length - next)) {
        const size = Math.min(MAX_SHARD, BURST_CONC - inFlight, list.length - next);
        const shard = list.slice(next, next + size);
        next += size;
        inFlight += size;
        shards++;
        workers.runShard({ kind: 'probe', tasks: shard, settings }, onBatch).catch(reject);
      }
    };
    const onBatch = (batch: ProbeResult[]): void => {
      batches++;
      for (const r of batch) if (r.status === 'working') working++;
      inFlight -= batch.length;
      done += batch.length;
      if (done === list.length) resolve({ wallMs: performance.now() - t0, shards, working, batches });
      else feed();
    };
    feed();
  });
}

/** `trickle`, `trickle:K` (shards of K), `burst` */
function runOf(mode: string): (list: ProbeTask[]) => Promise<Run> {
  if (mode === 'burst') return burst;
  const [name, k] = mode.split(':');
  if (name !== 'trickle') throw new Error(`unknown mode ${mode}`);
  return (list) => trickle(list, k === undefined ? SHARD : Number(k));
}
// warm-up (JIT, TLS sessions): a short trickle and a burst
await trickle(tasks.slice(0, Math.min(N, RATE * 2)));
await burst(tasks.slice(0, Math.min(N, 2000)));

const fmt = (d: Record<string, number>, n: number) =>
  Object.entries(d)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${((v * 1000) / n).toFixed(0)}`)
    .join(', ');
for (let rep = 0; rep < REPS; rep++) {
  for (const mode of rep % 2 === 0 ? MODES : [...MODES].reverse()) {
    const run = runOf(mode);
    Bun.gc(true);
    const a = threads();
    const r = await run(tasks);
    const d = delta(a, threads());
    const total = Object.values(d).reduce((x, y) => x + y, 0);
    const load = readFileSync('/proc/loadavg', 'latin1').split(' ').slice(0, 3).join(' ');
    if (JSON_OUT) console.log(JSON.stringify({ rep, mode, n: N, shard: SHARD, totalUs: (total * 1000) / N, threadsUs: Object.fromEntries(Object.entries(d).map(([k, v]) => [k, (v * 1000) / N])), wallMs: r.wallMs, shards: r.shards, batches: r.batches, working: r.working, load }));
    else
      console.log(
        `rep ${rep + 1} ${mode.padEnd(7)} n=${N} ${(N / (r.wallMs / 1000)).toFixed(0)}/s shards=${r.shards} batches=${r.batches} working=${r.working} ` +
          `total ${((total * 1000) / N).toFixed(0)} µs/probe: ${fmt(d, N)} (load ${load})`,
      );
  }
}
await workers.close();
farm.stop();
process.exit(0);
