/**
 * SQL builders over the `pools` table (pg-boss `plans.ts` style, as
 * proxies-sql.ts): pure functions from input to ONE statement, every value a
 * parameter, no I/O. The pool store (store.ts) runs them in its
 * transactions; rows are read with shape.ts poolRowFromSql and
 * proxies-sql.ts statsOf.
 *
 *   lockAccountPoolsStatement  the account's pool lock for the rest of the
 *                              transaction (pg_advisory_xact_lock): every change
 *                              that counts against the account's limits takes it
 *                              first, so two requests never both pass a limit
 *   insertPoolStatement        a new pool row
 *   poolObjectsStatement       an account's pools (or one of them) with their
 *                              stats (proxies-sql.ts poolStatsColumns), oldest first
 *   poolRowsWithRoundsStatement  the same without the proxies' stats (an owner
 *                              counts them in memory)
 *   allPoolRowsStatement / poolRowStatement  pools rows for their owner
 *   poolTypeStatement          an owned pool's type and targets (the proxies listing's shape)
 *   updatePoolStatement        PATCH's settings and state; answers the state
 *                              before and the settings after, no row when the
 *                              pool is not the account's
 *   clampDueStatement          a shorter interval: due times later than one new
 *                              interval from now spread over it
 *   deletePoolStatement        one row when the account's pool was deleted
 *
 * The lock is a two-key advisory lock (POOLS_LOCK_CLASS, hashtext(account
 * id)): the two-key space is PostgreSQL's own, apart from the one-key locks
 * other code takes (results/pg-store-sql.ts). A hash collision of two
 * accounts only makes them wait for each other.
 */
import { sql, type SQL } from 'drizzle-orm';
import { poolStatsColumns } from './proxies-sql';
import type { PoolSettings, PoolState } from './types';

/** The advisory lock class of the accounts' pool locks ("pool" in ASCII). */
export const POOLS_LOCK_CLASS = 0x706f6f6c;

const iso = (ms: number): string => new Date(ms).toISOString();

/** The columns of a pools row as poolRowFromSql reads them. */
export const POOL_COLUMNS = sql.raw(
  'p.id, p.account_id, p.name, p.type, p.region, p.interval_s, p.timeout_ms, p.https, p.custom_urls, p.sources, p.state, p.paused_reason, p.created_at, p.last_round_at',
);

export function lockAccountPoolsStatement(accountId: string): SQL {
  return sql`SELECT pg_advisory_xact_lock(${POOLS_LOCK_CLASS}::int, hashtext(${accountId}::text))::text AS locked`;
}

export function insertPoolStatement(id: string, accountId: string, s: PoolSettings, nowMs: number): SQL {
  const now = iso(nowMs);
  const sources = s.sources.map((x) => ({ url: x.url, every_s: x.everyS }));
  return sql`INSERT INTO pools (id, account_id, name, type, region, interval_s, timeout_ms, https, custom_urls, sources, created_at, updated_at)
    VALUES (${id}, ${accountId}::uuid, ${s.name}, ${s.type}, ${s.region}, ${s.intervalS}, ${s.timeoutMs}, ${s.https},
            ${JSON.stringify(s.customUrls)}::jsonb, ${JSON.stringify(sources)}::jsonb, ${now}::timestamptz, ${now}::timestamptz)`;
}

/** The account's pools (all, or `poolId` only), each a pools row plus its stats; oldest first. */
export function poolObjectsStatement(accountId: string, poolId: string | null, nowMs: number): SQL {
  const one = poolId === null ? sql`` : sql` AND p.id = ${poolId}`;
  return sql`SELECT ${POOL_COLUMNS}, p.id AS pool_id, ${poolStatsColumns(nowMs)}
    FROM pools p LEFT JOIN pool_proxy_rows pp ON pp.pool_id = p.id
    WHERE p.account_id = ${accountId}::uuid${one}
    GROUP BY p.id
    ORDER BY p.created_at, p.id`;
}

/** Every pool's row (POOL_COLUMNS), oldest first: an owner's start. */
export function allPoolRowsStatement(): SQL {
  return sql`SELECT ${POOL_COLUMNS} FROM pools p ORDER BY p.created_at, p.id`;
}

/** One pool's row (POOL_COLUMNS), whoever owns it. */
export function poolRowStatement(poolId: string): SQL {
  return sql`SELECT ${POOL_COLUMNS} FROM pools p WHERE p.id = ${poolId}`;
}

/**
 * The account's pools (all, or `poolId` only) without their proxies' stats:
 * each a pools row, `checks_last_24h` (pool_rounds) and `owned` (for the
 * pools an owner counts in memory); oldest first.
 */
export function poolRowsWithRoundsStatement(accountId: string, poolId: string | null, nowMs: number): SQL {
  const one = poolId === null ? sql`` : sql` AND p.id = ${poolId}`;
  return sql`SELECT ${POOL_COLUMNS}, p.id AS pool_id,
      (SELECT COALESCE(sum(r.checked), 0) FROM pool_rounds r
        WHERE r.pool_id = p.id AND r.started_at > ${iso(nowMs - 86_400_000)}::timestamptz)::float8 AS checks_last_24h
    FROM pools p
    WHERE p.account_id = ${accountId}::uuid${one}
    ORDER BY p.created_at, p.id`;
}

/** One row `{type}` when `poolId` is the account's. */
export function poolTypeStatement(accountId: string, poolId: string): SQL {
  return sql`SELECT type, custom_urls FROM pools WHERE id = ${poolId} AND account_id = ${accountId}::uuid`;
}

export interface PoolSettingsChange {
  name?: string;
  customUrls?: PoolSettings['customUrls'];
  intervalS?: number;
  timeoutMs?: number;
  https?: boolean;
  /** paused: paused by its owner; active: runs again (a pause for insufficient checks ends too). */
  state?: PoolState;
}

/**
 * Applies the given settings (absent: unchanged) and the owner's state, locks
 * the row, and answers one row: `old_state`, `old_interval_s` and the new
 * `type`, `interval_s`, `state`; none when the pool is not the account's.
 */
export function updatePoolStatement(accountId: string, poolId: string, c: PoolSettingsChange, nowMs: number): SQL {
  const sets: SQL[] = [sql`updated_at = ${iso(nowMs)}::timestamptz`];
  if (c.name !== undefined) sets.push(sql`name = ${c.name}`);
  if (c.intervalS !== undefined) sets.push(sql`interval_s = ${c.intervalS}`);
  if (c.timeoutMs !== undefined) sets.push(sql`timeout_ms = ${c.timeoutMs}`);
  if (c.https !== undefined) sets.push(sql`https = ${c.https}`);
  if (c.customUrls !== undefined) sets.push(sql`custom_urls = ${JSON.stringify(c.customUrls)}::jsonb`);
  if (c.state === 'paused') sets.push(sql`state = 'paused', paused_reason = 'owner'`);
  if (c.state === 'active') sets.push(sql`state = 'active', paused_reason = NULL`);
  return sql`WITH old AS (
      SELECT id, state, interval_s FROM pools WHERE id = ${poolId} AND account_id = ${accountId}::uuid FOR UPDATE
    )
    UPDATE pools p SET ${sql.join(sets, sql`, `)}
    FROM old WHERE p.id = old.id
    RETURNING old.state AS old_state, old.interval_s AS old_interval_s, p.type, p.interval_s, p.state`;
}

/** Rows of `poolId` due later than now + intervalS: the i-th of n (by due time) at now + i * interval / n. */
export function clampDueStatement(poolId: string, nowMs: number, intervalS: number): SQL {
  const now = iso(nowMs);
  const until = iso(nowMs + intervalS * 1000);
  return sql`UPDATE pool_proxy_state s
    SET next_check_at = ${now}::timestamptz + floor(o.rank * ${intervalS * 1000}::float8 / o.n) * interval '1 millisecond'
    FROM (
      SELECT id, (row_number() OVER (ORDER BY next_check_at, id) - 1)::float8 AS rank, (count(*) OVER ())::float8 AS n
      FROM pool_proxy_rows WHERE pool_id = ${poolId} AND next_check_at > ${until}::timestamptz
    ) o
    WHERE s.proxy_id = o.id`;
}

export function deletePoolStatement(accountId: string, poolId: string): SQL {
  return sql`DELETE FROM pools WHERE id = ${poolId} AND account_id = ${accountId}::uuid RETURNING id`;
}
