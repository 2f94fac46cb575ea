/**
 * End-to-end farm benchmark (issue 5): the real service (`bun src/main.ts`)
 * checks lists from a fake proxy farm on loopback through POST /check-raw.
 *
 *   bun bench/e2e.ts                 all scenarios (A B C D E F), < 15 min
 *   bun bench/e2e.ts A B             only those (E runs inside C)
 *   options: --scale=0.1 (smaller lists, smoke run), --max-bound=45 (D: skip
 *   cells whose lower bound exceeds this many seconds), --no-write (do not
 *   touch bench/RESULTS.md / the chart), --keep (keep lists, manifests and
 *   the data dir), --profile (service under --cpu-prof-md, profiles kept),
 *   --cold (no warm-up job before the measured ones), --pg[=URL] (PostgreSQL
 *   instead of the embedded PGlite: a fresh database on URL, default
 *   postgres://postgres@127.0.0.1:5432/postgres, dropped at the end), --repeat=N (run each
 *   measured list N times on the same service, report the last), --bun-flags='--smol ...'
 *   (extra flags for the service's bun, for experiments), --e-at=MS (E: submit the
 *   small job this long into C; default 3000, 600 lands in C's first busy seconds)
 *
 * Processes: the farm (bench/farm/worker.ts x 4), the judge
 * (bench/farm/judge.ts) and the service (via bench/e2e/guard.ts), all on
 * loopback, all stopped on exit, failure, Ctrl-C, SIGTERM, or the hard time
 * limit. Results merge into bench/e2e/last-results.json (scenarios not run
 * keep their last figures) and render into bench/RESULTS.md "End-to-end".
 */
import { installStopHandlers, runMain } from './e2e/stop-handlers';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { parseConfig } from '../src/config';
import { startFarm, startJudge } from './farm/launcher';
import { stopAll, stopAllSync } from './e2e/proc';
import { writeReport } from './e2e/report';
import { scenarioA, scenarioB, scenarioC, scenarioD, scenarioF, scenarioNewcomer, SLOW_MS, type Env, type ScenarioOutput } from './e2e/scenarios';
import { startService } from './e2e/service';

const HARD_LIMIT_MS = 15 * 60_000;
const args = process.argv.slice(2);
const flag = (name: string) => args.find((a) => a === `--${name}` || a.startsWith(`--${name}=`));
const flagValue = (name: string, def: number) => {
  const f = flag(name);
  return f?.includes('=') ? Number(f.split('=')[1]) : def;
};
const picked = args.filter((a) => !a.startsWith('--')).map((a) => a.toUpperCase());
const ALL = ['A', 'B', 'C', 'D', 'E', 'F'];
const selected = new Set(picked.length === 0 || picked.includes('ALL') ? ALL : picked);
for (const s of selected) if (!ALL.includes(s)) throw new Error(`unknown scenario ${s} (A-F)`);

const scale = flagValue('scale', 1);
const keep = flag('keep') !== undefined;
const outDir = mkdtempSync(join(tmpdir(), 'pc-bench-'));
const started = Date.now();
const log = (l: string) => process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s] ${l}\n`);

let dropDb: (() => Promise<void>) | null = null;
let cleaning: Promise<void> | null = null;
const cleanup = () =>
  (cleaning ??= (async () => {
    await stopAll();
    await dropDb?.().catch((err: unknown) => log(`dropping the bench database failed: ${String(err)}`));
    if (!keep) rmSync(outDir, { recursive: true, force: true });
  })());
const stops = installStopHandlers({ cleanup, stopAllSync, log, hardLimitMs: HARD_LIMIT_MS });

async function main(): Promise<void> {
  const latency = { seed: 20261122, medianMs: 150, p90Ms: 800 };
  log(`scenarios ${[...selected].join(' ')}, scale ${scale}, out ${outDir}`);
  const pg = flag('pg');
  if (pg !== undefined) {
    const server = pg.includes('=') ? pg.slice(pg.indexOf('=') + 1) : 'postgres://postgres@127.0.0.1:5432/postgres';
    const name = `bench_e2e_${Date.now().toString(36)}`;
    const admin = postgres(server, { max: 1, onnotice: () => undefined });
    await admin.unsafe(`CREATE DATABASE "${name}"`);
    await admin.end({ timeout: 5 });
    const u = new URL(server);
    u.pathname = `/${name}`;
    process.env.E2E_DATABASE_URL = u.toString();
    dropDb = async () => {
      const a = postgres(server, { max: 1, onnotice: () => undefined });
      await a.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await a.end({ timeout: 5 });
    };
    log(`database: PostgreSQL ${u.host}/${name}`);
  }
  const [judge, farm] = await Promise.all([
    startJudge(),
    startFarm({ processes: 4, portsPerBehaviour: 8, refusedPorts: 16, latency, slowMs: SLOW_MS }),
  ]);
  log(`judge ${judge.url} (pid ${judge.pid}); farm pids ${farm.pids.join(',')}`);
  const env: Env = {
    ports: farm.ports,
    latency,
    judgeUrl: judge.url,
    judgeKey: judge.key,
    dataDir: join(outDir, 'data'),
    outDir,
    ctx: { judgePid: judge.pid, farmPids: farm.pids },
    defaultSlots: parseConfig({}, process.cwd()).probes.slotsPerEndpoint,
    scale,
    maxBoundMs: flagValue('max-bound', 45) * 1000,
    log,
    warmup: flag('cold') === undefined,
    repeat: flagValue('repeat', 1),
    eAtMs: flagValue('e-at', 3000),
    bunFlags: [
      ...(flag('profile') !== undefined ? ['--cpu-prof-md', `--cpu-prof-dir=${join(outDir, 'profiles')}`] : []),
      ...(flag('bun-flags')?.slice('--bun-flags='.length).split(' ').filter((f) => f !== '') ?? []),
    ],
  };

  // first start on an empty data dir (database created); later starts reuse it
  const first = await startService({ dataDir: env.dataDir, slotsPerEndpoint: null, judgeUrl: judge.url, judgeKey: judge.key });
  log(`first start (empty data dir): ready in ${first.startupMs.toFixed(0)} ms`);
  await first.stop();

  const results: Record<string, ScenarioOutput> = {};
  if (selected.has('A')) {
    log('scenario A');
    results.A = await scenarioA(env);
  }
  if (selected.has('B')) {
    log('scenario B');
    results.B = await scenarioB(env);
  }
  if (selected.has('C') || selected.has('E')) {
    log(`scenario C${selected.has('E') ? ' + E' : ''}`);
    const out = await scenarioC(env, selected.has('E'));
    if (selected.has('C')) results.C = out;
    if (selected.has('E')) results.E = { runs: [], startups: [], notes: [], ...(out.fairness ? { fairness: out.fairness } : {}) };
  }
  if (selected.has('E')) {
    log('scenario E behind black holes (headroom on / off)');
    const nc = await scenarioNewcomer(env);
    results.E = { ...(results.E ?? { runs: [], notes: [] }), startups: [...(results.E?.startups ?? []), ...nc.startups], ...(nc.newcomer ? { newcomer: nc.newcomer } : {}) };
  }
  if (selected.has('D')) {
    log('scenario D');
    results.D = await scenarioD(env, results.C?.runs[0] ?? null);
  }
  if (selected.has('F')) {
    log('scenario F');
    results.F = await scenarioF(env);
  }
  if (stops.interrupted) return;
  if (flag('no-write') === undefined) {
    const where = await writeReport({ results, firstStartMs: first.startupMs, scale, env, database: pg !== undefined ? 'postgres' : 'pglite' });
    log(`wrote ${where.join(', ')}`);
  }
  if (keep) log(`kept ${outDir}`);
}

await runMain(main, log, async () => {
  stops.clearHardLimit();
  await cleanup();
});
