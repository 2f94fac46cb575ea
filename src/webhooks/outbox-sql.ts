/**
 * The webhooks' SQL (pure builders: no I/O; src/webhooks/store.ts runs them).
 * Lists and maps travel as one JSON parameter each (jsonb on the way in), so
 * the statements read the same on PGlite and PostgreSQL.
 *
 *   enqueueStatement        messages of one event for an account, with one
 *                           delivery per enabled endpoint that wants it (its
 *                           events, its pools); nothing written when none does
 *   markAsyncRunStatement   a run submitted async, marked at its reservation
 *   enqueueCheckStatement   check.completed of a marked run's scan, built from
 *                           the scan row in the transaction that closes it
 *   enqueueTestStatement    webhook.test to one endpoint (whatever its events)
 *   claimStatement          due deliveries of enabled endpoints claimed for a
 *                           node until a horizon (FOR UPDATE SKIP LOCKED: two
 *                           nodes never take the same one; a claim whose node
 *                           died expires and is taken again), at most
 *                           `perEndpoint` in flight per endpoint on the node
 *   nextDueStatement        when the next pending delivery of an enabled
 *                           endpoint can be claimed (the loop's sleep while
 *                           no other node writes: nothing pending, no look)
 *   vacuumStatement         the deliveries' dead rows reclaimed (PGlite)
 *   recordAttemptStatement  an attempt appended and the delivery's next state,
 *                           only while this node still holds its claim
 *   recordSuccessStatement  a delivered attempt and its endpoint's streak ended,
 *                           one statement
 *   endpointFailure / disableStatement  the disable rule's input and its
 *                           outcome (schedule.ts decides)
 *   pruneDeliveriesStatement, pruneMessagesStatement  finished deliveries past
 *                           the retention, then the messages left without any
 */
import { sql, type SQL } from 'drizzle-orm';
import type { Attempt, DeliveryState } from './types';

const iso = (ms: number): string => new Date(ms).toISOString();
const json = (v: unknown): SQL => sql`${JSON.stringify(v)}::jsonb`;

export interface NewMessage {
  id: string;
  data: unknown;
}

/** Endpoints of the account that want `type` (and follow `pool` when given). */
function targets(accountId: string, type: string, pool: string | null): SQL {
  const poolMatch = pool === null ? sql`TRUE` : sql`(w.pools IS NULL OR ${pool}::text = ANY(w.pools))`;
  return sql`SELECT w.id FROM webhooks w
    WHERE w.account_id = ${accountId}::uuid AND w.state = 'enabled' AND ${type}::text = ANY(w.events) AND ${poolMatch}`;
}

/** The messages and their deliveries; answers one row per delivery written. */
export function enqueueStatement(accountId: string, type: string, pool: string | null, messages: readonly NewMessage[], atMs: number): SQL {
  const at = sql`${iso(atMs)}::timestamptz`;
  return sql`WITH t AS (${targets(accountId, type, pool)}),
    m AS (
      INSERT INTO webhook_messages (id, account_id, type, payload, created_at)
      SELECT x->>'id', ${accountId}::uuid, ${type}::text, x->'data', ${at}
      FROM jsonb_array_elements(${json(messages)}) AS x
      WHERE EXISTS (SELECT 1 FROM t)
      RETURNING id
    )
    INSERT INTO webhook_deliveries (message_id, webhook_id, next_attempt_at, created_at)
    SELECT m.id, t.id, ${at}, ${at} FROM m CROSS JOIN t
    RETURNING id`;
}

/** Marks `runId` as a check submitted async (at its reservation): whoever closes its scan tells its webhooks. */
export function markAsyncRunStatement(runId: string): SQL {
  return sql`INSERT INTO webhook_async_runs (run_id) VALUES (${runId}) ON CONFLICT DO NOTHING`;
}

/**
 * check.completed of the scan of `runId` (its jobId, status and totals as
 * just settled), to the account's endpoints that want it; only for a run
 * marked async, whose mark it removes (so it is told once, whoever closes
 * the scan: its settlement or the orphan sweep).
 */
export function enqueueCheckStatement(runId: string, messageId: string, resultUrl: string | null, atMs: number): SQL {
  const at = sql`${iso(atMs)}::timestamptz`;
  return sql`WITH mark AS (DELETE FROM webhook_async_runs WHERE run_id = ${runId} RETURNING run_id),
    s AS (SELECT account_id, client_job_id, status, total_checked, total_working FROM scans WHERE job_id = ${runId} AND EXISTS (SELECT 1 FROM mark)),
    t AS (SELECT w.id FROM webhooks w JOIN s ON w.account_id = s.account_id WHERE w.state = 'enabled' AND 'check.completed' = ANY(w.events)),
    m AS (
      INSERT INTO webhook_messages (id, account_id, type, payload, created_at)
      SELECT ${messageId}, s.account_id, 'check.completed',
        jsonb_build_object('jobId', s.client_job_id, 'status', s.status, 'total_checked', s.total_checked,
          'total_working', s.total_working, 'result_url', ${resultUrl}::text),
        ${at}
      FROM s WHERE EXISTS (SELECT 1 FROM t)
      RETURNING id
    )
    INSERT INTO webhook_deliveries (message_id, webhook_id, next_attempt_at, created_at)
    SELECT m.id, t.id, ${at}, ${at} FROM m CROSS JOIN t
    RETURNING id`;
}

/** webhook.test to one endpoint of the account; no row when it is not the account's. */
export function enqueueTestStatement(accountId: string, webhookId: string, messageId: string, data: unknown, atMs: number): SQL {
  const at = sql`${iso(atMs)}::timestamptz`;
  return sql`WITH t AS (SELECT id FROM webhooks WHERE id = ${webhookId} AND account_id = ${accountId}::uuid),
    m AS (
      INSERT INTO webhook_messages (id, account_id, type, payload, created_at)
      SELECT ${messageId}, ${accountId}::uuid, 'webhook.test', ${json(data)}, ${at} FROM t
      RETURNING id
    )
    INSERT INTO webhook_deliveries (message_id, webhook_id, next_attempt_at, created_at)
    SELECT m.id, t.id, ${at}, ${at} FROM m CROSS JOIN t
    RETURNING id`;
}

export interface ClaimInput {
  nodeId: string;
  nowMs: number;
  untilMs: number;
  limit: number;
  perEndpoint: number;
  /** Attempts this node has in flight per endpoint id. */
  busy: ReadonlyMap<string, number>;
}

/**
 * Claims due deliveries; each row: the delivery, its message and its
 * endpoint's url and sealed secret. Fair across endpoints: the endpoints
 * with pending deliveries are enumerated over the pending index (a loose
 * index scan: one probe per endpoint, whatever its backlog), each gives its
 * oldest due ones up to `perEndpoint` in flight (counting this node's
 * `busy`), the oldest `limit` of those are taken. Only the rows taken are
 * locked (FOR UPDATE SKIP LOCKED, their claim re-checked on the row's latest
 * version), so a claim writes what it takes and one endpoint's backlog never
 * holds up another's messages.
 */
export function claimStatement(c: ClaimInput): SQL {
  const now = sql`${iso(c.nowMs)}::timestamptz`;
  const busy = [...c.busy].map(([id, n]) => ({ id, n }));
  const claimable = (d: string) => sql`${sql.raw(d)}.state = 'pending' AND ${sql.raw(d)}.next_attempt_at <= ${now} AND (${sql.raw(d)}.claim_until IS NULL OR ${sql.raw(d)}.claim_until < ${now})`;
  return sql`WITH RECURSIVE eps AS (
      (SELECT webhook_id FROM webhook_deliveries WHERE state = 'pending' ORDER BY webhook_id LIMIT 1)
      UNION ALL
      SELECT (SELECT d.webhook_id FROM webhook_deliveries d WHERE d.state = 'pending' AND d.webhook_id > eps.webhook_id ORDER BY d.webhook_id LIMIT 1)
      FROM eps WHERE eps.webhook_id IS NOT NULL
    ),
    busy AS (SELECT * FROM jsonb_to_recordset(${json(busy)}) AS b(id text, n int)),
    cand AS (
      SELECT x.id, x.next_attempt_at FROM eps
      JOIN webhooks w ON w.id = eps.webhook_id AND w.state = 'enabled'
      LEFT JOIN busy b ON b.id = eps.webhook_id
      CROSS JOIN LATERAL (
        SELECT d.id, d.next_attempt_at FROM webhook_deliveries d
        WHERE d.webhook_id = eps.webhook_id AND ${claimable('d')}
        ORDER BY d.next_attempt_at, d.id
        LIMIT GREATEST(0, ${c.perEndpoint} - COALESCE(b.n, 0))
      ) x
    ),
    pick AS (
      SELECT d.id FROM webhook_deliveries d
      WHERE d.id IN (SELECT id FROM cand ORDER BY next_attempt_at, id LIMIT ${c.limit}) AND ${claimable('d')}
      FOR UPDATE SKIP LOCKED
    )
    UPDATE webhook_deliveries d SET claimed_by = ${c.nodeId}, claim_until = ${iso(c.untilMs)}::timestamptz
    FROM pick, webhook_messages m, webhooks w
    WHERE d.id = pick.id AND m.id = d.message_id AND w.id = d.webhook_id
    RETURNING d.id, d.message_id, d.webhook_id, d.attempt_count, m.type, m.payload, m.created_at, w.url, w.secret_sealed`;
}

/**
 * When the next pending delivery of an enabled endpoint becomes claimable
 * (its next attempt, or its claim's end when one holds it: the claim is
 * taken again after it); one row, `at` null when none is pending.
 */
export function nextDueStatement(): SQL {
  return sql`SELECT min(GREATEST(d.next_attempt_at, COALESCE(d.claim_until, d.next_attempt_at))) AS at
    FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id AND w.state = 'enabled'
    WHERE d.state = 'pending'`;
}

/** Reclaims the space of the deliveries' rewritten rows (PGlite runs no autovacuum). */
export function vacuumStatement(): SQL {
  return sql`VACUUM webhook_deliveries`;
}

/** The attempt appended and the next state; no row when the claim is no longer this node's (it expired and was taken). */
export function recordAttemptStatement(deliveryId: number, nodeId: string, attempt: Attempt, state: DeliveryState, nextAttemptAtMs: number | null, returning: SQL = sql`id`): SQL {
  const next = nextAttemptAtMs === null ? sql`next_attempt_at` : sql`${iso(nextAttemptAtMs)}::timestamptz`;
  return sql`UPDATE webhook_deliveries
    SET state = ${state}, attempts = attempts || ${json([attempt])}, attempt_count = attempt_count + 1,
      next_attempt_at = ${next}, claimed_by = NULL, claim_until = NULL
    WHERE id = ${deliveryId} AND claimed_by = ${nodeId} AND state = 'pending'
    RETURNING ${returning}`;
}

/** Gives a claim back untried (the node stops): due again at once for any node. */
export function releaseClaimStatement(deliveryIds: readonly number[], nodeId: string): SQL {
  return sql`UPDATE webhook_deliveries SET claimed_by = NULL, claim_until = NULL
    WHERE id IN (SELECT (jsonb_array_elements_text(${json(deliveryIds)}))::bigint) AND claimed_by = ${nodeId} AND state = 'pending'`;
}

/**
 * A delivered attempt in one statement: the attempt appended, the delivery
 * delivered, and its endpoint's streak ended (its row written only when
 * that changes something or its last success is a minute old, so a busy
 * endpoint's row is not rewritten per message). No row when the claim was
 * no longer this node's.
 */
export function recordSuccessStatement(deliveryId: number, nodeId: string, attempt: Attempt, atMs: number): SQL {
  const at = sql`${iso(atMs)}::timestamptz`;
  return sql`WITH d AS (${recordAttemptStatement(deliveryId, nodeId, attempt, 'delivered', null, sql`webhook_id`)}),
    w AS (
      UPDATE webhooks SET last_success_at = ${at}, failing_since = NULL FROM d
      WHERE webhooks.id = d.webhook_id
        AND (webhooks.failing_since IS NOT NULL OR webhooks.last_success_at IS NULL OR webhooks.last_success_at < ${at} - interval '1 minute')
      RETURNING 1
    )
    SELECT webhook_id FROM d`;
}

/** Marks the endpoint failing since now unless it already was; answers `failing_since`. */
export function endpointFailureStatement(webhookId: string, atMs: number): SQL {
  return sql`UPDATE webhooks SET failing_since = COALESCE(failing_since, ${iso(atMs)}::timestamptz) WHERE id = ${webhookId} RETURNING failing_since`;
}

export function disableStatement(webhookId: string, reason: string, atMs: number): SQL {
  return sql`UPDATE webhooks SET state = 'disabled', disabled_reason = ${reason}, updated_at = ${iso(atMs)}::timestamptz
    WHERE id = ${webhookId} AND state = 'enabled' RETURNING id`;
}

/** Finished deliveries created before `beforeMs` (run pruneMessagesStatement after it). */
export function pruneDeliveriesStatement(beforeMs: number): SQL {
  return sql`DELETE FROM webhook_deliveries WHERE state <> 'pending' AND created_at < ${iso(beforeMs)}::timestamptz`;
}

/** Messages created before `beforeMs` that no delivery points at any more. */
export function pruneMessagesStatement(beforeMs: number): SQL {
  return sql`DELETE FROM webhook_messages m WHERE m.created_at < ${iso(beforeMs)}::timestamptz
    AND NOT EXISTS (SELECT 1 FROM webhook_deliveries x WHERE x.message_id = m.id)`;
}
