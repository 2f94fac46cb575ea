/**
 * Pool reads between API nodes (src/cluster/pool-reads.ts) on a real
 * nats-server: node A serves the pools it owns (a ServedPools over a table
 * loaded like an owner's), node B asks A: the stats, a page (the rows with
 * their history and dates, the cursor), the gateway's working set (the
 * account's only), a re-check and a change made on B (applied by A before
 * it answers) reach A and come back
 * as A has them; a pool A does not own, a node that does not exist, and a
 * node that does not answer in time are null (the asker reads the durable
 * copy then).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { connect, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { poolReadsClient, servePoolReads } from '../../src/cluster/pool-reads';
import { poolReadsSubject } from '../../src/cluster/pool-reads-wire';
import { memoryLogger } from '../../src/log';
import { decodeCursor } from '../../src/pools/cursor';
import type { ListingStream, ServedPools } from '../../src/pools/ports';
import { listingOrder, MemoryListing } from '../../src/pools/proxy-listing';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { memoryPage } from '../../src/pools/proxy-page';
import { ProxyTable } from '../../src/pools/proxy-table';
import { DEFAULT_PROXIES_QUERY, type PoolProxiesQuery } from '../../src/pools/query';
import type { PoolProxyRow } from '../../src/pools/shape';
import type { ProxyAddress } from '../../src/proxy/types';
import { HAVE_NATS_SERVER, startNatsServer, type NatsServer } from '../helpers/nats-server';

const row = (id: number, latency: number): PoolProxyRow => ({
  id, host: `10.0.0.${id}`, port: 80, username: '', password: '', format: 'standard', status: 'working', failures: 0, checks: id,
  type: 'http', protocols: 1, anonymity: 'elite', https: true, origin: '203.0.113.1', country: 'DE', countryName: 'Germany', location: null, isp: null,
  asn: null, statusCode: 200, responseTimeMs: Math.fround(latency + 0.25), errorCode: null, errorMessage: null, latencyP50Ms: latency, uptimeH24Ppm: 1_000_000,
  history: new Uint8Array(153).fill(id), firstSeenAt: new Date(1_000), lastCheckedAt: new Date(2_000 + id), lastChangeAt: new Date(1_500), nextCheckAt: new Date(9_000 + id),
});

describe.skipIf(!HAVE_NATS_SERVER)('pool reads on a real nats-server', () => {
  let server: NatsServer;
  let ncA: NatsConnection;
  let ncB: NatsConnection;
  let served: Pick<Subscription, 'unsubscribe'>;
  const log = memoryLogger('warn');
  const table = new ProxyTable();
  for (const r of [row(1, 30), row(2, 10), row(3, 20)]) table.add(r);
  const rechecked: ProxyAddress[][] = [];
  const changes: string[] = [];
  const pools: ServedPools = {
    localChanged: async (pool, note) => {
      if (pool !== 'owned') return false;
      await Bun.sleep(50); // applied before the reply
      changes.push(note);
      return true;
    },
    localStats: (pool) => (pool === 'owned' ? { counts: { total: 3, working: 3, failed: 0, unchecked: 0 }, nextDueAt: new Date(9_001), checksPerDay: 288 } : null),
    localPage: (pool, q) => {
      if (pool !== 'owned') return null;
      const p = memoryPage(table, q);
      return { rows: p.slots.map((s) => table.rowOf(s)), nextCursor: p.nextCursor };
    },
    localRecheck: (pool, proxies) => (pool === 'owned' ? (rechecked.push([...proxies]), true) : false),
    memory: (account, pool) => (pool === 'owned' && account === 'acct' ? [{ key: 'k1', host: '10.0.0.2', port: 80, type: 'http', protocols: ['http'], country: 'DE' }, { key: 'k2', host: '10.0.0.3', port: 81, username: 'u', password: 'p', type: 'socks5', protocols: ['socks5', 'socks4'], country: null }] : undefined),
    listing: () => null,
  };

  beforeAll(async () => {
    server = await startNatsServer();
    ncA = await connect({ servers: server.url });
    ncB = await connect({ servers: server.url });
    served = servePoolReads(ncA, 'node-a', pools, log);
    await ncA.flush();
  });
  afterAll(async () => {
    served?.unsubscribe();
    await ncA?.close();
    await ncB?.close();
    await server?.stop();
  });

  test('B asks A: stats, pages with their cursor, a re-check; as A has them', async () => {
    const b = poolReadsClient(ncB, log);
    expect(await b.stats('node-a', 'owned')).toEqual({ counts: { total: 3, working: 3, failed: 0, unchecked: 0 }, nextDueAt: new Date(9_001), checksPerDay: 288 });
    const q = { ...DEFAULT_PROXIES_QUERY, limit: 2 };
    const first = await b.page('node-a', 'owned', q);
    expect(first!.rows).toEqual([table.rowOf(1), table.rowOf(2)]);
    expect(first!.nextCursor).not.toBeNull();
    const second = await b.page('node-a', 'owned', { ...q, cursor: decodeCursor(first!.nextCursor!) });
    expect(second).toEqual({ rows: [table.rowOf(0)], nextCursor: null });
    b.recheck('node-a', 'owned', [{ host: '10.0.0.1', port: 80 }]);
    for (let i = 0; i < 100 && rechecked.length === 0; i++) await Bun.sleep(10);
    expect(rechecked).toEqual([[{ host: '10.0.0.1', port: 80 }]]);
    expect(await b.upstreams('node-a', 'acct', 'owned')).toEqual(pools.memory('acct', 'owned')!);
    expect(await b.upstreams('node-a', 'another-acct', 'owned')).toBeNull();
  });

  test('a change made on B reaches A at once, and B hears back once A applied it', async () => {
    const b = poolReadsClient(ncB, log);
    expect(await b.changed('node-a', 'owned', 'settings')).toBe(true);
    expect(changes).toEqual(['settings']);
    expect(await b.changed('node-a', 'owned', 'deleted')).toBe(true);
    expect(changes).toEqual(['settings', 'deleted']);
    expect(await b.changed('node-a', 'elsewhere', 'members')).toBe(false);
    expect(await poolReadsClient(ncB, log, 300).changed('node-gone', 'owned', 'settings')).toBe(false);
  });

  test('a pool A does not own, a node nobody serves, a node that does not answer in time: null', async () => {
    const b = poolReadsClient(ncB, log, 300);
    expect(await b.stats('node-a', 'elsewhere')).toBeNull();
    expect(await b.page('node-a', 'elsewhere', DEFAULT_PROXIES_QUERY)).toBeNull();
    expect(await b.stats('node-gone', 'owned')).toBeNull();
    const mute = ncA.subscribe(poolReadsSubject('node-mute'), { callback: () => {} });
    await ncA.flush();
    const t0 = Date.now();
    expect(await b.stats('node-mute', 'owned')).toBeNull();
    expect(Date.now() - t0).toBeLessThan(2000);
    mute.unsubscribe();
  });
});

/**
 * An unlimited listing pulled from its owner (src/cluster/pool-reads.ts
 * PulledListing, src/cluster/pool-listings.ts) on a server whose
 * max_payload is 8 KiB, so the text crosses in many chunks: B's text is A's
 * one-pass listing byte for byte; A gone midway fails B's text (never a
 * short text as if whole); a mute node is null within the timeout, before
 * any byte; a page too large for the server is null at once (not after the
 * timeout, and A keeps running).
 */
describe.skipIf(!HAVE_NATS_SERVER)('pool listings on a real nats-server (max_payload 8 KiB)', () => {
  const confDir = mkdtempSync(join(tmpdir(), 'pc-nats-conf-'));
  let server: NatsServer;
  let ncA: NatsConnection;
  let ncB: NatsConnection;
  const log = memoryLogger('warn');
  const table = new ProxyTable();
  const N = 3000;
  for (let id = 1; id <= N; id++) table.add({ ...row(id, id % 97), host: `10.${(id >> 16) & 255}.${(id >> 8) & 255}.${id & 255}`, ...(id % 7 === 0 ? { username: `u${id}`, password: 'p@ss', format: 'colon_auth' as const } : {}) });
  const pools: ServedPools = {
    localChanged: async () => false,
    localStats: () => null,
    localPage: (pool, q) => {
      if (pool !== 'owned') return null;
      const p = memoryPage(table, q);
      return { rows: p.slots.map((s) => table.rowOf(s)), nextCursor: p.nextCursor };
    },
    localRecheck: () => false,
    memory: () => undefined,
    listing: (pool, q) => (pool === 'owned' ? new MemoryListing(table, listingOrder(table, q), () => false) : null),
  };
  const text = { poolType: 'http' as const, nowMs: 1_700_000_000_000 };
  const q: PoolProxiesQuery = { ...DEFAULT_PROXIES_QUERY, status: 'working', sort: 'latency', format: 'txt', all: true, limit: 10_000 };
  /** The listing as the owner's own route writes it. */
  const local = (query: PoolProxiesQuery & { format: 'txt' | 'csv' }) => {
    const l = pools.listing('owned', query)!;
    const parts: number[] = [];
    for (let b = l.next({ format: query.format, scheme: query.scheme === true, ...text }); b !== null; b = l.next({ format: query.format, scheme: query.scheme === true, ...text })) parts.push(...b);
    return Uint8Array.from(parts);
  };

  beforeAll(async () => {
    writeFileSync(join(confDir, 'small.conf'), 'max_payload: 8192\n');
    server = await startNatsServer({ args: ['-c', join(confDir, 'small.conf')] });
    ncA = await connect({ servers: server.url });
    ncB = await connect({ servers: server.url });
  });
  afterAll(async () => {
    await ncA?.close();
    await ncB?.close();
    await server?.stop();
    rmSync(confDir, { recursive: true, force: true });
  });

  const drain = async (s: ListingStream): Promise<Uint8Array> => {
    const parts: number[] = [];
    for (let b = await s.next(); b !== null; b = await s.next()) parts.push(...b);
    return Uint8Array.from(parts);
  };

  test("B's text is A's listing byte for byte, in many chunks (txt, txt with schemes, csv)", async () => {
    const served = servePoolReads(ncA, 'node-a', pools, log);
    await ncA.flush();
    try {
      const b = poolReadsClient(ncB, log);
      for (const query of [q, { ...q, scheme: true }, { ...q, format: 'csv', status: 'all', sort: 'checked' }] as (PoolProxiesQuery & { format: 'txt' | 'csv' })[]) {
        const want = local(query);
        expect(want.length).toBeGreaterThan(4 * 8192);
        const s = await b.listing('node-a', 'owned', query, text);
        expect(s).not.toBeNull();
        expect(new TextDecoder().decode(await drain(s!))).toBe(new TextDecoder().decode(want));
      }
      expect(await b.listing('node-a', 'elsewhere', q, text)).toBeNull();
    } finally {
      served.unsubscribe();
    }
  });

  test('A gone after the first chunk: B\'s next chunk fails the text; a mute node: null before any byte', async () => {
    const served = servePoolReads(ncA, 'node-a', pools, log);
    await ncA.flush();
    const b = poolReadsClient(ncB, log, 300);
    const s = await b.listing('node-a', 'owned', q, text);
    const first = await s!.next();
    expect(first!.length).toBeGreaterThan(0);
    served.unsubscribe();
    await ncA.flush();
    let read = first!.length;
    const failed = await (async () => {
      for (;;) {
        const next = await s!.next();
        if (next === null) return false;
        read += next.length;
      }
    })().catch((err: Error) => err.message);
    expect(failed).toContain('not whole');
    expect(read).toBeLessThan(local(q as PoolProxiesQuery & { format: 'txt' }).length);

    const mute = ncA.subscribe(poolReadsSubject('node-mute'), { callback: () => {} });
    await ncA.flush();
    const t0 = Date.now();
    expect(await b.listing('node-mute', 'owned', q, text)).toBeNull();
    expect(Date.now() - t0).toBeLessThan(1500);
    mute.unsubscribe();
  });

  test('a page larger than max_payload: null at once, not after the timeout', async () => {
    const served = servePoolReads(ncA, 'node-a', pools, log);
    await ncA.flush();
    try {
      const b = poolReadsClient(ncB, log, 3000);
      const t0 = Date.now();
      expect(await b.page('node-a', 'owned', { ...DEFAULT_PROXIES_QUERY, status: 'all', limit: 1000 })).toBeNull();
      expect(Date.now() - t0).toBeLessThan(1500);
      // a page that fits still comes from A
      expect((await b.page('node-a', 'owned', { ...DEFAULT_PROXIES_QUERY, status: 'all', limit: 3 }))!.rows).toHaveLength(3);
    } finally {
      served.unsubscribe();
    }
  });
});
