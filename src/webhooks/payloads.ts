/**
 * The messages' `data` (DECISIONS "Webhooks", events). Pure.
 *
 *   pool.proxies_changed  {pool, up: [{proxy, at}], down: [{proxy, at, error}],
 *                          counts, part: {index, of}}: the proxy.up / proxy.down
 *                          of one durable batch (one round.completed), at most
 *                          MAX_PROXIES_PER_MESSAGE proxies a message (ups first,
 *                          then downs), more in several (`part` numbers them
 *                          from 1)
 *   pool.paused           {pool, at, reason, counts, required?, available?}
 *   pool.resumed          {pool, at, counts}
 *   check.completed       {jobId, status, total_checked, total_working, result_url}
 *                         (built in SQL from the scan: src/webhooks/outbox-sql.ts)
 *   webhook.test          {webhook, at}
 *
 * The body of every attempt is `{type, timestamp, data}` (`timestamp`: when
 * the event happened, ISO 8601), the same bytes on every retry.
 */
import type { PoolEvent } from '../pools/events';
import type { ProxyAddressObject } from '../pools/shape';
import type { PoolCounts } from '../pools/types';
import { MAX_PROXIES_PER_MESSAGE, type MessageType } from './types';

export interface ProxyUp {
  proxy: ProxyAddressObject;
  at: string;
}

export interface ProxyDown extends ProxyUp {
  error: { code: string; message: string } | null;
}

export interface ProxiesChanged {
  pool: string;
  up: ProxyUp[];
  down: ProxyDown[];
  counts: PoolCounts;
  part: { index: number; of: number };
}

/** The messages of one batch: every up and down once, at most `max` a message; none for an empty batch. */
export function proxiesChangedMessages(pool: string, ups: readonly ProxyUp[], downs: readonly ProxyDown[], counts: PoolCounts, max = MAX_PROXIES_PER_MESSAGE): ProxiesChanged[] {
  const total = ups.length + downs.length;
  if (total === 0) return [];
  const of = Math.ceil(total / max);
  const out: ProxiesChanged[] = [];
  for (let i = 0; i < of; i++) {
    const from = i * max;
    const to = Math.min(total, from + max);
    out.push({
      pool,
      up: ups.slice(Math.min(from, ups.length), Math.min(to, ups.length)),
      down: downs.slice(Math.max(0, from - ups.length), Math.max(0, to - ups.length)),
      counts: { ...counts },
      part: { index: i + 1, of },
    });
  }
  return out;
}

/** proxy.up / proxy.down of the events feed as a batch entry; null for any other event. */
export function changeOf(e: PoolEvent): { kind: 'up'; up: ProxyUp } | { kind: 'down'; down: ProxyDown } | null {
  if (e.proxy === undefined) return null;
  if (e.event === 'proxy.up') return { kind: 'up', up: { proxy: e.proxy, at: e.at } };
  if (e.event === 'proxy.down') return { kind: 'down', down: { proxy: e.proxy, at: e.at, error: e.error ?? null } };
  return null;
}

/** The data of pool.paused / pool.resumed: the WebSocket's event without its `event` name. */
export function poolStateData(e: PoolEvent): Record<string, unknown> {
  const { event: _event, ...data } = e;
  return data;
}

/** A message's body: the exact bytes signed and sent on every attempt. */
export function messageBody(type: MessageType | string, timestamp: string, data: unknown): string {
  return JSON.stringify({ type, timestamp, data });
}
