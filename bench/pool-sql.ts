/**
 * The pools' SQL on a 100 000-proxy pool (src/pools/proxies-sql.ts over the
 * tables of db/schema.ts), on a PostgreSQL server and on PGlite in memory:
 *   add      insertProxiesStatement of the whole list (batches of 10 000)
 *   round    a round of `--batch` (1 000) proxies: dueProxiesStatement, foldCheck
 *            of each (fold.ts: verdict, history, schedule), the owner's flush statements
 *            (flush-sql.ts: the narrow state rows and the verdict fields, unfenced); the database time of the UPDATE per 1 000 rows, and
 *            the whole round
 *   page     GET /pools/{id}/proxies?status=working (sort latency): the first
 *            page at limit 100 and at limit 10 000 (what format=txt reads), and a
 *            page after a cursor; p50 / p99 over `--runs` queries each
 *   stats    poolStatsStatement (the pool object's counts and checks per day)
 * The pool is 60 % working after the rounds that fold the whole list once.
 *
 * Run: bun bench/pool-sql.ts [--proxies 100000] [--batch 1000] [--runs 50] [--drivers pg,pglite]
 *      PostgreSQL: DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres);
 *      a fresh database is created on it and dropped again.
 */
import { sql, type SQL } from 'drizzle-orm';
import { openDatabase, rowsOf, type Database } from '../db/client';
import { createAccount } from '../src/accounts/accounts';
import { HISTORY_BYTES } from '../src/pools/history';
import { stateUpdateStatement, verdictFieldsStatement } from '../src/pools/flush-sql';
import { batchesOfRows } from '../src/pools/table-batch';
import { dueProxiesStatement, insertProxiesStatement, pageOf, poolStatsStatement, proxiesPageStatement } from '../src/pools/proxies-sql';
import { DEFAULT_PROXIES_QUERY, type PoolProxiesQuery } from '../src/pools/query';
import { rowFromSql } from '../src/pools/shape';
import { benchVerdict } from './pool-verdicts';
import type { ParsedProxy } from '../src/proxy/parse';
import { createServerDatabase } from '../test/helpers/db';

function flag(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? dflt : (process.argv[i + 1] ?? dflt);
}

const PROXIES = Number(flag('proxies', '100000'));
const BATCH = Number(flag('batch', '1000'));
const RUNS = Number(flag('runs', '50'));
const DRIVERS = flag('drivers', 'pg,pglite').split(',');
const POOL = 'benchpool0001';

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number;
};
const ms = (n: number) => `${n.toFixed(1)} ms`;

async function timed<T>(f: () => Promise<T>): Promise<[T, number]> {
  const t = performance.now();
  const v = await f();
  return [v, performance.now() - t];
}

async function bench(name: string, database: Database): Promise<void> {
  const run = async (q: SQL) => rowsOf<Record<string, unknown>>(await database.db.execute(q));
  const account = await createAccount(database.db, { email: 'bench@example.test', checks: 0 });
  await run(sql`INSERT INTO pools (id, account_id, name, type, region, interval_s, timeout_ms) VALUES (${POOL}, ${account.id}::uuid, 'bench', 'http', 'us1', 300, 5000)`);
  const list: ParsedProxy[] = Array.from({ length: PROXIES }, (_, i) => ({ host: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, port: 8080, format: 'standard', raw: '' }));

  const [, addMs] = await timed(async () => {
    for (let i = 0; i < list.length; i += 10_000) await run(insertProxiesStatement(POOL, 'http', list.slice(i, i + 10_000), Date.now()));
  });

  let seed = 1;
  const random = () => ((seed = (seed * 48271) % 2147483647) - 1) / 2147483646;
  const updateMs: number[] = [];
  const roundMs: number[] = [];
  let now = Date.now();
  for (let done = 0; done < PROXIES; done += BATCH) {
    const t0 = performance.now();
    const due = (await run(dueProxiesStatement(POOL, now, BATCH))).map(rowFromSql);
    const rows = due.map((r) => benchVerdict(r, random, now));
    const { state, verdicts } = batchesOfRows(rows);
    const [, u] = await timed(async () => (await run(stateUpdateStatement(POOL, null, state)), await run(verdictFieldsStatement(POOL, null, verdicts))));
    updateMs.push((u * 1000) / Math.max(1, rows.length));
    roundMs.push(performance.now() - t0);
    now += 10;
  }

  const page = async (q: PoolProxiesQuery) => {
    const times: number[] = [];
    let rows = 0;
    for (let i = 0; i < RUNS; i++) {
      const [raw, t] = await timed(() => run(proxiesPageStatement(POOL, q)));
      rows = pageOf(raw, q).rows.length;
      times.push(t);
    }
    return { p50: pct(times, 50), p99: pct(times, 99), rows };
  };
  const first = await page({ ...DEFAULT_PROXIES_QUERY });
  const big = await page({ ...DEFAULT_PROXIES_QUERY, limit: 10_000, format: 'txt' });
  const firstPage = pageOf(await run(proxiesPageStatement(POOL, { ...DEFAULT_PROXIES_QUERY, limit: 20_000 })), { ...DEFAULT_PROXIES_QUERY, limit: 20_000 });
  const cursor = firstPage.nextCursor === null ? null : (await import('../src/pools/cursor')).decodeCursor(firstPage.nextCursor);
  const after = await page({ ...DEFAULT_PROXIES_QUERY, limit: 10_000, cursor });
  const de = await page({ ...DEFAULT_PROXIES_QUERY, country: 'DE', limit: 10_000 });
  const [, statsMs] = await timed(() => run(poolStatsStatement([POOL], now)));
  const size = (await run(sql`SELECT pg_total_relation_size('pool_proxies')::float8 AS b, pg_relation_size('pool_proxies')::float8 AS heap`))[0] as { b: number; heap: number };

  console.log(`\n${name}: ${PROXIES} proxies, history ${HISTORY_BYTES} B/proxy`);
  console.log(`  add all               ${ms(addMs)}`);
  console.log(`  round of ${BATCH}: whole p50 ${ms(pct(roundMs, 50))} p99 ${ms(pct(roundMs, 99))}; UPDATE per 1 000 rows p50 ${ms(pct(updateMs, 50))} p99 ${ms(pct(updateMs, 99))}`);
  console.log(`  page working limit 100      p50 ${ms(first.p50)} p99 ${ms(first.p99)} (${first.rows} rows)`);
  console.log(`  page working limit 10 000   p50 ${ms(big.p50)} p99 ${ms(big.p99)} (${big.rows} rows)`);
  console.log(`  page after a cursor (10 000) p50 ${ms(after.p50)} p99 ${ms(after.p99)} (${after.rows} rows)`);
  console.log(`  page working country=DE (10 000) p50 ${ms(de.p50)} p99 ${ms(de.p99)} (${de.rows} rows)`);
  console.log(`  stats                 ${ms(statsMs)}`);
  console.log(`  pool_proxies on disk  ${(size.b / 1048576).toFixed(1)} MiB (heap ${(size.heap / 1048576).toFixed(1)} MiB, ${(size.heap / PROXIES).toFixed(0)} B/row)`);
}

for (const driver of DRIVERS) {
  if (driver === 'pg') {
    const created = await createServerDatabase(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', 'bench_pools');
    const database = await openDatabase({ databaseUrl: created.url });
    try {
      await bench('PostgreSQL', database);
    } finally {
      await database.close();
      await created.drop();
    }
  } else {
    const database = await openDatabase({ inMemory: true });
    try {
      await bench('PGlite (in memory)', database);
    } finally {
      await database.close();
    }
  }
}
