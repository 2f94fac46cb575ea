/**
 * The scan a jobId names for an account (GET and DELETE /checks/{jobId}):
 * the account's most recent run of that jobId. A client may use a jobId again
 * once its run ended (only one run of a jobId is running at a time, across
 * every API node: scans_running_client_job_id_uq), so several scans may carry
 * it; the newest one (created_at, then id) is the job the URL names. Another
 * account's scans are never found (their jobs answer 404).
 */
import { and, desc, eq } from 'drizzle-orm';
import { scans } from '../../db/schema';
import type { DbOrTx } from './ledger';
import type { ScanStatus } from './scans';

export interface JobScan {
  /** The run id (scans.job_id): what the node running it knows it by. */
  runId: string;
  status: ScanStatus;
  error: string | null;
  createdAt: Date;
  finishedAt: Date | null;
  totalChecked: number;
  totalWorking: number;
  /** Unique valid proxies; null for scans from before migration 0004. */
  totalProxies: number | null;
  resultRef: string | null;
  /** The check response of a completed job (null otherwise, and for scans from before migration 0004). */
  result: unknown;
  /** The API node that runs (or ran) it. */
  nodeId: string | null;
}

export async function findJobScan(db: DbOrTx, accountId: string, jobId: string): Promise<JobScan | null> {
  const [row] = await db
    .select({
      runId: scans.runId,
      status: scans.status,
      error: scans.error,
      createdAt: scans.createdAt,
      finishedAt: scans.finishedAt,
      totalChecked: scans.totalChecked,
      totalWorking: scans.totalWorking,
      totalProxies: scans.totalProxies,
      resultRef: scans.resultRef,
      result: scans.result,
      nodeId: scans.nodeId,
    })
    .from(scans)
    .where(and(eq(scans.accountId, accountId), eq(scans.clientJobId, jobId)))
    .orderBy(desc(scans.createdAt), desc(scans.id))
    .limit(1);
  return row === undefined ? null : { ...row, status: row.status as ScanStatus };
}
