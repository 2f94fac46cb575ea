/**
 * `pool working` paging (src/cli/pool-command.ts) against a fake client:
 * every page followed through its cursor, pages of at most 10 000, --limit
 * honoured across pages, the csv header written once, json pages joined;
 * `pool gateway` URLs from /health (the API host for a wildcard gateway, no
 * gateway exit 5); `pool watch` waiting out a socket that does not open and
 * a network failure, ending on "pool deleted" (0) or a pool gone (5).
 */
import { describe, expect, test } from 'bun:test';
import type { ApiClient, PoolProxiesPage } from '../../src/cli/api-client';
import type { CliIo } from '../../src/cli/io';
import { runPool } from '../../src/cli/pool-command';

const ID = 'abcdefghij0123456789';

/** A pool of `n` working proxies 10.0.0.i:80, served in pages as the API serves them. */
function fakeClient(n: number) {
  const asked: URLSearchParams[] = [];
  const client = {
    async poolProxies(id: string, q: URLSearchParams): Promise<PoolProxiesPage> {
      expect(id).toBe(ID);
      asked.push(q);
      const from = Number(q.get('cursor') ?? 0);
      const limit = Number(q.get('limit'));
      const rows = Array.from({ length: Math.max(0, Math.min(limit, n - from)) }, (_, i) => from + i);
      const next = from + rows.length < n ? String(from + rows.length) : null;
      const format = q.get('format');
      if (format === 'json') return { text: JSON.stringify({ proxies: rows.map((i) => ({ proxy: { host: `10.0.0.${i}`, port: 80 } })), next_cursor: next }), nextCursor: next };
      if (format === 'csv') return { text: `h1,h2\r\n${rows.map((i) => `10.0.0.${i},80\r\n`).join('')}`, nextCursor: next };
      return { text: rows.map((i) => `10.0.0.${i}:80\n`).join(''), nextCursor: next };
    },
  };
  return { client: client as unknown as ApiClient, asked };
}

function io() {
  let out = '';
  const stream = { write: (s: string | Uint8Array) => void (out += String(s)), isTTY: false, columns: undefined };
  const cliIo = { stdout: stream, stderr: stream, signal: new AbortController().signal, now: () => 0 } as unknown as CliIo;
  return { cliIo, out: () => out };
}

describe('pool working', () => {
  test('follows the cursor through every page (10 000 each) and prints every line once', async () => {
    const { client, asked } = fakeClient(25_000);
    const o = io();
    expect(await runPool({ name: 'pool', action: 'working', id: ID, format: 'txt' }, { json: false }, client, o.cliIo)).toBe(0);
    const lines = o.out().split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(25_000);
    expect(new Set(lines).size).toBe(25_000);
    expect(asked.map((q) => [q.get('limit'), q.get('cursor'), q.get('status')])).toEqual([
      ['10000', null, 'working'],
      ['10000', '10000', 'working'],
      ['10000', '20000', 'working'],
    ]);
  });

  test('--limit across pages; the filters go to every page', async () => {
    const { client, asked } = fakeClient(25_000);
    const o = io();
    await runPool({ name: 'pool', action: 'working', id: ID, format: 'txt', limit: 12_345, country: 'DE', anonymity: 'elite', type: 'socks5' }, { json: false }, client, o.cliIo);
    expect(o.out().split('\n').filter((l) => l !== '')).toHaveLength(12_345);
    expect(asked.map((q) => q.get('limit'))).toEqual(['10000', '2345']);
    for (const q of asked) expect([q.get('country'), q.get('anonymity'), q.get('type')]).toEqual(['DE', 'elite', 'socks5']);
  });

  test('csv: the header once; json (--format json or --json): one object with every proxy', async () => {
    const csv = io();
    await runPool({ name: 'pool', action: 'working', id: ID, format: 'csv' }, { json: false }, fakeClient(10_001).client, csv.cliIo);
    const rows = csv.out().split('\r\n');
    expect(rows.filter((r) => r === 'h1,h2')).toHaveLength(1);
    expect(rows.filter((r) => r.startsWith('10.0.0.'))).toHaveLength(10_001);
    const json = io();
    await runPool({ name: 'pool', action: 'working', id: ID, format: 'txt', limit: 3 }, { json: true }, fakeClient(5).client, json.cliIo);
    expect(JSON.parse(json.out()).proxies.map((p: { proxy: { host: string } }) => p.proxy.host)).toEqual(['10.0.0.0', '10.0.0.1', '10.0.0.2']);
  });

  test('an empty pool prints nothing', async () => {
    const o = io();
    await runPool({ name: 'pool', action: 'working', id: ID, format: 'txt' }, { json: false }, fakeClient(0).client, o.cliIo);
    expect(o.out()).toBe('');
  });
});

describe('pool gateway and pool watch (fake client)', () => {
  const pool = { id: ID, name: 'mine', counts: { total: 2, working: 1, failed: 1, unchecked: 0 } };

  test('gateway: a gateway on every address is reached by the API\'s host; options in the username; none: exit 5 naming GATEWAY_PORT', async () => {
    const client = (gateway: unknown) =>
      ({
        url: 'http://api.example.test:3000',
        apiKey: () => 'k3y',
        pool: async () => pool,
        health: async () => ({ status: 200, body: { status: 'ok', ...(gateway === undefined ? {} : { gateway }) } }),
      }) as unknown as ApiClient;
    let o = io();
    expect(await runPool({ name: 'pool', action: 'gateway', id: ID, type: 'socks5' }, { json: false }, client({ host: null, port: 8080 }), o.cliIo)).toBe(0);
    expect(o.out()).toBe(`http://pool-${ID}-type-socks5:k3y@api.example.test:8080\nsocks5://pool-${ID}-type-socks5:k3y@api.example.test:8080\n`);
    o = io();
    await runPool({ name: 'pool', action: 'gateway', id: ID }, { json: true }, client({ host: '::1', port: 1 }), o.cliIo);
    expect(JSON.parse(o.out()).http).toBe(`http://pool-${ID}:k3y@[::1]:1`);
    const err = await runPool({ name: 'pool', action: 'gateway', id: ID }, { json: false }, client(undefined), io().cliIo).catch((e: unknown) => e);
    expect(err).toMatchObject({ exitCode: 5, code: 'cli_no_gateway' });
    expect((err as Error).message).toContain('GATEWAY_PORT');
  });

  test('watch: a socket that does not open and a pool read that fails on the network are waited out; the pool deleted ends it (0)', async () => {
    const { CliError, EXIT } = await import('../../src/cli/exit-codes');
    let opens = 0;
    let reads = 0;
    const client = {
      pool: async () => {
        reads++;
        if (reads === 2) throw new CliError(EXIT.NETWORK, 'cli_network', 'down for a restart');
        return pool;
      },
      poolEvents: async (_id: string, onEvent: (e: unknown) => void) => {
        opens++;
        if (opens === 1) return null;
        onEvent({ pool: ID, event: 'pool.resumed', at: '2026-11-26T12:00:00.000Z', counts: pool.counts });
        return { closed: Promise.resolve({ code: 1000, reason: 'pool deleted' }), close: () => {} };
      },
    } as unknown as ApiClient;
    const o = io();
    expect(await runPool({ name: 'pool', action: 'watch', id: ID }, { json: false }, client, o.cliIo)).toBe(0);
    expect([opens, reads]).toEqual([2, 2]);
    expect(o.out()).toContain('resumed');
    expect(o.out()).toContain(`Pool ${ID} was deleted.`);
  }, 10_000);

  test('watch: a pool gone while reconnecting ends it with its exit code', async () => {
    const { CliError, EXIT } = await import('../../src/cli/exit-codes');
    let reads = 0;
    const client = {
      pool: async () => {
        if (++reads > 1) throw new CliError(EXIT.CLIENT, 'cli_request_refused', 'not found');
        return pool;
      },
      poolEvents: async () => ({ closed: Promise.resolve({ code: 1013, reason: 'subscriber too slow' }), close: () => {} }),
    } as unknown as ApiClient;
    expect(await runPool({ name: 'pool', action: 'watch', id: ID }, { json: false }, client, io().cliIo).catch((e: { exitCode: number }) => e.exitCode)).toBe(5);
  }, 10_000);
});
