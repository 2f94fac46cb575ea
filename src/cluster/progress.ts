/**
 * ClusterProgress: the ProgressPort of an API node in a cluster. A local
 * ProgressHub does all the fan-out, access rules and caps exactly as in one
 * process; this adapter only carries job states between the nodes' hubs over
 * NATS (subject and KV bucket in ./progress-wire.ts).
 *
 * ## A job that runs here (origin)
 *
 * publish(owner, state, final) feeds the local hub, then offers the state to
 * the job's ProgressThrottle (~10/s, coalesced to the latest; the final always
 * goes out at once), whose output is published on pc.progress.<jobId>. The
 * final is first put into the KV bucket pc_finals (TTL = the hub's linger)
 * and published on the subject only once the put is settled, so a follower
 * that subscribed after the publish finds it in the KV. Origin entries:
 *
 *   (none) --publish--> running --final--> (none; the hub's lingering final serves this node)
 *
 * NATS failures (a put or publish that throws or rejects) are logged, once per
 * failure streak, never thrown into the job: the local hub has already served
 * this node's subscribers.
 *
 * ## A job that runs elsewhere (follower)
 *
 * subscribe(jobId, sub) hands `sub` to the local hub. If this node runs the job
 * (origin) or holds its final, that is all. Otherwise, while the hub keeps the
 * subscriber waiting, the node follows the job: one NATS subscription per jobId,
 * reference-counted by the waiting subscribers (./subject-follows.ts). Follow entries:
 *
 *   (none) --first waiting sub--> following: SUB pc.progress.<jobId>, then KV get
 *   following --message from another node--> hub.publish(owner, state, final)
 *   following --final (subject or KV)--> ended (the hub closes every sub 1000/1008)
 *   following|ended --last sub gone (closed by the hub, or unsubscribed)--> (none):
 *        UNSUB; hub.forget(jobId) if the final never came (nothing stays behind)
 *
 * Subscribing before reading the KV makes it race-free against the origin's
 * put-then-publish order. The KV's final is fed only while nothing was heard
 * on the subject yet (a final left by an earlier run of the same jobId must not
 * end the current one, which the subject then carries). The last-sub-gone step
 * runs in a microtask, never inside a hub call that is closing subscribers.
 *
 * A node drops its own messages (same node id) and remote messages for a job
 * it runs itself. Access rules stay the hub's: a remote message tells the hub
 * the owner, so another account's subscriber is closed 1008 as on the origin,
 * and only the owner's authenticated subscribers get `result_url`.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { Kvm, type KV } from '@nats-io/kv';
import { isJobId } from '../job-id';
import type { ProgressPort, Subscriber, SubscribeOutcome } from '../jobs/ports';
import { ProgressThrottle, type ProgressState } from '../jobs/progress';
import { ProgressHub, type HubOptions } from '../jobs/progress-hub';
import type { Logger } from '../log';
import { isSubjectToken } from './protocol';
import { SubjectFollows, type Follow } from './subject-follows';
import { decodeProgressWire, encodeProgressWire, FINALS_BUCKET, isTerminalPhase, MAX_WIRE_BYTES, progressSubject, type ProgressWire } from './progress-wire';

export const DEFAULT_LINGER_MS = 60_000;
/** The finals bucket's size cap (a final is ~600 bytes: ~100 000 finals a minute). */
export const FINALS_MAX_BYTES = 64 * 1024 * 1024;

/** Opens (creating if needed) the finals bucket; every API node uses the same `lingerMs`. */
export async function openFinalsBucket(nc: NatsConnection, lingerMs = DEFAULT_LINGER_MS): Promise<KV> {
  return new Kvm(nc).create(FINALS_BUCKET, { ttl: lingerMs, history: 1, max_bytes: FINALS_MAX_BYTES, maxValueSize: MAX_WIRE_BYTES });
}

export interface ClusterProgressOptions {
  nc: NatsConnection;
  /** This node's id (a subject token). */
  nodeId: string;
  /** The finals bucket (openFinalsBucket). */
  finals: KV;
  log: Logger;
  /** The local hub; default a new ProgressHub(hubOptions). */
  hub?: ProgressHub;
  hubOptions?: HubOptions;
  /** Minimum ms between two NATS messages of a job (default 100, ~10/s). */
  intervalMs?: number;
}

/** Opens the finals bucket and builds the adapter. */
export async function createClusterProgress(o: Omit<ClusterProgressOptions, 'finals' | 'hub'>): Promise<ClusterProgress> {
  const finals = await openFinalsBucket(o.nc, o.hubOptions?.lingerMs ?? DEFAULT_LINGER_MS);
  return new ClusterProgress({ ...o, finals });
}

interface Outgoing {
  status: string;
  owner: string;
  state: ProgressState;
  final: { resultUrl: string | null } | null;
}

/** What a follow of a job knows (its `refs`: the subscribers the local hub keeps waiting on it). */
interface Heard {
  /** A message from another node was fed to the hub. */
  heard: boolean;
  /** The final was fed to the hub. */
  ended: boolean;
}

export class ClusterProgress implements ProgressPort {
  readonly hub: ProgressHub;
  readonly #nc: NatsConnection;
  readonly #nodeId: string;
  readonly #finals: KV;
  readonly #log: Logger;
  readonly #intervalMs: number;
  /** Jobs running on this node: their NATS throttle. */
  readonly #origin = new Map<string, ProgressThrottle<Outgoing>>();
  readonly #follows: SubjectFollows<Heard>;
  /** Finals being put and published. */
  readonly #pending = new Set<Promise<void>>();
  #failing = false;
  #closed = false;
  /** Messages dropped as malformed: for tests and metrics. */
  malformed = 0;

  constructor(o: ClusterProgressOptions) {
    if (!isSubjectToken(o.nodeId)) throw new Error(`node id must be letters, digits, "_" or "-": ${JSON.stringify(o.nodeId)}`);
    this.#nc = o.nc;
    this.#nodeId = o.nodeId;
    this.#finals = o.finals;
    this.#log = o.log;
    this.#intervalMs = o.intervalMs ?? 100;
    this.hub = o.hub ?? new ProgressHub(o.hubOptions);
    this.#follows = new SubjectFollows<Heard>({
      nc: o.nc,
      subject: progressSubject,
      init: () => ({ heard: false, ended: false }),
      onMessage: (jobId, f, data) => this.#onMessage(jobId, f, data),
      onSubscribed: (jobId, f) => this.#readFinal(jobId, f), // after the SUB: race-free against put-then-publish
      onDropped: (jobId) => {
        if (!this.#origin.has(jobId)) this.hub.forget(jobId);
      },
      onError: (err) => this.#failed('subscribe', err),
      deferDrop: true, // never inside a hub call that is closing subscribers
    });
  }

  /** Open /ws subscriptions on this node (the metrics gauge, as ProgressHub.subscribers). */
  get subscribers(): number {
    return this.hub.subscribers;
  }

  /** Jobs followed over NATS (one subscription each): for tests and metrics. */
  get following(): number {
    return this.#follows.size;
  }

  /** Jobs of this node still publishing: for tests. */
  get running(): number {
    return this.#origin.size;
  }

  publish(owner: string, state: ProgressState, final: { resultUrl: string | null } | null = null): void {
    this.hub.publish(owner, state, final);
    if (this.#closed) return;
    const jobId = state.jobId;
    const terminal = isTerminalPhase(state.phase);
    let t = this.#origin.get(jobId);
    if (t === undefined) {
      t = new ProgressThrottle<Outgoing>({
        intervalMs: this.#intervalMs,
        emit: (o) => this.#send(o),
        onError: (err) => this.#failed('publish', err),
      });
      this.#origin.set(jobId, t);
    }
    if (terminal) this.#origin.delete(jobId);
    t.offer({ status: terminal ? state.phase : 'in_progress', owner, state, final });
  }

  subscribe(jobId: string, sub: Subscriber): SubscribeOutcome {
    if (this.#closed || !isJobId(jobId) || this.#origin.has(jobId) || this.hub.ended(jobId)) return this.hub.subscribe(jobId, sub);
    return this.#follows.followSubscriber(jobId, sub, (waiting) => this.hub.subscribe(jobId, waiting));
  }

  /** Stops everything: throttles, NATS subscriptions, the hub's subscribers. Safe twice. */
  closeAll(): void {
    this.#closed = true;
    for (const t of this.#origin.values()) t.close();
    this.#origin.clear();
    this.#follows.closeAll();
    this.hub.closeAll();
  }

  /** Resolves once every final handed to NATS so far is put and published (or failed): before draining the connection. */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  #send(o: Outgoing): void {
    const jobId = o.state.jobId;
    let subject: string;
    let bytes: Uint8Array;
    try {
      subject = progressSubject(jobId);
      bytes = encodeProgressWire(this.#nodeId, o.owner, o.state, o.final);
    } catch (err) {
      this.#log.warn('cluster progress: not sent', { jobId, err });
      return;
    }
    if (o.status === 'in_progress') {
      this.#publishNats(subject, bytes);
      return;
    }
    const p = (async () => {
      try {
        await this.#finals.put(jobId, bytes);
      } catch (err) {
        this.#failed('final put', err);
      }
      this.#publishNats(subject, bytes);
    })();
    this.#pending.add(p);
    void p.finally(() => this.#pending.delete(p));
  }

  #publishNats(subject: string, bytes: Uint8Array): void {
    try {
      this.#nc.publish(subject, bytes);
      this.#failing = false;
    } catch (err) {
      this.#failed('publish', err);
    }
  }

  /** Logs the first failure of a streak (an outage would otherwise log 10 lines a second per job). */
  #failed(what: string, err: unknown): void {
    if (this.#failing) return;
    this.#failing = true;
    this.#log.warn(`cluster progress: ${what} failed; other nodes miss progress until NATS is back`, { err });
  }

  #readFinal(jobId: string, f: Follow<Heard>): void {
    void (async () => {
      let value: Uint8Array | null = null;
      try {
        const e = await this.#finals.get(jobId);
        if (e !== null && e.operation === 'PUT') value = e.value;
      } catch (err) {
        this.#log.debug('cluster progress: final not read', { jobId, err });
        return;
      }
      if (value === null || this.#follows.get(jobId) !== f || f.state.heard || f.state.ended || this.#origin.has(jobId)) return;
      const w = decodeProgressWire(value);
      if (w === null || w.state.jobId !== jobId || !isTerminalPhase(w.state.phase)) {
        this.malformed++;
        return;
      }
      this.#feed(f, w);
    })();
  }

  #onMessage(jobId: string, f: Follow<Heard>, data: Uint8Array): void {
    if (this.#follows.get(jobId) !== f || f.state.ended) return;
    const w = decodeProgressWire(data);
    if (w === null || w.state.jobId !== jobId) {
      this.malformed++;
      return;
    }
    if (w.node === this.#nodeId || this.#origin.has(jobId)) return;
    this.#feed(f, w);
  }

  #feed(f: Follow<Heard>, w: ProgressWire): void {
    f.state.heard = true;
    if (isTerminalPhase(w.state.phase)) f.state.ended = true;
    this.hub.publish(w.owner, w.state, w.final);
  }
}
