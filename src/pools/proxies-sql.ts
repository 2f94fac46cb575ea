/**
 * SQL builders for pools (pg-boss `plans.ts` style, as src/accounts/quota-sql.ts):
 * pure functions from input to ONE statement, every value a parameter, no
 * I/O. The caller executes them (`db.execute`) and reads the rows with
 * shape.ts rowFromSql. They name the tables of db/schema.ts (pools, pool_proxies, pool_rounds)
 * and read whole proxy rows from the view pool_proxy_rows (pool_proxies joined to
 * pool_proxy_state, migration 0006); the owner's writes are flush-sql.ts's.
 *
 * Batches: lists travel as one array parameter per column, unnested in SQL
 * (`unnest($1::bigint[], $2::text[], ...)`), so a batch of any size is one
 * statement with a fixed number of parameters (VALUES lists would hit the
 * 65 535-parameter limit at a few thousand rows). Each array is sent as its
 * PostgreSQL literal text (drizzle's makePgArray: strings quoted and escaped,
 * null as NULL) and cast, because postgres.js does not serialise a JS array
 * parameter of an unprepared statement; history bytes travel as hex text
 * (decode(.., 'hex')).
 *
 *   proxiesPageStatement   GET /pools/{id}/proxies: filters, keyset after the
 *                          cursor, ORDER BY the sort key and id, limit + 1
 *                          rows (the extra one says a next page exists);
 *                          pageOf turns the rows into a page and next_cursor
 *   dueProxiesStatement    the proxies due by now, most overdue first (tests
 *                          seed verdicts through it)
 *   insertProxiesStatement add addresses (an address already in the pool is
 *                          left as it is); answers how many were added
 *   insertProxiesUpToStatement  the same, at most `room` new ones (a source's
 *                          list under the limits); answers added and fresh
 *   removeProxiesStatement remove addresses; answers how many were removed
 *   spreadOverdueStatement after a restart or take-over: the overdue spread
 *                          over the next interval (schedule.ts spreadOverdue)
 *   poolStatsStatement     (poolStatsColumns) counts, next due time, checks per day (the
 *                          schedule's formula, schedule.ts checksPerDay),
 *                          checks in the last 24 hours (pool_rounds)
 *   poolCountsStatement    the counts alone (the events' `counts`)
 *   accountUsageStatement  pools and pooled proxies of an account (the limits)
 *
 * Sort keys (query.ts): latency COALESCE(latency_p50_ms, 2147483647) ascending;
 * uptime COALESCE(uptime_h24_ppm, -1) descending; checked
 * COALESCE(last_checked_at, epoch) descending; then id in the same direction.
 * The sentinels keep keys non-null, so "after the cursor" is one row
 * comparison `(key, id) > ($key, $id)` (`<` when descending) that the
 * matching index of db/schema.ts seeks to. The page's rows carry their
 * key as text (`sort_key`: integers, or the timestamp as
 * YYYY-MM-DDTHH:MM:SS.ffffff in UTC), which is what a cursor holds.
 *
 * Numbers come back as float8 where counts are summed, so both drivers
 * (PGlite, postgres.js) return JS numbers rather than bigint strings.
 */
import { sql, type SQL } from 'drizzle-orm';
import { makePgArray } from 'drizzle-orm/pg-core';
import type { CheckType, ProxyType } from '../proxy/types';
import type { ParsedProxy } from '../proxy/parse';
import { encodeCursor } from './cursor';
import { DAY_S } from './limits';
import type { PoolProxiesQuery, ProxySort } from './query';
import { JITTER, MAX_DOUBLINGS } from './schedule';
import { protocolBit, rowFromSql, type PoolProxyRow } from './shape';
import type { PoolCounts } from './types';

/**
 * Every column of a pool_proxies row, in rowFromSql's names. No output
 * column may shadow a table column used in ORDER BY (which prefers output
 * names): `id` stays the bigint column (rowFromSql makes it a number).
 */
const ROW_COLUMN_NAMES = [
  'id', 'host', 'port', 'username', 'password', 'format', 'status', 'failures', 'checks', 'type', 'protocols', 'anonymity', 'https', 'origin',
  'country', 'country_name', 'location', 'isp', 'asn', 'status_code', 'response_time_ms', 'error_code', 'error_message',
  'latency_p50_ms', 'uptime_h24_ppm', 'history', 'first_seen_at', 'last_checked_at', 'last_change_at', 'next_check_at', 'protocol',
] as const;
/**
 * The columns of pool_proxy_rows that live in pool_proxy_state (the rest: pool_proxies). Written
 * out: a pure module does not import db/schema.ts; test/unit/pools-proxies-sql.test.ts holds it
 * to the newest view definition in the migrations.
 */
const STATE_COLUMN_NAMES: ReadonlySet<string> = new Set([
  'status', 'failures', 'checks', 'status_code', 'response_time_ms', 'error_code', 'error_message',
  'latency_p50_ms', 'uptime_h24_ppm', 'history', 'last_checked_at', 'last_change_at', 'next_check_at',
]);
export const ROW_COLUMNS = sql.raw(ROW_COLUMN_NAMES.join(', '));
/** ROW_COLUMNS from the two tables the view joins, `pool_proxies p JOIN pool_proxy_state s` (flush-sql.ts loadProxiesStatement). */
export const JOINED_ROW_COLUMNS = sql.raw(ROW_COLUMN_NAMES.map((c) => `${STATE_COLUMN_NAMES.has(c) ? 's' : 'p'}.${c}`).join(', '));

/** What `format=txt` needs: the address and its form (and the keyset's id). */
const ADDRESS_COLUMNS = sql.raw('id, host, port, username, password, format, protocol');

export const iso = (ms: number): string => new Date(ms).toISOString();

/** A list as one parameter: its array literal (cast by the caller, e.g. `::int[]`). */
export const arr = (values: readonly (string | number | boolean | null)[]): SQL => sql`${makePgArray([...values])}`;

// ---- the proxies query -------------------------------------------------------------------

interface SortSpec {
  /** The key expression, exactly as the index of db/schema.ts has it. */
  expr: SQL;
  desc: boolean;
  /** The key as text (a cursor's `key`). */
  text: SQL;
  /** A cursor's key back to the expression's type. */
  cast(key: string): SQL;
}

const EPOCH = sql.raw(`'1970-01-01T00:00:00Z'::timestamptz`);
const CHECKED = sql`COALESCE(last_checked_at, ${EPOCH})`;

const SORTS: Readonly<Record<ProxySort, SortSpec>> = Object.freeze({
  latency: {
    expr: sql.raw('COALESCE(latency_p50_ms, 2147483647)'),
    desc: false,
    text: sql.raw('COALESCE(latency_p50_ms, 2147483647)::text'),
    cast: (k: string) => sql`${k}::int`,
  },
  uptime: {
    expr: sql.raw('COALESCE(uptime_h24_ppm, -1)'),
    desc: true,
    text: sql.raw('COALESCE(uptime_h24_ppm, -1)::text'),
    cast: (k: string) => sql`${k}::int`,
  },
  checked: {
    expr: CHECKED,
    desc: true,
    text: sql`to_char(${CHECKED} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US')`,
    cast: (k: string) => sql`(${k}::timestamp AT TIME ZONE 'UTC')`,
  },
});

function filters(poolId: string, q: PoolProxiesQuery): SQL[] {
  const where: SQL[] = [sql`pool_id = ${poolId}`];
  if (q.status !== 'all') where.push(sql`status = ${q.status}`);
  if (q.country !== null) where.push(sql`country = ${q.country}`);
  if (q.anonymity !== null) where.push(sql`anonymity = ${q.anonymity}`);
  if (q.type !== null) where.push(sql`(type = ${q.type} OR (protocols & ${protocolBit(q.type)}::smallint) <> 0)`);
  if (q.https !== null) where.push(sql`https = ${q.https}`);
  if (q.maxLatencyMs !== null) where.push(sql`latency_p50_ms <= ${q.maxLatencyMs}::int`);
  if (q.minUptime !== null) where.push(sql`uptime_h24_ppm >= ${Math.ceil(q.minUptime * 1_000_000 - 1e-6)}::int`);
  // a pool target (migration 0008): working, and its last fetch of the target passed
  if (q.target != null) {
    where.push(sql`status = 'working' AND EXISTS (SELECT 1 FROM pool_proxy_targets t WHERE t.proxy_id = pool_proxy_rows.id AND t.name = ${q.target} AND t.ok)`);
  }
  return where;
}

/**
 * One page of a pool's proxies: at most `limit + 1` rows, each with its
 * `sort_key`. With `format: 'txt'` only the address columns are read (the
 * rest of those rows' fields are left at rowFromSql's defaults): a txt page
 * of 10 000 rows moves a fraction of the bytes. RangeError: a cursor of
 * another sort.
 */
export function proxiesPageStatement(poolId: string, q: PoolProxiesQuery): SQL {
  const s = SORTS[q.sort];
  const where = filters(poolId, q);
  if (q.cursor !== null) {
    if (q.cursor.sort !== q.sort) throw new RangeError(`cursor of sort ${q.cursor.sort} used with sort ${q.sort}`);
    const after = sql`(${s.cast(q.cursor.key)}, ${q.cursor.id}::bigint)`;
    where.push(s.desc ? sql`(${s.expr}, id) < ${after}` : sql`(${s.expr}, id) > ${after}`);
  }
  const dir = sql.raw(s.desc ? 'DESC' : 'ASC');
  return sql`SELECT ${q.format === 'txt' ? ADDRESS_COLUMNS : ROW_COLUMNS}, ${s.text} AS sort_key FROM pool_proxy_rows
    WHERE ${sql.join(where, sql` AND `)}
    ORDER BY ${s.expr} ${dir}, pool_proxy_rows.id ${dir}
    LIMIT ${q.limit + 1}`;
}

export interface ProxiesPage {
  rows: PoolProxyRow[];
  /** null on the last page. */
  nextCursor: string | null;
}

/** The raw rows of proxiesPageStatement -> the page and its next cursor. */
export function pageOf(raw: readonly Record<string, unknown>[], q: PoolProxiesQuery): ProxiesPage {
  const more = raw.length > q.limit;
  const kept = more ? raw.slice(0, q.limit) : raw;
  const rows = kept.map(rowFromSql);
  const last = kept[kept.length - 1];
  const nextCursor = more && last !== undefined ? encodeCursor({ sort: q.sort, key: String(last.sort_key), id: Number(last.id) }) : null;
  return { rows, nextCursor };
}

// ---- due proxies ---------------------------------------------------------------------------

/** Up to `limit` proxies due by `nowMs`, most overdue first (ties by id). */
export function dueProxiesStatement(poolId: string, nowMs: number, limit: number): SQL {
  return sql`SELECT ${ROW_COLUMNS} FROM pool_proxy_rows
    WHERE pool_id = ${poolId} AND next_check_at <= ${iso(nowMs)}::timestamptz
    ORDER BY next_check_at, pool_proxy_rows.id
    LIMIT ${limit}`;
}

// ---- membership --------------------------------------------------------------------------

/**
 * The proxy tables' statistics taken again (store.ts analyzedAfter: a change
 * that added many rows): their sizes and their keys' columns, what the owner's
 * load and flush statements are planned by. 84-142 ms at 100 000 proxies on
 * PGlite, against 228-314 ms for every column (the histories are wide); the
 * owner's VACUUM (ANALYZE) takes the rest within 10 minutes.
 */
export function analyzeProxiesStatement(): SQL {
  return sql`ANALYZE pool_proxies (id, pool_id), pool_proxy_state (proxy_id)`;
}

/** Add parsed addresses at `nowMs`, due at once; `poolType` is every row's type until a check says more (null for auto). One row, `added`. */
export function insertProxiesStatement(poolId: string, poolType: CheckType, proxies: readonly ParsedProxy[], nowMs: number): SQL {
  return sql`WITH ${insertCte(poolId, poolType, nowMs, sql`${unnestOf(proxies, poolType)} AS v(host, port, username, password, format, protocol)`)}
    SELECT count(*)::float8 AS added FROM ins`;
}

/**
 * As insertProxiesStatement, but adds at most `room` of the addresses that are
 * not in the pool yet (in the list's order): one row, `added` and `fresh` (the
 * addresses not in the pool before; `fresh - added` were left out for want of
 * room). Exact only under the account's pool lock (no other insert between).
 */
export function insertProxiesUpToStatement(poolId: string, poolType: CheckType, proxies: readonly ParsedProxy[], nowMs: number, room: number): SQL {
  const absent = sql`NOT EXISTS (SELECT 1 FROM pool_proxies e WHERE e.pool_id = ${poolId} AND e.host = v.host AND e.port = v.port AND e.username = v.username AND e.password = v.password AND e.protocol = v.protocol)`;
  const from = sql`${unnestOf(proxies, poolType)} WITH ORDINALITY AS v(host, port, username, password, format, protocol, ord)
      WHERE ${absent} ORDER BY v.ord LIMIT ${Math.max(0, Math.floor(room))}`;
  return sql`WITH ${insertCte(poolId, poolType, nowMs, from)}
    SELECT (SELECT count(*) FROM ins)::float8 AS added,
      (SELECT count(*) FROM ${unnestOf(proxies, poolType)} AS v(host, port, username, password, format, protocol) WHERE ${absent})::float8 AS fresh`;
}

/**
 * A proxy's own protocol as stored (DECISIONS "Mixed lists"): '' for none,
 * and for a scheme naming the pool's own type (checked so anyway: the same
 * proxy as the line without it, as /check's dedupe has it).
 */
export function storedProtocol(p: Pick<ParsedProxy, 'protocol'>, poolType: CheckType): string {
  return p.protocol === undefined || p.protocol === poolType ? '' : p.protocol;
}

/** The addresses as one unnest of six array parameters (host, port, username, password, format, protocol). */
function unnestOf(proxies: readonly ParsedProxy[], poolType: CheckType): SQL {
  return sql`unnest(${arr(proxies.map((p) => p.host))}::text[], ${arr(proxies.map((p) => p.port))}::int[],
                  ${arr(proxies.map((p) => p.username ?? ''))}::text[], ${arr(proxies.map((p) => p.password ?? ''))}::text[],
                  ${arr(proxies.map((p) => p.format))}::text[], ${arr(proxies.map((p) => storedProtocol(p, poolType)))}::text[])`;
}

/** `ins AS (INSERT ... RETURNING 1)` of the rows `from` yields as `v`. */
function insertCte(poolId: string, poolType: CheckType, nowMs: number, from: SQL): SQL {
  const now = iso(nowMs);
  const type: ProxyType | null = poolType === 'auto' ? null : poolType;
  return sql`ins AS (
      INSERT INTO pool_proxies (pool_id, host, port, username, password, format, type, protocol, first_seen_at)
      SELECT ${poolId}, v.host, v.port, v.username, v.password, v.format, COALESCE(NULLIF(v.protocol, ''), ${type}::text), v.protocol, ${now}::timestamptz
      FROM ${from}
      ON CONFLICT (pool_id, host, port, username, password, protocol) DO NOTHING
      RETURNING id
    ), ins_state AS (
      INSERT INTO pool_proxy_state (proxy_id, next_check_at) SELECT id, ${now}::timestamptz FROM ins
      RETURNING 1
    )`;
}

/** Remove addresses (those not in the pool are ignored). One row, `removed`. */
export function removeProxiesStatement(poolId: string, proxies: readonly Pick<ParsedProxy, 'host' | 'port' | 'username' | 'password' | 'protocol'>[]): SQL {
  // the pool's own type named by a scheme is no protocol of its own (storedProtocol, read from the pool's row)
  return sql`WITH del AS (
      DELETE FROM pool_proxies p
      USING unnest(${arr(proxies.map((p) => p.host))}::text[], ${arr(proxies.map((p) => p.port))}::int[],
                   ${arr(proxies.map((p) => p.username ?? ''))}::text[], ${arr(proxies.map((p) => p.password ?? ''))}::text[],
                   ${arr(proxies.map((p) => p.protocol ?? ''))}::text[])
            AS v(host, port, username, password, protocol), pools o
      WHERE o.id = ${poolId} AND p.pool_id = ${poolId} AND p.host = v.host AND p.port = v.port AND p.username = v.username AND p.password = v.password
        AND p.protocol = CASE WHEN v.protocol = o.type THEN '' ELSE v.protocol END
      RETURNING 1
    )
    SELECT count(*)::float8 AS removed FROM del`;
}

/** After a restart or take-over: the i-th most overdue of n due at now + floor(i * interval / n) ms. */
export function spreadOverdueStatement(poolId: string, nowMs: number, intervalS: number): SQL {
  const now = iso(nowMs);
  return sql`UPDATE pool_proxy_state s
    SET next_check_at = ${now}::timestamptz + floor(o.rank * ${intervalS * 1000}::float8 / o.n) * interval '1 millisecond'
    FROM (
      SELECT id, (row_number() OVER (ORDER BY next_check_at, id) - 1)::float8 AS rank, (count(*) OVER ())::float8 AS n
      FROM pool_proxy_rows WHERE pool_id = ${poolId} AND next_check_at < ${now}::timestamptz
    ) o
    WHERE s.proxy_id = o.id`;
}

// ---- the pool object and the limits ------------------------------------------------------------

/**
 * The stats of pool `p` over its proxies `pp` (a LEFT JOIN, grouped by p.id):
 * total, working, failed, unchecked, next_due_at, checks_per_day,
 * checks_last_24h. A SELECT list fragment, shared with pools-sql.ts's
 * pool objects.
 */
export function poolStatsColumns(nowMs: number): SQL {
  const backoff = sql`LEAST(p.interval_s * power(2, LEAST(GREATEST(pp.failures - 1, 0), ${MAX_DOUBLINGS})), GREATEST(p.interval_s, ${DAY_S}))`;
  return sql`count(pp.id)::float8 AS total,
      (count(pp.id) FILTER (WHERE pp.status = 'working'))::float8 AS working,
      (count(pp.id) FILTER (WHERE pp.status = 'failed'))::float8 AS failed,
      (count(pp.id) FILTER (WHERE pp.status = 'unchecked'))::float8 AS unchecked,
      min(pp.next_check_at) AS next_due_at,
      COALESCE(sum(${DAY_S}::float8 / (${backoff} * ${1 - JITTER / 2}::float8)) FILTER (WHERE pp.id IS NOT NULL), 0)::float8 AS checks_per_day,
      (SELECT COALESCE(sum(r.checked), 0) FROM pool_rounds r
        WHERE r.pool_id = p.id AND r.started_at > ${iso(nowMs - DAY_S * 1000)}::timestamptz)::float8 AS checks_last_24h`;
}

/** Per pool of `poolIds`: pool_id and poolStatsColumns. */
export function poolStatsStatement(poolIds: readonly string[], nowMs: number): SQL {
  return sql`SELECT p.id AS pool_id, ${poolStatsColumns(nowMs)}
    FROM pools p LEFT JOIN pool_proxy_rows pp ON pp.pool_id = p.id
    WHERE p.id = ANY(${arr(poolIds)}::text[])
    GROUP BY p.id`;
}

/** The pool's counts alone (total, working, failed, unchecked): no schedule sums, no rounds; what an event carries. */
export function poolCountsStatement(poolId: string): SQL {
  return sql`SELECT count(*)::float8 AS total,
      (count(*) FILTER (WHERE status = 'working'))::float8 AS working,
      (count(*) FILTER (WHERE status = 'failed'))::float8 AS failed,
      (count(*) FILTER (WHERE status = 'unchecked'))::float8 AS unchecked
    FROM pool_proxy_rows WHERE pool_id = ${poolId}`;
}

/** A row of poolStatsStatement -> the counts and the rest of shape.ts PoolStats. */
export function statsOf(r: Record<string, unknown>): { poolId: string; counts: PoolCounts; nextDueAt: Date | null; checksLast24h: number; checksPerDay: number } {
  const n = (v: unknown) => Number(v ?? 0);
  const due = r.next_due_at;
  return {
    poolId: String(r.pool_id),
    counts: { total: n(r.total), working: n(r.working), failed: n(r.failed), unchecked: n(r.unchecked) },
    nextDueAt: due === null || due === undefined ? null : due instanceof Date ? due : new Date(String(due)),
    checksLast24h: n(r.checks_last_24h),
    checksPerDay: n(r.checks_per_day),
  };
}

/** One row: `pools` the account owns, `proxies` in all of them, `in_pool` in `poolId` (0 without one). */
export function accountUsageStatement(accountId: string, poolId?: string): SQL {
  return sql`SELECT
      (SELECT count(*) FROM pools WHERE account_id = ${accountId}::uuid)::float8 AS pools,
      (SELECT count(*) FROM pool_proxies pp JOIN pools p ON p.id = pp.pool_id WHERE p.account_id = ${accountId}::uuid)::float8 AS proxies,
      (SELECT count(*) FROM pool_proxies WHERE pool_id = ${poolId ?? null}::text)::float8 AS in_pool`;
}
