/**
 * SQL builders of a pool's owner (src/jobs/pool-actor.ts, through store.ts):
 * its lease, its loads and its fenced flushes (DECISIONS "Pools are actors").
 * Pure functions from input to ONE statement, every value a parameter, no I/O
 * (as proxies-sql.ts; lists travel as one array parameter per column).
 *
 *   takeLeaseStatement      the pool's lease row, read and locked (FOR UPDATE)
 *                           before a take-over replaces it (store.takeLease)
 *   putLeaseStatement       the lease given to a node with a new, larger token
 *                           (its reservation's run id `pool:<id>:<token>`)
 *   settleLeaseStatement    the fence of every flush transaction, its first
 *                           statement: the row is locked, renewed and its
 *                           `settled` moved by the checks this chunk makes
 *                           durable, only while the token is the owner's
 *                           (no row: the lease is lost, nothing else runs)
 *   stateUpdateStatement    the narrow state rows of a chunk (HOT updates)
 *   verdictFieldsStatement  the rarely-changing fields of the rows whose last
 *                           passing check changed them (type, geo, ...)
 *   recordBatchStatement    a durable batch: the pool's round_seq + 1, its
 *                           last_round_at, a pool_rounds row, a completed scan
 *                           row (usage), with the flush's first chunk that settles
 *   addToBatchStatement     a later chunk's checks added to that batch's rows
 *                           (each chunk records what it settles: /me usage ==
 *                           charged whenever a flush stops between chunks)
 *   releaseLeaseStatement   the lease given up (a clean stop, a move, a deleted
 *                           pool): expired, its row and token kept
 *   deleteLeaseStatement    a deleted pool's lease row dropped
 *   lockAccountStatement / outstandingStatement   units reserved under a run
 *                           id and not refunded, read under the account's lock
 *   loadProxiesStatement    a pool's rows in id order after `afterId` (an
 *                           owner loads its pool in chunks)
 *   proxyIdsStatement       a pool's ids (members removed meanwhile)
 *   leasesOfGonePoolsStatement  lease rows whose pool was deleted
 *   leaseHolderStatement    the node holding a pool's lease now (a cluster's
 *                           reads asked of it)
 *   renewOwnerStatement / dropOwnerStatement / liveOwnersStatement / leasesStatement
 *                           a cluster's placement: the nodes whose owner runs
 *                           (pool_owners) and every lease's holder
 *
 * Each fenced statement repeats the token condition (FENCE), so even a
 * statement sent on its own by a stale owner changes nothing.
 */
import { sql, type SQL } from 'drizzle-orm';
import { HISTORY_BYTES } from './history';
import { arr, iso, JOINED_ROW_COLUMNS } from './proxies-sql';

/** The run id of an owner's reservation: unique per lease (token), never a client's jobId (those have no ":"). */
export function leaseRunId(poolId: string, token: number): string {
  return `pool:${poolId}:${token}`;
}

/** The token condition; null: none (a write of a pool no owner holds: tests seeding verdicts, store.ts applyResults). */
export const fence = (poolId: string, token: number | null): SQL =>
  token === null ? sql`true` : sql`EXISTS (SELECT 1 FROM pool_leases l WHERE l.pool_id = ${poolId} AND l.token = ${token}::bigint)`;

/** One row (node_id, token, expires_at, run_id, settled) when the pool has a lease row; locks it. */
export function takeLeaseStatement(poolId: string): SQL {
  return sql`SELECT node_id, token::float8 AS token, expires_at, run_id, settled::float8 AS settled FROM pool_leases WHERE pool_id = ${poolId} FOR UPDATE`;
}

/** The lease of `poolId` is `nodeId`'s with `token` until `expiresMs`, nothing settled yet. */
export function putLeaseStatement(poolId: string, nodeId: string, token: number, expiresMs: number): SQL {
  return sql`INSERT INTO pool_leases (pool_id, node_id, token, expires_at, run_id, settled)
    VALUES (${poolId}, ${nodeId}, ${token}::bigint, ${iso(expiresMs)}::timestamptz, ${leaseRunId(poolId, token)}, 0)
    ON CONFLICT (pool_id) DO UPDATE SET node_id = EXCLUDED.node_id, token = EXCLUDED.token, expires_at = EXCLUDED.expires_at,
      run_id = EXCLUDED.run_id, settled = 0`;
}

/** The fence: one row (`settled` after) when `token` still holds the lease, renewed until `expiresMs`. */
export function settleLeaseStatement(poolId: string, token: number, settled: number, expiresMs: number): SQL {
  return sql`UPDATE pool_leases SET settled = settled + ${settled}::bigint, expires_at = ${iso(expiresMs)}::timestamptz
    WHERE pool_id = ${poolId} AND token = ${token}::bigint
    RETURNING settled::float8 AS settled`;
}

/**
 * The narrow state of a chunk of a pool's proxies, column by column (same index = same proxy).
 * Shaped for what the database parses cheapest (issue 29, bench/flush-cost.ts): on PGlite the
 * parameters are parsed in the service's own thread, and a timestamptz[] of text costs about twice
 * a float8[] of epoch ms; 1 000 histories as one hex string decoded once beat a text[] of 1 000
 * hex strings each decoded.
 */
export interface StateBatch {
  id: number[];
  status: string[];
  failures: number[];
  checks: number[];
  statusCode: (number | null)[];
  responseTimeMs: (number | null)[];
  errorCode: (string | null)[];
  errorMessage: (string | null)[];
  latencyP50Ms: (number | null)[];
  uptimeH24Ppm: (number | null)[];
  /** Hex of each row's HISTORY_BYTES history, all zeros for none (its version byte 0: written as null). */
  history: string[];
  /** Epoch ms (null: none). */
  lastCheckedMs: (number | null)[];
  lastChangeMs: (number | null)[];
  nextCheckMs: number[];
}

export function emptyStateBatch(): StateBatch {
  return {
    id: [],
    status: [],
    failures: [],
    checks: [],
    statusCode: [],
    responseTimeMs: [],
    errorCode: [],
    errorMessage: [],
    latencyP50Ms: [],
    uptimeH24Ppm: [],
    history: [],
    lastCheckedMs: [],
    lastChangeMs: [],
    nextCheckMs: [],
  };
}

/** A timestamptz of an epoch-ms float8 (exact to the ms: to_timestamp rounds to the µs). */
const fromMs = (col: string): SQL => sql.raw(`to_timestamp(v.${col} / 1000.0)`);

/**
 * `col = poolId` as a filter the planner cannot scan by. Written as a plain
 * equality, the planner (PGlite has no autovacuum: its statistics of
 * pool_proxies stay those of an empty table) read the WHOLE pool through
 * pool_proxies_address_uq and hash-joined it, ~20 ms a chunk at 20 000
 * proxies whatever the chunk's size; as a filter the rows are found by id
 * (the primary key) and their pool checked.
 */
export const inPool = (col: SQL, poolId: string): SQL => sql`(${col} = ${poolId}) IS TRUE`;

/** The state rows of `b`, fenced by `token`. */
export function stateUpdateStatement(poolId: string, token: number | null, b: StateBatch): SQL {
  return sql`UPDATE pool_proxy_state s SET
      status = v.status, failures = v.failures, checks = v.checks, status_code = v.status_code,
      response_time_ms = v.response_time_ms, error_code = v.error_code, error_message = v.error_message,
      latency_p50_ms = v.latency_p50_ms, uptime_h24_ppm = v.uptime_h24_ppm,
      history = CASE WHEN get_byte(h.b, (v.o::int - 1) * ${HISTORY_BYTES}) = 0 THEN NULL
                     ELSE substring(h.b FROM (v.o::int - 1) * ${HISTORY_BYTES} + 1 FOR ${HISTORY_BYTES}) END,
      last_checked_at = ${fromMs('last_checked_ms')}, last_change_at = ${fromMs('last_change_ms')}, next_check_at = ${fromMs('next_check_ms')}
    FROM unnest(
      ${arr(b.id)}::bigint[], ${arr(b.status)}::text[], ${arr(b.failures)}::int[], ${arr(b.checks)}::int[],
      ${arr(b.statusCode)}::int[], ${arr(b.responseTimeMs)}::float8[], ${arr(b.errorCode)}::text[], ${arr(b.errorMessage)}::text[],
      ${arr(b.latencyP50Ms)}::int[], ${arr(b.uptimeH24Ppm)}::int[],
      ${arr(b.lastCheckedMs)}::float8[], ${arr(b.lastChangeMs)}::float8[], ${arr(b.nextCheckMs)}::float8[]
    ) WITH ORDINALITY AS v(id, status, failures, checks, status_code, response_time_ms, error_code, error_message, latency_p50_ms,
           uptime_h24_ppm, last_checked_ms, last_change_ms, next_check_ms, o),
      (SELECT decode(${b.history.join('')}::text, 'hex') AS b) h
    WHERE s.proxy_id = v.id AND ${fence(poolId, token)}`;
}

/** The fields of the last passing check, column by column. */
export interface VerdictBatch {
  id: number[];
  type: (string | null)[];
  protocols: number[];
  anonymity: (string | null)[];
  https: (boolean | null)[];
  origin: (string | null)[];
  country: (string | null)[];
  countryName: (string | null)[];
  location: (string | null)[];
  isp: (string | null)[];
  asn: (number | null)[];
}

export function emptyVerdictBatch(): VerdictBatch {
  return { id: [], type: [], protocols: [], anonymity: [], https: [], origin: [], country: [], countryName: [], location: [], isp: [], asn: [] };
}

/** The verdict fields of `b` (rows of `poolId` only), fenced by `token`. */
export function verdictFieldsStatement(poolId: string, token: number | null, b: VerdictBatch): SQL {
  return sql`UPDATE pool_proxies p SET
      type = v.type, protocols = v.protocols, anonymity = v.anonymity, https = v.https, origin = v.origin,
      country = v.country, country_name = v.country_name, location = v.location, isp = v.isp, asn = v.asn
    FROM unnest(
      ${arr(b.id)}::bigint[], ${arr(b.type)}::text[], ${arr(b.protocols)}::smallint[], ${arr(b.anonymity)}::text[],
      ${arr(b.https)}::boolean[], ${arr(b.origin)}::text[], ${arr(b.country)}::text[], ${arr(b.countryName)}::text[],
      ${arr(b.location)}::text[], ${arr(b.isp)}::text[], ${arr(b.asn)}::int[]
    ) AS v(id, type, protocols, anonymity, https, origin, country, country_name, location, isp, asn)
    WHERE p.id = v.id AND ${inPool(sql`p.pool_id`, poolId)} AND ${fence(poolId, token)}`;
}

export interface BatchTally {
  checked: number;
  working: number;
  charged: number;
}

/**
 * A durable batch of `poolId` (fenced): round_seq + 1, last_round_at, its
 * pool_rounds row, and a completed scan row under `pool:<id>:b<seq>` (what
 * /me counts in usage_last_30_days, never in its history: accounts/overview-sql.ts);
 * one row (`seq`).
 */
export function recordBatchStatement(poolId: string, token: number | null, tally: BatchTally, startedMs: number, nowMs: number): SQL {
  const now = iso(nowMs);
  const started = iso(startedMs);
  return sql`WITH up AS (
      UPDATE pools SET round_seq = round_seq + 1, last_round_at = ${now}::timestamptz
      WHERE id = ${poolId} AND ${fence(poolId, token)} RETURNING id, account_id, type, region, timeout_ms, round_seq
    ), ins AS (
      INSERT INTO pool_rounds (pool_id, seq, started_at, finished_at, planned, checked, working, charged)
      SELECT ${poolId}, round_seq, ${started}::timestamptz, ${now}::timestamptz, ${tally.checked}, ${tally.checked}, ${tally.working}, ${tally.charged}
      FROM up RETURNING seq
    ), sc AS (
      INSERT INTO scans (account_id, job_id, proxy_type, region, timeout_ms, total_submitted, total_checked, total_working, charged, status, created_at, finished_at)
      SELECT account_id, 'pool:' || id || ':b' || round_seq, type, region, timeout_ms, ${tally.checked}, ${tally.checked}, ${tally.working}, ${tally.charged},
             'completed', ${started}::timestamptz, ${now}::timestamptz
      FROM up RETURNING 1
    )
    SELECT seq::float8 AS seq FROM ins`;
}

/**
 * A later chunk of batch `seq` of `poolId` (fenced): its checks added to the
 * batch's pool_rounds row and scan row, last_round_at and finished_at moved
 * to `nowMs`; one row when the batch was there.
 */
export function addToBatchStatement(poolId: string, token: number | null, seq: number, tally: BatchTally, nowMs: number): SQL {
  const now = iso(nowMs);
  return sql`WITH up AS (
      UPDATE pools SET last_round_at = ${now}::timestamptz WHERE id = ${poolId} AND ${fence(poolId, token)} RETURNING id
    ), r AS (
      UPDATE pool_rounds SET planned = planned + ${tally.checked}, checked = checked + ${tally.checked}, working = working + ${tally.working},
        charged = charged + ${tally.charged}, finished_at = ${now}::timestamptz
      WHERE pool_id = (SELECT id FROM up) AND seq = ${seq} RETURNING seq
    ), sc AS (
      UPDATE scans SET total_submitted = total_submitted + ${tally.checked}, total_checked = total_checked + ${tally.checked},
        total_working = total_working + ${tally.working}, charged = charged + ${tally.charged}, finished_at = ${now}::timestamptz
      WHERE job_id = ${`pool:${poolId}:b${seq}`} AND EXISTS (SELECT 1 FROM up) RETURNING 1
    )
    SELECT seq::float8 AS seq FROM r`;
}

/**
 * The lease of `poolId` given up when `token` holds it: expired at once, the
 * row kept (the next owner's token is this one + 1: a run id is never reused);
 * one row (run_id, settled) when it held it.
 */
export function releaseLeaseStatement(poolId: string, token: number): SQL {
  return sql`UPDATE pool_leases SET expires_at = to_timestamp(0) WHERE pool_id = ${poolId} AND token = ${token}::bigint RETURNING run_id, settled::float8 AS settled`;
}

/** A deleted pool's lease row dropped; one row (run_id, settled) when it was there with `token`. */
export function deleteLeaseStatement(poolId: string, token: number): SQL {
  return sql`DELETE FROM pool_leases WHERE pool_id = ${poolId} AND token = ${token}::bigint RETURNING run_id, settled::float8 AS settled`;
}

/** The account row locked (refunds of one run id are serialised: the outstanding units are read after it); NO KEY, as every lock of the balance (accounts/quota-sql.ts). */
export function lockAccountStatement(accountId: string): SQL {
  return sql`SELECT id FROM accounts WHERE id = ${accountId}::uuid FOR NO KEY UPDATE`;
}

/** One row, `outstanding`: units reserved under `runId` minus those refunded. */
export function outstandingStatement(accountId: string, runId: string): SQL {
  return sql`SELECT (COALESCE(sum(units) FILTER (WHERE reason = 'reserve'), 0) - COALESCE(sum(units) FILTER (WHERE reason = 'refund'), 0))::float8 AS outstanding
    FROM quota_ledger WHERE account_id = ${accountId}::uuid AND job_id = ${runId}`;
}

/** This node's pool owner runs until `expiresMs` (renewed every half lease). */
export function renewOwnerStatement(nodeId: string, expiresMs: number): SQL {
  return sql`INSERT INTO pool_owners (node_id, expires_at) VALUES (${nodeId}, ${iso(expiresMs)}::timestamptz)
    ON CONFLICT (node_id) DO UPDATE SET expires_at = EXCLUDED.expires_at`;
}

/** This node's pool owner stopped. */
export function dropOwnerStatement(nodeId: string): SQL {
  return sql`DELETE FROM pool_owners WHERE node_id = ${nodeId}`;
}

/** The nodes whose pool owner runs now (by the database's clock), by id. */
export function liveOwnersStatement(): SQL {
  return sql`SELECT node_id FROM pool_owners WHERE expires_at > now() ORDER BY node_id`;
}

/** Every lease: pool_id, node_id, and `expired_ms` (how long ago it expired; negative while live). */
export function leasesStatement(): SQL {
  return sql`SELECT pool_id, node_id, (extract(epoch FROM now() - expires_at) * 1000)::float8 AS expired_ms FROM pool_leases`;
}

/** One row (`node_id`) when a node holds the pool's lease now (by the database's clock). */
export function leaseHolderStatement(poolId: string): SQL {
  return sql`SELECT node_id FROM pool_leases WHERE pool_id = ${poolId} AND expires_at > now()`;
}

/** One row (`account_id`) of the account a run id's ledger rows belong to. */
export function runAccountStatement(runId: string): SQL {
  return sql`SELECT account_id FROM quota_ledger WHERE job_id = ${runId} LIMIT 1`;
}

/**
 * Up to `limit` whole rows of `poolId` with an id above `afterId`, in id order.
 * The two tables, not the view: the lower bound is on both keys, so each
 * chunk reads its own rows from both primary keys. Through the view the
 * state side has no bound (PostgreSQL does not carry `>` across the join),
 * and its merge join walked pool_proxy_state from the first row at every
 * chunk; with a new pool's statistics stale (no ANALYZE yet: store.ts), the
 * planner read the whole pool and sorted it per chunk. Either way a load
 * cost O(pool) a chunk (issue 29: 100 000 proxies loaded in 3.2 s in chunks of
 * 10 000, 7.8 s in chunks of 2 000; this statement after an ANALYZE: 2.3 s).
 */
export function loadProxiesStatement(poolId: string, afterId: number, limit: number): SQL {
  return sql`SELECT ${JOINED_ROW_COLUMNS} FROM pool_proxies p JOIN pool_proxy_state s ON s.proxy_id = p.id
    WHERE p.pool_id = ${poolId} AND p.id > ${afterId}::bigint AND s.proxy_id > ${afterId}::bigint ORDER BY p.id LIMIT ${limit}`;
}

/** Every id of `poolId`'s proxies, ascending. */
export function proxyIdsStatement(poolId: string): SQL {
  return sql`SELECT id::float8 AS id FROM pool_proxies WHERE pool_id = ${poolId} ORDER BY id`;
}

/** Lease rows (pool_id, token, run_id, settled) whose pool is gone. */
export function leasesOfGonePoolsStatement(): SQL {
  return sql`SELECT l.pool_id, l.token::float8 AS token, l.run_id, l.settled::float8 AS settled FROM pool_leases l
    WHERE NOT EXISTS (SELECT 1 FROM pools p WHERE p.id = l.pool_id)`;
}
