/**
 * SQL builders for the quota (pg-boss `plans.ts` style): pure functions from
 * input to one statement, no I/O. The caller executes the statement.
 *
 * `reserveStatement` is the whole reservation in ONE statement, so it costs
 * one round trip and is atomic without an explicit transaction:
 *
 *   busy  a running scan already carries the client's jobId (any account,
 *         any node): nothing is charged (`job_running`)
 *   acc   SELECT ... FOR NO KEY UPDATE  lock the account row; a concurrent
 *                                     reservation waits here and then sees the
 *                                     committed balances (READ COMMITTED
 *                                     re-reads the locked row). NO KEY: the
 *                                     KEY SHARE lock that a row referencing the
 *                                     account takes (its foreign key) does not
 *                                     conflict, so a reservation never waits for
 *                                     an open transaction that inserted such a
 *                                     row (a pool flush's scan row, issue 29)
 *   calc  unlimited? enough? temp part (temp first, then root)
 *   upd   UPDATE accounts ... WHERE enough AND NOT busy  (no row when short)
 *   led   INSERT the ledger row       FROM upd  (none when short)
 *   sc    INSERT the running scan row FROM upd  (only when asked; none when short),
 *         with the node that runs the job (node_id), its unique proxies
 *         (total_proxies) and the jobId it answers to (client_job_id)
 *   SELECT the outcome: one row when the account exists, none otherwise.
 *
 * With `nodeId`, nothing is charged unless that node holds a live lease in
 * the database (`lease_live` false then): a scan is never born under an
 * expired lease, where another node's orphan sweep (src/accounts/orphans.ts)
 * could refund it while it runs. (The sweep and this statement see each
 * other's commits whole: a sweep that sees this scan also sees the lease it
 * was inserted under.)
 *
 * The client's jobId: `busy` makes a duplicate a 409 before a 402 (the
 * contract's order) and charges nothing; the fence is the partial unique index
 * scans_running_client_job_id_uq (db/schema.ts): two reservations of one
 * runId at the same moment both see no running scan, and the second INSERT
 * fails with a unique violation (23505), which fails the whole statement, so
 * nothing of it is charged either (src/accounts/client-job-conflict.ts maps
 * it). The check is global, not per account: a jobId names the job on the
 * progress channel (/ws?jobId=), which is not per account.
 *
 * Numbers come back as float8 so both drivers (PGlite, postgres.js) return JS
 * numbers rather than bigint strings.
 */
import { sql, type SQL } from 'drizzle-orm';
import { liveLeaseCondition } from './nodes-sql';

/** The running scan row inserted with a reservation (src/accounts/scans.ts starts scans through it). */
export interface ScanStart {
  proxyType: string;
  region: string;
  timeoutMs: number;
  totalSubmitted: number;
  /** Unique valid proxies (the progress `total` of GET /checks/{jobId}); absent: null. */
  totalProxies?: number;
}

/** A reservation (reserveStatement; src/accounts/quota.ts reserveQuota runs it). */
export interface ReserveInput {
  accountId: string;
  /** Unique per run (the scan's job_id). */
  runId: string;
  units: number;
  now: Date;
  /** Also insert the running scan row, atomically with the reservation. */
  scan?: ScanStart;
  /** The API node that runs the job (scans.node_id); its lease must be live. */
  nodeId?: string;
  /** The client's jobId (scans.client_job_id, with `scan` only); null or absent: none. None may be running with it. */
  clientJobId?: string | null;
}

/** Whether a running scan carries `clientJobId` (any account, any node): one boolean, `running`. */
export function runningClientJobCondition(clientJobId: string): SQL {
  return sql`EXISTS (SELECT 1 FROM scans s WHERE s.client_job_id = ${clientJobId} AND s.status = 'running')`;
}

/** One row: unlimited, enough, available, temp_charged, root_charged, remaining, checks_used, email, unlimited_pro, unlimited_until (after), ledger_rows, scan_id, lease_live, job_running. */
export function reserveStatement(i: ReserveInput): SQL {
  const now = i.now.toISOString();
  const clientJobId = i.scan !== undefined ? (i.clientJobId ?? null) : null;
  const scanCte = i.scan
    ? sql`, sc AS (
        INSERT INTO scans (account_id, job_id, proxy_type, region, timeout_ms, total_submitted, charged, status, created_at, node_id, total_proxies, client_job_id)
        SELECT u.id, ${i.runId}, ${i.scan.proxyType}, ${i.scan.region}, ${i.scan.timeoutMs}, ${i.scan.totalSubmitted},
               c.temp_charged + c.root_charged, 'running', ${now}::timestamptz, ${i.nodeId ?? null}::text,
               ${i.scan.totalProxies ?? null}::int, ${clientJobId}::text
        FROM upd u CROSS JOIN calc c
        RETURNING id
      )`
    : sql``;
  const busy = clientJobId !== null ? runningClientJobCondition(clientJobId) : sql`false`;
  const scanId = i.scan ? sql`(SELECT id FROM sc)::float8` : sql`NULL::float8`;
  const leaseLive = i.nodeId !== undefined ? liveLeaseCondition(i.nodeId) : sql`true`;
  return sql`
    WITH node AS (
      SELECT ${leaseLive} AS live
    ), busy AS (
      SELECT ${busy} AS running
    ), acc AS (
      SELECT id, temp_balance, root_balance,
             (unlimited_pro AND (unlimited_until IS NULL OR unlimited_until > ${now}::timestamptz)) AS unlimited
      FROM accounts WHERE id = ${i.accountId}::uuid
      FOR NO KEY UPDATE
    ), calc AS (
      SELECT id, unlimited, temp_balance, root_balance,
             (unlimited OR temp_balance + root_balance >= ${i.units}) AS enough,
             CASE WHEN unlimited THEN 0 ELSE LEAST(temp_balance, ${i.units}) END AS temp_charged,
             CASE WHEN unlimited THEN 0 ELSE ${i.units} - LEAST(temp_balance, ${i.units}) END AS root_charged
      FROM acc
    ), upd AS (
      UPDATE accounts a
      SET temp_balance = a.temp_balance - c.temp_charged,
          root_balance = a.root_balance - c.root_charged,
          checks_used = a.checks_used + ${i.units},
          updated_at = ${now}::timestamptz
      FROM calc c
      WHERE a.id = c.id AND c.enough AND (SELECT live FROM node) AND NOT (SELECT running FROM busy)
      RETURNING a.id, a.email, a.temp_balance, a.root_balance, a.checks_used, a.unlimited_pro, a.unlimited_until
    ), led AS (
      INSERT INTO quota_ledger (account_id, delta, temp_delta, root_delta, reason, job_id, units, balance_after, created_at)
      SELECT u.id, -(c.temp_charged + c.root_charged), -c.temp_charged, -c.root_charged, 'reserve', ${i.runId}, ${i.units},
             u.temp_balance + u.root_balance, ${now}::timestamptz
      FROM upd u CROSS JOIN calc c
      RETURNING id
    )${scanCte}
    SELECT c.unlimited, c.enough,
           (c.temp_balance + c.root_balance)::float8 AS available,
           c.temp_charged::float8 AS temp_charged, c.root_charged::float8 AS root_charged,
           (u.temp_balance + u.root_balance)::float8 AS remaining, u.checks_used::float8 AS checks_used,
           u.email, u.unlimited_pro, u.unlimited_until,
           (SELECT count(*) FROM led)::float8 AS ledger_rows,
           ${scanId} AS scan_id,
           (SELECT live FROM node) AS lease_live,
           (SELECT running FROM busy) AS job_running
    FROM calc c LEFT JOIN upd u ON true`;
}
