/**
 * The orphan sweep: scans still `running` whose job no live process runs any
 * more (its node crashed: kill -9, power loss, a forced exit) get their whole
 * outstanding reservation back and are marked failed, `interrupted`. Which
 * running scans are orphans is the rule of src/accounts/orphans-sql.ts
 * (OrphanScope: `expired` leases for the periodic sweep of a live node; at a
 * node's start also its own id's (`own`, PostgreSQL) or every one (`all`,
 * embedded)).
 *
 * Exactly once: each orphan is closed and refunded in ONE transaction, the
 * close first (`WHERE status = 'running'` and the orphan condition again),
 * the refund only when the close hit the row. Two sweeps at once, or a sweep
 * and the job's own settlement (jobs/ledger.ts closes the same way), cannot
 * both refund: the second waits for the first's row lock and then finds the
 * scan closed. Both take the scan's row lock first and the account's second,
 * so they cannot deadlock each other. A run submitted async gets its
 * check.completed webhook message in the same transaction.
 */
import { rowsOf, type Db } from '../../db/client';
import type { Logger } from '../log';
import { closeOrphanStatement, findOrphansStatement, type OrphanRule } from './orphans-sql';
import { refundQuotaTx } from './quota';
import { enqueueCheckCompleted } from '../webhooks/store';

export { OrphanScope, type OrphanRule } from './orphans-sql';

export interface OrphanCandidate {
  id: number;
  accountId: string;
  runId: string;
  nodeId: string | null;
}

export interface OrphanReport {
  /** Scans this sweep closed (and refunded). */
  scans: number;
  units: number;
}

/** What a sweep would take now, oldest first (at most `limit`). */
export async function findOrphans(db: Db, rule: OrphanRule, limit = 500): Promise<OrphanCandidate[]> {
  const rows = rowsOf<{ id: number; account_id: string; job_id: string; node_id: string | null }>(
    await db.execute(findOrphansStatement(rule, limit)),
  );
  return rows.map((r) => ({ id: Number(r.id), accountId: r.account_id, runId: r.job_id, nodeId: r.node_id }));
}

/**
 * Closes and refunds one orphan in one transaction; null when it is no longer
 * one (settled, swept by someone else, or its node's lease was renewed).
 */
export async function refundOrphan(db: Db, scanId: number, rule: OrphanRule, now: Date = new Date()): Promise<{ accountId: string; runId: string; nodeId: string | null; units: number } | null> {
  return db.transaction(async (tx) => {
    const [closed] = rowsOf<{ account_id: string; job_id: string; node_id: string | null }>(
      await tx.execute(closeOrphanStatement({ scanId, rule, now })),
    );
    if (closed === undefined) return null;
    const r = await refundQuotaTx(tx, { accountId: closed.account_id, runId: closed.job_id, units: 'all', now });
    // an async check's end is told to its webhooks (nothing for a run not marked async)
    await enqueueCheckCompleted(tx, closed.job_id, null, now.getTime());
    return { accountId: closed.account_id, runId: closed.job_id, nodeId: closed.node_id, units: r.refunded };
  });
}

/** A scan this sweep closed and refunded: its run id (scans.job_id) and the node that ran it. */
export interface RefundedOrphan {
  runId: string;
  nodeId: string | null;
}

export interface SweepOptions {
  /** Orphans looked up per query (default 500). */
  batch?: number;
  /**
   * Told of each orphan once it is closed and refunded (a cluster tells the
   * region agents to drop the dead node's shards of it). Must not throw.
   */
  onRefunded?: (o: RefundedOrphan) => void;
}

/**
 * One pass: every orphan under `rule`, each in its own transaction (a crash
 * mid-pass leaves the rest for the next pass). Rejects when the database
 * fails (after the orphans it did refund).
 */
export async function sweepOrphans(db: Db, log: Logger, rule: OrphanRule, now: () => Date = () => new Date(), opts: SweepOptions = {}): Promise<OrphanReport> {
  const batch = opts.batch ?? 500;
  let scans = 0;
  let units = 0;
  try {
    for (;;) {
      const found = await findOrphans(db, rule, batch);
      let closed = 0;
      for (const c of found) {
        const r = await refundOrphan(db, c.id, rule, now());
        if (r === null) continue;
        closed++;
        scans++;
        units += r.units;
        log.warn('refunded an interrupted job', { runId: r.runId, accountId: r.accountId, scanId: c.id, node: r.nodeId, units: r.units, by: rule.self });
        opts.onRefunded?.({ runId: r.runId, nodeId: r.nodeId });
      }
      // a full batch may have more behind it; a batch that closed nothing is not retried (no loop on a scan that stays)
      if (found.length < batch || closed === 0) break;
    }
  } finally {
    if (scans > 0) log.info('orphaned jobs recovered', { scans, units, by: rule.self, scope: rule.scope });
  }
  return { scans, units };
}
