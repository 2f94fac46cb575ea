/**
 * The quota ledger: every change of an account's balance (and every
 * reservation, even an UnlimitedPro one that changes nothing) is one row.
 * Also the transaction types shared by the account modules.
 */
import { asc, eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { quotaLedger, type LedgerRow } from '../../db/schema';

export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
export type DbOrTx = Db | Tx;

export const LedgerReason = Object.freeze({
  signup: 'signup',
  topUp: 'top_up',
  reserve: 'reserve',
  refund: 'refund',
  adminAdjust: 'admin_adjust',
} as const);
export type LedgerReason = (typeof LedgerReason)[keyof typeof LedgerReason];

export interface LedgerEntry {
  accountId: string;
  reason: LedgerReason;
  tempDelta: number;
  rootDelta: number;
  units: number;
  balanceAfter: number;
  runId?: string | null;
  createdAt?: Date;
}

export async function insertLedger(db: DbOrTx, e: LedgerEntry): Promise<void> {
  await db.insert(quotaLedger).values({
    accountId: e.accountId,
    reason: e.reason,
    tempDelta: e.tempDelta,
    rootDelta: e.rootDelta,
    delta: e.tempDelta + e.rootDelta,
    units: e.units,
    balanceAfter: e.balanceAfter,
    runId: e.runId ?? null,
    ...(e.createdAt !== undefined ? { createdAt: e.createdAt } : {}),
  });
}

/** All ledger rows of an account, oldest first (admin `show`, tests). */
export async function ledgerOf(db: DbOrTx, accountId: string): Promise<LedgerRow[]> {
  return db.select().from(quotaLedger).where(eq(quotaLedger.accountId, accountId)).orderBy(asc(quotaLedger.id));
}
