/**
 * `proxycheck pool watch`: one line per pool event (pure). The time is the
 * event's own (`at`, UTC, to the second); the proxy as host:port (user@ when
 * it has credentials; never the password); every line ends with the pool's
 * working count after the event.
 *
 *   2026-11-26 12:00:05  down     10.0.0.1:8080  timeout: no answer within 5000 ms   working 2/3
 *   2026-11-26 12:01:05  up       10.0.0.1:8080  412.00 ms                           working 3/3
 *   2026-11-26 12:01:06  round    3 checked: 3 working, 0 failed, 3 charged         working 3/3
 *   2026-11-26 12:02:00  paused   by its owner                                        working 3/3
 *   2026-11-26 12:02:00  paused   insufficient checks (needs 3, has 1)                working 3/3
 *   2026-11-26 12:03:00  resumed                                                     working 3/3
 *   2026-11-26 12:04:10  rounds   7 rounds of one proxy: 7 checked: 6 working, 1 failed, 7 charged   working 3/3
 *
 * RoundFold folds the rounds of one proxy (a pool's proxies fall due one by
 * one, so a quiet pool makes a round a proxy): they are held, and one
 * `rounds` line tells them when another event comes or the watcher's timer
 * (FOLD_MS) flushes them; a single held round prints as its own line.
 */
import type { PoolEvent } from '../pools/events';
import type { ProxyAddressObject } from '../pools/shape';

const WORD: Readonly<Record<PoolEvent['event'], string>> = Object.freeze({
  'proxy.up': 'up',
  'proxy.down': 'down',
  'round.completed': 'round',
  'pool.paused': 'paused',
  'pool.resumed': 'resumed',
});

function when(at: string): string {
  const d = new Date(at);
  return Number.isNaN(d.getTime()) ? at : d.toISOString().slice(0, 19).replace('T', ' ');
}

export function proxyText(p: ProxyAddressObject | undefined): string {
  if (p === undefined) return '?';
  const host = p.host.includes(':') ? `[${p.host}]` : p.host;
  return `${p.hasAuth && p.username !== undefined ? `${p.username}@` : ''}${host}:${p.port}`;
}

function detail(e: PoolEvent): string {
  switch (e.event) {
    case 'proxy.up':
      return `${proxyText(e.proxy)}  ${e.responseTime ?? ''}`.trimEnd();
    case 'proxy.down':
      return `${proxyText(e.proxy)}  ${e.error ? `${e.error.code}: ${e.error.message}` : ''}`.trimEnd();
    case 'round.completed': {
      const r = e.round;
      if (r === undefined) return '';
      return `${r.checked} checked: ${r.working} working, ${r.failed} failed${r.not_tried > 0 ? `, ${r.not_tried} not tried` : ''}, ${r.charged} charged`;
    }
    case 'pool.paused':
      return e.reason === 'insufficient_checks'
        ? `insufficient checks${e.required !== undefined && e.available !== undefined ? ` (needs ${e.required}, has ${e.available})` : ''}`
        : 'by its owner';
    case 'pool.resumed':
      return '';
  }
}

/** One line, no newline. */
export function renderPoolEvent(e: PoolEvent): string {
  const head = `${when(e.at)}  ${(WORD[e.event] ?? e.event).padEnd(8)} ${detail(e)}`;
  return `${head.padEnd(80)}  working ${e.counts.working}/${e.counts.total}`;
}

/** How long `pool watch` holds rounds of one proxy before it prints them as one line. */
export const FOLD_MS = 10_000;

/** Folds consecutive one-proxy rounds into one line (pure, apart from the state it holds). */
export class RoundFold {
  #held: PoolEvent[] = [];

  /** The lines to print now for event `e` (held rounds first, then `e`'s own unless it is held). */
  add(e: PoolEvent): string[] {
    if (e.event === 'round.completed' && e.round !== undefined && e.round.checked + e.round.not_tried <= 1) {
      this.#held.push(e);
      return [];
    }
    const out = this.flush();
    return [...(out === null ? [] : [out]), renderPoolEvent(e)];
  }

  /** The held rounds as one line (null when none are held). */
  flush(): string | null {
    const held = this.#held;
    this.#held = [];
    if (held.length === 0) return null;
    if (held.length === 1) return renderPoolEvent(held[0]!);
    const last = held.at(-1)!;
    const t = { checked: 0, working: 0, failed: 0, not_tried: 0, charged: 0 };
    for (const e of held) for (const k of Object.keys(t) as (keyof typeof t)[]) t[k] += e.round?.[k] ?? 0;
    const detail = `${held.length} rounds of one proxy: ${t.checked} checked: ${t.working} working, ${t.failed} failed${t.not_tried > 0 ? `, ${t.not_tried} not tried` : ''}, ${t.charged} charged`;
    const head = `${when(last.at)}  ${'rounds'.padEnd(8)} ${detail}`;
    return `${head.padEnd(80)}  working ${last.counts.working}/${last.counts.total}`;
  }
}
