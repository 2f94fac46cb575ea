/**
 * The pools' SQL builders (src/pools/proxies-sql.ts) against a real database
 * on the driver the environment selects (PGlite in memory, or PostgreSQL with
 * DATABASE_URL), over the tables of db/schema.ts (migrations 0005, 0006). Covers: add/remove, the due scan, batch
 * writes that read back exactly, the spread after a restart equal to the pure
 * function, the stats equal to the schedule's formula, and a fast-check
 * property: paging with cursors through random pools and queries lists
 * exactly the rows a model filters and sorts, once each, also when rows are
 * inserted between pages; and the owner's memory (src/pools/proxy-page.ts over
 * the rows loaded into a ProxyTable) gives the same pages and the same cursors.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql, type SQL } from 'drizzle-orm';
import fc from 'fast-check';
import { queryFilterArbs } from '../helpers/pool-query-arb';
import { rowsOf } from '../../db/client';
import { createAccount } from '../../src/accounts/accounts';
import { parseProxyLine, type ParsedProxy } from '../../src/proxy/parse';
import { foldCheck } from '../../src/pools/fold';
import { uptime } from '../../src/pools/history';
import {
  accountUsageStatement,
  dueProxiesStatement,
  insertProxiesStatement,
  pageOf,
  poolStatsStatement,
  proxiesPageStatement,
  removeProxiesStatement,
  spreadOverdueStatement,
  statsOf,
} from '../../src/pools/proxies-sql';
import { DEFAULT_PROXIES_QUERY, type PoolProxiesQuery } from '../../src/pools/query';
import { decodeCursor } from '../../src/pools/cursor';
import { checksPerDay, spreadOverdue } from '../../src/pools/schedule';
import { rowFromSql, type PoolProxyRow } from '../../src/pools/shape';
import { emptyStateBatch, emptyVerdictBatch, loadProxiesStatement, recordBatchStatement, stateUpdateStatement, verdictFieldsStatement } from '../../src/pools/flush-sql';
import { memoryPage } from '../../src/pools/proxy-page';
import { ProxyTable } from '../../src/pools/proxy-table';
import { batchesOfRows, pushStateSlot, pushVerdictSlot } from '../../src/pools/table-batch';
import { freshDatabase, type TestDatabase } from '../helpers/db';

let tdb: TestDatabase;
let accountId = '';
let poolSeq = 0;
const NOW = Date.UTC(2026, 5, 1, 12);

const run = async (q: SQL) => rowsOf<Record<string, unknown>>(await tdb.db.execute(q));

async function newPool(type = 'http', intervalS = 300): Promise<string> {
  const id = `pool${String(++poolSeq).padStart(8, '0')}`;
  await run(sql`INSERT INTO pools (id, account_id, name, type, region, interval_s, timeout_ms) VALUES (${id}, ${accountId}::uuid, 'p', ${type}, 'us1', ${intervalS}, 5000)`);
  return id;
}

/** Whole rows written as they are (unfenced: no owner), state and verdict fields. */
async function write(pool: string, rows: readonly PoolProxyRow[]): Promise<void> {
  const { state, verdicts } = batchesOfRows(rows);
  await run(stateUpdateStatement(pool, null, state));
  await run(verdictFieldsStatement(pool, null, verdicts));
}

/** The pool as its owner holds it: every row loaded into a table. */
async function tableOf(pool: string): Promise<ProxyTable> {
  const t = new ProxyTable();
  for (const r of (await run(loadProxiesStatement(pool, 0, 100_000))).map(rowFromSql)) t.add(r);
  return t;
}

const parsed = (lines: string[]): ParsedProxy[] => lines.map((l) => parseProxyLine(l) as ParsedProxy);

beforeAll(async () => {
  tdb = await freshDatabase();
  accountId = (await createAccount(tdb.db, { email: 'pools@example.test', checks: 10 })).id;
}, 60_000);
afterAll(async () => {
  await tdb.cleanup();
});

describe('membership and the due scan', () => {
  test('add (an address twice is one), due at once, remove', async () => {
    const pool = await newPool();
    const a = parsed(['1.1.1.1:80', 'u:p@2.2.2.2:81', '[2001:db8::1]:82', 'h.example:83:us:pw:x']);
    expect((await run(insertProxiesStatement(pool, 'http', a, NOW)))[0]?.added).toBe(4);
    expect((await run(insertProxiesStatement(pool, 'http', parsed(['1.1.1.1:80', '3.3.3.3:80']), NOW)))[0]?.added).toBe(1);
    const due = (await run(dueProxiesStatement(pool, NOW, 100))).map(rowFromSql);
    expect(due.map((r) => `${r.host}:${r.port}:${r.username}:${r.password}:${r.format}:${r.type}`)).toEqual([
      '1.1.1.1:80:::standard:http',
      '2.2.2.2:81:u:p:url_auth:http',
      '2001:db8::1:82:::standard:http',
      'h.example:83:us:pw:x:colon_auth:http',
      '3.3.3.3:80:::standard:http',
    ]);
    expect(await run(dueProxiesStatement(pool, NOW - 1, 100))).toEqual([]);
    expect((await run(dueProxiesStatement(pool, NOW, 2))).length).toBe(2);
    expect((await run(removeProxiesStatement(pool, parsed(['u:p@2.2.2.2:81', 'u:other@2.2.2.2:81', '9.9.9.9:1']))))[0]?.removed).toBe(1);
    expect((await run(accountUsageStatement(accountId, pool)))[0]).toMatchObject({ in_pool: 4 });
  });

  test('credentials with quotes, backslashes, commas, braces, NULL and non-ASCII travel intact in the array literals', async () => {
    const pool = await newPool();
    const odd = parsed(['a%22b%5C%2C%7B%7D:p%27w@4.4.4.4:80', 'NULL:null@4.4.4.4:81', '%C3%BC%20x:%E2%82%AC@4.4.4.4:82']);
    expect(odd.map((p) => [p.username, p.password])).toEqual([['a"b\\,{}', "p'w"], ['NULL', 'null'], ['ü x', '€']]);
    expect((await run(insertProxiesStatement(pool, 'http', odd, NOW)))[0]?.added).toBe(3);
    const back = (await run(dueProxiesStatement(pool, NOW, 10))).map(rowFromSql);
    expect(back.map((r) => [r.username, r.password])).toEqual(odd.map((p) => [p.username ?? '', p.password ?? '']));
    expect((await run(removeProxiesStatement(pool, odd)))[0]?.removed).toBe(3);
  });

  test('an auto pool leaves the type to the first check', async () => {
    const pool = await newPool('auto');
    await run(insertProxiesStatement(pool, 'auto', parsed(['1.1.1.1:80']), NOW));
    expect(rowFromSql((await run(dueProxiesStatement(pool, NOW, 1)))[0] as Record<string, unknown>).type).toBeNull();
  });
});

describe('writing a round', () => {
  test('folded rows written in one statement read back exactly (history bytes included)', async () => {
    const pool = await newPool('auto');
    await run(insertProxiesStatement(pool, 'auto', parsed(['1.1.1.1:80', '2.2.2.2:80', '3.3.3.3:80']), NOW));
    const due = (await run(dueProxiesStatement(pool, NOW, 10))).map(rowFromSql);
    const ctx = { poolType: 'auto' as const, intervalS: 300, nowMs: NOW + 5000, random: () => 0.5 };
    const geo = { country: 'DE', country_name: 'Germany', location: "O'Brien \"x\"", isp: null, asn: 3320, coordinates: null };
    const folded = [
      foldCheck(due[0] as PoolProxyRow, { status: 'working', statusCode: 200, responseTimeMs: 120.5, anonymity: 'elite', origin: '1.1.1.1', error: null, protocols: ['socks5', 'http'], https: true }, geo, ctx),
      foldCheck(due[1] as PoolProxyRow, { status: 'failed', statusCode: null, responseTimeMs: 5000, anonymity: null, origin: null, error: { code: 'timeout', message: 'no answer' } }, null, ctx),
      foldCheck(due[2] as PoolProxyRow, { status: 'failed', statusCode: null, responseTimeMs: 1, anonymity: null, origin: null, error: { code: 'checker_overloaded', message: 'EMFILE' } }, null, ctx),
    ];
    expect(folded.map((f) => f.event)).toEqual([null, null, null]);
    await write(pool, folded.map((f) => f.row));
    const back = (await run(proxiesPageStatement(pool, { ...DEFAULT_PROXIES_QUERY, status: 'all', sort: 'checked' }))).map(rowFromSql);
    for (const f of folded) {
      const b = back.find((r) => r.id === f.row.id) as PoolProxyRow;
      expect({ ...b, history: b.history === null ? null : [...b.history] }).toEqual({ ...f.row, history: f.row.history === null ? null : [...f.row.history] });
    }
    expect(folded[2]?.row.status).toBe('unchecked');
  });

  test("an owner's table slots written back unchanged: no history and no check stay null, times exact to the ms; a row of another pool is left alone", async () => {
    const pool = await newPool('http');
    const other = await newPool('http');
    await run(insertProxiesStatement(pool, 'http', parsed(['4.4.4.4:80', '5.5.5.5:80']), NOW));
    await run(insertProxiesStatement(other, 'http', parsed(['6.6.6.6:80']), NOW));
    const due = (await run(dueProxiesStatement(pool, NOW, 10))).map(rowFromSql);
    const ctx = { poolType: 'http' as const, intervalS: 300, nowMs: NOW + 1234, random: () => 0.37 };
    const checked = foldCheck(due[0] as PoolProxyRow, { status: 'working', statusCode: 200, responseTimeMs: 80, anonymity: 'elite', origin: '4.4.4.4', error: null, https: true }, null, ctx).row;
    await write(pool, [checked]);
    const t = await tableOf(pool);
    const before = (await run(proxiesPageStatement(pool, { ...DEFAULT_PROXIES_QUERY, status: 'all' }))).map(rowFromSql);
    const state = emptyStateBatch();
    const verdicts = emptyVerdictBatch();
    for (let s = 0; s < t.size; s++) (pushStateSlot(state, t, s), pushVerdictSlot(verdicts, t, s));
    const [otherRow] = (await run(dueProxiesStatement(other, NOW, 10))).map(rowFromSql);
    verdicts.id.push(otherRow!.id);
    for (const k of ['type', 'anonymity', 'https', 'origin', 'country', 'countryName', 'location', 'isp', 'asn'] as const) (verdicts[k] as unknown[]).push(verdicts[k][0]);
    verdicts.protocols.push(verdicts.protocols[0]!);
    await run(stateUpdateStatement(pool, null, state));
    await run(verdictFieldsStatement(pool, null, verdicts));
    const after = (await run(proxiesPageStatement(pool, { ...DEFAULT_PROXIES_QUERY, status: 'all' }))).map(rowFromSql);
    expect(after).toEqual(before);
    expect(after.find((r) => r.id !== checked.id)?.history).toBeNull();
    expect(after.find((r) => r.id === checked.id)?.lastCheckedAt?.getTime()).toBe(NOW + 1234);
    expect((await run(dueProxiesStatement(other, NOW, 10))).map(rowFromSql)).toEqual([otherRow!]);
  });
});

describe('after a restart', () => {
  test('the SQL spread gives the pure function its due times', async () => {
    const pool = await newPool('http', 120);
    await run(insertProxiesStatement(pool, 'http', parsed(Array.from({ length: 40 }, (_, i) => `10.0.${i}.1:8080`)), NOW));
    const rows = (await run(dueProxiesStatement(pool, NOW, 100))).map(rowFromSql);
    // scatter their due times around now, some overdue, some not
    const scattered = rows.map((r, i) => ({ ...r, nextCheckAt: new Date(NOW + (i % 3 === 0 ? 5000 * i : -7000 * i)) }));
    await write(pool, scattered);
    const later = NOW + 1000;
    await run(spreadOverdueStatement(pool, later, 120));
    const after = (await run(sql`SELECT id::float8 AS id, next_check_at FROM pool_proxy_rows WHERE pool_id = ${pool} ORDER BY id`)).map((r) => ({
      id: Number(r.id),
      at: new Date(r.next_check_at as string).getTime(),
    }));
    const byId = [...scattered].sort((a, b) => a.id - b.id);
    expect(after.map((a) => a.at)).toEqual(spreadOverdue(byId.map((r) => r.nextCheckAt.getTime()), later, 120));
  });
});

describe('the pool object stats', () => {
  test('counts, next due, checks per day = the schedule formula, checks in the last 24 h from rounds', async () => {
    const pool = await newPool('http', 300);
    const empty = await newPool();
    await run(insertProxiesStatement(pool, 'http', parsed(['1.1.1.1:1', '1.1.1.1:2', '1.1.1.1:3', '1.1.1.1:4']), NOW));
    const rows = (await run(dueProxiesStatement(pool, NOW, 10))).map(rowFromSql);
    const states = [
      { status: 'working', failures: 0 },
      { status: 'failed', failures: 1 },
      { status: 'failed', failures: 12 },
      { status: 'unchecked', failures: 0 },
    ] as const;
    await write(pool, rows.map((r, i) => ({ ...r, ...states[i], nextCheckAt: new Date(NOW + 1000 * (i + 1)) })));
    const seq = Number((await run(recordBatchStatement(pool, null, { checked: 4, working: 1, charged: 4 }, NOW - 3_600_000, NOW - 3_590_000)))[0]?.seq);
    await run(recordBatchStatement(pool, null, { checked: 9, working: 9, charged: 9 }, NOW - 2 * 86_400_000, NOW - 2 * 86_400_000));
    expect(seq).toBe(1);
    const stats = (await run(poolStatsStatement([pool, empty], NOW))).map(statsOf);
    const s = stats.find((x) => x.poolId === pool);
    expect(s?.counts).toEqual({ total: 4, working: 1, failed: 2, unchecked: 1 });
    expect(s?.nextDueAt?.getTime()).toBe(NOW + 1000);
    expect(s?.checksLast24h).toBe(4);
    expect(s?.checksPerDay).toBeCloseTo(states.reduce((a, x) => a + checksPerDay(300, x.failures), 0), 6);
    expect(stats.find((x) => x.poolId === empty)).toEqual({ poolId: empty, counts: { total: 0, working: 0, failed: 0, unchecked: 0 }, nextDueAt: null, checksLast24h: 0, checksPerDay: 0 });
  });
});

describe('the proxies query', () => {
  // ---- the property: pages through random pools match a model -----------------------------------

  interface Spec {
    status: 'working' | 'failed' | 'unchecked';
    country: string | null;
    anonymity: 'elite' | 'anonymous' | 'transparent' | null;
    https: boolean | null;
    latency: number | null;
    uptimePpm: number | null;
    checkedAt: number | null;
    protocols: number;
  }
  const specArb: fc.Arbitrary<Spec> = fc.record({
    status: fc.constantFrom('working' as const, 'failed' as const, 'unchecked' as const),
    country: fc.constantFrom(null, 'DE', 'US'),
    anonymity: fc.constantFrom(null, 'elite' as const, 'anonymous' as const, 'transparent' as const),
    https: fc.constantFrom(null, true, false),
    latency: fc.option(fc.integer({ min: 0, max: 30 }), { nil: null }), // few values: many ties
    uptimePpm: fc.option(fc.constantFrom(0, 250_000, 500_000, 1_000_000), { nil: null }),
    checkedAt: fc.option(fc.integer({ min: 0, max: 5 }).map((m) => NOW - m * 60_000), { nil: null }),
    protocols: fc.integer({ min: 0, max: 7 }),
  });
  const queryArb = fc.record({
    ...queryFilterArbs,
    format: fc.constantFrom('json' as const, 'txt' as const),
  });

  /** Rows of the model with the query's filters and order. */
  function model(rows: (Spec & { id: number; type: string | null })[], q: Omit<PoolProxiesQuery, 'cursor'>): number[] {
    const bits = { http: 1, socks4: 2, socks5: 4 } as const;
    const key = (r: Spec): number =>
      q.sort === 'latency' ? (r.latency ?? 2147483647) : q.sort === 'uptime' ? (r.uptimePpm ?? -1) : (r.checkedAt ?? 0);
    const desc = q.sort !== 'latency';
    return rows
      .filter(
        (r) =>
          (q.status === 'all' || r.status === q.status) &&
          (q.country === null || r.country === q.country) &&
          (q.anonymity === null || r.anonymity === q.anonymity) &&
          (q.type === null || r.type === q.type || (r.protocols & bits[q.type]) !== 0) &&
          (q.https === null || r.https === q.https) &&
          (q.maxLatencyMs === null || (r.latency !== null && r.latency <= q.maxLatencyMs)) &&
          (q.minUptime === null || (r.uptimePpm !== null && r.uptimePpm >= q.minUptime * 1_000_000)),
      )
      .sort((a, b) => (desc ? key(b) - key(a) || b.id - a.id : key(a) - key(b) || a.id - b.id))
      .map((r) => r.id);
  }

  async function fill(pool: string, specs: readonly Spec[], from: number): Promise<(Spec & { id: number; type: string | null })[]> {
    await run(insertProxiesStatement(pool, 'auto', parsed(specs.map((_, i) => `10.1.${Math.floor((from + i) / 250)}.${((from + i) % 250) + 1}:80`)), NOW));
    const rows = (await run(sql`SELECT ${sql.raw('id::float8 AS id, host, port, username, password, format, status, failures, checks, type, protocols, anonymity, https, origin, country, country_name, location, isp, asn, status_code, response_time_ms, error_code, error_message, latency_p50_ms, uptime_h24_ppm, history, first_seen_at, last_checked_at, last_change_at, next_check_at')} FROM pool_proxy_rows WHERE pool_id = ${pool} ORDER BY id OFFSET ${from}`)).map(rowFromSql);
    const written = rows.map((r, i) => {
      const s = specs[i] as Spec;
      return {
        ...r,
        status: s.status,
        country: s.country,
        anonymity: s.anonymity,
        https: s.https,
        latencyP50Ms: s.latency,
        uptimeH24Ppm: s.uptimePpm,
        lastCheckedAt: s.checkedAt === null ? null : new Date(s.checkedAt),
        protocols: s.protocols,
        type: s.protocols & 4 ? ('socks5' as const) : null,
      };
    });
    await write(pool, written);
    return written.map((w, i) => ({ ...(specs[i] as Spec), id: w.id, type: w.type }));
  }

  test('property: following next_cursor lists exactly the rows the model selects, in its order, once each, inserts between pages included', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(specArb, { maxLength: 25 }), fc.array(specArb, { maxLength: 6 }), queryArb, async (specs, extra, q) => {
        const pool = await newPool('auto');
        const rows = await fill(pool, specs, 0);
        const expected = model(rows, q);
        const seen: number[] = [];
        let cursor: string | null = null;
        let pages = 0;
        do {
          const query: PoolProxiesQuery = { ...q, cursor: cursor === null ? null : decodeCursor(cursor) };
          const page = pageOf(await run(proxiesPageStatement(pool, query)), query);
          // the owner's memory pages the same rows with the same cursor (a cursor survives an owner change)
          const table = await tableOf(pool);
          const memory = memoryPage(table, query);
          expect(memory.slots.map((x) => table.id[x])).toEqual(page.rows.map((r) => r.id));
          expect(memory.nextCursor).toBe(page.nextCursor);
          expect(page.rows.length).toBeLessThanOrEqual(q.limit);
          for (const r of page.rows) expect(r.host).toMatch(/^10\.1\./);
          seen.push(...page.rows.map((r) => r.id));
          cursor = page.nextCursor;
          // rows inserted after the first page: they may appear once (if they sort after the cursor), never twice, never displacing others
          if (pages === 0 && extra.length > 0) rows.push(...(await fill(pool, extra, specs.length)));
          pages++;
        } while (cursor !== null && pages < 100);
        expect(new Set(seen).size).toBe(seen.length);
        const all = model(rows, q);
        // everything the model selected before the inserts is listed, in order, and nothing outside the final selection
        expect(seen.filter((id) => expected.includes(id))).toEqual(expected);
        for (const id of seen) expect(all).toContain(id);
        // and the listing is in the model's order of the final selection
        expect(seen).toEqual(all.filter((id) => seen.includes(id)));
      }),
      { numRuns: 40 },
    );
  }, 120_000);

  test('the values a cursor carries survive a round trip through the database exactly', async () => {
    const pool = await newPool('auto');
    const rows = await fill(pool, [
      { status: 'working', country: null, anonymity: null, https: null, latency: 5, uptimePpm: 333_333, checkedAt: NOW + 123, protocols: 0 },
      { status: 'working', country: null, anonymity: null, https: null, latency: 5, uptimePpm: 333_333, checkedAt: NOW + 123, protocols: 0 },
    ], 0);
    for (const sort of ['latency', 'uptime', 'checked'] as const) {
      const q: PoolProxiesQuery = { ...DEFAULT_PROXIES_QUERY, sort, limit: 1 };
      const first = pageOf(await run(proxiesPageStatement(pool, q)), q);
      const c = decodeCursor(first.nextCursor as string);
      expect(c?.sort).toBe(sort);
      const second = pageOf(await run(proxiesPageStatement(pool, { ...q, cursor: c })), q);
      const table = await tableOf(pool);
      expect(memoryPage(table, q).nextCursor).toBe(first.nextCursor);
      expect(memoryPage(table, { ...q, cursor: c }).slots.map((x) => table.id[x])).toEqual(second.rows.map((r) => r.id));
      expect([...first.rows, ...second.rows].map((r) => r.id).sort()).toEqual(rows.map((r) => r.id).sort());
      expect(second.nextCursor).toBeNull();
    }
    expect(uptime(null, NOW).h24).toBeNull();
  });
});
