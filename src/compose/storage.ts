/**
 * The service's storage, opened before anything that charges: the data-dir
 * lock (embedded only), the database (migrated), this node's lease, the
 * orphan sweep at start, the demo account, the embedded database's WAL
 * checkpoints (db/pglite-checkpoints.ts); and, once the probe backend can
 * tell the agents of a refund, the periodic orphan sweep.
 * (docs/DESIGN.md "Start and stop" has the whole order.)
 */
import { hostname } from 'node:os';
import { openDatabase, type Database } from '../../db/client';
import { startWalCheckpoints } from '../../db/pglite-checkpoints';
import { readTemplate } from '../../db/pglite-template';
import { ensureBootstrapAccount, type BootstrapResult } from '../accounts/bootstrap';
import { OrphanScope, sweepOrphans, type RefundedOrphan } from '../accounts/orphans';
import { acquireDataDirLock, type DataDirLock } from '../admin/lock';
import type { Config, StorageConfig } from '../config';
import { generateNodeId, NodeLease } from '../jobs/node-lease';
import { startOrphanSweep } from '../jobs/orphan-sweep';
import type { Logger } from '../log';
import type { StopStep } from '../stop-steps';
import { VERSION } from '../version';

export interface Storage {
  database: Database;
  /** Held while this process runs embedded (PGlite in DATA_DIR); null on PostgreSQL. */
  lock: DataDirLock | null;
  nodeId: string;
  lease: NodeLease;
  /** The demo account made on this start (first start only). */
  bootstrap: BootstrapResult | null;
  /** Jobs of dead nodes refunded at start: a cluster tells its agents once it is connected. */
  refundedAtStart: RefundedOrphan[];
}

/** An already open, migrated database (tests) is used as it is; the caller closes it. */
export async function openStorage(config: Config, o: { log: Logger; undo: StopStep[]; database?: Database | undefined }): Promise<Storage> {
  const { log, undo } = o;
  const { storage } = config;
  const embedded = storage.databaseUrl === undefined;
  const lock = embedded ? await acquireDataDirLock(storage.dataDir) : null;
  if (lock !== null) undo.push(() => lock.release());
  const database = o.database ?? (await openOwnDatabase(storage, undo));
  const db = database.db;
  if (database.driver === 'pglite') {
    // PGlite has no checkpointer: without these looks pg_wal grows until the process stops (db/pglite-checkpoints.ts)
    const checkpoints = startWalCheckpoints({ db, onError: (err) => log.warn('a checkpoint of the embedded database failed; tried again at the next look', { err }) });
    undo.push(() => checkpoints.stop());
  }
  // This node's lease; released after its jobs settled (undone after the settlement retries, before the database closes).
  const nodeId = storage.nodeId ?? generateNodeId();
  const { lease, registration } = await NodeLease.start({
    db,
    node: { id: nodeId, version: VERSION, host: hostname(), pid: process.pid },
    leaseMs: storage.nodeLeaseMs,
    log,
  });
  undo.push(() => lease.release());
  if (registration.wasLive && !embedded) {
    log.warn('this node id held a live lease: its running jobs are taken as interrupted (NODE_ID must be unique per running process)', { node: nodeId });
  }
  // Orphans before the first check: embedded, every running scan (the data-dir lock proves no other process);
  // PostgreSQL, those of expired leases and of this NODE_ID's previous run (a new random id waits for the old lease).
  const refundedAtStart: RefundedOrphan[] = [];
  await sweepOrphans(db, log, { self: nodeId, scope: embedded ? OrphanScope.all : OrphanScope.own }, undefined, { onRefunded: (r) => refundedAtStart.push(r) });
  const bootstrap = await ensureBootstrapAccount(db, { checks: storage.bootstrapChecks, apiKey: storage.bootstrapApiKey, baseUrl: config.http.baseUrl }, log);
  return { database, lock, nodeId, lease, bootstrap, refundedAtStart };
}

async function openOwnDatabase(storage: StorageConfig, undo: StopStep[]): Promise<Database> {
  const database = await openDatabase({
    databaseUrl: storage.databaseUrl,
    dataDir: storage.dataDir,
    pgliteThread: storage.pgliteThread,
    statementTimeoutMs: storage.statementTimeoutMs,
    // a new embedded data dir starts from the install's template when there is one (db/pglite-template.ts)
    pgliteTemplate: () => readTemplate(),
  });
  undo.push(() => database.close());
  return database;
}

/**
 * The periodic sweep (every half of NODE_LEASE_MS: expired leases of other nodes); `onRefunded` tells the agents in a cluster.
 * None on PGlite: one process holds its data dir (the lock), so there is no other node's scan to find once the sweep at
 * start has run (and the sweep never takes this node's own): two statements every 15 s of an idle service saved (issue 29).
 */
export function sweepOrphansEvery(config: StorageConfig, storage: Storage, o: { log: Logger; undo: StopStep[]; onRefunded: (r: RefundedOrphan) => void }): void {
  if (storage.database.driver === 'pglite') return;
  const sweep = startOrphanSweep({ db: storage.database.db, self: storage.nodeId, intervalMs: config.orphanSweepMs, log: o.log, onRefunded: o.onRefunded });
  o.undo.push(() => sweep.stop());
}
