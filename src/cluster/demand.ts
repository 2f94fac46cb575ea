/**
 * Fairness across API nodes: how much of a region's live slots this node's
 * scheduler may use when other API nodes probe in the region too.
 *
 * Each node's RegionScheduler keeps a window (nothing published beyond its
 * capacity), but the region's live slots are one pool: two nodes that each
 * took all of them published twice the slots, and the region's work queue
 * (FIFO, one consumer) put the excess in front of every newcomer's shard:
 * a 10-proxy job on B waited a whole round of A's and B's big jobs' timeouts
 * (bench/RESULTS.md "Reading the cluster figures").
 * So every node publishes its demand per region (NodeDemand in the bucket
 * pc_demand, protocol.ts) and its scheduler's capacity for a region is
 * `fairShare(live slots, the other nodes' demands)`.
 *
 * ## fairShare (pure)
 *
 * Max-min fair (water-filling), this node's own demand taken as unbounded
 * (its own scheduler never grants more than its jobs want): other nodes
 * that want less than an even split keep what they want, the rest is split
 * evenly between this node and the nodes that want more. So a node alone
 * gets every slot, a node beside one with a 10-probe job gets all but 10,
 * two big nodes get half each; at least 1 when the region has slots (a job
 * can always register). Sum over the nodes <= the slots once every node has
 * heard the others' demands; until then a share only errs high for a node
 * that does not know of a newcomer (a job's start is told within NUDGE_MS),
 * and the newcomer itself already takes only its share. Limit: two nodes
 * whose big jobs start within the same few milliseconds each publish a whole
 * window before hearing of the other; the excess drains with their first
 * round (up to about twice the jobs' timeout), then the shares hold.
 *
 * ## Priority classes across nodes
 *
 * A node's demand counts both classes (src/jobs/scheduler.ts "Priority
 * classes"): `regions` is all of it and `background` the part that is pool
 * rounds, so the others can put checks first:
 *
 *   share(R)            = fairShare(live slots, the others' CHECK demands)
 *                         the node's window (its scheduler's capacity): the
 *                         others' background work yields to it, so it is
 *                         not counted
 *   backgroundWindow(R) = fairShare(live slots - reserve(live slots)
 *                                   - every node's check demand (its own too),
 *                                   the others' background demands)
 *                         the most this node's background work may hold
 *                         (the scheduler's backgroundCapacityFor); 0 when
 *                         the checks want every slot
 *
 * So background work of all nodes together holds at most the live slots
 * less the checks' reserve (reserveOf: the scheduler's checkReserve) and
 * less what the checks want; split among the nodes that have some, fairly.
 * A node that hears of another node's checks stops granting background
 * (nothing is revoked: its probes in flight end within their timeout), and
 * the check's first shards are taken at once by the reserve kept free at
 * the agents. Limit: while they end, the check's node publishes its whole
 * window, so the part beyond the agents' free slots waits on the queue (in
 * front of a later newcomer's shards) for up to one background probe time,
 * as it waits behind a big check of another node (above). A node that does
 * not report `background` (backgroundOf not given) is read as all checks.
 *
 * ## DemandTable (pure, clock passed in)
 *
 * The other nodes' demands by class (this node's own key ignored), each entry living
 * `ttlMs` after the last put received (a node killed without deleting its
 * key stops counting after the TTL; as for the agents, nats-server 2.9 sends
 * no event when a KV entry expires).
 *
 * ## DemandBoard (I/O): this node's side
 *
 *   idle (no demand, nothing put) ──demand at a beat or nudge()──> putting
 *   putting: a put every heartbeatMs (the regions with demand, renewing the
 *   entry) ──a beat finds no demand──> one put of {} ──> idle
 *   nudge() (a job started): a beat within NUDGE_MS, so the others hear of a
 *   newcomer at once rather than a heartbeat later
 *   stop(): the key deleted (the others give its share back at once)
 *
 * Watching the bucket (kv-watch.ts), a change of another node's demand in a
 * region calls the follower's `onChange(region)` (the scheduler's poke: a
 * share that rose is used at once). The board is made before the scheduler
 * (whose capacity is its share) and followed by it once it exists
 * (`follow`): until then this node puts no demand and pokes nothing.
 */
import type { KV } from '@nats-io/kv';
import { errorText } from '../errors';
import type { ProbeExecution } from '../jobs/ports';
import type { Logger } from '../log';
import { watchBucket, type BucketWatch } from './kv-watch';
import { decodeNodeDemand, encode, PROTOCOL_VERSION, type NodeDemand } from './protocol';

/** This node's slots of a region with `capacity` live slots, beside other nodes wanting `others` probes each. */
export function fairShare(capacity: number, others: readonly number[]): number {
  if (!(capacity >= 1)) return 0;
  const wants = others.filter((d) => d > 0).sort((x, y) => x - y);
  let left = capacity;
  let sharing = wants.length + 1;
  for (const d of wants) {
    if (d > left / sharing) break;
    left -= d;
    sharing--;
  }
  return Math.max(1, Math.floor(left / sharing));
}

/** A region's demands of the other live nodes (only those with some), by priority class. */
export interface OtherDemands {
  checks: number[];
  background: number[];
}

/**
 * The most this node's background work may hold of a region's `slots` (header:
 * backgroundWindow): what the checks' `reserve` and every node's check demand
 * leave, shared fairly with the other nodes' background demands.
 */
export function backgroundWindow(slots: number, reserve: number, ownChecks: number, others: OtherDemands): number {
  let room = slots - reserve - ownChecks;
  for (const d of others.checks) room -= d;
  return room >= 1 ? fairShare(room, others.background) : 0;
}

interface Entry {
  regions: Record<string, number>;
  background: Record<string, number>;
  seenAt: number;
}

export class DemandTable {
  readonly #self: string;
  readonly #ttlMs: number;
  readonly #byNode = new Map<string, Entry>();

  constructor(self: string, ttlMs: number) {
    this.#self = self;
    this.#ttlMs = ttlMs;
  }

  /** Another node's demand put: returns the regions whose demand changed (its own key: none). */
  put(d: NodeDemand, now: number): string[] {
    if (d.node === this.#self) return [];
    const before = this.#byNode.get(d.node);
    const background = d.background ?? {};
    this.#byNode.set(d.node, { regions: d.regions, background, seenAt: now });
    return [...new Set([...changedRegions(before?.regions ?? {}, d.regions), ...changedRegions(before?.background ?? {}, background)])];
  }

  /** A node's key deleted: the regions it wanted probes in. */
  remove(node: string): string[] {
    const e = this.#byNode.get(node);
    if (e === undefined) return [];
    this.#byNode.delete(node);
    return Object.keys(e.regions);
  }

  /** Drops entries not renewed within the TTL; returns the regions they wanted probes in. */
  expire(now: number): string[] {
    const lost = new Set<string>();
    for (const [node, e] of this.#byNode) {
      if (now - e.seenAt < this.#ttlMs) continue;
      this.#byNode.delete(node);
      for (const r of Object.keys(e.regions)) lost.add(r);
    }
    return [...lost];
  }

  /** The other live nodes' demands in `region` (only those with some), checks and background apart. */
  others(region: string, now: number): OtherDemands {
    const out: OtherDemands = { checks: [], background: [] };
    for (const e of this.#byNode.values()) {
      if (now - e.seenAt >= this.#ttlMs) continue;
      const d = Object.hasOwn(e.regions, region) ? e.regions[region]! : 0;
      const bg = Object.hasOwn(e.background, region) ? Math.min(d, e.background[region]!) : 0;
      if (d - bg > 0) out.checks.push(d - bg);
      if (bg > 0) out.background.push(bg);
    }
    return out;
  }
}

function changedRegions(a: Record<string, number>, b: Record<string, number>): string[] {
  const out: string[] = [];
  for (const r of new Set([...Object.keys(a), ...Object.keys(b)])) if (a[r] !== b[r]) out.push(r);
  return out;
}

export interface DemandBoardOptions {
  kv: KV;
  /** This node's id (its key). */
  node: string;
  ttlMs: number;
  heartbeatMs: number;
  /** The regions this node may have demand in. */
  regions: readonly string[];
  /** A region's live slots (the agents' registry). */
  capacity: (region: string) => number;
  log: Logger;
  now?: () => number;
}

const NUDGE_MS = 20;

/** The scheduler's side of the board (follow()). */
export interface DemandFollower {
  /** This node's demand in a region now: probes in flight plus probes waiting for the window (both classes). */
  demandOf: (region: string) => number;
  /** How much of demandOf is background work (the scheduler's demand(region, 'background')); default: none. */
  backgroundOf?: (region: string) => number;
  /** The checks' reserve of a region's live slots (the scheduler's checkReserve); default: none. */
  reserveOf?: (slots: number) => number;
  /** Another node's demand in `region` changed (or went away): this node's share did. */
  onChange: (region: string) => void;
}

export class DemandBoard {
  readonly #o: DemandBoardOptions;
  readonly #table: DemandTable;
  readonly #now: () => number;
  #watch: BucketWatch | null = null;
  #beat: ReturnType<typeof setInterval> | null = null;
  #nudge: ReturnType<typeof setTimeout> | null = null;
  /** Whether the last put named some region (so an idle node puts `{}` once, then nothing). */
  #putSome = false;
  /** Whether this node's key may exist (stop() deletes it). */
  #keyPut = false;
  #stopped = false;
  /** The scheduler, once it follows the board; until then this node has no demand to put. */
  #follower: DemandFollower | null = null;

  private constructor(o: DemandBoardOptions) {
    this.#o = o;
    this.#table = new DemandTable(o.node, o.ttlMs);
    this.#now = o.now ?? Date.now;
  }

  /** Resolves once the other nodes' current demands are in. */
  static async start(o: DemandBoardOptions): Promise<DemandBoard> {
    const b = new DemandBoard(o);
    b.#watch = await watchBucket({
      kv: o.kv,
      what: 'node demand',
      log: o.log,
      onPut: (_key, value) => b.#changed(b.#table.put(decodeNodeDemand(value), b.#now())),
      onDelete: (key) => b.#changed(b.#table.remove(key)),
    });
    b.#beat = setInterval(() => {
      b.#changed(b.#table.expire(b.#now()));
      void b.#put();
    }, o.heartbeatMs);
    b.#beat.unref?.();
    return b;
  }

  /** The scheduler this board shares for: its demand goes out, the others' changes poke it. */
  follow(follower: DemandFollower): void {
    this.#follower = follower;
  }

  /** This node's slots in `region` (the scheduler's capacity): the others' checks count, their background work yields. */
  share(region: string): number {
    return fairShare(this.#o.capacity(region), this.#table.others(region, this.#now()).checks);
  }

  /** The most this node's background work may hold in `region` (the scheduler's backgroundCapacityFor; header). */
  backgroundWindow(region: string): number {
    const slots = this.#o.capacity(region);
    const f = this.#follower;
    const own = f === null ? 0 : f.demandOf(region) - (f.backgroundOf?.(region) ?? 0);
    return backgroundWindow(slots, f?.reserveOf?.(slots) ?? 0, Math.max(0, own), this.#table.others(region, this.#now()));
  }

  /** A job started: tell the others soon. */
  nudge(): void {
    if (this.#nudge !== null || this.#stopped) return;
    this.#nudge = setTimeout(() => {
      this.#nudge = null;
      void this.#put();
    }, NUDGE_MS);
  }

  /** Stops beating and deletes this node's key. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    if (this.#beat !== null) clearInterval(this.#beat);
    if (this.#nudge !== null) clearTimeout(this.#nudge);
    this.#watch?.stop();
    if (!this.#keyPut) return;
    try {
      await this.#o.kv.delete(this.#o.node);
    } catch (err) {
      this.#o.log.warn('deleting this node\'s demand failed; it expires with its TTL', { err: errorText(err) });
    }
  }

  #changed(regions: string[]): void {
    const f = this.#follower;
    if (f !== null) for (const r of regions) f.onChange(r);
  }

  async #put(): Promise<void> {
    const f = this.#follower;
    if (this.#stopped || f === null) return;
    const regions: Record<string, number> = {};
    const background: Record<string, number> = {};
    for (const r of this.#o.regions) {
      const d = f.demandOf(r);
      if (d <= 0) continue;
      regions[r] = d;
      const bg = Math.min(d, f.backgroundOf?.(r) ?? 0);
      if (bg > 0) background[r] = bg;
    }
    const some = Object.keys(regions).length > 0;
    if (!some && !this.#putSome) return;
    this.#putSome = some;
    this.#keyPut = true;
    const demand: NodeDemand = { v: PROTOCOL_VERSION, node: this.#o.node, regions };
    if (Object.keys(background).length > 0) demand.background = background;
    try {
      await this.#o.kv.put(this.#o.node, encode(demand));
    } catch (err) {
      this.#o.log.debug('putting this node\'s demand failed; tried again at the next beat', { err: errorText(err) });
      this.#putSome = true; // make sure a later beat tells the others
    }
  }
}

/** `execution` that nudges the board whenever a job opens (its demand goes out within NUDGE_MS). */
export function nudgingExecution(execution: ProbeExecution, board: { nudge(): void }): ProbeExecution {
  return {
    open: (job) => {
      const h = execution.open(job);
      board.nudge();
      return h;
    },
  };
}
