/**
 * Quota reservation and refund.
 *
 * reserveQuota is ONE statement (src/accounts/quota-sql.ts) that locks the
 * account row (SELECT ... FOR NO KEY UPDATE), so two concurrent reservations can never
 * spend the same units; the CHECK constraints (balances >= 0) are a second fence.
 * - UnlimitedPro active (flag and expiry absent or after `now`): nothing is
 *   charged and it never fails; checks_used still grows by `units`.
 * - Otherwise the temp balance is spent first, then root; when temp + root <
 *   units nothing changes and {ok: false, required, available} comes back.
 * - Every reservation writes a ledger row (reason 'reserve', job_id, units,
 *   the temp/root split; delta 0 under UnlimitedPro).
 * - With `scan`, the job's scan row (status 'running', charged = units
 *   actually taken, 0 under UnlimitedPro, node_id = `nodeId`) is inserted in
 *   the same transaction, so a crash can never leave a reservation without
 *   the scan row that the orphan sweep (orphans.ts) looks for.
 * - With `nodeId`, the node's lease must be live in the database, else
 *   nothing changes and it throws ServiceError `node_lease_lost`.
 * - With `scan` and `clientJobId`, no running scan (any account, any node)
 *   may carry that jobId, else nothing changes and it throws ServiceError
 *   `job_already_running` (client-job-conflict.ts), before a short balance
 *   is looked at; two at the same moment: the database's unique index
 *   refuses the second, mapped to the same error.
 *
 * refundQuota gives back unchecked units of a job. The ledger rows of the job
 * say how much of its reservation is still unrefunded and where it came from.
 * ORDER: root first, then temp, then (UnlimitedPro) uncharged units. Rationale:
 * checks consume temp first, so the units that were really checked are the
 * temp-first part of the reservation; the unchecked tail is the root part.
 * After a partial refund the account is exactly as if only the checked units
 * had been reserved. Refunds never exceed what is left of the reservation
 * (over-asking is clamped; refunding twice is harmless). checks_used shrinks
 * by the refunded units.
 */
import { and, eq, sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../../db/client';
import { accounts, quotaLedger } from '../../db/schema';
import { clientJobRunning, reservationError } from './client-job-conflict';
import { reserveStatement, type ReserveInput } from './quota-sql';
import { ServiceError } from '../errors';
import { AccountError } from './errors';
import { insertLedger, LedgerReason, type Tx } from './ledger';
import { DOMAIN_ERROR_CODES } from '../error-codes';

export type ReserveResult =
  | {
      ok: true;
      unlimited: boolean;
      tempCharged: number;
      rootCharged: number;
      remaining: number;
      checksUsed: number;
      scanId: number | null;
      /** The account right after the reservation (what a check response reports). */
      account: { email: string; unlimitedPro: boolean; unlimitedUntil: Date | null };
    }
  | { ok: false; required: number; available: number };

function checkUnits(units: number, min: number): void {
  if (!Number.isSafeInteger(units) || units < min) {
    throw new AccountError(DOMAIN_ERROR_CODES.INVALID_INPUT, `units must be an integer >= ${min}, got ${units}`);
  }
}

async function lockAccount(tx: Tx, accountId: string) {
  // NO KEY UPDATE, as the reservation (quota-sql.ts): serialises the account's balance changes without
  // waiting for open transactions that only inserted rows referencing the account (their KEY SHARE)
  const [acc] = await tx.select().from(accounts).where(eq(accounts.id, accountId)).for('no key update');
  if (acc === undefined) throw new AccountError(DOMAIN_ERROR_CODES.ACCOUNT_NOT_FOUND, `no account ${accountId}`);
  return acc;
}

interface ReserveRow {
  unlimited: boolean;
  enough: boolean;
  available: number;
  temp_charged: number;
  root_charged: number;
  remaining: number | null;
  checks_used: number | null;
  email: string | null;
  unlimited_pro: boolean | null;
  unlimited_until: string | Date | null;
  ledger_rows: number;
  scan_id: number | null;
  lease_live: boolean;
  job_running: boolean;
}

export async function reserveQuota(db: Db, input: ReserveInput): Promise<ReserveResult> {
  checkUnits(input.units, 0);
  // the statement records a client jobId only with the scan
  const clientJobId = input.scan !== undefined ? (input.clientJobId ?? null) : null;
  let rows: ReserveRow[];
  try {
    rows = rowsOf<ReserveRow>(await db.execute(reserveStatement(input)));
  } catch (err) {
    throw reservationError(err, clientJobId);
  }
  const [row] = rows;
  if (row === undefined) throw new AccountError(DOMAIN_ERROR_CODES.ACCOUNT_NOT_FOUND, `no account ${input.accountId}`);
  if (row.lease_live !== true) throw new ServiceError(DOMAIN_ERROR_CODES.NODE_LEASE_LOST, `node ${input.nodeId} holds no live lease: nothing reserved`);
  if (row.job_running === true && clientJobId !== null) throw clientJobRunning(clientJobId);
  if (!row.enough) return { ok: false, required: input.units, available: Number(row.available) };
  return {
    ok: true,
    unlimited: row.unlimited,
    tempCharged: Number(row.temp_charged),
    rootCharged: Number(row.root_charged),
    remaining: Number(row.remaining),
    checksUsed: Number(row.checks_used),
    scanId: row.scan_id === null ? null : Number(row.scan_id),
    account: {
      email: row.email ?? '',
      unlimitedPro: row.unlimited_pro === true,
      unlimitedUntil: row.unlimited_until === null ? null : new Date(row.unlimited_until),
    },
  };
}

export interface RefundInput {
  accountId: string;
  runId: string;
  /** Unchecked units to give back, or 'all' for everything still reserved. */
  units: number | 'all';
  now?: Date;
}

export interface RefundResult {
  refunded: number;
  tempRefunded: number;
  rootRefunded: number;
  /** root + temp after the refund. */
  remaining: number;
}

/** What of a job's reservation is not yet refunded: units, and how much of it came from root / temp. */
async function outstanding(tx: Tx, accountId: string, runId: string) {
  const [row] = await tx
    .select({
      units: sql<number>`coalesce(sum(case when ${quotaLedger.reason} = 'reserve' then ${quotaLedger.units} else -${quotaLedger.units} end), 0)`.mapWith(Number),
      temp: sql<number>`coalesce(-sum(${quotaLedger.tempDelta}), 0)`.mapWith(Number),
      root: sql<number>`coalesce(-sum(${quotaLedger.rootDelta}), 0)`.mapWith(Number),
    })
    .from(quotaLedger)
    .where(
      and(
        eq(quotaLedger.accountId, accountId),
        eq(quotaLedger.runId, runId),
        sql`${quotaLedger.reason} in ('reserve', 'refund')`,
      ),
    );
  return { units: row?.units ?? 0, temp: row?.temp ?? 0, root: row?.root ?? 0 };
}

/** refundQuota inside an existing transaction (the settlements of jobs/ledger.ts, the orphan sweep). */
export async function refundQuotaTx(tx: Tx, input: RefundInput): Promise<RefundResult> {
  const { accountId, runId } = input;
  if (input.units !== 'all') checkUnits(input.units, 0);
  const acc = await lockAccount(tx, accountId);
  const out = await outstanding(tx, accountId, runId);
  const refunded = Math.max(0, Math.min(input.units === 'all' ? out.units : input.units, out.units));
  if (refunded === 0) {
    return { refunded: 0, tempRefunded: 0, rootRefunded: 0, remaining: acc.tempBalance + acc.rootBalance };
  }
  const rootRefunded = Math.min(refunded, Math.max(0, out.root));
  const tempRefunded = Math.min(refunded - rootRefunded, Math.max(0, out.temp));
  const now = input.now ?? new Date();
  const [after] = await tx
    .update(accounts)
    .set({
      tempBalance: sql`${accounts.tempBalance} + ${tempRefunded}`,
      rootBalance: sql`${accounts.rootBalance} + ${rootRefunded}`,
      checksUsed: sql`greatest(${accounts.checksUsed} - ${refunded}, 0)`,
      updatedAt: now,
    })
    .where(eq(accounts.id, accountId))
    .returning();
  if (after === undefined) throw new AccountError(DOMAIN_ERROR_CODES.ACCOUNT_NOT_FOUND, `no account ${accountId}`);
  const remaining = after.tempBalance + after.rootBalance;
  await insertLedger(tx, {
    accountId,
    reason: LedgerReason.refund,
    tempDelta: tempRefunded,
    rootDelta: rootRefunded,
    units: refunded,
    balanceAfter: remaining,
    runId,
    createdAt: now,
  });
  return { refunded, tempRefunded, rootRefunded, remaining };
}

export function refundQuota(db: Db, input: RefundInput): Promise<RefundResult> {
  return db.transaction((tx) => refundQuotaTx(tx, input));
}
