/**
 * SQL builders for the orphan sweep (src/accounts/orphans.ts): pure functions
 * from input to one statement, no I/O.
 *
 * An orphan is a scan still `running` whose job no live process runs any
 * more. Which running scans count as orphans depends on who asks and when
 * (OrphanScope):
 *
 *   expired  the periodic sweep of a live node: scans of OTHER nodes that
 *            hold no live lease (no `nodes` row with lease_until > now(),
 *            the database's clock; a null node_id, a row from before leases,
 *            counts as no lease). Never the sweeping node's own scans.
 *   own      the start of a node on PostgreSQL: `expired`, plus the scans
 *            recorded under this node's own id: they belong to a previous
 *            process with the same NODE_ID (NODE_ID is unique per live
 *            process, and this one has no job yet), which died within its lease.
 *   all      the start of the embedded service: every running scan (the
 *            data-dir lock proves no other process uses the database, and this
 *            one has no job yet), so a restart within the old lease refunds at once.
 *
 * The close statement repeats the condition and `status = 'running'`, so a
 * scan is closed once, by one sweep or by its own settlement (jobs/ledger.ts
 * closes with the same guard), whichever comes first; the refund follows only
 * the close that hit the row, in the same transaction.
 */
import { sql, type SQL } from 'drizzle-orm';

export const OrphanScope = Object.freeze({ expired: 'expired', own: 'own', all: 'all' } as const);
export type OrphanScope = (typeof OrphanScope)[keyof typeof OrphanScope];

export interface OrphanRule {
  /** The sweeping node's id. */
  self: string;
  scope: OrphanScope;
}

/** The error a swept scan keeps in the history (/me `error`). */
export const INTERRUPTED = 'interrupted';

const noLiveLease = sql`NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = s.node_id AND n.lease_until > now())`;

/** Is running scan `s` an orphan under `rule`? (a condition on the alias `s`). */
export function orphanCondition(rule: OrphanRule): SQL {
  switch (rule.scope) {
    case OrphanScope.expired:
      return sql`(s.node_id IS DISTINCT FROM ${rule.self} AND ${noLiveLease})`;
    case OrphanScope.own:
      return sql`(s.node_id = ${rule.self} OR ${noLiveLease})`;
    case OrphanScope.all:
      return sql`true`;
  }
}

/** Rows: id, account_id, job_id, node_id of the orphans, oldest first, at most `limit`. */
export function findOrphansStatement(rule: OrphanRule, limit: number): SQL {
  return sql`
    SELECT s.id, s.account_id, s.job_id, s.node_id
    FROM scans s
    WHERE s.status = 'running' AND ${orphanCondition(rule)}
    ORDER BY s.id
    LIMIT ${limit}::int`;
}

/**
 * Closes one orphan as failed `interrupted` when it is still running and still
 * an orphan; one row (account_id, job_id, node_id) when it did, none otherwise
 * (settled by its owner, swept by another node, or its owner's lease was renewed).
 */
export function closeOrphanStatement(i: { scanId: number; rule: OrphanRule; now: Date }): SQL {
  return sql`
    UPDATE scans s
    SET status = 'failed', error = ${INTERRUPTED}, finished_at = ${i.now.toISOString()}::timestamptz
    WHERE s.id = ${i.scanId}::int AND s.status = 'running' AND ${orphanCondition(i.rule)}
    RETURNING s.account_id, s.job_id, s.node_id`;
}
