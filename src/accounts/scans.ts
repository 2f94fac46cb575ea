/**
 * Scan rows (one per job; /me history and usage come from them): start,
 * finish, fail. finish and fail close a scan only while it is `running`, so a
 * scan is closed once, whoever closes it (its job's settlement, or the orphan
 * sweep of src/accounts/orphans.ts for a job whose node died).
 */
import { and, eq } from 'drizzle-orm';
import { scans, type ScanRow } from '../../db/schema';
import type { DbOrTx } from './ledger';
import type { ScanStart } from './quota-sql';

export { INTERRUPTED } from './orphans-sql';

export const ScanStatus = Object.freeze({ running: 'running', completed: 'completed', failed: 'failed', cancelled: 'cancelled' } as const);
export type ScanStatus = (typeof ScanStatus)[keyof typeof ScanStatus];

export interface StartScanInput extends ScanStart {
  accountId: string;
  runId: string;
  charged?: number;
  now?: Date;
  /** The node that runs the job (null: none recorded, an orphan for any sweep). */
  nodeId?: string | null;
  /** The client's jobId (null: none); unique among running scans. */
  clientJobId?: string | null;
}

/** Inserts a running scan (use reserveQuota({scan}) instead to make it atomic with the reservation). */
export async function startScan(db: DbOrTx, input: StartScanInput): Promise<ScanRow> {
  const [row] = await db
    .insert(scans)
    .values({
      accountId: input.accountId,
      runId: input.runId,
      proxyType: input.proxyType,
      region: input.region,
      timeoutMs: input.timeoutMs,
      totalSubmitted: input.totalSubmitted,
      charged: input.charged ?? 0,
      status: ScanStatus.running,
      nodeId: input.nodeId ?? null,
      clientJobId: input.clientJobId ?? null,
      totalProxies: input.totalProxies ?? null,
      ...(input.now !== undefined ? { createdAt: input.now } : {}),
    })
    .returning();
  if (row === undefined) throw new Error('insert into scans returned nothing');
  return row;
}

export interface FinishScanInput {
  runId: string;
  totalChecked: number;
  totalWorking: number;
  /** Result file id (signed into result_url by /me). */
  resultRef: string | null;
  /** The check response to keep with the scan (GET /checks/{jobId}); absent: none. */
  result?: unknown;
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
      ...(input.result !== undefined ? { result: input.result } : {}),
      finishedAt: input.now ?? new Date(),
    })
    .where(and(eq(scans.runId, input.runId), eq(scans.status, ScanStatus.running)))
    .returning();
  return row ?? null;
}

export interface FailScanInput {
  runId: string;
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
    .where(and(eq(scans.runId, input.runId), eq(scans.status, ScanStatus.running)))
    .returning();
  return row ?? null;
}

export async function getScanByRunId(db: DbOrTx, runId: string): Promise<ScanRow | null> {
  const [row] = await db.select().from(scans).where(eq(scans.runId, runId));
  return row ?? null;
}
