/**
 * SQL builders of a pool's list URLs (`pools.sources`, DECISIONS "Pools"),
 * pure as pools-sql.ts: one statement each, every value a parameter. The
 * state of a source lives beside its `url` and `every_s` in its element of
 * the pools row's `sources` array (no table of its own: PATCH cannot change
 * a pool's sources, so an element's index is stable; every write still
 * checks the element's url):
 *
 *   next_fetch_at  ISO time the source is next due (absent: due at once)
 *   last_fetch     the last fetch's outcome (shape.ts SourceFetchOutcome)
 *
 *   dueSourcesStatement    the sources of active pools due by now, most overdue first
 *   nextSourceDueStatement when the next source of an active pool falls due
 *   claimSourceStatement   moves a source's due time on, only if it still is
 *                          the one read (so of the nodes of a cluster that
 *                          read it due, exactly one claims that due time)
 *   recordSourceStatement  a fetch's outcome (and, after a failure or a stop,
 *                          a sooner due time)
 */
import { sql, type SQL } from 'drizzle-orm';
import type { SourceFetchOutcome } from './shape';

const iso = (ms: number): string => new Date(ms).toISOString();

const SOURCES = sql.raw('jsonb_array_elements(p.sources) WITH ORDINALITY AS s(value, ord)');
const DUE_AT = sql.raw("(s.value->>'next_fetch_at')::timestamptz");

/** Rows `{pool_id, account_id, type, idx, url, every_s, due}` (`due`: the stored text, null when never fetched). */
export function dueSourcesStatement(nowMs: number, limit: number): SQL {
  return sql`SELECT p.id AS pool_id, p.account_id::text AS account_id, p.type, (s.ord - 1)::int AS idx,
      s.value->>'url' AS url, (s.value->>'every_s')::int AS every_s, s.value->>'next_fetch_at' AS due
    FROM pools p CROSS JOIN LATERAL ${SOURCES}
    WHERE p.state = 'active' AND (s.value->>'next_fetch_at' IS NULL OR ${DUE_AT} <= ${iso(nowMs)}::timestamptz)
    ORDER BY ${DUE_AT} NULLS FIRST, p.id, s.ord
    LIMIT ${limit}`;
}

/** One row `{next_ms}`: the earliest due time (ms) of an active pool's source (a never-fetched one: `nowMs`), null with none. */
export function nextSourceDueStatement(nowMs: number): SQL {
  return sql`SELECT (extract(epoch FROM min(COALESCE(${DUE_AT}, ${iso(nowMs)}::timestamptz))) * 1000)::float8 AS next_ms
    FROM pools p CROSS JOIN LATERAL ${SOURCES}
    WHERE p.state = 'active'`;
}

const element = (idx: number): SQL => sql`(sources -> ${idx}::int)`;
const path = (idx: number): SQL => sql`ARRAY[${String(idx)}]::text[]`;
const sameSource = (poolId: string, idx: number, url: string): SQL => sql`id = ${poolId} AND ${element(idx)} ->> 'url' = ${url}`;

/**
 * Source `idx` (`url`) of `poolId` due at `due` (the text read; null: never
 * fetched) is next due at `nextMs`. One row when this call claimed it; none
 * when another node did first, or the pool is gone or no longer active.
 */
export function claimSourceStatement(poolId: string, idx: number, url: string, due: string | null, nextMs: number): SQL {
  return sql`UPDATE pools SET sources = jsonb_set(sources, ${path(idx)}, ${element(idx)} || jsonb_build_object('next_fetch_at', ${iso(nextMs)}::text))
    WHERE ${sameSource(poolId, idx, url)} AND state = 'active' AND (${element(idx)} ->> 'next_fetch_at') IS NOT DISTINCT FROM ${due}::text
    RETURNING id`;
}

/**
 * The outcome of a fetch of source `idx` (`url`) of `poolId` (null: the last
 * one stays, as when a stop cut a fetch short); `nextMs` (optional) moves
 * its due time.
 */
export function recordSourceStatement(poolId: string, idx: number, url: string, outcome: SourceFetchOutcome | null, nextMs?: number): SQL {
  const last = outcome === null ? sql`` : sql` || jsonb_build_object('last_fetch', ${JSON.stringify(outcome)}::jsonb)`;
  const next = nextMs === undefined ? sql`` : sql` || jsonb_build_object('next_fetch_at', ${iso(nextMs)}::text)`;
  return sql`UPDATE pools SET sources = jsonb_set(sources, ${path(idx)}, ${element(idx)}${last}${next})
    WHERE ${sameSource(poolId, idx, url)}
    RETURNING id`;
}
