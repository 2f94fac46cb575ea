/**
 * P3 of issue 23: `GET /pools/{id}/proxies?status=working&format=txt` on a
 * pool of 100 000 proxies, through HTTP, the service started as users start
 * it (`bun src/main.ts` with `npm start`'s environment, bench/e2e/service.ts),
 * on the embedded PGlite (default) or PostgreSQL (E2E_DATABASE_URL).
 *
 *   1. start the service; POST /pools with the list (the request's wall time
 *      is "create"); stop it
 *   2. verdicts for every proxy, folded as the rounds will fold them
 *      (src/pools/fold.ts, 60 % working, 30 % of those in DE) and written
 *      with the store's batch write (1 000 rows per statement), straight
 *      into the database (the service is stopped: PGlite allows one process)
 *   3. start it again; `--runs` sequential requests per query on one
 *      keep-alive connection, p50 / p99 of the wall time to the last byte:
 *      txt at the default limit (100) and at 10 000, json at 100, txt with
 *      country=DE, and the pages of a whole txt download (10 000 each)
 *
 * Run: bun bench/pool-query.ts [--proxies 100000] [--runs 200]
 *      E2E_DATABASE_URL=postgres://... for PostgreSQL (a fresh database is
 *      made on that server and dropped again).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase, rowsOf } from '../db/client';
import { sql } from 'drizzle-orm';
import { applyResults, dueProxies } from '../src/pools/store';
import { createServerDatabase } from '../test/helpers/db';
import { BENCH_KEY, startService } from './e2e/service';
import { stopAll } from './e2e/proc';
import { benchVerdict } from './pool-verdicts';

const { values } = parseArgs({ options: { proxies: { type: 'string', default: '100000' }, runs: { type: 'string', default: '200' } } });
const PROXIES = Number(values.proxies);
const RUNS = Number(values.runs);
const BATCH = 1000;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? 0;
};
const ms = (x: number) => `${x.toFixed(1)} ms`;
const headers = { 'X-API-Key': BENCH_KEY };

const dataDir = mkdtempSync(join(tmpdir(), 'pc-pool-query-'));
const serverUrl = process.env.E2E_DATABASE_URL;
const pg = serverUrl === undefined || serverUrl === '' ? null : await createServerDatabase(serverUrl, 'bench_pool_query');
const env = {
  // the service's own judge (nothing is probed here)
  JUDGE_URL: '',
  JUDGE_KEY: '',
  ...(pg !== null ? { DATABASE_URL: pg.url } : {}),
};
if (pg !== null) process.env.E2E_DATABASE_URL = pg.url;

try {
  // 1. the pool, through the API
  let svc = await startService({ dataDir, slotsPerEndpoint: null, judgeUrl: '', judgeKey: '', env });
  const list = Array.from({ length: PROXIES }, (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:${8000 + (i % 1000)}`);
  const t0 = performance.now();
  const made = await fetch(`${svc.url}/pools`, { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'bench', text: list.join('\n'), interval_s: 300 }) });
  const createMs = performance.now() - t0;
  const pool = (await made.json()) as { id: string; counts: { total: number } };
  if (made.status !== 201) throw new Error(`POST /pools: ${made.status} ${JSON.stringify(pool)}`);
  await svc.stop();

  // 2. verdicts, straight into the database
  const database = await openDatabase(pg !== null ? { databaseUrl: pg.url } : { dataDir });
  let seed = 1;
  const random = () => ((seed = (seed * 48271) % 2147483647) - 1) / 2147483646;
  const t1 = performance.now();
  const now = Date.now();
  const all = await dueProxies(database.db, pool.id, now + 86_400_000, PROXIES);
  for (let i = 0; i < all.length; i += BATCH) {
    const rows = all.slice(i, i + BATCH).map((r) => benchVerdict(r, random, now));
    await applyResults(database.db, pool.id, rows);
  }
  const seedMs = performance.now() - t1;
  const working = Number(rowsOf<{ n: number }>(await database.db.execute(sql`SELECT count(*)::float8 AS n FROM pool_proxies WHERE pool_id = ${pool.id} AND status = 'working'`))[0]?.n);
  await database.close();

  // 3. the queries, through the API
  svc = await startService({ dataDir, slotsPerEndpoint: null, judgeUrl: '', judgeKey: '', env });
  const query = async (q: string) => {
    const times: number[] = [];
    let bytes = 0;
    for (let i = 0; i < RUNS; i++) {
      const s = performance.now();
      const res = await fetch(`${svc.url}/pools/${pool.id}/proxies?${q}`, { headers });
      const body = await res.arrayBuffer();
      times.push(performance.now() - s);
      if (res.status !== 200) throw new Error(`${q}: HTTP ${res.status}`);
      bytes = body.byteLength;
    }
    return `p50 ${ms(pct(times, 50))} p99 ${ms(pct(times, 99))} (${bytes} bytes)`;
  };
  // warm-up (first queries plan and fill caches)
  for (let i = 0; i < 20; i++) await (await fetch(`${svc.url}/pools/${pool.id}/proxies?status=working&format=txt`, { headers })).arrayBuffer();
  const rows: [string, string][] = [
    ['status=working&format=txt (limit 100)', await query('status=working&format=txt')],
    ['status=working&format=txt&limit=10000', await query('status=working&format=txt&limit=10000')],
    ['status=working (json, limit 100)', await query('status=working')],
    ['status=working&country=DE&format=txt (limit 100)', await query('status=working&country=DE&format=txt')],
  ];
  // a whole txt download, page after page
  const t2 = performance.now();
  let cursor: string | null = null;
  let lines = 0;
  let pages = 0;
  do {
    const res: Response = await fetch(`${svc.url}/pools/${pool.id}/proxies?status=working&format=txt&limit=10000${cursor === null ? '' : `&cursor=${cursor}`}`, { headers });
    lines += (await res.text()).split('\n').length - 1;
    cursor = res.headers.get('x-next-cursor');
    pages++;
  } while (cursor !== null);
  const wholeMs = performance.now() - t2;
  await svc.stop();

  console.log(`\n${pg !== null ? 'PostgreSQL' : 'PGlite (data dir)'}: pool of ${pool.counts.total} proxies, ${working} working`);
  console.log(`  POST /pools (${PROXIES} addresses as text)   ${ms(createMs)}`);
  console.log(`  verdicts written (${BATCH} per statement)    ${ms(seedMs)}`);
  for (const [q, r] of rows) console.log(`  GET ...?${q.padEnd(48)} ${r}`);
  console.log(`  every working proxy as txt: ${pages} pages, ${lines} lines, ${ms(wholeMs)}`);
} finally {
  await stopAll();
  await pg?.drop();
  rmSync(dataDir, { recursive: true, force: true });
}
