/**
 * The webhooks' database side: endpoints (create under the per-account
 * limit, list, get, update, delete, rotate), the outbox (enqueue*), the
 * delivery loop's claims and attempts, and the deliveries listing. Each call
 * is one statement or one transaction; another account's endpoint is absent
 * (null / false), never someone else's. SQL of the outbox and the claims:
 * outbox-sql.ts.
 */
import { and, asc, desc, eq, inArray, sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../../db/client';
import { accounts, pools, webhookDeliveries, webhookMessages, webhooks, type WebhookRowDb } from '../../db/schema';
import { newMessageId } from './seal';
import {
  claimStatement,
  disableStatement,
  endpointFailureStatement,
  enqueueCheckStatement,
  enqueueStatement,
  enqueueTestStatement,
  markAsyncRunStatement,
  nextDueStatement,
  pruneDeliveriesStatement,
  pruneMessagesStatement,
  recordAttemptStatement,
  recordSuccessStatement,
  releaseClaimStatement,
  vacuumStatement,
  type ClaimInput,
  type NewMessage,
} from './outbox-sql';
import { shouldDisable, DISABLED_REASON } from './schedule';
import { MAX_DELIVERIES_LISTED, type Attempt, type DeliveryObject, type DeliveryState, type MessageType, type WebhookEvent, type WebhookObject, type WebhookPatch, type WebhookState } from './types';

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
export type DbOrTx = Db | Tx;
type Row = Record<string, unknown>;

const run = async (db: DbOrTx, q: ReturnType<typeof claimStatement>): Promise<Row[]> => rowsOf<Row>(await db.execute(q));

/** A timestamp as either driver answers it (Date on PGlite, a string on postgres.js raw rows). */
export function msOf(v: unknown): number {
  if (v instanceof Date) return v.getTime();
  if (typeof v === 'string') return Date.parse(v.includes('T') || v.endsWith('Z') ? v : v.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00'));
  throw new TypeError(`not a timestamp: ${String(v)}`);
}

const isoOrNull = (d: Date | null): string | null => (d === null ? null : d.toISOString());

export function webhookObject(r: WebhookRowDb): WebhookObject {
  return {
    id: r.id,
    url: r.url,
    events: r.events as WebhookEvent[],
    pools: r.pools,
    state: r.state as WebhookState,
    disabled_reason: r.disabledReason,
    created_at: r.createdAt.toISOString(),
    last_success_at: isoOrNull(r.lastSuccessAt),
  };
}

// ---- endpoints ----------------------------------------------------------------

export interface InsertWebhook {
  id: string;
  accountId: string;
  url: string;
  events: WebhookEvent[];
  pools: string[] | null;
  secretSealed: string;
  now: Date;
}

/** The new endpoint, or `limit` when the account already has `max` (counted under the account's row lock). */
export async function insertWebhook(db: Db, w: InsertWebhook, max: number): Promise<WebhookRowDb | 'limit'> {
  return db.transaction(async (tx) => {
    await tx.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, w.accountId)).for('no key update');
    const [{ n } = { n: 0 }] = await tx.select({ n: sql<number>`count(*)::int` }).from(webhooks).where(eq(webhooks.accountId, w.accountId));
    if (n >= max) return 'limit';
    const [row] = await tx
      .insert(webhooks)
      .values({ id: w.id, accountId: w.accountId, url: w.url, events: w.events, pools: w.pools, secretSealed: w.secretSealed, createdAt: w.now, updatedAt: w.now })
      .returning();
    return row!;
  });
}

export async function listWebhooks(db: DbOrTx, accountId: string): Promise<WebhookRowDb[]> {
  return db.select().from(webhooks).where(eq(webhooks.accountId, accountId)).orderBy(asc(webhooks.createdAt), asc(webhooks.id));
}

export async function getWebhook(db: DbOrTx, accountId: string, id: string): Promise<WebhookRowDb | null> {
  const [row] = await db.select().from(webhooks).where(and(eq(webhooks.id, id), eq(webhooks.accountId, accountId)));
  return row ?? null;
}

/** Applies the patch; enabling again clears `disabled_reason` and the failing streak. */
export async function updateWebhook(db: DbOrTx, accountId: string, id: string, patch: WebhookPatch, now: Date): Promise<WebhookRowDb | null> {
  const set: Partial<typeof webhooks.$inferInsert> = { updatedAt: now };
  if (patch.url !== undefined) set.url = patch.url;
  if (patch.events !== undefined) set.events = patch.events;
  if (patch.pools !== undefined) set.pools = patch.pools;
  if (patch.state === 'enabled') Object.assign(set, { state: 'enabled', disabledReason: null, failingSince: null });
  if (patch.state === 'disabled') Object.assign(set, { state: 'disabled', disabledReason: 'disabled by its owner' });
  const [row] = await db.update(webhooks).set(set).where(and(eq(webhooks.id, id), eq(webhooks.accountId, accountId))).returning();
  return row ?? null;
}

export async function deleteWebhook(db: DbOrTx, accountId: string, id: string): Promise<boolean> {
  const rows = await db.delete(webhooks).where(and(eq(webhooks.id, id), eq(webhooks.accountId, accountId))).returning({ id: webhooks.id });
  return rows.length > 0;
}

export async function setSecret(db: DbOrTx, accountId: string, id: string, secretSealed: string, now: Date): Promise<boolean> {
  const rows = await db
    .update(webhooks)
    .set({ secretSealed, updatedAt: now })
    .where(and(eq(webhooks.id, id), eq(webhooks.accountId, accountId)))
    .returning({ id: webhooks.id });
  return rows.length > 0;
}

/** The ids of `ids` that are not pools of the account (in the order given). */
export async function foreignPools(db: DbOrTx, accountId: string, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const own = await db.select({ id: pools.id }).from(pools).where(and(eq(pools.accountId, accountId), inArray(pools.id, [...ids])));
  const mine = new Set(own.map((r) => r.id));
  return ids.filter((id) => !mine.has(id));
}

// ---- the outbox -----------------------------------------------------------------

/** Messages of one event (deliveries to the endpoints that want it); the number of deliveries written. */
export async function enqueue(db: DbOrTx, accountId: string, type: string, pool: string | null, data: readonly unknown[], atMs: number): Promise<number> {
  if (data.length === 0) return 0;
  const messages: NewMessage[] = data.map((d) => ({ id: newMessageId(), data: d }));
  return (await run(db, enqueueStatement(accountId, type, pool, messages, atMs))).length;
}

/** Marks a run as submitted async (after its reservation): check.completed is written when its scan closes. */
export async function markAsyncRun(db: DbOrTx, runId: string): Promise<void> {
  await db.execute(markAsyncRunStatement(runId));
}

/** check.completed of a closed run marked async (call it in the transaction that closed the scan); 0 for a run not marked. */
export async function enqueueCheckCompleted(db: DbOrTx, runId: string, resultUrl: string | null, atMs: number): Promise<number> {
  return (await run(db, enqueueCheckStatement(runId, newMessageId(), resultUrl, atMs))).length;
}

/** webhook.test to one endpoint; false when it is not the account's. */
export async function enqueueTest(db: DbOrTx, accountId: string, webhookId: string, atMs: number): Promise<boolean> {
  return (await run(db, enqueueTestStatement(accountId, webhookId, newMessageId(), { webhook: webhookId, at: new Date(atMs).toISOString() }, atMs))).length > 0;
}

// ---- the delivery loop's side -----------------------------------------------------

export interface ClaimedDelivery {
  id: number;
  messageId: string;
  webhookId: string;
  /** Attempts made before this one. */
  attempts: number;
  type: string;
  data: unknown;
  createdAtMs: number;
  url: string;
  secretSealed: string;
}

export async function claimDeliveries(db: DbOrTx, c: ClaimInput): Promise<ClaimedDelivery[]> {
  return (await run(db, claimStatement(c))).map((r) => ({
    id: Number(r.id),
    messageId: String(r.message_id),
    webhookId: String(r.webhook_id),
    attempts: Number(r.attempt_count),
    type: String(r.type),
    data: typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload,
    createdAtMs: msOf(r.created_at),
    url: String(r.url),
    secretSealed: String(r.secret_sealed),
  }));
}

export interface AttemptRecord {
  deliveryId: number;
  webhookId: string;
  nodeId: string;
  attempt: Attempt;
  state: DeliveryState;
  nextAttemptAtMs: number | null;
  success: boolean;
  atMs: number;
}

/**
 * The attempt and the delivery's next state, and the endpoint's streak (a
 * success ends it; a failure starts it, and one 3 days into it disables the
 * endpoint), in one transaction. false when the claim was no longer this
 * node's (nothing written). `disabled`: this attempt disabled the endpoint.
 */
export async function recordAttempt(db: Db, a: AttemptRecord): Promise<{ recorded: boolean; disabled: boolean }> {
  // the common case, one statement
  if (a.success) return { recorded: (await run(db, recordSuccessStatement(a.deliveryId, a.nodeId, a.attempt, a.atMs))).length > 0, disabled: false };
  return db.transaction(async (tx) => {
    const hit = await run(tx, recordAttemptStatement(a.deliveryId, a.nodeId, a.attempt, a.state, a.nextAttemptAtMs));
    if (hit.length === 0) return { recorded: false, disabled: false };
    const [row] = await run(tx, endpointFailureStatement(a.webhookId, a.atMs));
    const since = row?.failing_since === null || row?.failing_since === undefined ? null : msOf(row.failing_since);
    if (!shouldDisable(since, a.atMs)) return { recorded: true, disabled: false };
    return { recorded: true, disabled: (await run(tx, disableStatement(a.webhookId, DISABLED_REASON, a.atMs))).length > 0 };
  });
}

/** When the next pending delivery can be claimed (epoch ms; outbox-sql.ts nextDueStatement), or null when none is pending. */
export async function nextDueAt(db: DbOrTx): Promise<number | null> {
  const [row] = await run(db, nextDueStatement());
  return row?.at === null || row?.at === undefined ? null : msOf(row.at);
}

/** VACUUM of the deliveries (PGlite: no autovacuum; every claim and attempt rewrites a row). */
export async function vacuumDeliveries(db: DbOrTx): Promise<void> {
  await db.execute(vacuumStatement());
}

export async function releaseClaims(db: DbOrTx, ids: readonly number[], nodeId: string): Promise<void> {
  if (ids.length > 0) await db.execute(releaseClaimStatement(ids, nodeId));
}

export async function pruneFinished(db: DbOrTx, beforeMs: number): Promise<void> {
  await db.execute(pruneDeliveriesStatement(beforeMs));
  await db.execute(pruneMessagesStatement(beforeMs));
}

// ---- listing ------------------------------------------------------------------------

/** The endpoint's newest deliveries (at most MAX_DELIVERIES_LISTED); null when the endpoint is not the account's. */
export async function listDeliveries(db: DbOrTx, accountId: string, webhookId: string): Promise<DeliveryObject[] | null> {
  if ((await getWebhook(db, accountId, webhookId)) === null) return null;
  const rows = await db
    .select({
      id: webhookDeliveries.messageId,
      event: webhookMessages.type,
      createdAt: webhookDeliveries.createdAt,
      attempts: webhookDeliveries.attempts,
      state: webhookDeliveries.state,
      nextAttemptAt: webhookDeliveries.nextAttemptAt,
    })
    .from(webhookDeliveries)
    .innerJoin(webhookMessages, eq(webhookMessages.id, webhookDeliveries.messageId))
    .where(eq(webhookDeliveries.webhookId, webhookId))
    .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
    .limit(MAX_DELIVERIES_LISTED);
  return rows.map((r) => ({
    id: r.id,
    event: r.event as MessageType, // written by the outbox from a MessageType
    created_at: r.createdAt.toISOString(),
    attempts: r.attempts as Attempt[],
    state: r.state as DeliveryState,
    next_attempt_at: r.state === 'pending' ? r.nextAttemptAt.toISOString() : null,
  }));
}
