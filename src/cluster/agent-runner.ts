/**
 * A region agent's work: pulls shards from its region's work queue, runs them
 * on its own probe workers with its own judge, sends the results to the shard's
 * owner, and heartbeats into the agents' bucket (protocol.ts).
 *
 * ## The pull loop
 *
 *   while running: free = min(AGENT_SLOTS + lent, the descriptor guard's cap)
 *   - probes in flight, at most the guard's start budget (lent: the API
 *   nodes' newcomer headroom, AGENT_SLOTS x (1 - MAX_JOB_SHARE_PERCENT); the
 *   guard: src/fd-guard.ts, when the agent serves its own judge)
 *     free <= 0  -> wait until a shard ends or results come back
 *     else       -> fetch up to floor(free / tasks per shard) shards, at least
 *                   1, at most 64 (tasks per shard: a running mean of what
 *                   came, SHARD_MAX_TASKS at first), waiting at most 1 s; so
 *                   an agent takes about as many probes as it has free slots
 *                   and leaves the rest of the queue to its region's others
 *   each shard: `start` -> runShard on the workers, its results -> `done`, all
 *   three sent to pc.results.<owner> in reports (see "Reports"); the reply
 *   to the report that carries `done`:
 *     not missing      ack   (the owner has every result, or no longer wants them)
 *     missing          nak   (delivered again, to any agent of the region)
 *     no responders    term  (the owner is gone: its job is refunded by the lease sweep)
 *     timeout / error  nak
 *   while it runs: msg.working() every ack_wait / 3, so a long shard is not
 *   delivered twice; a shard of a cancelled job (pc.cancel) is aborted, acked.
 *   A message that does not decode is termed (it never will).
 *
 * ## Reports
 *
 * The workers report results as their lanes produce them, often one or two at a
 * time. Each shard's news (its `start`, its results, its `done`) wait in the
 * outbox of its owner node; every `resultFlushMs` (default RESULT_FLUSH_MS)
 * each owner's outbox goes out as one report (protocol.ts ResultsReport: many
 * shards in one message), at once when it holds REPORT_FLUSH_RESULTS results.
 * A report is a request when it ends shards: its reply says which of them the
 * owner still misses, and every done shard is acked, nakked or termed from it.
 * A report larger than the server's max_payload is split in two (in order:
 * a shard's `done` stays after its results). One socket write then carries
 * many shards' results and ends, instead of a message per shard and per
 * kind: measured in bench/RESULTS.md "Cluster". A probe's responseTime is
 * measured where it runs, so the wait changes no figure; the owner frees the
 * slot up to resultFlushMs later. The agent's own slots are freed at once.
 *
 * ## Heartbeat
 *
 * Every AGENT_HEARTBEAT_MS: put `<region>.<agent>` (AgentHeartbeat). A put
 * that fails (NATS restarting) is tried at the next beat.
 *
 * ## States (AGENT_STATES, moved through src/state-machine.ts)
 *
 *   created ──start()──> running ──stop()──> draining ──> stopped
 *      └───────────────stop()──────────────────┘
 *
 * running: the heartbeat beats and the pull loop fetches. stop(graceMs):
 * draining: no more fetches (a shard fetched meanwhile is nakked); running
 * shards get the grace, then are aborted and nakked (another agent runs
 * them); the heartbeat key is deleted ──> stopped. stop() is safe twice (one
 * shared promise); start() is once, and only before stop() (a stop() that
 * comes while start() waits for its first heartbeat wins: no loop starts).
 */
import { jetstream, type Consumer, type JetStreamClient, type JsMsg } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { errorText } from '../errors';
import { waitWithGrace, type Clock } from '../clock';
import { StateMachine, transitionTable } from '../state-machine';
import type { WorkerPort, ResultBatch, Shard } from '../jobs/ports';
import type { Logger } from '../log';
import { expectedResults } from '../probe/workers/lane-protocol';
import { isNoResponders } from './nats-errors';
import type { CustomUrlResult, ProbeResult, ProbeSettings } from '../probe/types';
import {
  agentKey,
  CANCEL_SUBJECT,
  decodeCancel,
  decodeReportReply,
  decodeWorkShard,
  encode,
  encodeReport,
  REPORT_MAX_SHARDS,
  PROTOCOL_VERSION,
  resultsSubject,
  SHARD_MAX_TASKS,
  WORK_STREAM,
  workConsumer,
  type ShardNews,
  type WorkShard,
} from './protocol';

export interface AgentCounters {
  shardStarted(redelivered: boolean): void;
  shardEnded(outcome: 'acked' | 'nakked' | 'termed' | 'dropped'): void;
  results(n: number): void;
}

export interface AgentRunnerOptions {
  nc: NatsConnection;
  kv: KV;
  region: string;
  agentId: string;
  slots: number;
  /**
   * In flight allowed above `slots`: the API nodes' headroom for newcomers
   * (MAX_JOB_SHARE_PERCENT), lent above a region's slots as in one process,
   * so a newcomer's shard is taken at once while a big job holds every slot.
   */
  lendSlots?: number;
  version: string;
  /** How long results wait to be sent with others (default RESULT_FLUSH_MS; 0: sent as the workers report them). */
  resultFlushMs?: number;
  /** Runs the shards: this agent's ProbeWorkers. */
  workers: WorkerPort;
  /** The ProbeSettings of a shard: its type and budget, with this agent's judge, addresses and keys. */
  settingsFor: (w: WorkShard) => ProbeSettings;
  /** What the heartbeat says about the judge and exit addresses (read at every beat). */
  identity: () => { judgeUrl: string; exitIps: string[] };
  ackWaitMs: number;
  heartbeatMs: number;
  log: Logger;
  counters?: AgentCounters;
  /** Told when a shard starts while no probe was in flight (the descriptor guard's wake). */
  onBusy?: () => void;
  /** The stop grace's timer (default systemClock; tests pass a fake one). */
  clock?: Clock;
}

interface Running {
  node: string;
  /** The run the shard belongs to (WorkShard.run). */
  run: string;
  abort: AbortController;
  done: Promise<void>;
}

const FETCH_EXPIRES_MS = 1_000;
/** A shard's news wait at most this long to go out with others (see "Reports"). */
export const RESULT_FLUSH_MS = 25;
/** An owner's report goes out at once when it holds this many results. */
export const REPORT_FLUSH_RESULTS = 2048;
const DONE_TIMEOUT_MS = 5_000;
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;

/** How a shard's `done` was answered. */
type DoneOutcome = { t: 'ok' } | { t: 'missing' } | { t: 'gone' } | { t: 'failed'; err: unknown };

/** One shard's news waiting in its owner's outbox. */
interface Pending {
  delivery: number;
  start: boolean;
  results: (ProbeResult | CustomUrlResult)[];
  /** Set when the delivery ended: told how the owner answered. */
  done: ((o: DoneOutcome) => void) | null;
}

interface Outbox {
  shards: Map<string, Pending>;
  results: number;
}
export const AGENT_STATES = Object.freeze({ CREATED: 'created', RUNNING: 'running', DRAINING: 'draining', STOPPED: 'stopped' } as const);
export type AgentState = (typeof AGENT_STATES)[keyof typeof AGENT_STATES];
const { CREATED, RUNNING, DRAINING, STOPPED } = AGENT_STATES;
export const AGENT_TRANSITIONS = transitionTable<AgentState>({ created: [RUNNING, DRAINING], running: [DRAINING], draining: [STOPPED], stopped: [] });

/** Cancelled runs remembered (their queued shards are acked unrun); the oldest forgotten first. */
const CANCELLED_KEEP = 10_000;

export class AgentRunner {
  readonly #o: AgentRunnerOptions;
  readonly #js: JetStreamClient;
  readonly #running = new Set<Running>();
  readonly #cancelled = new Set<string>();
  #inFlight = 0;
  /** The descriptor guard's cap on probes in flight (src/fd-guard.ts; an agent serving its own judge), else none. */
  #guardCap = Number.POSITIVE_INFINITY;
  /** Probes the guard lets start until its next sample. */
  #startBudget = Number.POSITIVE_INFINITY;
  /** Running mean of the results a shard owes (sizes the fetches). */
  #perShard: number = SHARD_MAX_TASKS;
  readonly #machine = new StateMachine<AgentState>('agent runner', AGENT_TRANSITIONS, CREATED);
  #wake: (() => void) | null = null;
  #loop: Promise<void> | null = null;
  #beat: ReturnType<typeof setInterval> | null = null;
  #cancelSub: Subscription | null = null;
  #stopping: Promise<void> | null = null;
  #fetching: { stop(): void } | null = null;
  /** News not sent yet, by the owner's results subject, then by shard id. */
  readonly #outbox = new Map<string, Outbox>();
  #flushTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(o: AgentRunnerOptions) {
    this.#o = o;
    this.#js = jetstream(o.nc);
  }

  /** The descriptor guard (src/fd-guard.ts) lowers or restores the probes this agent may hold. */
  setGuardCapacity(n: number): void {
    this.#guardCap = n;
    this.#wake?.();
  }

  /** The descriptor guard: probes that may start until its next sample. */
  setStartBudget(n: number): void {
    this.#startBudget = n;
    this.#wake?.();
  }

  get state(): AgentState {
    return this.#machine.state;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  get shardsRunning(): number {
    return this.#running.size;
  }

  get key(): string {
    return agentKey(this.#o.region, this.#o.agentId);
  }

  /** Heartbeat first (the region is live), then the pull loop. */
  async start(): Promise<void> {
    this.#machine.move(CREATED, RUNNING);
    this.#cancelSub = this.#o.nc.subscribe(CANCEL_SUBJECT, {
      callback: (err, msg) => {
        if (err !== null) return;
        try {
          const c = decodeCancel(msg.data);
          this.#cancel(c.node, c.run);
        } catch (e) {
          this.#o.log.warn('dropped a malformed cancel', { err: e });
        }
      },
    });
    await this.#heartbeat();
    if (this.#machine.state !== RUNNING) return; // stopped meanwhile: its stop() found no beat to clear
    this.#beat = setInterval(() => void this.#heartbeat(), this.#o.heartbeatMs);
    this.#loop = this.#pull();
  }

  stop(graceMs: number): Promise<void> {
    this.#stopping ??= (async () => {
      this.#machine.move([CREATED, RUNNING], DRAINING);
      this.#fetching?.stop();
      this.#wake?.();
      await this.#loop?.catch(() => {});
      const all = Promise.all([...this.#running].map((r) => r.done));
      await waitWithGrace(
        () => all,
        graceMs,
        () => {
          this.#o.log.warn('agent stop grace over: running shards go back to the queue', { shards: this.#running.size });
          for (const r of this.#running) r.abort.abort();
        },
        this.#o.clock,
      );
      this.#flushAll();
      if (this.#beat !== null) clearInterval(this.#beat);
      this.#beat = null;
      this.#cancelSub?.unsubscribe();
      try {
        await this.#o.kv.delete(this.key);
      } catch (err) {
        this.#o.log.warn('deleting the agent heartbeat failed; it expires with its TTL', { err });
      }
      this.#machine.move(DRAINING, STOPPED);
    })();
    return this.#stopping;
  }

  async #heartbeat(): Promise<void> {
    const id = this.#o.identity();
    try {
      await this.#o.kv.put(
        this.key,
        encode({
          v: PROTOCOL_VERSION,
          region: this.#o.region,
          agent: this.#o.agentId,
          slots: this.#o.slots,
          inFlight: this.#inFlight,
          exitIps: id.exitIps.slice(0, 64),
          version: this.#o.version,
          judgeUrl: id.judgeUrl,
        }),
      );
    } catch (err) {
      this.#o.log.warn('agent heartbeat failed', { err: errorText(err) });
    }
  }

  async #pull(): Promise<void> {
    let consumer: Consumer | null = null;
    while (this.#machine.state === RUNNING) {
      const free = Math.min(Math.min(this.#o.slots + (this.#o.lendSlots ?? 0), this.#guardCap) - this.#inFlight, this.#startBudget);
      if (free <= 0) {
        await new Promise<void>((r) => (this.#wake = r));
        this.#wake = null;
        continue;
      }
      try {
        consumer ??= await this.#js.consumers.get(WORK_STREAM, workConsumer(this.#o.region));
        const msgs = await consumer.fetch({ max_messages: shardsToFetch(free, this.#perShard), expires: FETCH_EXPIRES_MS });
        this.#fetching = { stop: () => void msgs.stop() };
        for await (const m of msgs) this.#take(m);
        this.#fetching = null;
      } catch (err) {
        this.#fetching = null;
        if (this.#machine.state !== RUNNING) break;
        this.#o.log.warn('fetching shards failed; trying again', { err: errorText(err) });
        consumer = null;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  #take(m: JsMsg): void {
    let w: WorkShard;
    try {
      w = decodeWorkShard(m.data);
    } catch (err) {
      this.#o.log.warn('a malformed shard: terminated', { err, seq: m.seq });
      m.term('malformed');
      return;
    }
    if (this.#machine.state !== RUNNING) {
      m.nak();
      return;
    }
    if (this.#cancelled.has(`${w.node}/${w.run}`)) {
      m.ack();
      this.#o.counters?.shardEnded('dropped');
      return;
    }
    const expected = expectedResults(w);
    const wasIdle = this.#inFlight === 0;
    this.#inFlight += expected;
    this.#startBudget -= expected;
    if (wasIdle && expected > 0) this.#o.onBusy?.();
    this.#perShard = Math.max(1, this.#perShard * 0.8 + expected * 0.2);
    const abort = new AbortController();
    const r: Running = { node: w.node, run: w.run, abort, done: Promise.resolve() };
    this.#running.add(r);
    r.done = this.#run(m, w, expected, abort.signal).finally(() => {
      this.#running.delete(r);
      this.#wake?.();
    });
  }

  async #run(m: JsMsg, w: WorkShard, expected: number, signal: AbortSignal): Promise<void> {
    const delivery = m.info.deliveryCount;
    this.#o.counters?.shardStarted(delivery > 1);
    const subject = resultsSubject(w.node);
    this.#pending(subject, w.shard, delivery).start = true;
    this.#schedule(subject);
    const working = setInterval(() => m.working(), Math.max(250, Math.floor(this.#o.ackWaitMs / 3)));
    let left = expected;
    let failed: unknown = null;
    try {
      const settings = this.#o.settingsFor(w);
      const shard: Shard =
        w.kind === 'probe' ? { kind: 'probe', tasks: w.tasks, settings } : { kind: 'custom_url', tasks: w.tasks, rules: w.rules ?? [], settings };
      await this.#o.workers.runShard(
        shard,
        (batch: ResultBatch) => {
          const n = Math.min(batch.length, left);
          left -= n;
          this.#inFlight -= n;
          this.#wake?.();
          this.#o.counters?.results(batch.length);
          this.#queueResults(subject, w.shard, delivery, batch);
        },
        signal,
      );
    } catch (err) {
      failed = err;
    } finally {
      clearInterval(working);
      this.#inFlight -= left;
    }
    if (signal.aborted) {
      // a cancelled run: drop it; the agent stopping: another agent runs it
      if (this.#cancelled.has(`${w.node}/${w.run}`)) {
        m.ack();
        this.#o.counters?.shardEnded('dropped');
      } else {
        m.nak();
        this.#o.counters?.shardEnded('nakked');
      }
      return;
    }
    if (failed !== null) {
      this.#o.log.warn('a shard failed on this agent: delivered again', { shard: w.shard, node: w.node, err: failed });
      m.nak(1000);
      this.#o.counters?.shardEnded('nakked');
      return;
    }
    const outcome = await new Promise<DoneOutcome>((resolve) => {
      this.#pending(subject, w.shard, delivery).done = resolve;
      this.#schedule(subject);
    });
    switch (outcome.t) {
      case 'ok':
        m.ack();
        this.#o.counters?.shardEnded('acked');
        return;
      case 'gone':
        // its owner is gone: nobody will take these results
        m.term('owner gone');
        this.#o.counters?.shardEnded('termed');
        return;
      case 'failed':
      case 'missing':
        if (outcome.t === 'failed') this.#o.log.warn('the shard owner did not answer done: delivered again', { shard: w.shard, node: w.node, err: errorText(outcome.err) });
        m.nak();
        this.#o.counters?.shardEnded('nakked');
        return;
    }
  }

  /** The shard's entry in its owner's outbox (a new one when the waiting entry is of another delivery: that one is sent first). */
  #pending(subject: string, shard: string, delivery: number): Pending {
    let box = this.#outbox.get(subject);
    if (box === undefined) this.#outbox.set(subject, (box = { shards: new Map(), results: 0 }));
    let p = box.shards.get(shard);
    if (p !== undefined && p.delivery !== delivery) {
      this.#flushOwner(subject);
      return this.#pending(subject, shard, delivery);
    }
    if (p === undefined) box.shards.set(shard, (p = { delivery, start: false, results: [], done: null }));
    return p;
  }

  #queueResults(subject: string, shard: string, delivery: number, batch: ResultBatch): void {
    const p = this.#pending(subject, shard, delivery);
    for (const r of batch) p.results.push(r);
    const box = this.#outbox.get(subject)!;
    box.results += batch.length;
    if (box.results >= REPORT_FLUSH_RESULTS) this.#flushOwner(subject);
    else this.#schedule(subject);
  }

  #schedule(subject: string): void {
    const flushMs = this.#o.resultFlushMs ?? RESULT_FLUSH_MS;
    if (flushMs <= 0) this.#flushOwner(subject);
    else this.#flushTimer ??= setTimeout(() => this.#flushAll(), flushMs);
  }

  #flushAll(): void {
    if (this.#flushTimer !== null) clearTimeout(this.#flushTimer);
    this.#flushTimer = null;
    for (const subject of [...this.#outbox.keys()]) this.#flushOwner(subject);
  }

  #flushOwner(subject: string): void {
    const box = this.#outbox.get(subject);
    if (box === undefined) return;
    this.#outbox.delete(subject);
    const entries = [...box.shards].map(([shard, p]) => ({ shard, p }));
    for (let i = 0; i < entries.length; i += REPORT_MAX_SHARDS) this.#send(subject, entries.slice(i, i + REPORT_MAX_SHARDS));
  }

  /** One report (split in two, in order, when larger than the server takes). */
  #send(subject: string, entries: { shard: string; p: Pending }[]): void {
    const shards: ShardNews[] = entries.map(({ shard, p }) => ({
      shard,
      delivery: p.delivery,
      ...(p.start ? { start: true as const } : {}),
      ...(p.results.length > 0 ? { results: p.results as ResultBatch } : {}),
      ...(p.done !== null ? { done: true as const } : {}),
    }));
    const data = encodeReport({ agent: this.#o.agentId, shards });
    const results = entries.reduce((n, e) => n + e.p.results.length, 0);
    if (data.length > (this.#o.nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD) && (entries.length > 1 || results > 1)) {
      for (const half of halve(entries)) this.#send(subject, half);
      return;
    }
    const ends = entries.flatMap(({ shard, p }) => (p.done !== null ? [{ shard, done: p.done }] : []));
    const nc = this.#o.nc;
    try {
      if (ends.length === 0) {
        nc.publish(subject, data);
        return;
      }
      nc.request(subject, data, { timeout: DONE_TIMEOUT_MS }).then(
        (reply) => {
          let missing: ReadonlySet<string>;
          try {
            missing = new Set(decodeReportReply(reply.data).missing);
          } catch (err) {
            for (const e of ends) e.done({ t: 'failed', err });
            return;
          }
          for (const e of ends) e.done(missing.has(e.shard) ? { t: 'missing' } : { t: 'ok' });
        },
        (err: unknown) => {
          const o: DoneOutcome = isNoResponders(err) ? { t: 'gone' } : { t: 'failed', err };
          for (const e of ends) e.done(o);
        },
      );
    } catch (err) {
      // the connection is closed: results are lost, ended shards are delivered again
      this.#o.log.warn('sending a report failed', { err: errorText(err) });
      for (const e of ends) e.done({ t: 'failed', err });
    }
  }

  #cancel(node: string, run: string): void {
    const key = `${node}/${run}`;
    this.#cancelled.add(key);
    if (this.#cancelled.size > CANCELLED_KEEP) this.#cancelled.delete(this.#cancelled.values().next().value!);
    for (const r of this.#running) if (r.node === node && r.run === run) r.abort.abort();
  }
}

/** A report's entries in two, in order; one shard's results split, its `done` (and only its `start`) in the half it belongs to. */
function halve(entries: { shard: string; p: Pending }[]): { shard: string; p: Pending }[][] {
  if (entries.length > 1) {
    const h = Math.ceil(entries.length / 2);
    return [entries.slice(0, h), entries.slice(h)];
  }
  const { shard, p } = entries[0]!;
  const h = Math.ceil(p.results.length / 2);
  return [
    [{ shard, p: { delivery: p.delivery, start: p.start, results: p.results.slice(0, h), done: null } }],
    [{ shard, p: { delivery: p.delivery, start: false, results: p.results.slice(h), done: p.done } }],
  ];
}

/** Shards one fetch asks for: about `free` probes' worth at `perShard` probes each, 1 to 64. */
export function shardsToFetch(free: number, perShard: number): number {
  return Math.max(1, Math.min(64, Math.floor(free / Math.max(1, perShard))));
}
