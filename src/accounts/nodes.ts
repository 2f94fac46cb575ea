/**
 * API nodes in the database (db/schema.ts `nodes`), the statements of
 * src/accounts/nodes-sql.ts run: register (with its lease), renew, release,
 * prune. The process side (the renewal timer, what a node does when it
 * cannot renew) is src/jobs/node-lease.ts.
 */
import { rowsOf, type Db } from '../../db/client';
import { pruneNodesStatement, registerNodeStatement, releaseNodeStatement, renewLeaseStatement, type NodeIdentity } from './nodes-sql';

export type { NodeIdentity } from './nodes-sql';

export interface Registration {
  /** A row with this id held a live lease: this node's previous run died within it, or NODE_ID is not unique. */
  wasLive: boolean;
  /** The new lease, as the database counts it. */
  leaseMsLeft: number;
}

export async function registerNode(db: Db, node: NodeIdentity, leaseMs: number): Promise<Registration> {
  const [row] = rowsOf<{ was_live: boolean; lease_ms_left: number }>(await db.execute(registerNodeStatement({ ...node, leaseMs })));
  return { wasLive: row?.was_live === true, leaseMsLeft: Number(row?.lease_ms_left ?? 0) };
}

/** true when renewed; false when the node's row is gone (pruned or released): register again. */
export async function renewLease(db: Db, id: string, leaseMs: number): Promise<boolean> {
  return rowsOf(await db.execute(renewLeaseStatement({ id, leaseMs }))).length > 0;
}

export async function releaseNode(db: Db, id: string): Promise<void> {
  await db.execute(releaseNodeStatement({ id }));
}

/** Deletes the rows of nodes whose lease expired more than `afterMs` ago. */
export async function pruneNodes(db: Db, afterMs: number): Promise<void> {
  await db.execute(pruneNodesStatement({ afterMs }));
}
