/**
 * A pool owner's durable copy and charging (DECISIONS "Pools are actors"):
 * its lease, its loads, its fenced flushes and its reservation, each one
 * transaction over the statements of src/pools/flush-sql.ts and the quota of
 * src/accounts/quota.ts.
 *
 * Charging: the owner reserves ahead under its lease's run id
 * (`pool:<id>:<token>`, a ledger `reserve` row per reservation of many
 * checks, no scan row). A flush chunk settles exactly the checks it makes
 * durable: the lease row's `settled` moves in the chunk's own transaction,
 * fenced by the token. What was reserved and never settled (the checks not
 * made durable: a crash, a stop, a lost lease) is refunded as
 * `outstanding - settled` under the account's lock, once: at a take-over (the
 * old token's run), at a clean release, and for a deleted pool's lease. So
 * at any moment after a kill -9 and the next start, charged == the checks
 * made durable.
 */
import { rowsOf, type Db } from '../../db/client';
import { refundQuotaTx, reserveQuota } from '../accounts/quota';
import { ServiceError } from '../errors';
import { DOMAIN_ERROR_CODES } from '../error-codes';
import {
  deleteLeaseStatement,
  dropOwnerStatement,
  leaseHolderStatement,
  leasesStatement,
  liveOwnersStatement,
  renewOwnerStatement,
  leaseRunId,
  leasesOfGonePoolsStatement,
  loadProxiesStatement,
  lockAccountStatement,
  outstandingStatement,
  proxyIdsStatement,
  putLeaseStatement,
  addToBatchStatement,
  recordBatchStatement,
  releaseLeaseStatement,
  runAccountStatement,
  settleLeaseStatement,
  stateUpdateStatement,
  takeLeaseStatement,
  verdictFieldsStatement,
  type BatchTally,
  type StateBatch,
  type VerdictBatch,
} from '../pools/flush-sql';
import { rowFromSql, type PoolProxyRow } from '../pools/shape';
import type { TargetState } from '../pools/target-columns';
import { loadTargetsStatement, targetRowFromSql, targetUpsertStatement, type TargetBatch } from '../pools/targets-sql';
import { nextTurn } from '../clock';

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
/** A transaction of the database (a flush chunk's). */
export type PoolTx = Tx;
type Row = Record<string, unknown>;

const rows = async (db: Db | Tx, q: Parameters<Db['execute']>[0]): Promise<Row[]> => rowsOf<Row>(await db.execute(q));

/** The owner's lease: its token and the run id its reservations and refunds carry. */
export interface PoolLease {
  poolId: string;
  accountId: string;
  token: number;
  runId: string;
}

/** A flush found another token on the lease: nothing of it was written or settled. */
export class PoolLeaseLostError extends ServiceError {
  constructor(poolId: string) {
    super(DOMAIN_ERROR_CODES.POOL_LEASE_LOST, `pool ${poolId}: another owner holds its lease`);
  }
}

/** Refunds what `runId` reserved beyond `settled` checks (under the account's lock: once); the units given back. */
async function refundRest(tx: Tx, accountId: string, runId: string, settled: number, now: Date): Promise<number> {
  await rows(tx, lockAccountStatement(accountId));
  const [o] = await rows(tx, outstandingStatement(accountId, runId));
  const rest = Math.max(0, Number(o?.outstanding ?? 0) - settled);
  if (rest === 0) return 0;
  return (await refundQuotaTx(tx, { accountId, runId, units: rest, now })).refunded;
}

/**
 * Takes the pool's lease for `nodeId` with a new token (the old one + 1),
 * refunding the old run's unsettled rest, in one transaction. Without
 * `force`, only a lease that expired or is this node's is taken (null
 * otherwise); embedded, the process takes every lease (`force`).
 */
export async function takeLease(db: Db, o: { poolId: string; accountId: string; nodeId: string; nowMs: number; leaseMs: number; force: boolean }): Promise<PoolLease | null> {
  return db.transaction(async (tx) => {
    const [old] = await rows(tx, takeLeaseStatement(o.poolId));
    const expires = old === undefined ? 0 : old.expires_at instanceof Date ? old.expires_at.getTime() : Date.parse(String(old.expires_at));
    if (old !== undefined && !o.force && String(old.node_id) !== o.nodeId && expires > o.nowMs) return null;
    if (old !== undefined) await refundRest(tx, o.accountId, String(old.run_id), Number(old.settled), new Date(o.nowMs));
    const token = Number(old?.token ?? 0) + 1;
    await rows(tx, putLeaseStatement(o.poolId, o.nodeId, token, o.nowMs + o.leaseMs));
    return { poolId: o.poolId, accountId: o.accountId, token, runId: leaseRunId(o.poolId, token) };
  });
}

/** Reserves `units` more under the lease's run id (a ledger row, no scan); false when the balance cannot pay. */
export async function reserveChecks(db: Db, lease: PoolLease, units: number, nowMs: number): Promise<{ ok: true; unlimited: boolean } | { ok: false; required: number; available: number }> {
  const r = await reserveQuota(db, { accountId: lease.accountId, runId: lease.runId, units, now: new Date(nowMs) });
  return r.ok ? { ok: true, unlimited: r.unlimited } : { ok: false, required: r.required, available: r.available };
}

export interface FlushChunk {
  state: StateBatch;
  verdicts: VerdictBatch;
  /** The chunk's proxies' target states (pool_proxy_targets); absent: none changed. */
  targets?: TargetBatch;
  /** Checks this chunk makes durable (charged ones: blocked and not-tried are not). */
  settled: number;
  leaseUntilMs: number;
  /**
   * This chunk's part of the batch's record (a pool_rounds row, a usage scan, last_round_at): `seq`
   * null makes the record (the flush's first chunk that settles), else the chunk's checks are added
   * to batch `seq`'s; null: nothing to record (the chunk settles nothing).
   */
  batch: { tally: BatchTally; startedMs: number; nowMs: number; seq: number | null } | null;
  /** Written last in the same transaction (the chunk's webhook messages); resolves to what it wrote. */
  alsoInTx?: (tx: Tx) => Promise<number>;
}

/**
 * One fenced transaction: the lease (fence, renewal, settlement), the state rows, the changed verdict
 * fields, the chunk's part of the batch's record. Resolves to the batch's seq (null: no record).
 * PoolLeaseLostError: nothing written.
 */
export async function flushChunk(db: Db, lease: PoolLease, c: FlushChunk): Promise<number | null> {
  return db.transaction(async (tx) => {
    const [held] = await rows(tx, settleLeaseStatement(lease.poolId, lease.token, c.settled, c.leaseUntilMs));
    if (held === undefined) throw new PoolLeaseLostError(lease.poolId);
    if (c.state.id.length > 0) await rows(tx, stateUpdateStatement(lease.poolId, lease.token, c.state));
    if (c.verdicts.id.length > 0) await rows(tx, verdictFieldsStatement(lease.poolId, lease.token, c.verdicts));
    if (c.targets !== undefined && c.targets.id.length > 0) await rows(tx, targetUpsertStatement(lease.poolId, lease.token, c.targets));
    let seq: number | null = null;
    const b = c.batch;
    if (b !== null) {
      const [rec] = await rows(tx, b.seq === null ? recordBatchStatement(lease.poolId, lease.token, b.tally, b.startedMs, b.nowMs) : addToBatchStatement(lease.poolId, lease.token, b.seq, b.tally, b.nowMs));
      seq = rec === undefined ? null : Number(rec.seq);
    }
    if (c.alsoInTx !== undefined) await c.alsoInTx(tx);
    return seq;
  });
}

/** The lease given up (a clean stop, a move, a deleted pool: its row kept, expired) and its run's unsettled rest refunded; the units given back (0 when the lease was not held any more). */
export async function releaseLease(db: Db, lease: PoolLease, nowMs: number): Promise<number> {
  return db.transaction(async (tx) => {
    const [gone] = await rows(tx, releaseLeaseStatement(lease.poolId, lease.token));
    if (gone === undefined) return 0;
    return refundRest(tx, lease.accountId, lease.runId, Number(gone.settled), new Date(nowMs));
  });
}

/**
 * An owner that lost its lease gives back what it reserved after the
 * take-over refunded its run (`settled`: the checks it knows it made durable);
 * the take-over's refund and this one never give back a settled check twice.
 */
export async function refundLost(db: Db, lease: PoolLease, settled: number, nowMs: number): Promise<number> {
  return db.transaction((tx) => refundRest(tx, lease.accountId, lease.runId, settled, new Date(nowMs)));
}

/** The leases of deleted pools: each run's unsettled rest refunded, the row dropped. */
export async function settleGoneLeases(db: Db, nowMs: number): Promise<number> {
  let units = 0;
  for (const l of await rows(db, leasesOfGonePoolsStatement())) {
    const runId = String(l.run_id);
    units += await db.transaction(async (tx) => {
      const [gone] = await rows(tx, deleteLeaseStatement(String(l.pool_id), Number(l.token)));
      if (gone === undefined) return 0;
      const [acc] = await rows(tx, runAccountStatement(runId));
      if (acc === undefined) return 0;
      return refundRest(tx, String(acc.account_id), runId, Number(gone.settled), new Date(nowMs));
    });
  }
  return units;
}

/** Rows to load per statement (an owner yields between them). */
export const LOAD_CHUNK = 2_000;

/** The pool's rows in id order, `LOAD_CHUNK` at a time, each chunk handed to `each`. */
export async function loadPoolRows(db: Db, poolId: string, afterId: number, each: (rows: PoolProxyRow[]) => void): Promise<number> {
  let last = afterId;
  for (let first = true; ; first = false) {
    if (!first) await nextTurn();
    const chunk = (await rows(db, loadProxiesStatement(poolId, last, LOAD_CHUNK))).map(rowFromSql);
    if (chunk.length > 0) {
      each(chunk);
      last = chunk[chunk.length - 1]!.id;
    }
    if (chunk.length < LOAD_CHUNK) return last;
  }
}

/** The pool's target rows of proxies with an id in (afterId, upToId], each handed to `each`. */
export async function loadPoolTargets(db: Db, poolId: string, afterId: number, upToId: number, each: (proxyId: number, name: string, state: TargetState) => void): Promise<void> {
  if (upToId <= afterId) return;
  for (const raw of await rows(db, loadTargetsStatement(poolId, afterId, upToId))) {
    const t = targetRowFromSql(raw);
    each(t.proxyId, t.name, t.state);
  }
}

/** A cluster's placement: this node's owner runs (renewed) and the live owners and leases now. */
export async function placementView(db: Db, nodeId: string, untilMs: number): Promise<{ owners: string[]; leases: Map<string, { nodeId: string; expiredMs: number }> }> {
  await rows(db, renewOwnerStatement(nodeId, untilMs));
  const owners = (await rows(db, liveOwnersStatement())).map((r) => String(r.node_id));
  const leases = new Map((await rows(db, leasesStatement())).map((r) => [String(r.pool_id), { nodeId: String(r.node_id), expiredMs: Number(r.expired_ms) }]));
  return { owners, leases };
}

/** This node's owner stopped: not a candidate of the placement any more. */
export async function dropOwner(db: Db, nodeId: string): Promise<void> {
  await rows(db, dropOwnerStatement(nodeId));
}

/** The node holding the pool's lease now, or null. */
export async function leaseHolder(db: Db, poolId: string): Promise<string | null> {
  const [r] = await rows(db, leaseHolderStatement(poolId));
  return r === undefined ? null : String(r.node_id);
}

/** Every id of the pool's proxies now, ascending. */
export async function poolProxyIds(db: Db, poolId: string): Promise<number[]> {
  return (await rows(db, proxyIdsStatement(poolId))).map((r) => Number(r.id));
}
