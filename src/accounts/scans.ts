/**
 * Scan rows (one per job; /me history and usage come from them) and the
 * restart path after a crash: scans still 'running' when the server starts
 * were interrupted (kill -9, power loss); refundOrphans gives back their whole
 * outstanding reservation and marks them failed with error 'interrupted'.
 * ASSUMPTION: one server per database (true in embedded mode, where the
 * data-dir lock enforces it). Several API nodes on one PostgreSQL would need
 * an owner/heartbeat column before calling refundOrphans.
 */
import { and, eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { scans, type ScanRow } from '../../db/schema';
import type { Logger } from '../log';
import type { DbOrTx } from './ledger';
import { refundQuotaTx } from './quota';
import type { ScanStart } from './quota-sql';

export const ScanStatus = Object.freeze({ running: 'running', completed: 'completed', failed: 'failed', cancelled: 'cancelled' } as const);
export type ScanStatus = (typeof ScanStatus)[keyof typeof ScanStatus];

export const INTERRUPTED = 'interrupted';

export interface StartScanInput extends ScanStart {
  accountId: string;
  jobId: string;
  charged?: number;
  now?: Date;
}

/** Inserts a running scan (use reserveQuota({scan}) instead to make it atomic with the reservation). */
export async function startScan(db: DbOrTx, input: StartScanInput): Promise<ScanRow> {
  const [row] = await db
    .insert(scans)
    .values({
      accountId: input.accountId,
      jobId: input.jobId,
      proxyType: input.proxyType,
      region: input.region,
      timeoutMs: input.timeoutMs,
      totalSubmitted: input.totalSubmitted,
      charged: input.charged ?? 0,
      status: ScanStatus.running,
      ...(input.now !== undefined ? { createdAt: input.now } : {}),
    })
    .returning();
  if (row === undefined) throw new Error('insert into scans returned nothing');
  return row;
}

export interface FinishScanInput {
  jobId: string;
  totalChecked: number;
  totalWorking: number;
  /** Result file id (signed into result_url by /me). */
  resultRef: string | null;
  now?: Date;
}

/** Marks a running scan completed; null when there is no running scan with that job id. */
export async function finishScan(db: DbOrTx, input: FinishScanInput): Promise<ScanRow | null> {
  const [row] = await db
    .update(scans)
    .set({
      status: ScanStatus.completed,
      totalChecked: input.totalChecked,
      totalWorking: input.totalWorking,
      resultRef: input.resultRef,
      finishedAt: input.now ?? new Date(),
    })
    .where(and(eq(scans.jobId, input.jobId), eq(scans.status, ScanStatus.running)))
    .returning();
  return row ?? null;
}

export interface FailScanInput {
  jobId: string;
  error: string;
  /** 'failed' (default) or 'cancelled' (the client went away). */
  status?: typeof ScanStatus.failed | typeof ScanStatus.cancelled;
  totalChecked?: number;
  totalWorking?: number;
  now?: Date;
}

/** Marks a running scan failed (or cancelled); null when there is no running scan with that job id. */
export async function failScan(db: DbOrTx, input: FailScanInput): Promise<ScanRow | null> {
  const [row] = await db
    .update(scans)
    .set({
      status: input.status ?? ScanStatus.failed,
      error: input.error,
      ...(input.totalChecked !== undefined ? { totalChecked: input.totalChecked } : {}),
      ...(input.totalWorking !== undefined ? { totalWorking: input.totalWorking } : {}),
      finishedAt: input.now ?? new Date(),
    })
    .where(and(eq(scans.jobId, input.jobId), eq(scans.status, ScanStatus.running)))
    .returning();
  return row ?? null;
}

export async function getScanByJobId(db: DbOrTx, jobId: string): Promise<ScanRow | null> {
  const [row] = await db.select().from(scans).where(eq(scans.jobId, jobId));
  return row ?? null;
}

export function findOrphanScans(db: Db): Promise<ScanRow[]> {
  return db.select().from(scans).where(eq(scans.status, ScanStatus.running));
}

export interface OrphanReport {
  scans: number;
  units: number;
}

/**
 * Call once at start-up, before accepting checks. Each orphan is refunded and
 * failed in one transaction, so a crash during this is itself recoverable.
 */
export async function refundOrphans(db: Db, log: Logger, now: Date = new Date()): Promise<OrphanReport> {
  const orphans = await findOrphanScans(db);
  let units = 0;
  for (const scan of orphans) {
    const refunded = await db.transaction(async (tx) => {
      const r = await refundQuotaTx(tx, { accountId: scan.accountId, jobId: scan.jobId, units: 'all', now });
      await tx
        .update(scans)
        .set({ status: ScanStatus.failed, error: INTERRUPTED, finishedAt: now })
        .where(and(eq(scans.id, scan.id), eq(scans.status, ScanStatus.running)));
      return r.refunded;
    });
    units += refunded;
    log.warn('refunded an interrupted job', { jobId: scan.jobId, accountId: scan.accountId, scanId: scan.id, units: refunded });
  }
  if (orphans.length > 0) log.info('orphaned jobs recovered', { scans: orphans.length, units });
  return { scans: orphans.length, units };
}
