/**
 * Pool reads over NATS (I/O; the wire is ./pool-reads-wire.ts): each API
 * node answers on `pc.pools.<its node id>` for the pools its owner holds
 * (stats, a page of proxies, the working set, a re-check, a change made on
 * another node: applied before the reply), and asks the node that holds a
 * pool's lease about it. A malformed request gets no reply; no responder, no
 * reply in time or a reply that does not decode are null: the asker answers
 * from the durable copy.
 */
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger } from '../log';
import type { RemotePoolReads, ServedPools } from '../pools/ports';
import { isNoResponders } from './nats-errors';
import { decodePoolReadReply, decodePoolReadRequest, encodePoolRead, poolReadsSubject, POOL_READS_WIRE_VERSION, type PoolReadReply, type PoolReadRequest } from './pool-reads-wire';

/** A read from memory: 2 s is a node that does not answer. */
export const POOL_READ_TIMEOUT_MS = 2_000;

async function answer(req: PoolReadRequest, pools: ServedPools): Promise<PoolReadReply> {
  const none: PoolReadReply = { v: POOL_READS_WIRE_VERSION, found: false };
  if (req.op === 'changed') return (await pools.localChanged(req.pool, req.note)) ? { v: POOL_READS_WIRE_VERSION, found: true } : none;
  if (req.op === 'stats') {
    const stats = pools.localStats(req.pool);
    return stats === null ? none : { v: POOL_READS_WIRE_VERSION, found: true, stats };
  }
  if (req.op === 'page') {
    const page = pools.localPage(req.pool, req.query);
    return page === null ? none : { v: POOL_READS_WIRE_VERSION, found: true, page };
  }
  if (req.op === 'upstreams') {
    const upstreams = pools.memory(req.account, req.pool);
    return upstreams === undefined ? none : { v: POOL_READS_WIRE_VERSION, found: true, upstreams };
  }
  return pools.localRecheck(req.pool, req.proxies) ? { v: POOL_READS_WIRE_VERSION, found: true } : none;
}

export function servePoolReads(nc: NatsConnection, nodeId: string, pools: ServedPools, log: Pick<Logger, 'warn'>): Subscription {
  return nc.subscribe(poolReadsSubject(nodeId), {
    callback: (err, msg) => {
      if (err !== null) {
        log.warn('pool reads subscription error', { err });
        return;
      }
      const req = decodePoolReadRequest(msg.data);
      if (req === null || !msg.reply) {
        log.warn('dropped a malformed pool read request', { subject: msg.subject });
        return;
      }
      void answer(req, pools).then(
        (reply) => msg.respond(encodePoolRead(reply)),
        (err: unknown) => log.warn('a pool read request failed', { op: req.op, pool: req.pool, err }),
      );
    },
  });
}

export function poolReadsClient(nc: NatsConnection, log: Pick<Logger, 'warn'>, timeoutMs = POOL_READ_TIMEOUT_MS): RemotePoolReads {
  const ask = async (node: string, req: PoolReadRequest): Promise<PoolReadReply | null> => {
    try {
      const msg = await nc.request(poolReadsSubject(node), encodePoolRead(req), { timeout: timeoutMs });
      const reply = decodePoolReadReply(msg.data);
      if (reply === null) log.warn('a malformed pool read reply', { node, op: req.op, pool: req.pool });
      return reply;
    } catch (err) {
      if (!isNoResponders(err)) log.warn('a pool read got no answer', { node, op: req.op, pool: req.pool, err });
      return null;
    }
  };
  return {
    async stats(node, pool) {
      const r = await ask(node, { v: POOL_READS_WIRE_VERSION, op: 'stats', pool });
      return r !== null && 'stats' in r ? r.stats : null;
    },
    async page(node, pool, query) {
      const r = await ask(node, { v: POOL_READS_WIRE_VERSION, op: 'page', pool, query });
      return r !== null && 'page' in r ? r.page : null;
    },
    async upstreams(node, account, pool) {
      const r = await ask(node, { v: POOL_READS_WIRE_VERSION, op: 'upstreams', pool, account });
      return r !== null && 'upstreams' in r ? r.upstreams : null;
    },
    async changed(node, pool, note) {
      const r = await ask(node, { v: POOL_READS_WIRE_VERSION, op: 'changed', pool, note });
      return r !== null && r.found;
    },
    recheck(node, pool, proxies) {
      void ask(node, { v: POOL_READS_WIRE_VERSION, op: 'recheck', pool, proxies: [...proxies] });
    },
  };
}
