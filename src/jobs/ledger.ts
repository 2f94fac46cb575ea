/**
 * LedgerPort over the database: the job actor's quota reservation, settlement
 * and history, each one transaction. The ledger's job reference is the run id
 * (unique per run), not the client's jobId, which may be reused once a job
 * has ended.
 *
 * With a node (src/jobs/node-lease.ts), every scan records the node that runs
 * it, and a reservation first makes sure the node's lease is live (renewing
 * it when it lapsed); the reservation statement checks the lease again in the
 * database. Settlements close the scan first, `WHERE status = 'running'`, and
 * refund only when that hit the row, in one transaction: the orphan sweep of
 * another node (src/accounts/orphans.ts) closes the same way, so a job is
 * settled once, by its node or by a sweep, never both.
 *
 * An async check's run is marked after its reservation (`markAsync`); its
 * settlement (`webhook` given) writes its check.completed outbox row
 * (src/webhooks/store.ts) in the same transaction, only when it closed the
 * scan (the orphan sweep does the same for a dead node's marked run).
 */
import type { Db } from '../../db/client';
import { getCheckUserInfo } from '../accounts/overview';
import { checkUserInfo } from '../accounts/plan';
import { refundQuotaTx, reserveQuota } from '../accounts/quota';
import { failScan, finishScan } from '../accounts/scans';
import { isServiceError } from '../errors';
import { DOMAIN_ERROR_CODES } from '../error-codes';
import { enqueueCheckCompleted, markAsyncRun } from '../webhooks/store';
import { JobAlreadyRunningError } from './job-errors';
import type { LedgerPort } from './ports';

/** What the ledger needs of the node's lease. */
export interface LedgerNode {
  readonly id: string;
  /** Resolves when the lease is live (renewing it first when it lapsed); rejects (node_lease_lost) when it cannot be. */
  ensureLive(): Promise<void>;
}

export function databaseLedger(db: Db, opts: { node?: LedgerNode; onWebhookWritten?: () => void } = {}): LedgerPort {
  const { node } = opts;
  // check.completed written (deliveries > 0): the delivery loop looks now (embedded it does not poll)
  const told = (n: number): void => {
    if (n > 0) opts.onWebhookWritten?.();
  };
  return {
    async reserve(i) {
      if (node !== undefined) await node.ensureLive();
      const r = await reserveQuota(db, {
        ...(node !== undefined ? { nodeId: node.id } : {}),
        accountId: i.accountId,
        runId: i.runId,
        clientJobId: i.clientJobId,
        units: i.units,
        now: i.now,
        scan: { proxyType: i.type, region: i.region, timeoutMs: i.timeoutMs, totalSubmitted: i.submitted, ...(i.total !== undefined ? { totalProxies: i.total } : {}) },
      }).catch((err: unknown) => {
        throw isServiceError(err, DOMAIN_ERROR_CODES.JOB_ALREADY_RUNNING) && i.clientJobId !== null ? new JobAlreadyRunningError(i.clientJobId) : err;
      });
      if (!r.ok) return { ok: false, required: r.required, available: r.available };
      const user = checkUserInfo({ ...r.account, rootBalance: r.remaining, tempBalance: 0, checksUsed: r.checksUsed }, i.now);
      return { ok: true, unlimited: r.unlimited, user };
    },
    async complete(i) {
      const scan = { runId: i.runId, totalChecked: i.checked, totalWorking: i.working, resultRef: i.resultRef, result: i.response, now: i.now };
      // The normal path: everything was checked, nothing to refund, no webhook to tell: one statement.
      if (i.refund === 0 && i.webhook === undefined) {
        await finishScan(db, scan);
        return;
      }
      const n = await db.transaction(async (tx) => {
        // the scan first: a settlement repeated after a lost answer finds it closed and refunds (and tells) nothing twice
        if ((await finishScan(tx, scan)) === null) return 0;
        if (i.refund > 0) await refundQuotaTx(tx, { accountId: i.accountId, runId: i.runId, units: i.refund, now: i.now });
        return i.webhook !== undefined ? enqueueCheckCompleted(tx, i.runId, i.webhook.resultUrl, i.now.getTime()) : 0;
      });
      told(n);
    },
    async fail(i) {
      const n = await db.transaction(async (tx) => {
        // the scan first: settling twice (a retry after a lost answer, settlements.ts) refunds once
        const closed = await failScan(tx, {
          runId: i.runId,
          status: i.cancelled ? 'cancelled' : 'failed',
          error: i.error.slice(0, 500),
          totalChecked: i.checked,
          totalWorking: i.working,
          now: i.now,
        });
        if (closed === null) return 0;
        if (i.refund > 0) await refundQuotaTx(tx, { accountId: i.accountId, runId: i.runId, units: i.refund, now: i.now });
        return i.webhook !== undefined ? enqueueCheckCompleted(tx, i.runId, null, i.now.getTime()) : 0;
      });
      told(n);
    },
    userInfo: (accountId, now) => getCheckUserInfo(db, accountId, now),
    markAsync: (runId) => markAsyncRun(db, runId),
  };
}
