/**
 * ClusterPoolEvents: the pool events feed of an API node in a cluster. A local
 * PoolEventsHub (src/pools/events-hub.ts) does all the fan-out and caps as in
 * one process; this adapter only carries the events between the nodes' hubs
 * over NATS core pub/sub (subject and codec in ./pool-events-wire.ts), so a
 * subscriber on node B hears an event published on node A exactly once.
 *
 * - publish / closePool: the local hub first (this node's subscribers and
 *   watchers), then one message on pc.pool.<account>. A NATS failure is
 *   logged once per failure streak, never thrown at the publisher.
 * - subscribe / watch: handed to the local hub, and the account followed
 *   (./subject-follows.ts): one NATS subscription per account, counted by the
 *   local subscriptions and watchers on it, dropped with the last one (a
 *   subscriber the hub closes releases its count too).
 * - Heard from NATS: a message of this node (same node id) is dropped (the
 *   hub had it); another node's is fed to the local hub (hub.publish /
 *   hub.closePool), never published again.
 *
 * Follows per account:  (none) --first local listener--> following (SUB)
 *   following --last local listener gone--> (none) (UNSUB)
 */
import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '../log';
import type { PoolEvent } from '../pools/events';
import { PoolEventsHub, type PoolEventsFeed, type PoolHubOptions, type PoolWatcher, type Subscriber, type SubscribeOutcome } from '../pools/events-hub';
import { decodePoolEventsWire, encodePoolEventsWire, poolEventsSubject } from './pool-events-wire';
import { isSubjectToken } from './protocol';
import { SubjectFollows } from './subject-follows';

export interface ClusterPoolEventsOptions {
  nc: NatsConnection;
  nodeId: string;
  log: Logger;
  hub?: PoolEventsHub;
  hubOptions?: PoolHubOptions;
}

export class ClusterPoolEvents implements PoolEventsFeed {
  readonly hub: PoolEventsHub;
  readonly #nc: NatsConnection;
  readonly #nodeId: string;
  readonly #log: Logger;
  readonly #follows: SubjectFollows<null>;
  #failing = false;
  #closed = false;
  /** Messages dropped as malformed (tests, metrics). */
  malformed = 0;

  constructor(o: ClusterPoolEventsOptions) {
    if (!isSubjectToken(o.nodeId)) throw new Error(`node id must be letters, digits, "_" or "-": ${JSON.stringify(o.nodeId)}`);
    this.#nc = o.nc;
    this.#nodeId = o.nodeId;
    this.#log = o.log;
    this.hub = o.hub ?? new PoolEventsHub(o.hubOptions);
    this.#follows = new SubjectFollows<null>({
      nc: o.nc,
      subject: poolEventsSubject,
      init: () => null,
      onMessage: (accountId, _f, data) => this.#onMessage(accountId, data),
      onError: (err) => this.#log.warn('cluster pool events: subscribe failed; events of other nodes are not heard here', { err }),
    });
  }

  get subscribers(): number {
    return this.hub.subscribers;
  }

  /** Accounts followed over NATS (tests). */
  get following(): number {
    return this.#follows.size;
  }

  publish(accountId: string, event: PoolEvent): void {
    this.hub.publish(accountId, event);
    this.#send(accountId, { event });
  }

  closePool(accountId: string, poolId: string): void {
    this.hub.closePool(accountId, poolId);
    this.#send(accountId, { closed: poolId });
  }

  subscribe(accountId: string, poolId: string, sub: Subscriber): SubscribeOutcome {
    if (this.#closed) return this.hub.subscribe(accountId, poolId, sub);
    return this.#follows.followSubscriber(accountId, sub, (wrapped) => this.hub.subscribe(accountId, poolId, wrapped));
  }

  watch(accountId: string, fn: PoolWatcher): () => void {
    const stop = this.hub.watch(accountId, fn);
    if (this.#closed) return stop;
    const release = this.#follows.follow(accountId);
    return () => {
      stop();
      release();
    };
  }

  /** Stops every NATS subscription and closes the hub's subscribers. Safe twice. */
  closeAll(): void {
    this.#closed = true;
    this.#follows.closeAll();
    this.hub.closeAll();
  }

  #send(accountId: string, what: { event: PoolEvent } | { closed: string }): void {
    if (this.#closed) return;
    try {
      this.#nc.publish(poolEventsSubject(accountId), encodePoolEventsWire(this.#nodeId, accountId, what));
      this.#failing = false;
    } catch (err) {
      if (this.#failing) return;
      this.#failing = true;
      this.#log.warn('cluster pool events: publish failed; other nodes miss pool events until NATS is back', { err });
    }
  }

  #onMessage(accountId: string, data: Uint8Array): void {
    const w = decodePoolEventsWire(data);
    if (w === null || w.account !== accountId) {
      this.malformed++;
      return;
    }
    if (w.node === this.#nodeId) return;
    if ('event' in w) this.hub.publish(accountId, w.event);
    else this.hub.closePool(accountId, w.closed);
  }
}
