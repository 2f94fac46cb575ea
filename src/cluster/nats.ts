/**
 * The NATS side of the cluster (I/O): the connection, the work stream and
 * its per-region consumers, the agents' and the API nodes' demand KV buckets, and the API node's end of
 * the results subject. Every process that starts (API node or agent) ensures
 * the stream, the consumers it needs and the bucket, idempotently: whoever
 * comes first creates them, the others find them (a concurrent create that
 * loses the race reads what the winner made).
 *
 * The connection reconnects by itself forever (a restarted nats-server is
 * found again); disconnects and reconnects are logged.
 */
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, RetentionPolicy, StorageType, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { connect, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import type { Logger } from '../log';
import type { NatsWorkers, WorkTransport } from './nats-workers';
import {
  AGENTS_BUCKET,
  CANCEL_SUBJECT,
  cancelMessage,
  decodeResults,
  DEMAND_BUCKET,
  encode,
  resultsSubject,
  WORK_MAX_DELIVER,
  WORK_STREAM,
  WORK_SUBJECT_PREFIX,
  workConsumer,
  workSubject,
} from './protocol';

const MS = 1_000_000; // nanoseconds
const MALFORMED_REPLY = new TextEncoder().encode('{"error":"malformed report"}');

export async function connectNats(servers: string, name: string, log: Logger): Promise<NatsConnection> {
  const nc = await connect({
    servers: servers.split(','),
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    pingInterval: 5_000,
    maxPingOut: 2,
  });
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect') log.warn('nats disconnected; reconnecting', { server: s.server });
      else if (s.type === 'reconnect') log.info('nats reconnected', { server: s.server });
    }
  })().catch(() => {});
  return nc;
}

/** The work stream and the consumers of `regions`, created when missing. */
export async function ensureWork(nc: NatsConnection, regions: readonly string[], ackWaitMs: number, log: Logger): Promise<JetStreamManager> {
  const jsm = await jetstreamManager(nc);
  try {
    await jsm.streams.info(WORK_STREAM);
  } catch {
    try {
      await jsm.streams.add({
        name: WORK_STREAM,
        subjects: [`${WORK_SUBJECT_PREFIX}*`],
        retention: RetentionPolicy.Workqueue,
        storage: StorageType.File,
      });
      log.info('created the work stream', { stream: WORK_STREAM });
    } catch (err) {
      await jsm.streams.info(WORK_STREAM).catch(() => {
        throw err;
      });
    }
  }
  for (const region of regions) {
    const name = workConsumer(region);
    try {
      await jsm.consumers.info(WORK_STREAM, name);
      continue;
    } catch {
      // missing: add it below
    }
    try {
      await jsm.consumers.add(WORK_STREAM, {
        durable_name: name,
        filter_subject: workSubject(region),
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: ackWaitMs * MS,
        max_deliver: WORK_MAX_DELIVER,
        // agents pull many messages at once
        max_ack_pending: -1,
      });
    } catch (err) {
      await jsm.consumers.info(WORK_STREAM, name).catch(() => {
        throw err;
      });
    }
  }
  return jsm;
}

/** The agents' bucket (TTL: an agent not heard of for ttlMs is gone), created when missing. */
export async function openAgentsBucket(nc: NatsConnection, ttlMs: number): Promise<KV> {
  const kvm = new Kvm(nc);
  try {
    return await kvm.create(AGENTS_BUCKET, { ttl: ttlMs, history: 1 });
  } catch {
    // exists with another TTL (another node's AGENT_HEARTBEAT_MS x 5): use it as it is
    return kvm.open(AGENTS_BUCKET);
  }
}

/** The API nodes' demand bucket (demand.ts; an entry not renewed for ttlMs is gone), created when missing. */
export async function openDemandBucket(nc: NatsConnection, ttlMs: number): Promise<KV> {
  const kvm = new Kvm(nc);
  try {
    return await kvm.create(DEMAND_BUCKET, { ttl: ttlMs, history: 1 });
  } catch {
    return kvm.open(DEMAND_BUCKET);
  }
}

/**
 * The API node's transport: JetStream publishes of work, core publishes of
 * cancels. Shards granted in one turn of the event loop (a report's results
 * free slots of several jobs) are published together at its end, so they
 * share one socket write instead of one each (the client flushes once per
 * microtask).
 */
export function workTransport(nc: NatsConnection, js: JetStreamClient = jetstream(nc)): WorkTransport {
  let queued: { subject: string; data: Uint8Array; msgId: string; done: (p: Promise<unknown>) => void }[] = [];
  const send = () => {
    const all = queued;
    queued = [];
    for (const q of all) {
      let p: Promise<unknown>;
      try {
        p = js.publish(q.subject, q.data, { msgID: q.msgId, timeout: 5_000 });
      } catch (err) {
        p = Promise.reject(err);
      }
      q.done(p);
    }
  };
  return {
    async publishWork(region, shard, msgId) {
      const data = encode(shard);
      const sent = await new Promise<Promise<unknown>>((done) => {
        if (queued.length === 0) setImmediate(send);
        queued.push({ subject: workSubject(region), data, msgId, done });
      });
      await sent;
    },
    publishCancel(node, run) {
      nc.publish(CANCEL_SUBJECT, encode(cancelMessage(node, run)));
    },
  };
}

/** This node's results subject -> its NatsWorkers (malformed messages are dropped and logged). */
export function subscribeResults(nc: NatsConnection, node: string, workers: NatsWorkers, log: Logger): Subscription {
  return nc.subscribe(resultsSubject(node), {
    callback: (err, msg) => {
      if (err !== null) {
        log.warn('results subscription error', { err });
        return;
      }
      let m;
      try {
        m = decodeResults(msg.data);
      } catch (e) {
        log.warn('dropped a malformed results message', { err: e });
        // not a ReportReply: the agent naks the report's done shards (delivered again)
        if (msg.reply) msg.respond(MALFORMED_REPLY);
        return;
      }
      workers.receive(m, msg.reply ? (r) => void msg.respond(encode(r)) : undefined);
    },
  });
}
