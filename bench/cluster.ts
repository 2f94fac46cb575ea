/**
 * Cluster benchmark (issue 12): one embedded process against API node +
 * region agents on NATS JetStream, on one machine, against the fake proxy
 * farm (bench/farm) on loopback.
 *
 *   npm run bench:cluster            G, H and T (about 10 minutes)
 *   bun bench/cluster.ts G H         only those
 *   options: --repeat=N (passes of G and H, topologies interleaved within a
 *   pass; default 2), --scale=0.1 (smaller lists, a smoke run), --profile (every node under
 *   bun --cpu-prof-md, the profiles kept and their directory printed), --no-write
 *   (do not touch bench/RESULTS.md), --pg=URL (PostgreSQL server, default
 *   DATABASE_URL or postgres://postgres@127.0.0.1:5432/postgres), --render (only
 *   render bench/cluster/last-results.json into bench/RESULTS.md), --all (H also
 *   runs ROLE=all: the API node and the agent in one process, the work still
 *   through NATS: the network path without a second process)
 *
 * Needs, besides `npm install`: nats-server (Debian: `apt-get install
 * nats-server`; 2.9.10 tested) and a PostgreSQL server the runner may create
 * databases on (the cluster's API node needs PostgreSQL). Everything else it
 * starts itself and stops on exit, failure, Ctrl-C or SIGTERM: a nats-server
 * per cluster topology on a random port with a temporary store (never the
 * machine's 4222), a fresh database per topology (dropped after), the farm
 * (4 processes), the judge, and the nodes (`bun src/main.ts` behind
 * bench/e2e/guard.ts, so they die with the runner).
 *
 * - G, scale-out: 100 000 proxies, 90 % black holes / 10 % working, timeout
 *   5 s. Embedded (`npm start` defaults: PGlite, its own judge) vs API + 2
 *   agents vs API + 3 agents (agents on their defaults: own judge, slots from
 *   their own open-file limit). Target: 3 agents <= 0.45 x embedded.
 * - H, the network path: scenario A's list (bench/e2e/scenarios.ts) at 1 024
 *   slots, embedded vs API + 1 agent, both on PostgreSQL and the separate
 *   judge: wall and CPU per check of every process within 10 % of embedded.
 * - T, result throughput through NATS (bench/cluster/throughput.ts).
 *
 * Figures: bench/cluster/last-results.json and the "Cluster (issue 12)"
 * section of bench/RESULTS.md.
 */
import { installStopHandlers, runMain } from './e2e/stop-handlers';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HAVE_NATS_SERVER, NATS_SERVER_BIN, startNatsServer, type NatsServer } from '../test/helpers/nats-server';
import { BEHAVIOURS, buildEntries, type Entry } from './farm/entries';
import { startFarm, startJudge } from './farm/launcher';
import { stopAll, stopAllSync } from './e2e/proc';
import { MIX_A, SLOW_MS, TIMEOUT_MS } from './e2e/scenarios';
import { checkRaw } from './e2e/service';
import { machine, stamp, writeReport, type ScenarioRecord } from './cluster/report';
import { describeRun, runJob, type ClusterRun } from './cluster/run';
import { measureThroughput, type ThroughputResult } from './cluster/throughput';
import { createDatabase, startCluster, startEmbedded, type Judge, type Topology } from './cluster/topology';

const HARD_LIMIT_MS = 30 * 60_000;
const args = process.argv.slice(2);
const flag = (name: string) => args.find((a) => a === `--${name}` || a.startsWith(`--${name}=`));
const flagText = (name: string): string | undefined => {
  const f = flag(name);
  return f?.includes('=') ? f.slice(f.indexOf('=') + 1) : undefined;
};
const flagValue = (name: string, def: number) => Number(flagText(name) ?? def);
const ALL = ['G', 'H', 'T'];
const picked = args.filter((a) => !a.startsWith('--')).map((a) => a.toUpperCase());
const selected = new Set(picked.length === 0 ? ALL : picked);
for (const s of selected) if (!ALL.includes(s)) throw new Error(`unknown scenario ${s} (G, H, T)`);
const repeat = Math.max(1, flagValue('repeat', 2));
const scale = flagValue('scale', 1);
const pgServer = flagText('pg') ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const outDir = mkdtempSync(join(tmpdir(), 'pc-bench-cluster-'));
const profileDir = join(outDir, 'profiles');
const bunFlags = flag('profile') !== undefined ? ['--cpu-prof-md', `--cpu-prof-dir=${profileDir}`] : [];
const started = Date.now();
const log = (l: string) => process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s] ${l}\n`);

const undo: (() => Promise<void>)[] = [];
let cleaning: Promise<void> | null = null;
const cleanup = () =>
  (cleaning ??= (async () => {
    for (const u of undo.reverse()) await u().catch((err: unknown) => log(`cleanup step failed: ${String(err)}`));
    await stopAll();
    if (bunFlags.length === 0) rmSync(outDir, { recursive: true, force: true });
    else log(`profiles kept in ${profileDir}`);
  })());
const stops = installStopHandlers({ cleanup, stopAllSync, log, hardLimitMs: HARD_LIMIT_MS });

function freePort(): number {
  const l = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
  const p = l.port;
  l.stop(true);
  return p;
}

const latency = { seed: 20261122, medianMs: 150, p90Ms: 800 };
const sized = (n: number) => Math.max(10, Math.round(n * scale));

/** A topology's lifetime: a fresh database (and nats-server for a cluster), started, warmed up, used, stopped, dropped. */
async function withTopology<T>(
  kind: { agents: 0; databasePg: boolean; slotsPerEndpoint: number | null; capacity: number } | { agents: number; agentSlots: number | null; all?: boolean },
  judge: Judge | null,
  ports: Parameters<typeof buildEntries>[1],
  fn: (t: Topology) => Promise<T>,
): Promise<T> {
  const local: (() => Promise<void>)[] = [];
  const release = async () => {
    for (const u of local.reverse()) await u().catch((err: unknown) => log(`  stop step failed: ${String(err)}`));
    local.length = 0;
  };
  undo.push(release);
  try {
    let top: Topology;
    if (kind.agents === 0) {
      const k = kind as { databasePg: boolean; slotsPerEndpoint: number | null; capacity: number };
      const db = k.databasePg ? await createDatabase(pgServer, 'bench_cluster') : null;
      if (db !== null) local.push(db.drop);
      top = await startEmbedded({ dataDir: outDir, judge, log, bunFlags, databaseUrl: db?.url ?? null, slotsPerEndpoint: k.slotsPerEndpoint, capacity: k.capacity });
    } else {
      const k = kind as { agents: number; agentSlots: number | null; all?: boolean };
      const db = await createDatabase(pgServer, 'bench_cluster');
      local.push(db.drop);
      const monitor = freePort();
      const nats: NatsServer = await startNatsServer({ args: ['-m', String(monitor)] });
      local.push(() => nats.stop());
      top = await startCluster({ dataDir: outDir, judge, log, bunFlags, natsUrl: nats.url, natsPid: nats.pid, natsMonitor: `http://127.0.0.1:${monitor}`, databaseUrl: db.url, agents: k.agents, agentSlots: k.agentSlots, all: k.all === true });
    }
    local.push(() => top.stop());
    // warm-up (JIT; a long-running server is warm): 3000, 2/3 instant, 1/3 refused
    const w = buildEntries({ firstId: 600_000, size: 3000, mix: { [BEHAVIOURS.INSTANT]: 2, [BEHAVIOURS.REFUSED]: 1 }, seed: 7, latency, slowMs: SLOW_MS }, ports);
    const t0 = performance.now();
    const r = await checkRaw(top.api, w.map((e) => `${e.host}:${e.port}`).join('\n'), { timeoutMs: TIMEOUT_MS });
    log(`  warm-up job (3000): HTTP ${r.status} in ${(performance.now() - t0).toFixed(0)} ms`);
    if (r.status !== 200) throw new Error(`warm-up failed: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    return await fn(top);
  } finally {
    await release();
    undo.splice(undo.indexOf(release), 1);
  }
}

async function main(): Promise<void> {
  if (!HAVE_NATS_SERVER) throw new Error('nats-server is not installed (Debian: apt-get install nats-server)');
  const natsVersion = (await new Response(Bun.spawn([NATS_SERVER_BIN!, '--version'], { stdout: 'pipe' }).stdout).text()).trim();
  log(`scenarios ${[...selected].join(' ')}, repeat ${repeat}, scale ${scale}, PostgreSQL ${new URL(pgServer).host}, ${natsVersion}, out ${outDir}`);
  if (flag('render') !== undefined) return finish({ render: true } as never, natsVersion);
  const command = `bun bench/cluster.ts ${args.join(' ')}`.trim();
  const update: Record<string, ScenarioRecord> = {};

  if (selected.has('T')) {
    log('T: result throughput through NATS');
    const st = stamp(command);
    const nats = await startNatsServer();
    undo.push(() => nats.stop());
    const out: ThroughputResult[] = [];
    try {
      for (let i = 0; i < repeat; i++) {
        for (const [batch, total] of [
          [64, sized(300_000)],
          [8, sized(150_000)],
          [1, sized(60_000)],
        ] as const) {
          const r = await measureThroughput({ natsUrl: nats.url, natsPid: nats.pid, total, window: 20_000, shardTasks: 64, resultBatch: batch, region: 'benchtp' });
          log(`  ${total} results, batch ${batch}: ${Math.round(r.resultsPerS)} results/s (${Math.round(r.shardsPerS)} shards/s), CPU µs/result API ${r.cpuUsPerResult.api.toFixed(1)} agent ${r.cpuUsPerResult.agent.toFixed(1)} nats ${r.cpuUsPerResult.nats.toFixed(1)}`);
          out.push(r);
        }
      }
    } finally {
      await nats.stop();
    }
    update.T = { stamp: st, runs: [], throughput: out };
  }

  const needFarm = selected.has('G') || selected.has('H');
  if (!needFarm) return finish(update, natsVersion);
  const [judge, farm] = await Promise.all([
    startJudge(),
    startFarm({ processes: 4, portsPerBehaviour: 8, refusedPorts: 16, latency, slowMs: SLOW_MS }),
  ]);
  undo.push(async () => {
    await farm.stop();
    await judge.stop();
  });
  log(`judge ${judge.url} (pid ${judge.pid}); farm pids ${farm.pids.join(',')}`);

  if (selected.has('H')) {
    log('H: scenario A at 1 024 slots, embedded vs API + 1 agent (and, with --all, vs ROLE=all: both in one process)');
    const st = stamp(command);
    const entries = buildEntries({ firstId: 0, size: sized(20_000), mix: MIX_A, seed: 101, latency, slowMs: SLOW_MS }, farm.ports);
    const runs: ClusterRun[] = [];
    for (let i = 0; i < repeat && !stops.interrupted; i++) {
      // -1: ROLE=all (--all): the NATS path without a second process
      const base = flag('all') !== undefined ? [0, 1, -1] : [0, 1];
      const order = i % 2 === 0 ? base : [...base].reverse();
      for (const agents of order) {
        const kind =
          agents === 0
            ? { agents: 0 as const, databasePg: true, slotsPerEndpoint: 64, capacity: 1024 }
            : { agents: 1, agentSlots: 1024, all: agents === -1 };
        log(` H pass ${i + 1}: ${agents === 0 ? 'embedded' : agents === -1 ? 'ROLE=all' : 'API + 1 agent'}`);
        const r = await withTopology(kind, judge, farm.ports, (top) =>
          runJob(top, { scenario: 'H', entries, timeoutMs: TIMEOUT_MS, slots: top.capacity, farmPids: farm.pids, jobId: `bench-H-${i}-${agents}-${Date.now().toString(36)}` }),
        );
        log(`  ${describeRun(r)}`);
        runs.push(r);
      }
    }
    update.H = { stamp: st, runs };
  }

  if (selected.has('G')) {
    log('G: 100 000 (90 % black holes), timeout 5 s: embedded vs API + 2 / + 3 agents');
    const st = stamp(command);
    const entries = buildEntries({ firstId: 0, size: sized(100_000), mix: { [BEHAVIOURS.WORKING]: 0.1, [BEHAVIOURS.BLACKHOLE]: 0.9 }, seed: 112, latency, slowMs: SLOW_MS }, farm.ports);
    const runs: ClusterRun[] = [];
    for (let i = 0; i < repeat && !stops.interrupted; i++) {
      const order = i % 2 === 0 ? [0, 2, 3] : [3, 2, 0];
      for (const agents of order) {
        log(` G pass ${i + 1}: ${agents === 0 ? 'embedded' : `API + ${agents} agents`}`);
        // embedded: region capacity 16 x 768 = 12 288, capped by MAX_IN_FLIGHT (its own judge: (open files - 1000) / 2)
        const kind = agents === 0 ? { agents: 0 as const, databasePg: false, slotsPerEndpoint: null, capacity: 0 } : { agents, agentSlots: null };
        const r = await withTopology(kind, null, farm.ports, async (top) => {
          const slots = agents === 0 ? await embeddedSlots(top) : top.capacity;
          return runJob(top, { scenario: 'G', entries, timeoutMs: 5000, slots, farmPids: farm.pids, jobId: `bench-G-${i}-${agents}-${Date.now().toString(36)}` });
        });
        log(`  ${describeRun(r)}`);
        if (r.examples.length > 0) log(`    ${r.examples.slice(0, 5).join('\n    ')}`);
        runs.push(r);
      }
    }
    update.G = { stamp: st, runs };
  }
  finish(update, natsVersion);
}

/** The embedded process's probes in flight at most: min(us1 capacity from /regions, MAX_IN_FLIGHT from the open-file limit it inherits from this runner, its own judge). */
async function embeddedSlots(top: Topology): Promise<number> {
  const b = (await (await fetch(`${top.api.url}/regions`)).json()) as { regions: { code: string; capacity?: number }[] };
  const capacity = b.regions.find((r) => r.code === 'us1')?.capacity ?? 0;
  const { maxInFlightFor, openFilesLimit } = await import('../src/limits');
  return Math.min(capacity, maxInFlightFor(openFilesLimit(), 'guarded'));
}

function finish(update: Record<string, ScenarioRecord>, natsVersion: string): void {
  if (stops.interrupted || Object.keys(update).length === 0) return;
  if (flag('no-write') !== undefined) return;
  const where = writeReport(flag('render') !== undefined ? {} : update, machine(natsVersion));
  log(`wrote ${where.join(', ')}`);
}

await runMain(main, log, async () => {
  stops.clearHardLimit();
  await cleanup();
});
