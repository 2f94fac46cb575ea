/**
 * The durable copy of the pool targets' per-proxy state (table
 * pool_proxy_targets, migration 0008; DECISIONS "Targets in pools"). Pure
 * SQL builders and the table <-> batch conversions, no I/O:
 *
 *   targetUpsertStatement   a flush chunk's target states, fenced by the
 *                           lease's token (as flush-sql.ts), only for
 *                           proxies still in the pool
 *   loadTargetsStatement    a pool's target rows of proxies with id in
 *                           (afterId, upToId] (an owner's load)
 *   dropTargetsStatement    the rows of names the pool no longer has (a
 *                           PATCH of customUrls)
 *   targetsOfStatement      the rows of some proxies (a page read from the
 *                           durable copy)
 *   targetCountsStatement   working proxies passing each target, per pool
 * (`?target=` on the durable copy is proxies-sql.ts filters'.)
 */
import { sql, type SQL } from 'drizzle-orm';
import { fence, inPool } from './flush-sql';
import { arr } from './proxies-sql';
import type { ProxyTable } from './proxy-table';
import type { TargetState } from './target-columns';

/** Target states column by column (same index = same row). */
export interface TargetBatch {
  id: number[];
  name: string[];
  ok: boolean[];
  status: (number | null)[];
  responseTimeMs: (number | null)[];
  lastCheckedAt: (string | null)[];
  hourAt: number[];
  /** Hex of the hourly counters. */
  hours: string[];
}

export function emptyTargetBatch(): TargetBatch {
  return { id: [], name: [], ok: [], status: [], responseTimeMs: [], lastCheckedAt: [], hourAt: [], hours: [] };
}

/** Every checked target of `slot` appended to `b`. */
export function pushTargetSlot(b: TargetBatch, t: ProxyTable, slot: number): void {
  for (const c of t.targets) {
    const s = c.get(slot);
    if (s === null) continue;
    b.id.push(t.id[slot]!);
    b.name.push(c.name);
    b.ok.push(s.ok);
    b.status.push(s.status);
    b.responseTimeMs.push(s.responseTimeMs);
    b.lastCheckedAt.push(s.lastCheckedAt === null ? null : s.lastCheckedAt.toISOString());
    b.hourAt.push(s.hourAt);
    b.hours.push(Buffer.from(s.hours).toString('hex'));
  }
}

export function targetUpsertStatement(poolId: string, token: number | null, b: TargetBatch): SQL {
  return sql`INSERT INTO pool_proxy_targets (proxy_id, name, ok, status, response_time_ms, last_checked_at, hour_at, hours)
    SELECT v.id, v.name, v.ok, v.status, v.response_time_ms, v.last_checked_at, v.hour_at, decode(v.hours, 'hex')
    FROM unnest(
      ${arr(b.id)}::bigint[], ${arr(b.name)}::text[], ${arr(b.ok)}::boolean[], ${arr(b.status)}::int[],
      ${arr(b.responseTimeMs)}::float8[], ${arr(b.lastCheckedAt)}::timestamptz[], ${arr(b.hourAt)}::int[], ${arr(b.hours)}::text[]
    ) AS v(id, name, ok, status, response_time_ms, last_checked_at, hour_at, hours)
    JOIN pool_proxies p ON p.id = v.id AND ${inPool(sql`p.pool_id`, poolId)}
    WHERE ${fence(poolId, token)}
    ON CONFLICT (proxy_id, name) DO UPDATE SET ok = excluded.ok, status = excluded.status, response_time_ms = excluded.response_time_ms,
      last_checked_at = excluded.last_checked_at, hour_at = excluded.hour_at, hours = excluded.hours`;
}

const TARGET_COLUMNS = sql.raw('t.proxy_id::float8 AS proxy_id, t.name, t.ok, t.status, t.response_time_ms, t.last_checked_at, t.hour_at, t.hours');

export function loadTargetsStatement(poolId: string, afterId: number, upToId: number): SQL {
  return sql`SELECT ${TARGET_COLUMNS} FROM pool_proxy_targets t JOIN pool_proxies p ON p.id = t.proxy_id
    WHERE p.pool_id = ${poolId} AND t.proxy_id > ${afterId}::bigint AND t.proxy_id <= ${upToId}::bigint ORDER BY t.proxy_id`;
}

export function targetsOfStatement(ids: readonly number[]): SQL {
  return sql`SELECT ${TARGET_COLUMNS} FROM pool_proxy_targets t WHERE t.proxy_id = ANY(${arr(ids)}::bigint[])`;
}

export function dropTargetsStatement(poolId: string, keep: readonly string[]): SQL {
  return sql`DELETE FROM pool_proxy_targets t USING pool_proxies p
    WHERE p.id = t.proxy_id AND p.pool_id = ${poolId} AND NOT (t.name = ANY(${arr(keep)}::text[]))`;
}

export function targetCountsStatement(poolIds: readonly string[]): SQL {
  return sql`SELECT r.pool_id, t.name, count(*)::int AS n FROM pool_proxy_rows r JOIN pool_proxy_targets t ON t.proxy_id = r.id
    WHERE r.pool_id = ANY(${arr(poolIds)}::text[]) AND r.status = 'working' AND t.ok GROUP BY r.pool_id, t.name`;
}

/** A raw pool_proxy_targets row (either driver) -> its proxy id, name and state. */
export function targetRowFromSql(r: Record<string, unknown>): { proxyId: number; name: string; state: TargetState } {
  const bytes = r.hours instanceof Uint8Array ? r.hours : typeof r.hours === 'string' && r.hours.startsWith('\\x') ? Uint8Array.from(Buffer.from(r.hours.slice(2), 'hex')) : new Uint8Array(0);
  const at = r.last_checked_at;
  return {
    proxyId: Number(r.proxy_id),
    name: String(r.name),
    state: {
      ok: r.ok === true || r.ok === 't',
      status: r.status === null || r.status === undefined ? null : Number(r.status),
      responseTimeMs: r.response_time_ms === null || r.response_time_ms === undefined ? null : Math.fround(Number(r.response_time_ms)),
      lastCheckedAt: at === null || at === undefined ? null : at instanceof Date ? at : new Date(String(at)),
      hourAt: Number(r.hour_at ?? 0),
      hours: bytes,
    },
  };
}
