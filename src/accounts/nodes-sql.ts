/**
 * SQL builders for the API nodes' leases (db/schema.ts `nodes`): pure
 * functions from input to one statement, no I/O (src/accounts/nodes.ts runs
 * them). Every time is the database's clock (now()), never a node's, so two
 * nodes whose clocks disagree still agree on whose lease has expired.
 */
import { sql, type SQL } from 'drizzle-orm';

export interface NodeIdentity {
  id: string;
  version: string;
  host: string | null;
  pid: number | null;
}

/** now() + ms, in the database. */
const leaseEnd = (leaseMs: number) => sql`now() + (${leaseMs}::int * interval '1 millisecond')`;

/**
 * Registers the node with a lease of `leaseMs` (an upsert: a row of the same
 * id is taken over). One row: `was_live` (a row with this id existed and its
 * lease had not expired: another process with this NODE_ID, or this node's
 * own previous run that died within its lease), `lease_ms_left` (of the new
 * lease, as the database counts it).
 */
export function registerNodeStatement(n: NodeIdentity & { leaseMs: number }): SQL {
  return sql`
    WITH prev AS (
      SELECT lease_until > now() AS live FROM nodes WHERE id = ${n.id} FOR UPDATE
    ), up AS (
      INSERT INTO nodes (id, lease_until, started_at, renewed_at, version, host, pid)
      VALUES (${n.id}, ${leaseEnd(n.leaseMs)}, now(), now(), ${n.version}, ${n.host}, ${n.pid}::int)
      ON CONFLICT (id) DO UPDATE
        SET lease_until = excluded.lease_until, started_at = excluded.started_at, renewed_at = excluded.renewed_at,
            version = excluded.version, host = excluded.host, pid = excluded.pid
      RETURNING lease_until
    )
    SELECT coalesce((SELECT live FROM prev), false) AS was_live,
           (extract(epoch FROM (SELECT lease_until FROM up) - now()) * 1000)::float8 AS lease_ms_left`;
}

/** Renews the lease: one UPDATE; no row when the node's row is gone (then register again). */
export function renewLeaseStatement(i: { id: string; leaseMs: number }): SQL {
  return sql`UPDATE nodes SET lease_until = ${leaseEnd(i.leaseMs)}, renewed_at = now() WHERE id = ${i.id} RETURNING id`;
}

/** The clean stop: the row goes, so the node's scans still running (unsettled) are orphans at once. */
export function releaseNodeStatement(i: { id: string }): SQL {
  return sql`DELETE FROM nodes WHERE id = ${i.id}`;
}

/** Rows of nodes whose lease expired more than `afterMs` ago (crashed nodes). Their scans were orphans anyway. */
export function pruneNodesStatement(i: { afterMs: number }): SQL {
  return sql`DELETE FROM nodes WHERE lease_until < now() - (${i.afterMs}::int * interval '1 millisecond')`;
}

/** The condition "node `nodeId` holds a live lease", for other statements (the reservation's guard). */
export function liveLeaseCondition(nodeId: string): SQL {
  return sql`EXISTS (SELECT 1 FROM nodes n WHERE n.id = ${nodeId} AND n.lease_until > now())`;
}
