/**
 * SQL builders of the pools' rounds (src/jobs/pool-rounds.ts runs them
 * through store.ts): pure functions from input to ONE statement, every value
 * a parameter, no I/O (as proxies-sql.ts and pools-sql.ts).
 *
 *   runnablePoolsStatement  pools with a proxy due now that are not paused by
 *                           their owner (a pool paused for insufficient checks
 *                           is looked at: it resumes once the balance can pay),
 *                           most overdue first, each with its due count (capped)
 *   nextDueStatement        the earliest due time over those pools (the timer)
 *   claimDueStatement       a round's proxies, claimed atomically: the `limit`
 *                           most overdue of one pool get `next_check_at` pushed
 *                           to the claim's horizon and are returned. FOR UPDATE
 *                           SKIP LOCKED: two nodes claiming at once never get
 *                           the same proxy; a claim whose node dies falls due
 *                           again at the horizon
 *   pauseForChecksStatement an active pool paused, `insufficient_checks`
 *   resumeForChecksStatement a pool paused for insufficient checks active again
 *   spreadAllOverdueStatement every pool's overdue proxies spread over its
 *                           interval (a start: no burst; schedule.ts spreadOverdue)
 *   recheckStatement        the given addresses of a pool due now
 *
 * The state changes answer a row only when they changed something, so of
 * two nodes (or a node and the owner's PATCH) one tells the event.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { ProxyAddress } from '../proxy/types';
import { POOL_COLUMNS } from './pools-sql';
import { arr, iso, ROW_COLUMNS } from './proxies-sql';

/** Pools a round may run for: active, or paused for insufficient checks (never paused by the owner). */
const RUNNABLE = sql.raw(`(p.state = 'active' OR (p.state = 'paused' AND p.paused_reason = 'insufficient_checks'))`);

/** Up to `limit` runnable pools with a proxy due by `nowMs` (not in `exclude`), most overdue first; each row a pool and `due` (at most `cap`). */
export function runnablePoolsStatement(nowMs: number, limit: number, cap: number, exclude: readonly string[]): SQL {
  const now = sql`${iso(nowMs)}::timestamptz`;
  return sql`SELECT ${POOL_COLUMNS}, d.first_due, (SELECT count(*) FROM (
        SELECT 1 FROM pool_proxies pp WHERE pp.pool_id = p.id AND pp.next_check_at <= ${now} LIMIT ${cap}) c)::float8 AS due
    FROM pools p
    CROSS JOIN LATERAL (SELECT min(pp.next_check_at) AS first_due FROM pool_proxies pp WHERE pp.pool_id = p.id) d
    WHERE ${RUNNABLE} AND d.first_due <= ${now} AND NOT (p.id = ANY(${arr(exclude)}::text[]))
    ORDER BY d.first_due, p.id
    LIMIT ${limit}`;
}

/** One row, `next_due` (null: nothing is scheduled): the earliest due time of the runnable pools' proxies. */
export function nextDueStatement(): SQL {
  return sql`SELECT min(d.first_due) AS next_due FROM pools p
    CROSS JOIN LATERAL (SELECT min(pp.next_check_at) AS first_due FROM pool_proxies pp WHERE pp.pool_id = p.id) d
    WHERE ${RUNNABLE}`;
}

/** Claims the `limit` most overdue proxies of `poolId` due by `nowMs`: their due time becomes `untilMs`; the claimed rows (as before the claim, but next_check_at). */
export function claimDueStatement(poolId: string, nowMs: number, limit: number, untilMs: number): SQL {
  return sql`WITH c AS (
      SELECT id AS claim_id FROM pool_proxies
      WHERE pool_id = ${poolId} AND next_check_at <= ${iso(nowMs)}::timestamptz
      ORDER BY next_check_at, id
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    )
    UPDATE pool_proxies SET next_check_at = ${iso(untilMs)}::timestamptz
    FROM c WHERE pool_proxies.id = c.claim_id
    RETURNING ${ROW_COLUMNS}`;
}

/** An active pool paused for insufficient checks; one row (`id`) when it was active. */
export function pauseForChecksStatement(poolId: string, nowMs: number): SQL {
  return sql`UPDATE pools SET state = 'paused', paused_reason = 'insufficient_checks', updated_at = ${iso(nowMs)}::timestamptz
    WHERE id = ${poolId} AND state = 'active'
    RETURNING id`;
}

/** A pool paused for insufficient checks active again; one row (`interval_s`) when it was so paused. */
export function resumeForChecksStatement(poolId: string, nowMs: number): SQL {
  return sql`UPDATE pools SET state = 'active', paused_reason = NULL, updated_at = ${iso(nowMs)}::timestamptz
    WHERE id = ${poolId} AND state = 'paused' AND paused_reason = 'insufficient_checks'
    RETURNING interval_s`;
}

/** Every pool's proxies overdue at `nowMs`: the i-th most overdue of a pool's n due at now + floor(i * its interval / n) ms. */
export function spreadAllOverdueStatement(nowMs: number): SQL {
  const now = sql`${iso(nowMs)}::timestamptz`;
  return sql`UPDATE pool_proxies pp
    SET next_check_at = ${now} + floor(o.rank * o.span_ms / o.n) * interval '1 millisecond'
    FROM (
      SELECT x.id AS spread_id,
        (row_number() OVER (PARTITION BY x.pool_id ORDER BY x.next_check_at, x.id) - 1)::float8 AS rank,
        (count(*) OVER (PARTITION BY x.pool_id))::float8 AS n,
        p.interval_s * 1000::float8 AS span_ms
      FROM pool_proxies x JOIN pools p ON p.id = x.pool_id
      WHERE x.next_check_at < ${now}
    ) o
    WHERE pp.id = o.spread_id`;
}

/** The addresses of `poolId` among `proxies` due at `nowMs` (those due later only; others are ignored). One row, `due`: how many. */
export function recheckStatement(poolId: string, proxies: readonly ProxyAddress[], nowMs: number): SQL {
  const now = sql`${iso(nowMs)}::timestamptz`;
  return sql`WITH up AS (
      UPDATE pool_proxies p SET next_check_at = ${now}
      FROM unnest(${arr(proxies.map((a) => a.host))}::text[], ${arr(proxies.map((a) => a.port))}::int[],
                  ${arr(proxies.map((a) => a.username ?? ''))}::text[], ${arr(proxies.map((a) => a.password ?? ''))}::text[])
           AS v(host, port, username, password)
      WHERE p.pool_id = ${poolId} AND p.host = v.host AND p.port = v.port AND p.username = v.username
        AND p.password = v.password AND p.next_check_at > ${now}
      RETURNING 1
    )
    SELECT count(*)::float8 AS due FROM up`;
}
