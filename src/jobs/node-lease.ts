/**
 * This process's identity and lease among the API nodes of one database
 * (db/schema.ts `nodes`, src/accounts/nodes.ts).
 *
 * - start(): registers the node (NODE_ID, or one generated per start) with a
 *   lease of NODE_LEASE_MS on the database's clock, then renews it every
 *   lease/3 with one UPDATE. A renewal that finds the row gone (pruned while
 *   this node could not reach the database) registers again.
 * - release(): at a clean stop, after the node's jobs settled (src/server.ts
 *   stop order), deletes the row: whatever is still `running` under this node
 *   (a settlement the database never took) is an orphan for any other node's
 *   sweep at once. Safe twice; a failure is logged (the lease then expires).
 *
 * A node that cannot renew (the database does not answer) keeps running its
 * jobs and serving; their settlements are tried again (jobs/settlements.ts).
 * Once the lease it last obtained has run out by its own clock, it logs
 * `node lease lapsed` (once) and treats the lease as lost: other nodes may now
 * sweep its scans. That can never double-settle: a sweep and a settlement
 * both close the scan `WHERE status = 'running'` before refunding, in one
 * transaction, so whichever comes second changes nothing (a job whose scan was
 * swept still answers its client; its history says `interrupted` and its
 * reservation was refunded in full). A reservation on a lapsed lease first
 * renews it (ensureLive) and is refused (`node_lease_lost`, nothing charged)
 * when it cannot; the reservation statement checks the lease in the database
 * too, so no scan is ever born under an expired lease.
 *
 * The local view of the lease is conservative: a renewal counts from when it
 * was sent, so this node believes its lease over no later than the database does.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Db } from '../../db/client';
import { registerNode, releaseNode, renewLease, type NodeIdentity, type Registration } from '../accounts/nodes';
import { ServiceError } from '../errors';
import { DOMAIN_ERROR_CODES } from '../error-codes';
import type { Logger } from '../log';
import type { LedgerNode } from './ledger';

/** A node id for one start: the host name's first label and 8 random hex digits. */
export function generateNodeId(host: string = hostname()): string {
  const label = (host.split('.')[0] ?? '').replace(/[^A-Za-z0-9-]/g, '').slice(0, 40);
  return `${label === '' ? 'node' : label}-${randomBytes(4).toString('hex')}`;
}

export interface NodeLeaseOptions {
  db: Db;
  node: NodeIdentity;
  leaseMs: number;
  log: Logger;
  /** How often to renew (default leaseMs / 3). */
  renewEveryMs?: number;
  /** Wall clock, ms (default Date.now). */
  now?: () => number;
}

export class NodeLease implements LedgerNode {
  readonly id: string;
  readonly #o: NodeLeaseOptions;
  readonly #now: () => number;
  #liveUntil = 0;
  #timer: ReturnType<typeof setInterval> | null = null;
  #renewing: Promise<boolean> | null = null;
  #lapsedLogged = false;
  #released: Promise<void> | null = null;

  private constructor(o: NodeLeaseOptions) {
    this.id = o.node.id;
    this.#o = o;
    this.#now = o.now ?? Date.now;
  }

  /** Registers the node and starts renewing. Rejects when the database does not answer. */
  static async start(o: NodeLeaseOptions): Promise<{ lease: NodeLease; registration: Registration }> {
    const lease = new NodeLease(o);
    const sent = lease.#now();
    const registration = await registerNode(o.db, o.node, o.leaseMs);
    lease.#liveUntil = sent + o.leaseMs;
    lease.#timer = setInterval(() => void lease.renewNow(), o.renewEveryMs ?? Math.max(1, Math.floor(o.leaseMs / 3)));
    lease.#timer.unref?.();
    return { lease, registration };
  }

  /** The lease as this node knows it: not yet run out since the last renewal. */
  get live(): boolean {
    return this.#released === null && this.#now() < this.#liveUntil;
  }

  /** One renewal (one at a time); true when the lease is live again. Never rejects. */
  renewNow(): Promise<boolean> {
    if (this.#released !== null) return Promise.resolve(false);
    this.#renewing ??= this.#renew().finally(() => {
      this.#renewing = null;
    });
    return this.#renewing;
  }

  async #renew(): Promise<boolean> {
    const { db, log, leaseMs, node } = this.#o;
    const sent = this.#now();
    try {
      if (!(await renewLease(db, this.id, leaseMs))) {
        log.warn('node row was gone: registered again (another node may have refunded jobs of this one)', { node: this.id });
        await registerNode(db, node, leaseMs);
      }
      this.#liveUntil = sent + leaseMs;
      if (this.#lapsedLogged) log.info('node lease restored', { node: this.id });
      this.#lapsedLogged = false;
      return true;
    } catch (err) {
      if (!this.live && !this.#lapsedLogged) {
        this.#lapsedLogged = true;
        log.error('node lease lapsed: other nodes may refund the running jobs of this one', { node: this.id, err });
      } else {
        log.warn('node lease renewal failed', { node: this.id, err });
      }
      return false;
    }
  }

  async ensureLive(): Promise<void> {
    if (this.live) return;
    if ((await this.renewNow()) && this.live) return;
    throw new ServiceError(DOMAIN_ERROR_CODES.NODE_LEASE_LOST, `node ${this.id} could not renew its lease: no new job starts`);
  }

  /** Stops renewing and deletes the node's row (the clean stop). Safe twice; never rejects. */
  release(): Promise<void> {
    this.#released ??= (async () => {
      if (this.#timer !== null) clearInterval(this.#timer);
      this.#timer = null;
      await this.#renewing?.catch(() => false);
      try {
        await releaseNode(this.#o.db, this.id);
      } catch (err) {
        this.#o.log.warn('releasing the node lease failed; it expires by itself', { node: this.id, err });
      }
    })();
    return this.#released;
  }
}
