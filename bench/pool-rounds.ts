/**
 * P1 and P2 of issue 23 (and the targets of issue 29): a pool of 100 000
 * proxies (mix of A, bench/farm) at `interval_s=300` kept checked by its
 * owner (src/jobs/pool-actor.ts: continuous, no rounds; a durable batch,
 * `round.completed`, every POOL_FLUSH_S), the
 * service started as users start it (`bun src/main.ts` with `npm start`'s
 * environment, bench/e2e/service.ts: ALLOW_PRIVATE_TARGETS=true for the
 * loopback farm, the bench key with 10^9 checks), on the embedded PGlite
 * (default) or PostgreSQL (E2E_DATABASE_URL), one run:
 *
 *   1. farm up; service up; a warm-up /check-raw (3 000); idle RSS and idle
 *      CPU over 5 s
 *   2. P2 idle: `--p2-runs` 10-proxy POST /check (farm proxies answering at
 *      once, region us1, the pool's region), wall of each
 *   3. P1: POST /pools (the list as text, interval_s, timeout 2 000 ms as
 *      the mix's scenarios, https on: the default); the first pass = until
 *      a round.completed event's counts have no proxy `unchecked`: its wall,
 *      rate and CPU per check; then the steady state over `--window-s`
 *      from 0.9 x interval_s after the POST (the first re-checks):
 *      pool checks (the `round.completed` events' `checked`, GET /ws?pool=)
 *      per second against the schedule's need, the lag (the pool's
 *      `next_due_at` behind now, read every 15 s: the bench does not poll,
 *      a GET /pools/{id} counts the pool's rows), whole-service CPU (process tree, bench/e2e/proc.ts) per
 *      pool check; P2 busy: the same 10-proxy /check, `--p2-runs` times
 *      spread over the window. Peak RSS (VmHWM, reset after the idle phase)
 *      minus the idle RSS
 *   4. the pool deleted (its round cut short); the one-shot: POST /check-raw
 *      of the same list on the same service, its CPU per check
 *   5. service stopped; database time per 1 000 state updates: the store's
 *      applyResults (src/pools/store.ts: the owner's flush statements,
 *      unfenced) in chunks of the owner's FLUSH_CHUNK rows measured outside the service, on the service's own PGlite
 *      data dir (the pool as P1 left it, re-created: the delete removed it)
 *      and on a fresh PostgreSQL database (`--pg URL`, default the local
 *      server; `--pg ''` skips it)
 *
 * Run: bun bench/pool-rounds.ts [--proxies 100000] [--interval-s 300]
 *      [--window-s 300] [--p2-runs 10] [--pg postgres://...]
 *      npm run bench:pools
 * A quick run: --proxies 10000 --window-s 60 --interval-s 60 (the service's
 * POOL_MIN_INTERVAL_S is lowered to the interval when it is below 60).
 * --targets N (issue 33): the pool gets N customUrls on a local site (its
 * own server on 127.0.0.1, counting requests): the first pass and the
 * steady state also say the site's requests per working pool check (N
 * when every working proxy fetches each target and no failed one does).
 * Issue 29's rows:
 * --driver pglite|pg: the service on its embedded PGlite (default) or on a
 * fresh database of the PostgreSQL server `--pg` (created and dropped); on
 * pg every CPU figure is the service's process tree plus the PostgreSQL
 * server's (the postmaster's tree: its live backends and the ones it reaped).
 * During the steady window: `--txt-runs` GET /pools/{id}/proxies?status=
 * working&format=txt spread over it (p50 / p99 wall, the bytes); the lag
 * read every 5 s (median, p99, max); P2's p90 besides its median; the RSS at
 * the window's end over the idle RSS, per pooled proxy (and the peak).
 * --passes N (the bounded database): after the window the pool runs until
 * N x proxies checks since the POST; the database's size (PGlite: the data
 * directory; pg: pg_database_size) after the first pass and after N passes.
 * --mix instant --https off: every proxy working at once, no https step (no
 * back-off: every proxy is checked every interval; the bounded database's run).
 * --no-one-shot skips step 4 (a 1 000 000 run's one-shot costs minutes; the
 * CPU ratio comes from the 100 000 runs), --no-db-time step 5.
 * --profile DIR: the service under --cpu-prof-md (its whole life, the
 * one-shot /check-raw included), the profile written into DIR at its stop.
 * --via-node (with --driver pg; issue 29's "through another node"): a
 * cluster of two API nodes of one database on a private nats-server (random
 * port, temporary store, test/helpers/nats-server.ts): the service A as
 * ROLE=all (the API node that owns the pool, with the region's agent in the
 * same process: its probes go through NATS) and B as ROLE=api with
 * POOL_ROUNDS=false (it never owns a pool: every read of it is "another
 * node"). Each txt read of the window is asked of A and of B back to back
 * (the order alternating), p50 / p99 of both. The CPU figures are A's
 * process tree (+ the PostgreSQL server's), not B's nor the nats-server's.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import postgres from 'postgres';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'drizzle-orm';
import { openDatabase, rowsOf, type Database } from '../db/client';
import { createAccount } from '../src/accounts/accounts';
import { insertProxiesStatement } from '../src/pools/proxies-sql';
import { applyResults, dueProxies } from '../src/pools/store';
import { FLUSH_CHUNK as WRITE_BATCH } from '../src/jobs/pool-actor';
import type { ParsedProxy } from '../src/proxy/parse';
import { createServerDatabase } from '../test/helpers/db';
import { BEHAVIOURS, buildEntries, listText } from './farm/entries';
import { startFarm } from './farm/launcher';
import { peakRssMiB, resetPeakRss, rssMiB, stopAll, stopAllSync, threadCpu, threadDelta, treeCpuMs } from './e2e/proc';
import { MIX_A, SLOW_MS, TIMEOUT_MS } from './e2e/scenarios';
import { BENCH_KEY, checkRaw, startService, type Service } from './e2e/service';
import { benchVerdict } from './pool-verdicts';
import { startNatsServer, type NatsServer } from '../test/helpers/nats-server';
import { regionsOf, SECRETS } from './cluster/topology';
import { runMain } from './e2e/stop-handlers';

/** The pool's targets' site: answers `ok` to every GET, counts them. */
function startSite(): { url: string; readonly requests: number; stop: () => void } {
  let requests = 0;
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: () => {
      requests++;
      return new Response('ok\n');
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, get requests() { return requests; }, stop: () => void server.stop(true) };
}

const { values } = parseArgs({
  options: {
    proxies: { type: 'string', default: '100000' },
    'interval-s': { type: 'string', default: '300' },
    'window-s': { type: 'string', default: '300' },
    'p2-runs': { type: 'string', default: '10' },
    pg: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
    profile: { type: 'string' },
    targets: { type: 'string', default: '0' },
    driver: { type: 'string', default: 'pglite' },
    'txt-runs': { type: 'string', default: '40' },
    passes: { type: 'string', default: '0' },
    'no-one-shot': { type: 'boolean', default: false },
    'no-db-time': { type: 'boolean', default: false },
    mix: { type: 'string', default: 'A' },
    https: { type: 'string', default: 'on' },
    'via-node': { type: 'boolean', default: false },
  },
});
const DRIVER = values.driver;
if (DRIVER !== 'pglite' && DRIVER !== 'pg') throw new Error(`--driver must be pglite or pg (got ${DRIVER})`);
const TXT_RUNS = Number(values['txt-runs']);
const VIA_NODE = values['via-node'] === true;
if (VIA_NODE && DRIVER !== 'pg') throw new Error('--via-node needs --driver pg (a cluster\'s API nodes share a PostgreSQL database)');
const PASSES = Number(values.passes);
/** --mix A (the farm's mix of A, default) or instant (every proxy working, no latency: no back-off, every proxy every interval: the bounded database's run) */
if (values.mix !== 'A' && values.mix !== 'instant') throw new Error(`--mix must be A or instant (got ${values.mix})`);
const MIX = values.mix === 'instant' ? { [BEHAVIOURS.INSTANT]: 1 } : MIX_A;
/** --https off: the pool's `https: false` (the bounded database's run: its writes, not the https step's CPU) */
const HTTPS = values.https !== 'off';
const TARGETS = Number(values.targets);
const PROXIES = Number(values.proxies);
const INTERVAL_S = Number(values['interval-s']);
const WINDOW_S = Number(values['window-s']);
const P2_RUNS = Number(values['p2-runs']);
const PG = values.pg ?? '';
const LATENCY = { seed: 20261122, medianMs: 150, p90Ms: 800 };
const IDLE_MS = 5000;
/** A 10-proxy /check slower than this is logged with its metadata and per-proxy times (the outliers' cause). */
const SLOW_CHECK_MS = 300;

const started = Date.now();
const log = (l: string) => process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s] ${l}\n`);
const load = () => loadavg().map((l) => l.toFixed(2)).join(' / ');
const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
};
const mean = (xs: number[]) => (xs.length === 0 ? NaN : xs.reduce((a, b) => a + b, 0) / xs.length);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const headers = { 'X-API-Key': BENCH_KEY };
process.on('exit', () => stopAllSync());
process.on('SIGINT', () => void stopAll().finally(() => process.exit(130)));

interface PoolObject {
  id: string;
  counts: { total: number; working: number; failed: number; unchecked: number };
  next_due_at: string | null;
  last_round_at: string | null;
  checks_last_24h: number;
  checks_per_day: number;
}

async function getPool(svc: Service, id: string): Promise<PoolObject> {
  const r = await fetch(`${svc.url}/pools/${id}`, { headers });
  if (r.status !== 200) throw new Error(`GET /pools/${id}: ${r.status} ${await r.text()}`);
  return (await r.json()) as PoolObject;
}

/** The PostgreSQL server's postmaster (a `postgres` process whose parent is not one), or null. */
function postmasterPid(): number | null {
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/comm`, 'latin1').trim() !== 'postgres') continue;
      const ppid = readFileSync(`/proc/${d}/stat`, 'latin1').split(') ')[1]!.split(' ')[1]!;
      if (readFileSync(`/proc/${ppid}/comm`, 'latin1').trim() !== 'postgres') return Number(d);
    } catch {
      continue;
    }
  }
  return null;
}

/** The database's size in bytes: PGlite's data directory (du), or the PostgreSQL database's pg_database_size. */
async function databaseBytes(dataDir: string, pgUrl: string | null): Promise<number> {
  if (pgUrl === null) return Number(Bun.spawnSync(['du', '-sb', dataDir]).stdout.toString().split('\t')[0]);
  const c = postgres(pgUrl, { max: 1, onnotice: () => undefined });
  try {
    const [r] = await c`SELECT pg_database_size(current_database())::float8 AS n`;
    return Number(r!.n);
  } finally {
    await c.end({ timeout: 5 });
  }
}

/** Per-thread CPU (threadDelta) as µs per check, largest first. */
function threadsText(d: Record<string, number>, checks: number): string {
  return Object.entries(d)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8)
    .map(([k, v]) => `${k} ${((v * 1000) / Math.max(1, checks)).toFixed(0)}`)
    .join(', ');
}

/** One GET ?status=working&format=txt: its wall (ms) and bytes. */
async function txtRead(svc: Service, id: string): Promise<{ ms: number; bytes: number }> {
  const t0 = performance.now();
  const r = await fetch(`${svc.url}/pools/${id}/proxies?status=working&format=txt`, { headers });
  const body = await r.arrayBuffer();
  const ms = performance.now() - t0;
  if (r.status !== 200) throw new Error(`GET txt: ${r.status}`);
  return { ms, bytes: body.byteLength };
}

/** One 10-proxy POST /check: its wall (ms). */
async function smallCheck(svc: Service, proxies: string[]): Promise<number> {
  const t0 = performance.now();
  const r = await fetch(`${svc.url}/check`, {
    method: 'POST',
    headers: { ...headers, 'Content-Type': 'application/json' },
    body: JSON.stringify({ proxies, timeout: TIMEOUT_MS, region: 'us1' }),
  });
  const body = (await r.json()) as { summary?: { total_working: number }; metadata?: { processing_time?: string; retried_checker_lag?: number }; result_url?: string | null };
  const ms = performance.now() - t0;
  if (r.status !== 200) throw new Error(`POST /check: ${r.status} ${JSON.stringify(body).slice(0, 300)}`);
  if (body.summary?.total_working !== proxies.length) log(`  P2: ${body.summary?.total_working} of ${proxies.length} working`);
  // a slow one says why: the job's own time, its retries (checker_overloaded), each proxy's time and https (the result file)
  if (ms > SLOW_CHECK_MS) {
    let each = '';
    if (body.result_url) {
      const f = (await (await fetch(body.result_url)).json()) as { proxies?: { responseTime?: string; https?: boolean | null; error?: { code?: string } }[] };
      each = (f.proxies ?? []).map((x) => `${x.responseTime ?? '?'}${x.https === true ? '' : ` https ${x.https}`}${x.error ? ` ${x.error.code}` : ''}`).join(', ');
    }
    log(`  P2 slow: ${ms.toFixed(0)} ms; processing_time ${body.metadata?.processing_time}, retried_checker_lag ${body.metadata?.retried_checker_lag ?? 0}; ${each}`);
  }
  return ms;
}

/** Database time of the store's applyResults per 1 000 rows, in batches of WRITE_BATCH, over every row of `poolId`. */
async function updateTime(database: Database, poolId: string): Promise<{ perThousandMs: number; p50BatchMs: number; p99BatchMs: number; rows: number }> {
  let seed = 1;
  const random = () => ((seed = (seed * 48271) % 2147483647) - 1) / 2147483646;
  const now = Date.now();
  const all = await dueProxies(database.db, poolId, now + 400 * 86_400_000, 10_000_000);
  const times: number[] = [];
  for (let i = 0; i < all.length; i += WRITE_BATCH) {
    const rows = all.slice(i, i + WRITE_BATCH).map((r) => benchVerdict(r, random, now));
    const t = performance.now();
    await applyResults(database.db, poolId, rows);
    times.push(performance.now() - t);
  }
  const s = [...times].sort((a, b) => a - b);
  return { perThousandMs: (times.reduce((a, b) => a + b, 0) * 1000) / Math.max(1, all.length), p50BatchMs: median(times), p99BatchMs: s[Math.floor(s.length * 0.99)] ?? NaN, rows: all.length };
}

/** A pool of `addresses` written straight into `database` (the service is stopped): its id. */
async function seedPool(database: Database, addresses: string[]): Promise<string> {
  const id = 'benchroundspool01';
  const account = await createAccount(database.db, { email: `bench-rounds-${Date.now()}@example.test`, checks: 0 });
  await database.db.execute(sql`INSERT INTO pools (id, account_id, name, type, region, interval_s, timeout_ms) VALUES (${id}, ${account.id}::uuid, 'bench', 'http', 'us1', ${INTERVAL_S}, ${TIMEOUT_MS})`);
  const list: ParsedProxy[] = addresses.map((a) => {
    const [host, port] = a.split(':');
    return { host: host!, port: Number(port), format: 'standard', raw: '' };
  });
  for (let i = 0; i < list.length; i += 10_000) await database.db.execute(insertProxiesStatement(id, 'http', list.slice(i, i + 10_000), Date.now()));
  return id;
}

async function main(): Promise<void> {
  const out: string[] = [];
  const say = (l: string) => {
    out.push(l);
    log(l);
  };
  const loadStart = load();
  log(`pool of ${PROXIES} (mix ${values.mix}, https ${HTTPS ? 'on' : 'off'}) at interval_s ${INTERVAL_S}, window ${WINDOW_S} s, P2 ${P2_RUNS} runs; load average ${loadStart}`);
  const farm = await startFarm({ processes: 4, portsPerBehaviour: 8, refusedPorts: 16, latency: LATENCY, slowMs: SLOW_MS });
  const entries = buildEntries({ firstId: 0, size: PROXIES, mix: MIX, seed: 103, latency: LATENCY, slowMs: SLOW_MS }, farm.ports);
  const text = listText(entries);
  const small = buildEntries({ firstId: 700_000, size: 10, mix: { [BEHAVIOURS.INSTANT]: 1 }, seed: 9, latency: LATENCY, slowMs: SLOW_MS }, farm.ports).map((e) => `${e.host}:${e.port}`);
  const dataDir = mkdtempSync(join(tmpdir(), 'pc-pool-rounds-'));
  const env: Record<string, string> = {
    LOG_LEVEL: '',
    ...(INTERVAL_S < 60 ? { POOL_MIN_INTERVAL_S: String(INTERVAL_S) } : {}),
    // a pool above the defaults (100 000 a pool, 16 MiB a body): the operator's settings for it (docs/API.md "Limits")
    ...(PROXIES > 100_000 ? { MAX_PROXIES_PER_POOL: String(PROXIES), MAX_PROXIES: String(PROXIES), MAX_BODY_BYTES: String(64 * 1024 * 1024) } : {}),
  };
  const bunFlags = values.profile !== undefined ? ['--cpu-prof-md', `--cpu-prof-dir=${values.profile}`] : [];
  const serverDb = DRIVER === 'pg' ? await createServerDatabase(PG, 'bench_pools_service') : null;
  if (serverDb !== null) env.DATABASE_URL = serverDb.url;
  const postmaster = DRIVER === 'pg' ? postmasterPid() : null;
  if (DRIVER === 'pg' && postmaster === null) throw new Error('--driver pg: no PostgreSQL server process found on this machine (its CPU is counted)');
  // --via-node: A (ROLE=all: the pool's owner and the region's agent) and B (ROLE=api, never an owner) on one nats-server
  const nats: NatsServer | null = VIA_NODE ? await startNatsServer() : null;
  if (nats !== null) Object.assign(env, { NATS_URL: nats.url, ROLE: 'all', REGION: 'us1', ...SECRETS });
  let svc: Service | null = await startService({ dataDir, slotsPerEndpoint: null, judgeUrl: '', judgeKey: '', env, bunFlags });
  let other: Service | null = null;
  if (nats !== null) {
    const deadline = Date.now() + 30_000;
    while ((await regionsOf(svc.url)).agents < 1) {
      if (Date.now() > deadline) throw new Error('--via-node: no agent of us1 on A after 30 s');
      await Bun.sleep(100);
    }
    other = await startService({ dataDir: mkdtempSync(join(dataDir, 'node-b-')), slotsPerEndpoint: null, judgeUrl: '', judgeKey: '', env: { ...env, ROLE: 'api', REGION: '', POOL_ROUNDS: 'false' } });
    log(`--via-node: nats-server ${nats.url}; A (ROLE=all, the owner) pid ${svc.pid}, B (ROLE=api, POOL_ROUNDS=false) pid ${other.pid}`);
  }
  /** CPU (ms) of the service's process tree, plus the PostgreSQL server's on --driver pg */
  const cpuNow = () => treeCpuMs(svc!.pid) + (postmaster !== null ? treeCpuMs(postmaster) : 0);
  try {
    log(`driver ${DRIVER}${serverDb !== null ? ` (database ${new URL(serverDb.url).pathname.slice(1)}, CPU counted with the server's, postmaster ${postmaster})` : ''}`);
    log(`service ready in ${svc.startupMs.toFixed(0)} ms (pid ${svc.pid})`);
    const w = buildEntries({ firstId: 600_000, size: 3000, mix: { [BEHAVIOURS.INSTANT]: 2, [BEHAVIOURS.REFUSED]: 1 }, seed: 7, latency: LATENCY, slowMs: SLOW_MS }, farm.ports);
    const warm = await checkRaw(svc, listText(w), { timeoutMs: TIMEOUT_MS });
    if (warm.status !== 200) throw new Error(`warm-up: HTTP ${warm.status}`);
    await Bun.sleep(1000);
    const idleC0 = cpuNow();
    const idleT0 = threadCpu(svc.pid);
    await Bun.sleep(IDLE_MS);
    const idleCpuPerS = ((cpuNow() - idleC0) * 1000) / IDLE_MS;
    const idleThreads = threadDelta(svc.pid, idleT0, threadCpu(svc.pid));
    const idleRss = rssMiB(svc.pid);
    // per thread as µs per ms of wall (= ms/s / 1000 x 1000): threadsText's "per check" with the idle ms as the count
    log(`idle: RSS ${idleRss.toFixed(0)} MiB, CPU ${idleCpuPerS.toFixed(1)} ms/s (threads, ms/s: ${threadsText(idleThreads, IDLE_MS)})`);

    // P2 on the idle service
    await smallCheck(svc, small); // its first: untimed
    const p2Idle: number[] = [];
    for (let i = 0; i < P2_RUNS; i++) p2Idle.push(await smallCheck(svc, small));
    log(`P2 idle: ${p2Idle.map((x) => x.toFixed(0)).join(', ')} ms`);

    // P1: the pool
    const site = startSite();
    resetPeakRss(svc.pid);
    let rssMax = rssMiB(svc.pid);
    const rssTimer = setInterval(() => (rssMax = Math.max(rssMax, rssMiB(svc!.pid))), 500);
    const t0 = performance.now();
    const made = await fetch(`${svc.url}/pools`, {
      method: 'POST',
      headers: { ...headers, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        name: 'bench rounds',
        text,
        interval_s: INTERVAL_S,
        timeout: TIMEOUT_MS,
        region: 'us1',
        ...(HTTPS ? {} : { https: false }),
        customUrls: Array.from({ length: TARGETS }, (_, i) => ({ name: `t${i + 1}`, url: `${site.url}/t${i + 1}`, requiredText: 'ok' })),
      }),
    });
    const createMs = performance.now() - t0;
    const created = (await made.json()) as PoolObject;
    if (made.status !== 201) throw new Error(`POST /pools: ${made.status} ${JSON.stringify(created)}`);
    log(`POST /pools: ${created.counts.total} proxies in ${createMs.toFixed(0)} ms`);
    // the rounds as they end (round.completed events): how many, their size, the time between two ends
    const rounds: { at: number; checked: number; workingChecks: number; notTried: number; unchecked: number; working: number }[] = [];
    let firstPassEnd: (() => void) | null = null;
    const firstPass = new Promise<void>((resolve) => (firstPassEnd = resolve));
    // the pool's events: a reader that falls behind is closed by the service (1013, docs/API.md), as a
    // 1 000 000-proxy first pass's proxy.up events can make it; then it connects again (`wsDrops` counts it)
    let wsDrops = 0;
    let wsDone = false;
    let ws: WebSocket;
    const connect = () => {
      ws = new WebSocket(`${svc!.url.replace('http', 'ws')}/ws?pool=${created.id}&apiKey=${BENCH_KEY}`);
      ws.onmessage = (m) => {
        const e = JSON.parse(String(m.data)) as { event: string; round?: { checked: number; working: number; not_tried: number }; counts: PoolObject['counts'] };
        if (e.event !== 'round.completed' || !e.round) return;
        rounds.push({ at: performance.now(), checked: e.round.checked, workingChecks: e.round.working, notTried: e.round.not_tried, unchecked: e.counts.unchecked, working: e.counts.working });
        if (e.counts.unchecked === 0) firstPassEnd?.();
      };
      ws.onclose = () => {
        if (wsDone) return;
        wsDrops++;
        setTimeout(connect, 500);
      };
    };
    connect();
    // and the pool's counts every 5 s (from the owner's memory): the first pass's end even when an event was missed
    const poll = setInterval(() => {
      void getPool(svc!, created.id).then(
        (q) => q.counts.unchecked === 0 && firstPassEnd?.(),
        () => undefined,
      );
    }, 5000);
    const checkedIn = (from: number, to: number) => rounds.filter((r) => r.at >= from && r.at < to).reduce((a, r) => a + r.checked, 0);
    const roundsText = (from: number, to: number) => {
      const rs = rounds.filter((r) => r.at >= from && r.at < to);
      const gaps = rs.slice(1).map((r, i) => r.at - rs[i]!.at);
      return `${rs.length} rounds, checked per round median ${median(rs.map((r) => r.checked)).toFixed(0)} (max ${Math.max(0, ...rs.map((r) => r.checked))}), not tried ${rs.reduce((a, r) => a + r.notTried, 0)}, time between round ends median ${(median(gaps) / 1000).toFixed(2)} s`;
    };
    const c0 = cpuNow();
    // no polling during the first pass (a GET /pools/{id} counts the pool's 100 000 rows: CPU of its own); progress from the events
    const progress = setInterval(() => {
      const r = rounds.at(-1);
      log(`  first pass: ${rounds.length} rounds, ${r ? PROXIES - r.unchecked : 0} checked, ${r?.working ?? 0} working, RSS ${rssMiB(svc!.pid).toFixed(0)} MiB${wsDrops > 0 ? `, events reconnected ${wsDrops} times` : ''}`);
    }, 15_000);
    let giveUp: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([firstPass, new Promise<void>((resolve) => (giveUp = setTimeout(resolve, 3_600_000)))]);
    clearTimeout(giveUp);
    clearInterval(progress);
    clearInterval(poll);
    const firstMs = performance.now() - t0;
    const c1 = cpuNow();
    const p = await getPool(svc, created.id);
    if (p.counts.unchecked !== 0) throw new Error('first pass not done within an hour');
    if (TARGETS > 0) say(`targets: ${TARGETS}; the site's requests in the first pass ${site.requests} = ${(site.requests / Math.max(1, p.counts.working)).toFixed(2)} per working proxy (${p.counts.working} working, ${p.counts.failed} failed)`);
    const siteAtWindow = () => site.requests;
    const dbFirst = PASSES > 0 ? await databaseBytes(dataDir, serverDb?.url ?? null) : 0;
    say(`first pass (from POST /pools to no proxy unchecked): ${PROXIES} proxies (${p.checks_last_24h} charged checks) in ${(firstMs / 1000).toFixed(1)} s = ${((PROXIES * 1000) / firstMs).toFixed(0)} checks/s; CPU (after the POST's answer) ${((c1 - c0) / 1000).toFixed(1)} s = ${(((c1 - c0) * 1000) / PROXIES).toFixed(0)} µs per pool check; ${p.counts.working} working, ${p.counts.failed} failed; POST /pools ${createMs.toFixed(0)} ms; ${roundsText(t0, performance.now() + 1)}`);

    // the steady state: checks counted from the events; the lag (the pool's next_due_at behind now) read every LAG_EVERY_MS
    const LAG_EVERY_MS = 5_000;
    // the window opens when the first pass's first proxies fall due again (0.9 x interval_s after the POST: the schedule's
    // jitter shortens a delay by up to 10 %), so it holds re-checks only, not the quiet between the first pass and them
    const opens = t0 + 0.9 * INTERVAL_S * 1000;
    if (performance.now() < opens) {
      log(`  waiting ${((opens - performance.now()) / 1000).toFixed(0)} s for the first re-checks (${checkedIn(performance.now() - 1, Infinity)} in the meantime)`);
      const q0 = rounds.length;
      await Bun.sleep(opens - performance.now());
      log(`  ${rounds.length - q0} rounds, ${rounds.slice(q0).reduce((a, r) => a + r.checked, 0)} checks while waiting`);
    }
    const durable0 = (await getPool(svc, created.id)).checks_last_24h;
    const drops0 = wsDrops;
    const w0 = performance.now();
    const cw0 = cpuNow();
    const tw0 = threadCpu(svc.pid);
    const sw0 = siteAtWindow();
    const p2Busy: number[] = [];
    let maxLagS = 0;
    const lagSamples: number[] = [];
    /** the schedule's need now (the pool's checks_per_day: every proxy at its interval, a failing one backed off), per s */
    const needSamples: number[] = [];
    const gap = (WINDOW_S * 1000) / (P2_RUNS + 1);
    let nextP2 = w0 + gap;
    const txt: { ms: number; bytes: number }[] = [];
    /** --via-node: the same reads asked of B */
    const txtB: { ms: number; bytes: number }[] = [];
    const txtGap = (WINDOW_S * 1000) / (TXT_RUNS + 1);
    let nextTxt = w0 + txtGap / 2;
    let nextLag = w0 + LAG_EVERY_MS;
    let lastLog = w0;
    let getMs = 0;
    while (performance.now() - w0 < WINDOW_S * 1000) {
      await Bun.sleep(250);
      if (performance.now() >= nextLag) {
        nextLag += LAG_EVERY_MS;
        const g = performance.now();
        const q = await getPool(svc, created.id);
        getMs = performance.now() - g;
        const lag = q.next_due_at === null ? 0 : Math.max(0, (Date.now() - Date.parse(q.next_due_at)) / 1000);
        lagSamples.push(lag);
        needSamples.push(q.checks_per_day / 86400);
        maxLagS = Math.max(maxLagS, lag);
      }
      if (txt.length < TXT_RUNS && performance.now() >= nextTxt) {
        if (other === null) txt.push(await txtRead(svc, created.id));
        else if (txt.length % 2 === 0) {
          // A then B, B then A: neither always reads right after the other's read
          txt.push(await txtRead(svc, created.id));
          txtB.push(await txtRead(other, created.id));
        } else {
          txtB.push(await txtRead(other, created.id));
          txt.push(await txtRead(svc, created.id));
        }
        nextTxt += txtGap;
      }
      if (p2Busy.length < P2_RUNS && performance.now() >= nextP2) {
        p2Busy.push(await smallCheck(svc, small));
        nextP2 += gap;
      }
      if (performance.now() - lastLog > 30_000) {
        lastLog = performance.now();
        log(`  steady: ${checkedIn(w0, Infinity)} checks in ${((performance.now() - w0) / 1000).toFixed(0)} s, lag ${(lagSamples.at(-1) ?? 0).toFixed(1)} s, GET /pools/{id} ${getMs.toFixed(0)} ms, RSS ${rssMiB(svc.pid).toFixed(0)} MiB, load ${load()}`);
      }
    }
    while (p2Busy.length < P2_RUNS) p2Busy.push(await smallCheck(svc, small));
    const windowMs = performance.now() - w0;
    const cw1 = cpuNow();
    const tw1 = threadCpu(svc.pid);
    const end = await getPool(svc, created.id);
    // the events' sum, or the durable checks' growth when the events' socket was closed in the window
    const winChecks = wsDrops === drops0 ? checkedIn(w0, performance.now() + 1) : end.checks_last_24h - durable0;
    const rssEnd = rssMiB(svc.pid);
    clearInterval(rssTimer);
    const peak = Math.max(peakRssMiB(svc.pid), rssMax);
    const rate = (winChecks * 1000) / windowMs;
    const cpuPerCheck = winChecks > 0 ? ((cw1 - cw0) * 1000) / winChecks : NaN;
    const cpuNetIdle = winChecks > 0 ? ((cw1 - cw0 - (idleCpuPerS * windowMs) / 1000) * 1000) / winChecks : NaN;
    say(
      `rate: ${rate.toFixed(1)}/s = ${(rate / mean(needSamples)).toFixed(3)} of the schedule's need (the pool's checks_per_day over the window, mean ${mean(needSamples).toFixed(1)}/s; target >= 0.97), ${((rate * INTERVAL_S) / PROXIES).toFixed(3)} of every proxy at interval_s (${(PROXIES / INTERVAL_S).toFixed(0)}/s); lag p99 ${quantile(lagSamples, 0.99).toFixed(1)} s (target <= 10)`,
    );
    say(
      `steady state (${(windowMs / 1000).toFixed(0)} s from ${((w0 - t0) / 1000).toFixed(0)} s after the POST): ${winChecks} pool checks = ${rate.toFixed(1)}/s (schedule's nominal need ${(PROXIES / INTERVAL_S).toFixed(0)}/s; ` +
        `the pool's own checks_per_day now ${end.checks_per_day} = ${(end.checks_per_day / 86400).toFixed(1)}/s); lag behind the due times (every ${LAG_EVERY_MS / 1000} s): median ${median(lagSamples).toFixed(1)} s, max ${maxLagS.toFixed(1)} s; a GET /pools/{id} ${getMs.toFixed(0)} ms; ` +
        `CPU ${((cw1 - cw0) / 1000).toFixed(1)} s = ${cpuPerCheck.toFixed(0)} µs per pool check (${cpuNetIdle.toFixed(0)} µs net of the idle ${idleCpuPerS.toFixed(1)} ms/s)`,
    );
    say(`steady state's rounds: ${roundsText(w0, performance.now() + 1)}`);
    say(`steady state's threads (µs per pool check): ${threadsText(threadDelta(svc.pid, tw0, tw1), winChecks)}`);
    // the schedule backs failing proxies off (interval, 2x, 4x, ...): the window's checks hold more working proxies than the list
    const winWorking = rounds.filter((r) => r.at >= w0).reduce((a, r) => a + r.workingChecks, 0);
    const workingShare = winChecks > 0 ? winWorking / winChecks : NaN;
    const listShare = entries.filter((e) => e.behaviour === BEHAVIOURS.WORKING || e.behaviour === BEHAVIOURS.INSTANT).length / PROXIES;
    say(`working share: ${(100 * workingShare).toFixed(1)} % of the window's pool checks (${winWorking}), ${(100 * listShare).toFixed(1)} % of the list`);
    if (TARGETS > 0) {
      const wWorking = rounds.filter((r) => r.at >= w0).reduce((a, r) => a + r.workingChecks, 0);
      say(`targets in the steady state: the site's requests ${site.requests - sw0} = ${((site.requests - sw0) / Math.max(1, wWorking)).toFixed(2)} per working pool check (${wWorking} working of ${winChecks} checks)`);
    }
    site.stop();
    wsDone = true;
    ws!.close();
    if (wsDrops > 0) say(`the events' WebSocket was closed by the service ${wsDrops} times (a reader behind: 1013) and connected again; batches in those gaps are missing from the counts above (the durable checks_last_24h: ${end.checks_last_24h})`);
    say(`RSS at the window's end ${rssEnd.toFixed(0)} MiB, idle ${idleRss.toFixed(0)} MiB: +${(rssEnd - idleRss).toFixed(0)} MiB = ${(((rssEnd - idleRss) * 1048576) / PROXIES).toFixed(0)} bytes per pooled proxy (target <= 300 at 1 000 000); peak during P1 +${(peak - idleRss).toFixed(0)} MiB = ${(((peak - idleRss) * 1048576) / PROXIES).toFixed(0)} bytes per proxy`);
    if (txt.length > 0) say(`txt (?status=working&format=txt, ${txt.length} reads over the window, ${(median(txt.map((t) => t.bytes)) / 1024).toFixed(0)} KiB each): p50 ${median(txt.map((t) => t.ms)).toFixed(1)} ms, p99 ${quantile(txt.map((t) => t.ms), 0.99).toFixed(1)} ms, max ${Math.max(...txt.map((t) => t.ms)).toFixed(1)} ms (target p99 <= 50 on the owner)`);
    if (txtB.length > 0) {
      const same = txtB.every((t, i) => t.bytes === txt[i]?.bytes);
      say(`txt through another node (B, ROLE=api, the same ${txtB.length} reads interleaved with A's): p50 ${median(txtB.map((t) => t.ms)).toFixed(1)} ms, p99 ${quantile(txtB.map((t) => t.ms), 0.99).toFixed(1)} ms, max ${Math.max(...txtB.map((t) => t.ms)).toFixed(1)} ms, ${(median(txtB.map((t) => t.bytes)) / 1024).toFixed(0)} KiB${same ? '' : ' (bytes differ from A\'s: ' + txtB.map((t, i) => `${t.bytes}/${txt[i]?.bytes}`).slice(0, 5).join(', ') + ')'} (target p99 <= 100)`);
    }
    say(`P2: 10-proxy /check median idle ${median(p2Idle).toFixed(1)} ms, during the steady state ${median(p2Busy).toFixed(1)} ms = ${(median(p2Busy) / median(p2Idle)).toFixed(2)}x (target <= 1.1); p90 ${quantile(p2Busy, 0.9).toFixed(1)} against idle ${quantile(p2Idle, 0.9).toFixed(1)} ms = ${(quantile(p2Busy, 0.9) / quantile(p2Idle, 0.9)).toFixed(2)}x (target <= 1.5); idle ${p2Idle.map((x) => x.toFixed(0)).join(', ')}; busy ${p2Busy.map((x) => x.toFixed(0)).join(', ')}`);

    if (PASSES > 0) {
      const need = PASSES * PROXIES;
      // the durable checks (checks_last_24h: every batch, whether or not its event reached us)
      let done = (await getPool(svc, created.id)).checks_last_24h;
      const checkedAll = () => done;
      log(`  bounded database: running to ${need} durable checks (${done} so far)`);
      let last = performance.now();
      while (done < need) {
        await Bun.sleep(5000);
        done = (await getPool(svc, created.id)).checks_last_24h;
        if (performance.now() - last > 60_000) {
          last = performance.now();
          log(`  ${done} of ${need} checks, ${(done / PROXIES) | 0} passes, database ${((await databaseBytes(dataDir, serverDb?.url ?? null)) / 1048576).toFixed(0)} MiB`);
        }
      }
      const dbEnd = await databaseBytes(dataDir, serverDb?.url ?? null);
      say(`bounded database: after the first pass ${(dbFirst / 1048576).toFixed(1)} MiB, after ${(checkedAll() / PROXIES).toFixed(1)} passes ${(dbEnd / 1048576).toFixed(1)} MiB = ${(dbEnd / dbFirst).toFixed(2)}x (target <= 1.5)`);
    }

    // the pool deleted; the one-shot /check-raw of the same list
    const del = await fetch(`${svc.url}/pools/${created.id}`, { method: 'DELETE', headers });
    await del.arrayBuffer();
    await Bun.sleep(3000);
    if (!values['no-one-shot']) {
      const o0 = cpuNow();
      const one = await checkRaw(svc, text, { timeoutMs: TIMEOUT_MS, region: 'us1' });
      const o1 = cpuNow();
      if (one.status !== 200) throw new Error(`check-raw: HTTP ${one.status}`);
      const oneUs = ((o1 - o0) * 1000) / PROXIES;
      say(`one-shot POST /check-raw of the same ${PROXIES}: wall ${(one.wallMs / 1000).toFixed(1)} s, CPU ${((o1 - o0) / 1000).toFixed(1)} s = ${oneUs.toFixed(0)} µs per check`);
      say(`CPU per pool check / per one-shot check: steady state ${(cpuPerCheck / oneUs).toFixed(2)}x, first pass ${((((c1 - c0) * 1000) / PROXIES) / oneUs).toFixed(2)}x (target <= 1.25)`);
      // the one-shot of the window's composition: every working proxy of the list and a uniform sample of the others,
      // so that the working share is the window's (the checks the pool made, not the list it was given)
      if (workingShare > listShare && workingShare < 1) {
        let seed = 17;
        const rnd = () => ((seed = (seed * 48271) % 2147483647) - 1) / 2147483646;
        const ok = entries.filter((e) => e.behaviour === BEHAVIOURS.WORKING || e.behaviour === BEHAVIOURS.INSTANT);
        const bad = entries.filter((e) => !(e.behaviour === BEHAVIOURS.WORKING || e.behaviour === BEHAVIOURS.INSTANT));
        const keep = Math.round((ok.length * (1 - workingShare)) / workingShare);
        const sample = bad.filter(() => rnd() < keep / bad.length);
        const comp = [...ok, ...sample];
        await Bun.sleep(3000);
        const q0 = cpuNow();
        const t0c = threadCpu(svc.pid);
        const r = await checkRaw(svc, listText(comp), { timeoutMs: TIMEOUT_MS, region: 'us1' });
        const q1 = cpuNow();
        say(`  its threads (µs per check): ${threadsText(threadDelta(svc.pid, t0c, threadCpu(svc.pid)), comp.length)}`);
        if (r.status !== 200) throw new Error(`check-raw (the window's composition): HTTP ${r.status}`);
        const compUs = ((q1 - q0) * 1000) / comp.length;
        say(`one-shot of the window's composition (${comp.length}: ${ok.length} working, ${sample.length} others): CPU ${((q1 - q0) / 1000).toFixed(1)} s = ${compUs.toFixed(0)} µs per check; pool check / this one-shot check: ${(cpuPerCheck / compUs).toFixed(2)}x (target <= 1.25)`);
      }
    }
    await other?.stop();
    other = null;
    await svc.stop();
    svc = null;

    // database time per 1 000 state updates, outside the service
    const addresses = entries.map((e) => `${e.host}:${e.port}`);
    if (!values['no-db-time']) {
      const lite = await openDatabase({ dataDir });
      try {
        const id = await seedPool(lite, addresses);
        await updateTime(lite, id); // first fold: rows leave 'unchecked' (like the first pass)
        const u = await updateTime(lite, id);
        say(`database, PGlite (the service's data dir): applyResults of ${u.rows} rows in batches of ${WRITE_BATCH}: ${u.perThousandMs.toFixed(1)} ms per 1 000 rows (batch p50 ${u.p50BatchMs.toFixed(1)} ms, p99 ${u.p99BatchMs.toFixed(1)} ms)`);
      } finally {
        await lite.close();
      }
      if (PG !== '') {
        const created2 = await createServerDatabase(PG, 'bench_pool_rounds');
        const pgdb = await openDatabase({ databaseUrl: created2.url });
        try {
          const id = await seedPool(pgdb, addresses);
          await updateTime(pgdb, id);
          const u = await updateTime(pgdb, id);
          const n = rowsOf<{ n: number }>(await pgdb.db.execute(sql`SELECT count(*)::float8 AS n FROM pool_proxies WHERE pool_id = ${id}`))[0]?.n;
          say(`database, PostgreSQL: applyResults of ${u.rows} rows (${n} in the pool) in batches of ${WRITE_BATCH}: ${u.perThousandMs.toFixed(1)} ms per 1 000 rows (batch p50 ${u.p50BatchMs.toFixed(1)} ms, p99 ${u.p99BatchMs.toFixed(1)} ms)`);
        } finally {
          await pgdb.close();
          await created2.drop();
        }
      }
    }
    say(`load average: start ${loadStart}, end ${load()}`);
    process.stdout.write(`\n${out.map((l) => `- ${l}`).join('\n')}\n`);
  } finally {
    await other?.stop();
    await svc?.stop();
    await nats?.stop();
    await farm.stop();
    await serverDb?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await runMain(main, log, stopAll);
