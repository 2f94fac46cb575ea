/**
 * The periodic orphan sweep of a live node: every `intervalMs`
 * (half of NODE_LEASE_MS) it refunds the running scans of other nodes whose lease
 * has expired (src/accounts/orphans.ts, scope `expired`: never this node's
 * own), then deletes the rows of nodes whose lease expired more than
 * `pruneAfterMs` ago. Any number of nodes may sweep at once: each orphan is
 * refunded once. Passes never overlap; a failing pass is logged and the next
 * one tries again. The sweep at start (scopes `own` / `all`) is src/compose/storage.ts's.
 * `onRefunded` hears of each orphan it refunded (a cluster API node publishes
 * a cancel for it, so the region agents drop the dead node's shards of it
 * instead of probing them to their timeout for nobody).
 */
import type { Db } from '../../db/client';
import { pruneNodes } from '../accounts/nodes';
import { OrphanScope, sweepOrphans, type OrphanReport, type RefundedOrphan } from '../accounts/orphans';
import type { Logger } from '../log';

export const DEFAULT_PRUNE_AFTER_MS = 3_600_000;

export interface OrphanSweep {
  /** One pass now (or the one under way). Never rejects: a failure reports nothing swept. */
  runOnce(): Promise<OrphanReport>;
  /** Stops the timer and waits for a pass under way. Safe twice. */
  stop(): Promise<void>;
}

export function startOrphanSweep(o: {
  db: Db;
  self: string;
  intervalMs: number;
  log: Logger;
  pruneAfterMs?: number;
  now?: () => Date;
  onRefunded?: (orphan: RefundedOrphan) => void;
}): OrphanSweep {
  let running: Promise<OrphanReport> | null = null;
  let stopped = false;
  const pass = async (): Promise<OrphanReport> => {
    try {
      const report = await sweepOrphans(o.db, o.log, { self: o.self, scope: OrphanScope.expired }, o.now, o.onRefunded !== undefined ? { onRefunded: o.onRefunded } : {});
      await pruneNodes(o.db, o.pruneAfterMs ?? DEFAULT_PRUNE_AFTER_MS);
      return report;
    } catch (err) {
      o.log.warn('orphan sweep failed; tried again at the next pass', { err });
      return { scans: 0, units: 0 };
    }
  };
  const runOnce = () =>
    (running ??= pass().finally(() => {
      running = null;
    }));
  const timer = setInterval(() => {
    if (!stopped) void runOnce();
  }, o.intervalMs);
  timer.unref?.();
  return {
    runOnce,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
