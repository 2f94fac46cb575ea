/**
 * Where events become outbox messages (DECISIONS "Webhooks": "a message is
 * written in the same transaction as the change that causes it, or from the
 * durable batch, for pools").
 *
 * - `poolBatch(accountId, pool, ups, downs, counts)`: the ups and downs of
 *   one durable batch of a pool (one `round.completed`), as
 *   pool.proxies_changed messages of at most 1 000 proxies
 *   (payloads.ts). It takes an optional transaction: the pools' writer
 *   calls it in the batch's own transaction when it can.
 * - `poolState(accountId, event)`: pool.paused / pool.resumed.
 * - check.completed is written in the transaction that closes an async
 *   check's scan: its settlement (src/jobs/ledger.ts) or the orphan sweep
 *   (src/accounts/orphans.ts), store.enqueueCheckCompleted.
 *
 * `flushWriter()` is the pools' PoolBatchOutbox (src/pools/ports.ts): the
 * pool actor writes a chunk's proxy.up / proxy.down as pool.proxies_changed
 * in the transaction of the flush chunk that makes them durable. Once it is
 * taken, `poolEvents()` (a PoolEventsPort beside the events hub, src/server.ts
 * alsoTo) leaves those events to it and writes only pool.paused /
 * pool.resumed; without it (a service with no pool owner) it gathers a
 * pool's proxy.up / proxy.down until its round.completed and then calls
 * poolBatch, right after the batch. The owner's own pause
 * and resume come from PoolService.onChange (src/compose/webhooks.ts).
 * Writes of one pool go out in order; a failed write is logged (the
 * events of that batch are lost to webhooks; the pool's state is not).
 */
import type { Db } from '../../db/client';
import type { Logger } from '../log';
import type { PoolEvent } from '../pools/events';
import type { PoolBatchOutbox, PoolEventsPort } from '../pools/ports';
import type { PoolCounts } from '../pools/types';
import { changeOf, poolStateData, proxiesChangedMessages, type ProxyDown, type ProxyUp } from './payloads';
import { enqueue, type DbOrTx } from './store';

export interface OutboxDeps {
  db: Db;
  log: Pick<Logger, 'warn'>;
  /** A message was written (the delivery loop looks at once). */
  onWritten?: () => void;
  now?: () => number;
}

export class WebhookOutbox {
  readonly #d: OutboxDeps;
  readonly #chains = new Map<string, Promise<void>>();
  /** The pools write their batches' messages in their flushes (flushWriter taken). */
  #inFlush = false;

  constructor(deps: OutboxDeps) {
    this.#d = deps;
  }

  /** pool.proxies_changed messages of one durable batch; the deliveries written. */
  async poolBatch(accountId: string, pool: string, ups: readonly ProxyUp[], downs: readonly ProxyDown[], counts: PoolCounts, tx: DbOrTx = this.#d.db): Promise<number> {
    const data = proxiesChangedMessages(pool, ups, downs, counts);
    const n = await enqueue(tx, accountId, 'pool.proxies_changed', pool, data, (this.#d.now ?? Date.now)());
    if (n > 0 && tx === this.#d.db) this.#d.onWritten?.();
    return n;
  }

  /** The pools' writer of pool.proxies_changed in a flush chunk's own transaction (see the header). */
  flushWriter(): PoolBatchOutbox<DbOrTx> {
    this.#inFlush = true;
    return {
      write: async (tx, accountId, pool, events, counts) => {
        const ups: ProxyUp[] = [];
        const downs: ProxyDown[] = [];
        for (const e of events) {
          const change = changeOf(e);
          if (change === null) continue;
          if (change.kind === 'up') ups.push(change.up);
          else downs.push(change.down);
        }
        return ups.length + downs.length === 0 ? 0 : this.poolBatch(accountId, pool, ups, downs, counts, tx);
      },
      written: () => this.#d.onWritten?.(),
    };
  }

  /** pool.paused / pool.resumed (any other event is ignored); the deliveries written. */
  async poolState(accountId: string, event: PoolEvent, tx: DbOrTx = this.#d.db): Promise<number> {
    if (event.event !== 'pool.paused' && event.event !== 'pool.resumed') return 0;
    const n = await enqueue(tx, accountId, event.event, event.pool, [poolStateData(event)], Date.parse(event.at));
    if (n > 0 && tx === this.#d.db) this.#d.onWritten?.();
    return n;
  }

  /** Runs `write` after the earlier writes of `pool` (one pool's messages stay in order); failures are logged. */
  #inOrder(pool: string, write: () => Promise<unknown>): void {
    const prev = this.#chains.get(pool) ?? Promise.resolve();
    const next = prev
      .then(write)
      .then(
        () => {},
        (err: unknown) => this.#d.log.warn('webhook messages of a pool event not written', { pool, err }),
      )
      .finally(() => {
        if (this.#chains.get(pool) === next) this.#chains.delete(pool);
      });
    this.#chains.set(pool, next);
  }

  /** Resolves when every write queued so far has ended (tests, stop). */
  async drain(): Promise<void> {
    while (this.#chains.size > 0) await Promise.all([...this.#chains.values()]);
  }

  /** The PoolEventsPort that turns a pool's events into messages (see the header). */
  poolEvents(): PoolEventsPort {
    const batches = new Map<string, { ups: ProxyUp[]; downs: ProxyDown[] }>();
    return {
      publish: (accountId, event) => {
        const change = changeOf(event);
        if (this.#inFlush && (change !== null || event.event === 'round.completed')) return;
        if (change !== null) {
          let b = batches.get(event.pool);
          if (b === undefined) batches.set(event.pool, (b = { ups: [], downs: [] }));
          if (change.kind === 'up') b.ups.push(change.up);
          else b.downs.push(change.down);
          return;
        }
        if (event.event === 'round.completed') {
          const b = batches.get(event.pool);
          batches.delete(event.pool);
          if (b !== undefined) this.#inOrder(event.pool, () => this.poolBatch(accountId, event.pool, b.ups, b.downs, event.counts));
          return;
        }
        this.#inOrder(event.pool, () => this.poolState(accountId, event));
      },
    };
  }
}
