/**
 * Pool reads over NATS (I/O; the wire is ./pool-reads-wire.ts): each API
 * node answers on `pc.pools.<its node id>` for the pools its owner holds
 * (stats, a page of proxies, the working set, a re-check, a change made on
 * another node: applied before the reply), and asks the node that holds a
 * pool's lease about it. A malformed request gets no reply; no responder, no
 * reply in time or a reply that does not decode are null: the asker answers
 * from the durable copy. A reply over the server's max_payload (a page of
 * 10 000 rows with long histories: publishing it throws) is answered
 * `found: false` at once, not left to time out: the asker reads that page
 * from the durable copy.
 *
 * An unlimited txt / csv listing (`listing`, ./pool-listing-wire.ts,
 * ./pool-listings.ts) is pulled a chunk at a time: the asker's PulledListing
 * has the first chunk when `listing` resolves (so a node that does not
 * answer is known before the route writes a byte, and the durable copy
 * answers instead) and keeps one request ahead of its reader; a chunk that
 * does not come (the owner died, its 2 s passed, it lost the listing) fails
 * the text, so the HTTP answer ends in an error, never cut short as if whole.
 */
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger } from '../log';
import type { ListingStream, RemotePoolReads, ServedPools } from '../pools/ports';
import { isNoResponders } from './nats-errors';
import { chunkBudget, decodeListingFrame, encodeListingFrame, type ListingFrame } from './pool-listing-wire';
import { ServedListings } from './pool-listings';
import { decodePoolReadReply, decodePoolReadRequest, encodePoolRead, poolReadsSubject, POOL_READS_WIRE_VERSION, type PoolReadReply, type PoolReadRequest } from './pool-reads-wire';

/** NATS's default max_payload, when the server did not say. */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;

/** A read from memory: 2 s is a node that does not answer. */
export const POOL_READ_TIMEOUT_MS = 2_000;

async function answer(req: Exclude<PoolReadRequest, { op: 'listing' | 'more' | 'close' }>, pools: ServedPools): Promise<PoolReadReply> {
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

type ListingRequest = Extract<PoolReadRequest, { op: 'listing' | 'more' | 'close' }>;

function answerListing(req: ListingRequest, pools: ServedPools, listings: ServedListings): Promise<ListingFrame> | null {
  if (req.op === 'listing') return listings.open(pools, req.pool, req.query, req.text);
  if (req.op === 'more') return listings.more(req.listing, req.seq);
  listings.close(req.listing);
  return null;
}

const isListingRequest = (req: PoolReadRequest): req is ListingRequest => req.op === 'listing' || req.op === 'more' || req.op === 'close';

/** Answers `pc.pools.<nodeId>`; its `unsubscribe` also drops the listings open here. */
export function servePoolReads(nc: NatsConnection, nodeId: string, pools: ServedPools, log: Pick<Logger, 'warn'>): Pick<Subscription, 'unsubscribe'> {
  const maxPayload = () => nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD;
  const listings = new ServedListings(() => chunkBudget(maxPayload()));
  const sub = nc.subscribe(poolReadsSubject(nodeId), {
    callback: (err, msg) => {
      if (err !== null) {
        log.warn('pool reads subscription error', { err });
        return;
      }
      const req = decodePoolReadRequest(msg.data);
      if (req === null || (!msg.reply && req.op !== 'close')) {
        log.warn('dropped a malformed pool read request', { subject: msg.subject });
        return;
      }
      const failed = (err: unknown) => log.warn('a pool read request failed', { op: req.op, pool: req.pool, err });
      if (isListingRequest(req)) {
        // a throw in the respond (the connection closed) is caught too: an unhandled rejection ends the process
        answerListing(req, pools, listings)
          ?.then((frame) => void msg.respond(encodeListingFrame(frame)))
          .catch(failed);
        return;
      }
      answer(req, pools)
        .then((reply) => {
          const data = encodePoolRead(reply);
          msg.respond(data.length <= maxPayload() ? data : encodePoolRead({ v: POOL_READS_WIRE_VERSION, found: false }));
        })
        .catch(failed);
    },
  });
  return {
    unsubscribe(max?: number) {
      sub.unsubscribe(max);
      listings.clear();
    },
  };
}

/**
 * A listing of another node read a chunk at a time (module header): the
 * first chunk given, the next asked for as soon as one is handed out (one
 * ahead, no more).
 */
class PulledListing implements ListingStream {
  readonly #ask: (req: PoolReadRequest) => Promise<ListingFrame | null>;
  readonly #pool: string;
  readonly #id: string;
  #first: Uint8Array | null;
  #seq = 1;
  #ended: boolean;
  #ahead: Promise<ListingFrame | null> | null = null;

  constructor(ask: (req: PoolReadRequest) => Promise<ListingFrame | null>, pool: string, first: Extract<ListingFrame, { kind: 'more' | 'end' }>) {
    this.#ask = ask;
    this.#pool = pool;
    this.#id = first.id;
    this.#first = first.bytes;
    this.#ended = first.kind === 'end';
    this.#pull();
  }

  #pull(): void {
    if (this.#ended) return;
    this.#ahead = this.#ask({ v: POOL_READS_WIRE_VERSION, op: 'more', pool: this.#pool, listing: this.#id, seq: this.#seq++ });
  }

  async next(): Promise<Uint8Array | null> {
    if (this.#first !== null) {
      const first = this.#first;
      this.#first = null;
      if (first.length > 0 || this.#ended) return first.length > 0 ? first : null;
    }
    if (this.#ended || this.#ahead === null) return null;
    const f = await this.#ahead;
    this.#ahead = null;
    if (f === null || f.kind === 'none' || f.id !== this.#id) {
      this.#ended = true;
      throw new Error(`the pool's owner did not send chunk ${this.#seq - 1} of listing ${this.#id}: the text is not whole`);
    }
    if (f.kind === 'end') this.#ended = true;
    else this.#pull();
    return f.bytes.length > 0 ? f.bytes : this.next();
  }

  close(): void {
    if (this.#ended) return;
    this.#ended = true;
    void this.#ahead?.catch(() => null);
    this.#ahead = null;
    void this.#ask({ v: POOL_READS_WIRE_VERSION, op: 'close', pool: this.#pool, listing: this.#id });
  }
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
  /** A listing's request: its frame, null when none came or it does not decode (`close`: sent, no answer awaited). */
  const askFrame = async (node: string, req: PoolReadRequest): Promise<ListingFrame | null> => {
    try {
      if (req.op === 'close') {
        nc.publish(poolReadsSubject(node), encodePoolRead(req));
        return null;
      }
      const msg = await nc.request(poolReadsSubject(node), encodePoolRead(req), { timeout: timeoutMs });
      const frame = decodeListingFrame(msg.data);
      if (frame === null) log.warn('a malformed pool listing reply', { node, op: req.op, pool: req.pool });
      return frame;
    } catch (err) {
      if (!isNoResponders(err)) log.warn('a pool listing request got no answer', { node, op: req.op, pool: req.pool, err });
      return null;
    }
  };
  return {
    async listing(node, pool, query, text) {
      const first = await askFrame(node, { v: POOL_READS_WIRE_VERSION, op: 'listing', pool, query, text });
      return first === null || first.kind === 'none' ? null : new PulledListing((req) => askFrame(node, req), pool, first);
    },
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
