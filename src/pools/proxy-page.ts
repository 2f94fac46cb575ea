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
 * plus one more that says a next page exists. Every match at once (an
 * unlimited txt / csv listing) is proxy-listing.ts's, with the same test of
 * a slot (selector).
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

/**
 * The query's filters and keyset as one test (memoryPage and proxy-listing.ts
 * share it): a slot's sort key when it matches and comes after the cursor,
 * else NaN (keyOf's keys are never NaN). RangeError: a cursor of another
 * sort (as proxiesPageStatement). For one scan: it reads the table's arrays
 * as they are when it is made.
 */
export function selector(t: ProxyTable, q: PoolProxiesQuery): (slot: number) => number {
  if (q.cursor !== null && q.cursor.sort !== q.sort) throw new RangeError(`cursor of sort ${q.cursor.sort} used with sort ${q.sort}`);
  const desc = q.sort !== 'latency';
  const cursor = q.cursor;
  const ck = cursor === null ? 0 : cursorKey(cursor);
  const cid = cursor?.id ?? 0;
  const country = q.country === null ? -1 : t.texts.find(q.country);
  // the first two tests of matches() on the arrays themselves: most slots of a large pool fail them
  const { live, status } = t;
  const code = q.status === 'all' ? -1 : STATUS_CODE[q.status];
  return (s) => {
    if (live[s] !== 1 || (code !== -1 && status[s] !== code)) return NaN;
    if (!matches(t, s, q, country)) return NaN;
    const key = keyOf(t, q.sort, s);
    if (cursor === null) return key;
    const id = t.id[s]!;
    const after = desc ? key < ck || (key === ck && id < cid) : key > ck || (key === ck && id > cid);
    return after ? key : NaN;
  };
}

export interface MemoryPage {
  /** The page's slots, in the sort's order. */
  slots: number[];
  /** null on the last page. */
  nextCursor: string | null;
}

/**
 * One page of the table. RangeError: a cursor of another sort. The heap
 * keeps its entries' keys beside their slots (limit + 1 of each): nothing
 * the size of the table is allocated per page.
 */
export function memoryPage(t: ProxyTable, q: PoolProxiesQuery): MemoryPage {
  const pick = selector(t, q);
  const desc = q.sort !== 'latency';
  const k = q.limit + 1;
  // a max-heap in the page's order (the root is the last row kept): entries' slots and keys
  const hs = new Int32Array(k);
  const hk = new Float64Array(k);
  let n = 0;
  // (key a, slot a) before (key b, slot b) in the page's order
  const earlier = (ka: number, sa: number, kb: number, sb: number): boolean => {
    if (ka !== kb) return desc ? ka > kb : ka < kb;
    return desc ? t.id[sa]! > t.id[sb]! : t.id[sa]! < t.id[sb]!;
  };
  const before = (i: number, j: number): boolean => earlier(hk[i]!, hs[i]!, hk[j]!, hs[j]!);
  const swap = (i: number, j: number): void => {
    const s = hs[i]!;
    hs[i] = hs[j]!;
    hs[j] = s;
    const key = hk[i]!;
    hk[i] = hk[j]!;
    hk[j] = key;
  };
  for (let s = 0; s < t.size; s++) {
    const key = pick(s);
    if (key !== key) continue; // NaN: not listed
    if (n < k) {
      hs[n] = s;
      hk[n] = key;
      for (let i = n++; i > 0; ) {
        const p = (i - 1) >> 1;
        if (!before(p, i)) break;
        swap(i, p);
        i = p;
      }
    } else if (earlier(key, s, hk[0]!, hs[0]!)) {
      hs[0] = s;
      hk[0] = key;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const c = r < n && before(l, r) ? r : l;
        if (!before(i, c)) break;
        swap(i, c);
        i = c;
      }
    }
  }
  // the entries in the page's order
  const order = Array.from({ length: n }, (_, i) => i).sort((i, j) => (before(i, j) ? -1 : 1));
  const more = n > q.limit;
  const kept = more ? order.slice(0, q.limit) : order;
  const slots = kept.map((i) => hs[i]!);
  const last = kept[kept.length - 1];
  const nextCursor = more && last !== undefined ? encodeCursor({ sort: q.sort, key: keyText(q.sort, hk[last]!), id: t.id[hs[last]!]! }) : null;
  return { slots, nextCursor };
}
