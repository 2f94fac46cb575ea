/**
 * A probe lane: what each piscina thread runs, one lane per thread
 * (workers/probe-worker.ts is only the entry piscina loads). This is the
 * lane's worker-thread end; its main-thread end is lane-ends.ts, the
 * messages between them lane-protocol.ts. It receives shards over the lane's
 * port, runs each shard's probes concurrently (up to the shard's
 * maxConcurrent), and sends the results of all its shards back together in
 * batches. Thin on purpose: the probing itself is runProbe / runCustomUrl.
 * Never touches the database.
 *
 * A shard's states in its lane (SHARD_RUN_STATES, moved through
 * src/state-machine.ts):
 *
 *   running ──cancel──> cancelled ──nothing in flight──> done
 *      └──all started, nothing in flight──────────────────┘
 *
 * A running shard starts its probes as the lane's starts per turn allow
 * (lane-starts.ts: waiting there for a turn is the queue's membership, not a
 * state of the shard); a cancelled one starts no more and finishes the ones
 * in flight. It is done when nothing of it is in flight and it will start
 * nothing more; its `done` entry goes out in the flush after its last result,
 * once (a done shard is never reported again).
 *
 * Latency matters as much as CPU here: a slot is idle from the moment its
 * probe ends until the probe that replaces it starts, and that path crosses
 * the thread boundary twice. So a lane flushes results within FLUSH_MS
 * of the first one waiting (at once when RESULT_BATCH_MAX wait or it has
 * nothing else running), and looks at its port synchronously every
 * POLL_EVERY results (receiveMessageOnPort), so shards granted for freed
 * slots start within the same turn instead of after all of its socket
 * events (the figures: bench/RESULTS.md, session 2, "Paced starts and a
 * synchronous look at the port").
 *
 * But a probe's clock must not run while the lane is too busy to read its
 * answer: it starts at most STARTS_PER_TURN probes per turn, first starts and
 * replacements alike (src/probe/workers/lane-starts.ts), so under CPU saturation
 * probes wait unstarted instead of in-flight; waiting jobs take turns.
 *
 * And a proxy must not be blamed for the lane's own lag: while it has
 * shards the lane measures it (lag-meter.ts) and hands its lateness to the
 * thread's exchanges, so a probe that timed out while its thread was late
 * reading it (src/probe/codec/checker-lag.ts: by >= 5 % of the timeout,
 * added up over its reads) ends `checker_overloaded` with `checkerLagMs`,
 * which its job tries again instead of judging. Each batch carries the
 * lane's LaneStats (its worst lag since the last batch: the adaptive
 * limit's input, src/jobs/lag-limiter.ts; those probes; its pinned TLS
 * handshakes).
 */
import { receiveMessageOnPort, threadId, workerData, type MessagePort } from 'node:worker_threads';
import { errorText } from '../../errors';
import { StateMachine, transitionTable } from '../../state-machine';
import { runCustomUrl } from '../custom-url';
import { runProbe } from '../probe';
import { runAutoProbe } from '../auto';
import {
  RESULT_BATCH_MAX,
  type PackedShard,
  type LaneToMain,
  type LaneWorkerData,
  type MainToLane,
  type PingReply,
  type ShardDone,
  type WorkerTask,
} from './lane-protocol';
import { unpackTasks } from './packed-tasks';
import { LaneStarts, type StartableRun } from './lane-starts';
import type { CustomUrlResult, CustomUrlRule, ProbeResult, ProbeSettings, ProbeTask, ProtocolSettings } from '../types';
import { setLatenessSource, setSocketDriver, socketDriver } from '../net/exchange';
import { takeHandshakes } from '../net/tls-sessions';
import { LagMeter, sharedLateness } from './lag-meter';

type AnyResult = ProbeResult | CustomUrlResult;

// the workers' choice of socket link (PROBE_SOCKET_DRIVER), for every probe of this thread
const started = workerData as Partial<LaneWorkerData> | null | undefined;
if (started?.socketDriver !== undefined) setSocketDriver(started.socketDriver);
/** The main thread's lag meter, shared (lane-protocol.ts LaneWorkerData), when the workers' front has one. */
const mainLag = started?.mainLag instanceof Float64Array ? started.mainLag : null;

/** Probes a lane starts per turn of its event loop at most, replacements included (src/probe/workers/lane-starts.ts). */
const STARTS_PER_TURN = 32;
/** Results between two synchronous looks at the port (Lane.poll). */
const POLL_EVERY = 16;
/**
 * Results wait this long at most for others to share their message (unless
 * RESULT_BATCH_MAX are waiting or the lane has nothing else running): on a
 * list that mixes refused connects with black holes slots free a few at a
 * time, all through the job, and every message is a round trip through the
 * main thread (actor, scheduler, a new shard back), so a message per turn
 * would carry a few results each. bench/RESULTS.md "What each change bought
 * in session 5" has the figures.
 */
const FLUSH_MS = 8;

export const SHARD_RUN_STATES = Object.freeze({ RUNNING: 'running', CANCELLED: 'cancelled', DONE: 'done' } as const);
export type ShardRunState = (typeof SHARD_RUN_STATES)[keyof typeof SHARD_RUN_STATES];
const { RUNNING, CANCELLED, DONE } = SHARD_RUN_STATES;
export const SHARD_RUN_TRANSITIONS = transitionTable<ShardRunState>({ running: [CANCELLED, DONE], cancelled: [DONE], done: [] });

/** The lane's run of one shard: its probes started, in flight, finished. */
class ShardRun implements StartableRun {
  next = 0;
  inFlight = 0;
  finished = 0;
  readonly machine = new StateMachine<ShardRunState>('lane shard', SHARD_RUN_TRANSITIONS, RUNNING);
  readonly total: number;
  readonly limit: number;
  private readonly perTask: number;
  private readonly tasks: ProbeTask[];
  private readonly rules: CustomUrlRule[];
  /** The job asked for `type: "auto"` (src/probe/auto.ts): decided once per shard, not per probe. */
  private readonly auto: boolean;

  constructor(
    readonly shard: PackedShard,
    private readonly settings: ProbeSettings,
    private readonly lane: Lane,
  ) {
    this.tasks = unpackTasks(shard.tasks);
    this.rules = shard.kind === 'custom_url' ? (shard.rules ?? []) : [];
    this.perTask = shard.kind === 'custom_url' ? this.rules.length : 1;
    this.total = this.tasks.length * this.perTask;
    this.limit = Math.max(1, Math.min(shard.maxConcurrent ?? this.total, this.total));
    this.auto = settings.type === 'auto';
  }

  /** The start queue's group: the job (one settings object per job). */
  get group(): number {
    return this.shard.settingsId;
  }

  /** Nothing in flight and nothing more to start (or done already). */
  get ended(): boolean {
    return this.inFlight === 0 && (this.machine.state !== RUNNING || this.next >= this.total);
  }

  /** Can start another probe now. */
  get startable(): boolean {
    return this.machine.state === RUNNING && this.inFlight < this.limit && this.next < this.total;
  }

  /** Starts up to `max` probes; returns how many. */
  pump(max: number): number {
    let n = 0;
    while (n < max && this.startable) {
      const i = this.next++;
      this.inFlight++;
      n++;
      this.start(i).then(
        (r) => this.lane.onResult(this, r),
        (err: unknown) => this.lane.onResult(this, this.internalFailure(i, err)),
      );
    }
    return n;
  }


  private start(i: number): Promise<AnyResult> {
    if (this.shard.kind === 'probe') return this.auto ? runAutoProbe(this.tasks[i]!, this.settings) : runProbe(this.tasks[i]!, this.settings as ProtocolSettings);
    const t = this.tasks[Math.floor(i / this.perTask)]!;
    const urlIndex = i % this.perTask;
    return runCustomUrl(t, urlIndex, this.rules[urlIndex]!, this.settings);
  }

  /** runProbe / runCustomUrl never reject by contract; if one does, that pair is reported failed rather than lost. */
  private internalFailure(i: number, err: unknown): AnyResult {
    const t = this.tasks[Math.floor(i / this.perTask)]!;
    const error = { code: 'bad_response' as const, message: `internal error: ${errorText(err)}` };
    if (this.shard.kind === 'probe') return { index: t.index, status: 'failed', statusCode: null, responseTimeMs: 0, anonymity: null, origin: null, error };
    return { index: t.index, urlIndex: i % this.perTask, success: false, statusCode: null, responseTimeMs: 0, error };
  }
}

class Lane {
  private readonly running = new Map<number, ShardRun>();
  /** the front's settings cache for this lane (lane-protocol.ts MainToLane) */
  private readonly settings = new Map<number, ProbeSettings>();
  private pending = new Map<number, AnyResult[]>();
  private pendingCount = 0;
  private sincePoll = 0;
  private done: ShardDone[] = [];
  private flushTimer: ReturnType<typeof setTimeout> | null = null;
  /** This thread's lag while it has shards (lag-meter.ts); its lateness goes to the thread's exchanges. */
  readonly meter = new LagMeter();
  /** Probes that ended checker_overloaded for this thread's lateness since the last batch. */
  private lagRetries = 0;
  /** Paces starts: at most STARTS_PER_TURN per turn of the event loop. */
  private readonly starts = new LaneStarts<ShardRun>(STARTS_PER_TURN, (fn) => setImmediate(fn), (run) => {
    if (run.ended) this.end(run); // nothing more to start: cancelled while queued, or all started and finished
  });

  constructor(private readonly port: MessagePort) {
    const own = () => this.meter.lateness();
    setLatenessSource(own, mainLag === null ? own : () => Math.max(own(), sharedLateness(mainLag)));
  }

  /**
   * Takes the messages waiting on the port now instead of at the next turn of
   * the event loop: under load a turn handles thousands of socket events, and
   * new shards (slots granted after these very results) would wait for all of
   * them before their probes start.
   */
  poll(): void {
    this.sincePoll = 0;
    for (let m = receiveMessageOnPort(this.port); m !== undefined; m = receiveMessageOnPort(this.port)) this.receive(m.message as MainToLane);
  }

  receive(m: MainToLane): void {
    if (m.t === 'run') {
      for (const id of m.forget) this.settings.delete(id);
      for (const { id, settings } of m.settings) this.settings.set(id, settings);
      for (const shard of m.shards) {
        const settings = this.settings.get(shard.settingsId);
        // the front sends settings before the first shard that uses them; a miss is a front bug, and loud
        if (settings === undefined) throw new Error(`lane: shard ${shard.id} refers to unknown settings ${shard.settingsId}`);
        const run = new ShardRun(shard, settings, this);
        this.running.set(shard.id, run);
        this.meter.busy(true);
        if (run.ended) this.end(run); // an empty shard
        else this.starts.add(run);
      }
    } else if (m.t === 'cancel') {
      for (const id of m.ids) {
        const run = this.running.get(id);
        if (run === undefined || run.machine.state !== RUNNING) continue;
        run.machine.move(RUNNING, CANCELLED);
        if (run.ended) this.end(run);
      }
    }
  }

  onResult(run: ShardRun, r: AnyResult): void {
    if (r.error?.checkerLagMs !== undefined) this.lagRetries++;
    run.inFlight--;
    run.finished++;
    const list = this.pending.get(run.shard.id);
    if (list === undefined) this.pending.set(run.shard.id, [r]);
    else list.push(r);
    this.pendingCount++;
    if (++this.sincePoll >= POLL_EVERY) this.poll();
    this.starts.replace(run);
    if (run.ended) this.end(run);
    else if (this.pendingCount >= RESULT_BATCH_MAX) this.flush();
    else this.flushTimer ??= setTimeout(this.flush, FLUSH_MS);
  }

  private end(run: ShardRun): void {
    if (run.machine.state === DONE) return; // already reported
    const cancelled = run.machine.state === CANCELLED;
    run.machine.move([RUNNING, CANCELLED], DONE);
    this.running.delete(run.shard.id);
    if (this.running.size === 0) this.meter.busy(false);
    this.done.push({ id: run.shard.id, started: run.next, finished: run.finished, cancelled });
    if (this.running.size === 0 || this.pendingCount >= RESULT_BATCH_MAX) this.flush();
    else this.flushTimer ??= setTimeout(this.flush, FLUSH_MS);
  }

  readonly flush = (): void => {
    if (this.flushTimer !== null) {
      clearTimeout(this.flushTimer);
      this.flushTimer = null;
    }
    if (this.pendingCount === 0 && this.done.length === 0) return;
    const parts: LaneToMain['parts'] = [];
    for (const [id, batch] of this.pending) parts.push({ id, batch: batch as ProbeResult[] | CustomUrlResult[] });
    const tls = takeHandshakes();
    const msg: LaneToMain = { t: 'batch', parts, done: this.done, stats: { lagMs: this.meter.takePeak(), lagRetries: this.lagRetries, tlsFull: tls.full, tlsResumed: tls.resumed } };
    this.lagRetries = 0;
    this.pending = new Map();
    this.pendingCount = 0;
    this.done = [];
    this.port.postMessage(msg);
  };
}

/** Never settles: a lane lives as long as its thread (the front destroys the threads to stop). */
function runLane(port: MessagePort): Promise<never> {
  return new Promise<never>(() => {
    const lane = new Lane(port);
    port.on('message', (m: MainToLane) => lane.receive(m));
  });
}

export async function probeWorker(task: WorkerTask): Promise<PingReply> {
  if (task.kind === 'ping') return { pong: true, threadId, socketDriver: socketDriver() };
  return runLane(task.port);
}
