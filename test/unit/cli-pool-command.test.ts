/**
 * `pool working` paging (src/cli/pool-command.ts) against a fake client:
 * every page followed through its cursor, pages of at most 10 000, --limit
 * honoured across pages, the csv header written once, json pages joined.
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
