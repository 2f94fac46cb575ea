/**
 * The main thread's ends of the probe workers' lanes (one long-lived lane per piscina
 * thread, protocol in lane-protocol.ts): where a running shard lives and how
 * its results find it. The public front (probe-workers.ts) owns the queue,
 * the abort signals and the workers' life; it hands a shard here when a slot is free.
 *
 *   dispatch   packs the shard's tasks (packed-tasks.ts), puts the shard on
 *              the lane with the fewest probes assigned, notes its settings
 *              in that lane's settings mirror (lane-settings.ts);
 *   flush      everything for a lane in one turn of the event loop goes in
 *              one message: {t:'run', settings, forget, shards}, then
 *              {t:'cancel', ids};
 *   routing    a lane's batch goes to each shard's onResults; its `done`
 *              entries settle the shards (and free their load);
 *   lane death the lane's piscina task settled (its thread died, or the workers
 *              closed): its shards reject with worker_failed (or
 *              workers_closed) and a new lane takes its slot.
 *
 * A running shard: dispatched -> (cancel sent) -> settled. `onFreed` tells
 * the front that slots were freed (or a lane replaced), so it dispatches more.
 */
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import type { Piscina } from 'piscina';
import { errorText, ServiceError } from '../../errors';
import { DOMAIN_ERROR_CODES } from '../../error-codes';
import { LaneSettings } from './lane-settings';
import { packTasks, type PackedTasks } from './packed-tasks';
import { LANE_SETTINGS_CACHE, type LaneStats, type PackedShard, type LaneToMain, type MainToLane, type Shard, type WorkerTask } from './lane-protocol';
import type { CustomUrlResult, ProbeResult, ProbeSettings } from '../types';

export interface ShardOutcome {
  /** True when the shard was aborted before it was submitted: nothing ran. */
  dropped: boolean;
  /** Probes (or probe x URL pairs) started / finished by the worker. */
  started: number;
  finished: number;
  /** True when a cooperative cancel stopped the shard early. */
  cancelled: boolean;
}

export type OnResults = (batch: ProbeResult[] | CustomUrlResult[]) => void;

/** One call of runShard on the main thread: its shard, callbacks and lane, from the front's queue to its settlement. */
export interface ShardCall {
  readonly id: number;
  shard: Shard;
  onResults: OnResults;
  signal: AbortSignal | undefined;
  resolve: (o: ShardOutcome) => void;
  reject: (e: unknown) => void;
  onAbort: (() => void) | null;
  /** set once running */
  lane: LaneEnd | null;
  /** probes (or pairs) of the shard: the lane's load while it runs */
  size: number;
  cancelSent: boolean;
  callbackError: unknown;
  /** id of shard.settings in its lane's cache (set on dispatch) */
  settingsId: number;
}

/** The main thread's end of one worker thread's lane. */
interface LaneEnd {
  readonly slot: number;
  readonly port: MessagePort;
  readonly live: Map<number, ShardCall>;
  /** probes of the running shards */
  load: number;
  /** shards, settings and cancels waiting for this turn's message */
  outShards: PackedShard[];
  /** the lane's settings cache, mirrored */
  settings: LaneSettings;
  outCancels: number[];
  flushQueued: boolean;
  dead: boolean;
}

/** What the lanes need of piscina: one task per lane, which settles only when its thread ends. */
export type LaneRunner = Pick<Piscina, 'run'>;

/** Stops listening to the entry's abort signal (it is settled, or about to be). */
export function releaseAbort(entry: ShardCall): void {
  if (entry.signal && entry.onAbort) entry.signal.removeEventListener('abort', entry.onAbort);
}

export class LaneEnds {
  /** Shards running on the lanes now. */
  running = 0;
  private readonly lanes: LaneEnd[] = [];
  private closed = false;
  /** One id per settings object (a job passes the same object with every shard). */
  private readonly settingsIds = new WeakMap<ProbeSettings, number>();
  private nextSettingsId = 1;

  /**
   * @param runner  piscina (a lane is a task that runs as long as its thread)
   * @param threads lanes to open, one per thread
   * @param onFreed shards settled or a lane was replaced: the front may dispatch more
   * @param onStats a lane's own load since its last batch (lane-protocol.ts LaneStats)
   */
  constructor(
    private readonly runner: LaneRunner,
    threads: number,
    private readonly onFreed: () => void,
    private readonly onStats: (s: LaneStats) => void = () => {},
  ) {
    for (let i = 0; i < threads; i++) this.lanes.push(this.openLane(i));
  }

  /** Probes assigned per lane, by slot (tests, observability). */
  get loads(): number[] {
    return this.lanes.map((l) => l.load);
  }

  /** Sends the shard to the least-loaded lane (in this turn's message), or rejects it with workers_bad_shard when its tasks cannot be packed. */
  dispatch(entry: ShardCall): void {
    const shard = entry.shard;
    let tasks: PackedTasks;
    try {
      tasks = packTasks(shard.tasks);
    } catch (err) {
      // parsed hosts never contain a line break; a caller that passes one gets its shard refused, nothing else
      releaseAbort(entry);
      entry.reject(new ServiceError(DOMAIN_ERROR_CODES.WORKERS_BAD_SHARD, `shard refused: ${errorText(err)}`, { cause: err }));
      return;
    }
    let lane = this.lanes[0]!;
    for (const l of this.lanes) if (l.load < lane.load) lane = l;
    entry.lane = lane;
    lane.live.set(entry.id, entry);
    lane.load += entry.size;
    this.running++;
    entry.settingsId = this.settingsIdOf(shard.settings);
    lane.settings.use(entry.settingsId, shard.settings);
    const packed: PackedShard = { id: entry.id, kind: shard.kind, tasks, settingsId: entry.settingsId };
    if (shard.kind === 'custom_url') packed.rules = shard.rules;
    if (shard.maxConcurrent !== undefined) packed.maxConcurrent = shard.maxConcurrent;
    lane.outShards.push(packed);
    this.queueFlush(lane);
  }

  /** Asks the shard's lane (once) to start no more of its probes; no-op unless it runs. */
  cancel(entry: ShardCall): void {
    const lane = entry.lane;
    if (lane === null || entry.cancelSent || !lane.live.has(entry.id)) return;
    entry.cancelSent = true;
    lane.outCancels.push(entry.id);
    this.queueFlush(lane);
  }

  /** Rejects every running shard with workers_closed; sends nothing more and opens no new lane. */
  close(): void {
    this.closed = true;
    for (const lane of this.lanes) this.laneEnded(lane, null);
  }

  private settingsIdOf(settings: ProbeSettings): number {
    let id = this.settingsIds.get(settings);
    if (id === undefined) {
      id = this.nextSettingsId++;
      this.settingsIds.set(settings, id);
    }
    return id;
  }

  /** Everything for a lane in one turn of the event loop goes in one message. */
  private queueFlush(lane: LaneEnd): void {
    if (lane.flushQueued) return;
    lane.flushQueued = true;
    queueMicrotask(() => {
      lane.flushQueued = false;
      if (lane.dead || this.closed) return;
      if (lane.outShards.length > 0) {
        const msg: MainToLane = { t: 'run', ...lane.settings.take(), shards: lane.outShards };
        lane.outShards = [];
        lane.port.postMessage(msg);
      }
      if (lane.outCancels.length > 0) {
        const ids = lane.outCancels;
        lane.outCancels = [];
        lane.port.postMessage({ t: 'cancel', ids } satisfies MainToLane);
      }
    });
  }

  private openLane(slot: number): LaneEnd {
    const { port1, port2 } = new MessageChannel();
    const lane: LaneEnd = {
      slot,
      port: port1,
      live: new Map(),
      load: 0,
      outShards: [],
      settings: new LaneSettings(LANE_SETTINGS_CACHE),
      outCancels: [],
      flushQueued: false,
      dead: false,
    };
    port1.on('message', (m: LaneToMain) => this.onBatch(lane, m));
    (this.runner.run({ kind: 'lane', port: port2 } satisfies WorkerTask, { transferList: [port2] as never }) as Promise<never>).then(
      () => this.laneEnded(lane, null),
      (err: unknown) => this.laneEnded(lane, err),
    );
    return lane;
  }

  private onBatch(lane: LaneEnd, m: LaneToMain): void {
    if (lane.dead) return;
    if (m.stats !== undefined) this.onStats(m.stats);
    for (const part of m.parts) {
      const entry = lane.live.get(part.id);
      if (entry === undefined || entry.callbackError !== null) continue;
      try {
        entry.onResults(part.batch);
      } catch (err) {
        entry.callbackError = err;
        this.cancel(entry);
      }
    }
    for (const d of m.done) {
      const entry = lane.live.get(d.id);
      if (entry === undefined) continue;
      if (entry.callbackError !== null) {
        const err = entry.callbackError;
        this.settle(entry, new ServiceError(DOMAIN_ERROR_CODES.WORKERS_CALLBACK_FAILED, `onResults threw: ${errorText(err)}`, { cause: err }));
      } else {
        this.settle(entry, null, { dropped: false, started: d.started, finished: d.finished, cancelled: d.cancelled });
      }
    }
    this.onFreed();
  }

  private settle(entry: ShardCall, err: unknown, outcome?: ShardOutcome): void {
    const lane = entry.lane!;
    if (!lane.live.delete(entry.id)) return;
    lane.load -= entry.size;
    lane.settings.done(entry.settingsId);
    this.running--;
    releaseAbort(entry);
    if (err) entry.reject(err);
    else entry.resolve(outcome!);
  }

  /** The lane's task settled: its thread died (or the workers closed it). Its shards fail; a new lane takes its place. */
  private laneEnded(lane: LaneEnd, err: unknown): void {
    if (lane.dead) return;
    lane.dead = true;
    lane.port.close();
    const closed = this.closed;
    for (const entry of [...lane.live.values()]) {
      this.settle(
        entry,
        closed
          ? new ServiceError(DOMAIN_ERROR_CODES.WORKERS_CLOSED, 'the probe workers closed while the shard ran', { cause: err })
          : new ServiceError(DOMAIN_ERROR_CODES.WORKER_FAILED, `probe worker failed: ${errorText(err ?? 'its lane ended')}`, { cause: err }),
      );
    }
    if (!closed) {
      this.lanes[lane.slot] = this.openLane(lane.slot);
      this.onFreed();
    }
  }
}
