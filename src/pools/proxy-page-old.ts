/**
 * `GET /pools/{id}/proxies` from a pool owner's memory: the same filters,
 * sorts, keyset and cursors as proxies-sql.ts proxiesPageStatement over the
 * durable copy (a property test holds the two equal), over the table's
 * arrays. Pure.
 *
 * Sort keys (query.ts): latency = latency_p50_ms or 2147483647, ascending;
 * uptime = uptime_h24_ppm or -1, descending; checked = last_checked_at or
 * the epoch, descending; ties by id in the same direction. A page is the
 * `limit` first rows after the cursor, kept in a bounded heap (n log limit),
 * plus one more that says a next page exists.
 */
import { encodeCursor } from './cursor';
import type { PageCursor, PoolProxiesQuery, ProxySort } from './query';
import type { ProxyTable } from './proxy-table';
import { STATUS_CODE } from './proxy-table';
import { protocolBit } from './shape';

const NO_LATENCY = 2_147_483_647;

/** A slot's sort key: latency and uptime as the integers the SQL keys are; checked in microseconds. */
function keyOf(t: ProxyTable, sort: ProxySort, slot: number): number {
  if (sort === 'latency') {
    const l = t.latency[slot]!;
    return l === -1 ? NO_LATENCY : l;
  }
  if (sort === 'uptime') return t.uptime[slot]!;
  const c = t.lastChecked[slot]!;
  return Number.isNaN(c) ? 0 : c * 1000;
}

/** The cursor's key in keyOf's units. */
function cursorKey(c: PageCursor): number {
  if (c.sort !== 'checked') return Number(c.key);
  const ms = Date.parse(`${c.key.slice(0, 23)}Z`);
  return ms * 1000 + Number(c.key.slice(23, 26) || '0');
}

/** A key as the SQL prints it (a cursor's `key`). */
export function keyText(sort: ProxySort, key: number): string {
  if (sort !== 'checked') return String(key);
  const ms = Math.floor(key / 1000);
  const micros = String(Math.round(key - ms * 1000)).padStart(3, '0');
  return `${new Date(ms).toISOString().slice(0, 23)}${micros}`;
}

/** Whether `slot` passes the query's filters. */
export function matches(t: ProxyTable, slot: number, q: PoolProxiesQuery, country: number): boolean {
  if (t.live[slot] !== 1) return false;
  if (q.status !== 'all' && t.status[slot] !== STATUS_CODE[q.status]) return false;
  if (q.country !== null && t.country[slot] !== country) return false;
  if (q.anonymity !== null && t.anonymityOf(slot) !== q.anonymity) return false;
  if (q.type !== null && t.typeOf(slot) !== q.type && (t.protocols[slot]! & protocolBit(q.type)) === 0) return false;
  if (q.https !== null && t.httpsOf(slot) !== q.https) return false;
  if (q.target != null && (t.status[slot] !== STATUS_CODE.working || t.target(q.target)?.passed(slot) !== true)) return false;
  if (q.maxLatencyMs !== null) {
    const l = t.latency[slot]!;
    if (l === -1 || l > q.maxLatencyMs) return false;
  }
  if (q.minUptime !== null) {
    const u = t.uptime[slot]!;
    if (u === -1 || u < Math.ceil(q.minUptime * 1_000_000 - 1e-6)) return false;
  }
  return true;
}

export interface MemoryPage {
  /** The page's slots, in the sort's order. */
  slots: number[];
  /** null on the last page. */
  nextCursor: string | null;
}

/** One page of the table. RangeError: a cursor of another sort (as proxiesPageStatement). */
export function memoryPage(t: ProxyTable, q: PoolProxiesQuery): MemoryPage {
  if (q.cursor !== null && q.cursor.sort !== q.sort) throw new RangeError(`cursor of sort ${q.cursor.sort} used with sort ${q.sort}`);
  const desc = q.sort !== 'latency';
  const keys = new Float64Array(t.size);
  // a before b in the page's order
  const before = (a: number, b: number): boolean => {
    const ka = keys[a]!;
    const kb = keys[b]!;
    if (ka !== kb) return desc ? ka > kb : ka < kb;
    const ia = t.id[a]!;
    const ib = t.id[b]!;
    return desc ? ia > ib : ia < ib;
  };
  const ck = q.cursor === null ? 0 : cursorKey(q.cursor);
  const cid = q.cursor?.id ?? 0;
  const country = q.country === null ? -1 : t.texts.find(q.country);
  const k = q.limit + 1;
  // a max-heap in the page's order: the root is the last row kept
  const heap: number[] = [];
  const sink = (i: number): void => {
    for (;;) {
      const l = 2 * i + 1;
      if (l >= heap.length) return;
      const r = l + 1;
      const c = r < heap.length && before(heap[l]!, heap[r]!) ? r : l;
      if (!before(heap[i]!, heap[c]!)) return;
      [heap[i], heap[c]] = [heap[c]!, heap[i]!];
      i = c;
    }
  };
  for (let s = 0; s < t.size; s++) {
    if (!matches(t, s, q, country)) continue;
    const key = keyOf(t, q.sort, s);
    if (q.cursor !== null) {
      const id = t.id[s]!;
      const after = desc ? key < ck || (key === ck && id < cid) : key > ck || (key === ck && id > cid);
      if (!after) continue;
    }
    keys[s] = key;
    if (heap.length < k) {
      heap.push(s);
      let i = heap.length - 1;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (!before(heap[p]!, heap[i]!)) break;
        [heap[i], heap[p]] = [heap[p]!, heap[i]!];
        i = p;
      }
    } else if (before(s, heap[0]!)) {
      heap[0] = s;
      sink(0);
    }
  }
  heap.sort((a, b) => (before(a, b) ? -1 : 1));
  const more = heap.length > q.limit;
  const slots = more ? heap.slice(0, q.limit) : heap;
  const last = slots[slots.length - 1];
  const nextCursor = more && last !== undefined ? encodeCursor({ sort: q.sort, key: keyText(q.sort, keys[last]!), id: t.id[last]! }) : null;
  return { slots, nextCursor };
}
