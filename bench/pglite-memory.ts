/**
 * Memory (and query time) of the embedded PGlite database, opened exactly as
 * the service opens it (db/client.ts openDatabase({dataDir})), under the
 * service's own database work: per check job the key lookup, the quota
 * reservation (one statement that also inserts the scan row) and the
 * completion (src/jobs/ledger.ts), plus GET /me's overview over the
 * account's scans (src/accounts/overview.ts).
 *
 * Each phase runs in its own process, because RSS is per process:
 *   first    empty data dir: initdb + migrations, then the workload;
 *   restart  the same data dir opened again (what a service restart and the
 *            end-to-end benchmark's scenarios do), then the workload again.
 * After each step: VmRSS / VmHWM / RssAnon (/proc/self/status), PGlite's
 * WASM memory (the Emscripten module's HEAPU8.byteLength, which grows and
 * never shrinks) with the resident part of that mapping ('?' when the kernel
 * merged it with a neighbour), and process.memoryUsage().heapUsed (Bun counts
 * ArrayBuffer memory, the WASM memory included, in it). Latency per
 * operation: p50 / p99 / mean. The "after GC" steps show what is live; the
 * steps before them include garbage the GC had not collected yet.
 *
 * The first phase also inserts --history older completed scans (spread over
 * 60 days) so that /me aggregates over a large account, as after months of use.
 *
 * Run: bun bench/pglite-memory.ts [--jobs 3000] [--me 300] [--history 20000] [--concurrency 1] [--keep]
 *      (--keep leaves the data dir in the OS temp dir and prints its path)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDatabase, type Database } from '../db/client';
import { createAccount, findAccountByApiKey, findAccountByEmail, issueKey } from '../src/accounts/accounts';
import { getAccountOverview } from '../src/accounts/overview';
import { scans } from '../db/schema';
import { databaseLedger } from '../src/jobs/ledger';

const MiB = 1048576;

function flagValue(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return dflt;
  const v = Number(process.argv[i + 1]);
  if (!Number.isSafeInteger(v) || v < 0) throw new Error(`--${name} needs a non-negative integer`);
  return v;
}

function flagString(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? undefined : process.argv[i + 1];
}

/** kB fields of /proc/self/status, in MiB. */
function procStatus(): { rss: number; hwm: number; anon: number } {
  const s = readFileSync('/proc/self/status', 'utf8');
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? NaN) / 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM'), anon: kb('RssAnon') };
}

interface PgliteClient {
  Module?: { HEAPU8?: Uint8Array };
  query<T>(sql: string): Promise<{ rows: T[] }>;
}

/** The PGlite client behind drizzle (`db.$client`), or undefined on another driver. */
function pgliteClient(database: Database): PgliteClient | undefined {
  return (database.db as unknown as { $client?: PgliteClient }).$client;
}

/**
 * Size of PGlite's WASM memory (Emscripten HEAPU8.byteLength; it grows and never
 * shrinks) and how much of it is resident: the anonymous mapping of that size
 * in /proc/self/smaps (the engine maps the memory on its own, plus one page).
 */
function wasmHeap(database: Database | undefined): { size: number; resident: number } | undefined {
  const bytes = database === undefined ? undefined : pgliteClient(database)?.Module?.HEAPU8?.byteLength;
  if (bytes === undefined) return undefined;
  let resident = NaN;
  let size = -1;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const range = /^([0-9a-f]+)-([0-9a-f]+) /.exec(line);
    if (range) {
      size = Number(BigInt(`0x${range[2]}`) - BigInt(`0x${range[1]}`));
      continue;
    }
    if (size >= bytes && size <= bytes + 65536 && line.startsWith('Rss:')) {
      resident = (Number(/\d+/.exec(line)?.[0]) * 1024);
      break;
    }
  }
  return { size: bytes, resident };
}

interface Step {
  phase: string;
  step: string;
  ms: number;
  rssMiB: number;
  hwmMiB: number;
  anonMiB: number;
  wasmMiB: number | null;
  wasmRssMiB: number | null;
  jsHeapMiB: number;
  latency?: Record<string, { n: number; p50: number; p99: number; mean: number }>;
}

function stats(xs: number[]): { n: number; p50: number; p99: number; mean: number } {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
  const round = (x: number) => Math.round(x * 1000) / 1000;
  return { n: s.length, p50: round(at(0.5)), p99: round(at(0.99)), mean: round(s.reduce((a, b) => a + b, 0) / Math.max(1, s.length)) };
}

/** Full GCs a tick apart (one right after the work leaves what the last frames held). */
async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) {
    Bun.gc(true);
    await Bun.sleep(50);
  }
}

const BENCH_EMAIL = 'pglite-memory@bench.local';
const BENCH_KEY = 'pc_PgliteMemoryBenchKey0000000001';

async function child(phase: string, dir: string): Promise<void> {
  const jobs = flagValue('jobs', 3000);
  const meCalls = flagValue('me', 300);
  const history = flagValue('history', 20000);
  const concurrency = Math.max(1, flagValue('concurrency', 1));
  let database: Database | undefined;
  let t = performance.now();
  const emit = (step: string, latency?: Step['latency']) => {
    const p = procStatus();
    const wasm = wasmHeap(database);
    const out: Step = {
      phase,
      step,
      ms: Math.round(performance.now() - t),
      rssMiB: Math.round(p.rss),
      hwmMiB: Math.round(p.hwm),
      anonMiB: Math.round(p.anon),
      wasmMiB: wasm === undefined ? null : Math.round(wasm.size / MiB),
      wasmRssMiB: wasm === undefined || Number.isNaN(wasm.resident) ? null : Math.round(wasm.resident / MiB),
      jsHeapMiB: Math.round(process.memoryUsage().heapUsed / MiB),
      ...(latency ? { latency } : {}),
    };
    console.log(JSON.stringify(out));
    t = performance.now();
  };

  emit('modules loaded');
  database = await openDatabase({ dataDir: dir });
  emit('openDatabase');
  const db = database.db;
  const client = pgliteClient(database);
  if (client === undefined) throw new Error('not an embedded PGlite database (is DATABASE_URL set?)');
  const settings = await client.query<{ name: string; setting: string; unit: string | null }>(
    `select name, setting, unit from pg_settings where name in
       ('shared_buffers', 'shared_memory_size', 'wal_buffers', 'max_connections', 'work_mem', 'maintenance_work_mem', 'temp_buffers')
     order by name`,
  );
  console.log(JSON.stringify({ phase, settings: settings.rows.map((r) => `${r.name}=${r.setting}${r.unit === null ? '' : ` x ${r.unit}`}`).join(', ') }));

  let account = await findAccountByEmail(db, BENCH_EMAIL);
  if (account === null) {
    account = await createAccount(db, { email: BENCH_EMAIL, checks: 1_000_000_000 });
    await issueKey(db, { accountId: account.id, label: 'bench', apiKey: BENCH_KEY });
  }
  const accountId = account.id;
  const ledger = databaseLedger(db);
  emit('account ready');

  // Older history for GET /me to aggregate over (first phase only): completed scans spread over 60 days.
  if (phase === 'first' && history > 0) {
    const start = Date.now() - 60 * 86_400_000;
    for (let from = 0; from < history; from += 1000) {
      const rows = Array.from({ length: Math.min(1000, history - from) }, (_, k) => {
        const i = from + k;
        const at = new Date(start + Math.floor((i / history) * 60 * 86_400_000));
        return {
          accountId,
          runId: `history-${i}`,
          proxyType: 'http',
          region: 'default',
          timeoutMs: 2000,
          totalSubmitted: 1000,
          totalChecked: 1000,
          totalWorking: 97,
          charged: 1000,
          status: 'completed',
          resultRef: `r-history-${i}`,
          createdAt: at,
          finishedAt: at,
        };
      });
      await db.insert(scans).values(rows);
    }
    emit(`${history} history scans inserted`);
  }

  // Check jobs: key lookup, reservation (+ scan row), completion; a tenth refund part of their units.
  const lat: Record<string, number[]> = { key: [], reserve: [], complete: [], refund_complete: [] };
  const timed = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    const r = await fn();
    lat[name]!.push(performance.now() - t0);
    return r;
  };
  let next = 0;
  const runJobs = async () => {
    for (let i = next++; i < jobs; i = next++) {
      const now = new Date();
      const runId = `${phase}-${i}-${process.pid}`;
      const acc = await timed('key', () => findAccountByApiKey(db, BENCH_KEY, now));
      if (acc === null) throw new Error('bench key not found');
      const units = 100 + (i % 900);
      const r = await timed('reserve', () =>
        ledger.reserve({ accountId, runId, clientJobId: null, units, now, type: 'http', region: 'default', timeoutMs: 2000, submitted: units }),
      );
      if (!r.ok) throw new Error('reservation refused');
      const refund = i % 10 === 0 ? 7 : 0;
      await timed(refund > 0 ? 'refund_complete' : 'complete', () =>
        ledger.complete({ accountId, runId, checked: units - refund, working: units >> 3, refund, resultRef: `r-${runId}`, now: new Date() }),
      );
    }
  };
  await Promise.all(Array.from({ length: concurrency }, runJobs));
  emit(`${jobs} check jobs`, Object.fromEntries(Object.entries(lat).map(([k, v]) => [k, stats(v)])));

  const me: number[] = [];
  for (let i = 0; i < meCalls; i++) {
    const t0 = performance.now();
    await getAccountOverview(db, accountId, new Date(), () => 'https://example.invalid/r');
    me.push(performance.now() - t0);
  }
  emit(`${meCalls} GET /me overviews`, { me: stats(me) });

  await settle();
  emit('after GC');
  await database.close();
  await settle();
  emit('closed, after GC');
}

function table(steps: Step[]): string {
  const head = '| phase | step | time | VmRSS | VmHWM | RssAnon | WASM heap (resident) | JS heap |';
  const rows = steps.map(
    (s) =>
      `| ${s.phase} | ${s.step} | ${s.ms} ms | ${s.rssMiB} MiB | ${s.hwmMiB} MiB | ${s.anonMiB} MiB | ` +
      `${s.wasmMiB === null ? '-' : `${s.wasmMiB} MiB (${s.wasmRssMiB ?? '?'} MiB)`} | ${s.jsHeapMiB} MiB |`,
  );
  const lats = steps.flatMap((s) =>
    Object.entries(s.latency ?? {}).map(([k, v]) => `| ${s.phase} | ${k} | ${v.n} | ${v.p50} ms | ${v.p99} ms | ${v.mean} ms |`),
  );
  return [head, '| --- | --- | --- | --- | --- | --- | --- | --- |', ...rows, '', '| phase | operation | n | p50 | p99 | mean |', '| --- | --- | --- | --- | --- | --- |', ...lats].join('\n');
}

async function main(): Promise<void> {
  const phase = flagString('child');
  if (phase !== undefined) {
    const dir = flagString('dir');
    if (dir === undefined) throw new Error('--child needs --dir');
    await child(phase, dir);
    return;
  }
  const keep = process.argv.includes('--keep');
  const dataDir = mkdtempSync(join(tmpdir(), 'pglite-memory-'));
  const self = fileURLToPath(import.meta.url);
  const passOn = process.argv.slice(2).filter((a) => a !== '--keep');
  const steps: Step[] = [];
  try {
    for (const phase of ['first', 'restart']) {
      const r = spawnSync(process.execPath, [self, ...passOn, '--child', phase, '--dir', dataDir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
      if (r.status !== 0) throw new Error(`${phase} phase exited with ${r.status}: ${r.stdout}`);
      for (const line of r.stdout.split('\n')) {
        if (!line.startsWith('{')) continue;
        const o = JSON.parse(line) as Step | { phase: string; settings: string };
        if ('settings' in o) console.log(`${o.phase}: ${o.settings}`);
        else steps.push(o);
      }
    }
  } finally {
    if (keep) console.log(`data dir kept: ${dataDir}`);
    else rmSync(dataDir, { recursive: true, force: true });
  }
  console.log(table(steps));
}

await main();
