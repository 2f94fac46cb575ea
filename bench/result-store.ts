/**
 * The result stores on a 100 000-proxy result document: the data-directory
 * store (src/results/dir-store.ts, embedded mode) against the PostgreSQL
 * store (src/results/pg-store.ts, the cluster's) on a PostgreSQL server and
 * on PGlite (a data dir, as the embedded service opens it).
 *
 * The document is built by the real writer from records made by the real
 * record builder (src/results/record.ts buildProxyRecord) and folded into the
 * real summary: 10% working (anonymity, geo, response times 40-3000 ms),
 * 50% refused, 40% timed out, in a shuffled arrival order, like a check of
 * scenario A's mix. Per run, each in the store's own process (RSS is per
 * process), three phases:
 *   write   addProxy for every record (the same writer code in every store)
 *   finish  finish(): the sorted document written; for the PostgreSQL store
 *           also uploaded (1 MiB chunks, one transaction) and the local file removed
 *   read    open(id) and the whole stream() read and counted (what a .json
 *           download does); then the same as .csv through src/results/export.ts
 * For each phase: wall time, and the peak RSS above the RSS at its start
 * (Linux: /proc/self/clear_refs "5" resets VmHWM, read after the phase).
 * The database size of one document (pg_total_relation_size of result_chunks
 * over the results stored) shows what TOAST's compression makes of it.
 *
 * Run: bun bench/result-store.ts [--proxies 100000] [--runs 3] [--stores dir,pg,pglite]
 *      PostgreSQL: DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres);
 *      a fresh database is created on it and dropped again.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { openDatabase, rowsOf, type Database } from '../db/client';
import type { ProbeResult } from '../src/probe/types';
import { openDirResultStore } from '../src/results/dir-store';
import { convertResult } from '../src/results/export';
import { newResultId } from '../src/results/links';
import { openPgResultStore } from '../src/results/pg-store';
import { buildProxyRecord, type ProxyRecord } from '../src/results/record';
import type { ResultStore } from '../src/results/store';
import { SummaryFold } from '../src/results/summary';
import { createServerDatabase } from '../test/helpers/db';

const MiB = 1048576;
type StoreName = 'dir' | 'pg' | 'pglite';

function flag(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? dflt : (process.argv[i + 1] ?? dflt);
}

function rssMiB(): { rss: number; hwm: number } {
  const s = readFileSync('/proc/self/status', 'utf8');
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? NaN) / 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

/** Resets VmHWM to the current RSS (Linux >= 4.0); false when not allowed. */
function resetPeak(): boolean {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
    return true;
  } catch {
    return false;
  }
}

/** A deterministic PRNG (mulberry32), so every store gets the same document. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const COUNTRIES = [
  ['US', 'United States', 'Ashburn, Virginia', 'Amazon.com, Inc.', 14618],
  ['DE', 'Germany', 'Frankfurt am Main, Hesse', 'Hetzner Online GmbH', 24940],
  ['BR', 'Brazil', 'São Paulo, São Paulo', 'Claro NXT Telecomunicacoes Ltda', 28573],
  ['ID', 'Indonesia', 'Jakarta, Jakarta', 'PT Telekomunikasi Indonesia', 7713],
  ['RU', 'Russia', 'Moscow, Moscow', 'JSC "ER-Telecom Holding"', 9049],
] as const;

/** The records of one check, in arrival order (shuffled), and its summary. */
function makeRecords(n: number): { records: ProxyRecord[]; summary: unknown } {
  const rand = rng(12345);
  const fold = new SummaryFold();
  const records: ProxyRecord[] = [];
  for (let i = 0; i < n; i++) {
    const host = `${1 + (i % 223)}.${(i >> 8) & 255}.${i & 255}.${1 + Math.floor(rand() * 254)}`;
    const port = [80, 8080, 3128, 1080, 8888][i % 5]!;
    const kind = rand();
    let probe: ProbeResult;
    if (kind < 0.1) {
      probe = {
        index: i,
        status: 'working',
        statusCode: 200,
        responseTimeMs: 40 + rand() * 2960,
        anonymity: (['elite', 'anonymous', 'transparent'] as const)[Math.floor(rand() * 3)]!,
        origin: host,
        error: null,
      };
    } else if (kind < 0.6) {
      probe = { index: i, status: 'failed', statusCode: null, responseTimeMs: 1 + rand() * 200, anonymity: null, origin: null, error: { code: 'connect_refused', message: 'connection refused' } };
    } else {
      probe = { index: i, status: 'failed', statusCode: null, responseTimeMs: 5000, anonymity: null, origin: null, error: { code: 'timeout', message: 'no answer within 5000 ms' } };
    }
    const c = COUNTRIES[i % COUNTRIES.length]!;
    const geo = { country: c[0], country_name: c[1], location: c[2], isp: c[3], asn: c[4], coordinates: { lat: 40 + rand(), lon: -70 - rand() } };
    const auth = i % 7 === 0 ? { username: `user${i}`, password: `pw${i}`, format: 'colon_auth' as const } : { format: 'standard' as const };
    const record = buildProxyRecord({ host, port, ...auth }, probe, geo);
    fold.add(record);
    records.push(record);
  }
  return { records, summary: fold.result() };
}

interface Phase {
  ms: number;
  /** Peak RSS during the phase above the RSS at its start, MiB. */
  peakMiB: number;
}
interface Run {
  bytes: number;
  write: Phase;
  finish: Phase;
  read: Phase;
  csv: Phase;
}

async function phase<T>(fn: () => Promise<T>): Promise<[T, Phase]> {
  Bun.gc(true);
  const start = rssMiB().rss;
  resetPeak();
  const t0 = performance.now();
  const value = await fn();
  const ms = performance.now() - t0;
  return [value, { ms: Math.round(ms), peakMiB: Math.round((rssMiB().hwm - start) * 10) / 10 }];
}

async function child(name: StoreName, proxies: number, runs: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), `bench-result-store-${name}-`));
  let database: Database | undefined;
  let drop: (() => Promise<void>) | undefined;
  try {
    let store: ResultStore;
    if (name === 'dir') {
      store = await openDirResultStore({ dataDir: dir, fsync: false }); // as server.ts opens it
    } else {
      if (name === 'pg') {
        const created = await createServerDatabase(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', 'bench');
        drop = created.drop;
        database = await openDatabase({ databaseUrl: created.url });
      } else {
        database = await openDatabase({ dataDir: dir });
      }
      store = await openPgResultStore({ db: database.db, stagingDir: join(dir, 'results-staging') });
    }
    const { records, summary } = makeRecords(proxies);
    const metadata = { user: { email: 'bench@example.test', balance: 1_000_000 }, proxy_type: 'http', region: 'us1', timeout: '5s' };
    const out: Run[] = [];
    for (let r = 0; r < runs; r++) {
      const id = newResultId();
      const [writer, write] = await phase(async () => {
        const w = await store.create(id);
        for (const rec of records) await w.addProxy(rec);
        return w;
      });
      const [stats, finish] = await phase(() => writer.finish({ summary, metadata }));
      const [bytes, read] = await phase(async () => {
        const found = await store.open(id);
        let n = 0;
        for await (const chunk of found!.stream()) n += chunk.byteLength;
        return n;
      });
      if (bytes !== stats.bytes) throw new Error(`read ${bytes} bytes of ${stats.bytes}`);
      const [, csv] = await phase(async () => {
        const found = await store.open(id);
        let n = 0;
        for await (const piece of convertResult('csv', found!.stream())) n += piece.length;
        return n;
      });
      out.push({ bytes, write, finish, read, csv });
    }
    let stored: number | null = null;
    if (database !== undefined) {
      const [row] = rowsOf<{ n: number }>(await database.db.execute(sql`SELECT pg_total_relation_size('result_chunks')::float8 AS n`));
      stored = Math.round(Number(row?.n ?? 0) / runs);
    }
    await store.close();
    process.stdout.write(`${JSON.stringify({ name, runs: out, stored })}\n`);
  } finally {
    await database?.close();
    await drop?.();
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const LABEL: Record<StoreName, string> = {
  dir: 'data dir (embedded)',
  pg: 'PostgreSQL store, PostgreSQL 15 on 127.0.0.1',
  pglite: 'PostgreSQL store, PGlite data dir',
};

async function main(): Promise<void> {
  const mode = flag('child', '');
  const proxies = Number(flag('proxies', '100000'));
  const runs = Number(flag('runs', '3'));
  if (mode !== '') return child(mode as StoreName, proxies, runs);
  const stores = flag('stores', 'dir,pg,pglite').split(',') as StoreName[];
  const self = fileURLToPath(import.meta.url);
  console.log(`${proxies} proxies (10% working), ${runs} runs each, medians; peak = max RSS during the phase above RSS at its start`);
  console.log('| store | document | write (addProxy x N) | finish() | read (stream all) | .csv (export) | stored in the database |');
  console.log('|---|---|---|---|---|---|---|');
  for (const name of stores) {
    const r = spawnSync(process.execPath, [self, '--child', name, '--proxies', String(proxies), '--runs', String(runs)], { encoding: 'utf8', env: process.env });
    if (r.status !== 0) {
      console.log(`| ${LABEL[name]} | failed: ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' ')} |`);
      continue;
    }
    const res = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { runs: Run[]; stored: number | null };
    const cell = (k: 'write' | 'finish' | 'read' | 'csv') => {
      const ms = median(res.runs.map((x) => x[k].ms));
      const peak = median(res.runs.map((x) => x[k].peakMiB));
      return `${(ms / 1000).toFixed(2)} s, peak +${peak.toFixed(0)} MiB`;
    };
    const stored = res.stored === null ? '-' : `${(res.stored / MiB).toFixed(1)} MiB`;
    console.log(`| ${LABEL[name]} | ${(res.runs[0]!.bytes / MiB).toFixed(1)} MiB | ${cell('write')} | ${cell('finish')} | ${cell('read')} | ${cell('csv')} | ${stored} |`);
    console.error(`${name}: ${JSON.stringify(res.runs.map((x) => [x.finish.ms, x.read.ms]))}`);
  }
}

await main();
