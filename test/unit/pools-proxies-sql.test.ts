/**
 * The pools' SQL builders are pure: statement text and parameters for given
 * inputs. Their behaviour against a real database (both drivers) is
 * test/integration/pools-sql.test.ts.
 */
import { describe, expect, test } from 'bun:test';
import { PgDialect } from 'drizzle-orm/pg-core';
import { parseProxyLine, type ParsedProxy } from '../../src/proxy/parse';
import { insertProxiesStatement, JOINED_ROW_COLUMNS, pageOf, proxiesPageStatement, removeProxiesStatement, ROW_COLUMNS } from '../../src/pools/proxies-sql';
import { readdirSync, readFileSync } from 'node:fs';
import { DEFAULT_PROXIES_QUERY } from '../../src/pools/query';
import { decodeCursor } from '../../src/pools/cursor';

const dialect = new PgDialect();
const evil = "x'); DROP TABLE pools; --";

describe('proxiesPageStatement', () => {
  test('defaults: working, fastest first, 101 rows, one statement', () => {
    const q = dialect.sqlToQuery(proxiesPageStatement('abcdefghij', DEFAULT_PROXIES_QUERY));
    expect(q.sql).not.toContain(';');
    expect(q.sql).toContain('status = $2');
    expect(q.sql).toMatch(/ORDER BY COALESCE\(latency_p50_ms, 2147483647\) ASC, pool_proxy_rows\.id ASC\s+LIMIT \$3/);
    expect(q.params).toEqual(['abcdefghij', 'working', 101]);
  });

  test('every filter is a parameter; the cursor is a row comparison in the sort direction', () => {
    const q = dialect.sqlToQuery(
      proxiesPageStatement(evil, {
        ...DEFAULT_PROXIES_QUERY,
        status: 'all',
        country: evil,
        anonymity: 'elite',
        type: 'socks5',
        https: true,
        maxLatencyMs: 300,
        minUptime: 0.95,
        sort: 'uptime',
        cursor: { sort: 'uptime', key: '950000', id: 7 },
      }),
    );
    expect(q.sql).not.toContain('DROP');
    expect(q.sql).not.toContain('status =');
    expect(q.params.filter((p) => p === evil).length).toBe(2);
    expect(q.params).toEqual(expect.arrayContaining(['elite', 'socks5', 4, true, 300, 950000, '950000', 7]));
    expect(q.sql).toMatch(/\(COALESCE\(uptime_h24_ppm, -1\), id\) < \(\$\d+::int, \$\d+::bigint\)/);
    expect(q.sql).toContain('DESC, pool_proxy_rows.id DESC');
  });

  test('txt reads the address columns only; json every column', () => {
    const txt = dialect.sqlToQuery(proxiesPageStatement('p', { ...DEFAULT_PROXIES_QUERY, format: 'txt' })).sql;
    expect(txt).toContain('SELECT id, host, port, username, password, format, protocol, COALESCE');
    expect(txt).not.toContain('history');
    expect(dialect.sqlToQuery(proxiesPageStatement('p', DEFAULT_PROXIES_QUERY)).sql).toContain('history');
  });

  test('a cursor of another sort is refused', () => {
    expect(() => proxiesPageStatement('p', { ...DEFAULT_PROXIES_QUERY, cursor: { sort: 'checked', key: '2026-01-01T00:00:00.000000', id: 1 } })).toThrow(RangeError);
  });
});

describe('pageOf', () => {
  test('limit + 1 rows: a page of limit and a cursor at its last row; fewer: the last page', () => {
    const raw = [1, 2, 3].map((id) => ({ id, host: 'h', port: 1, status: 'working', first_seen_at: new Date(0), next_check_at: new Date(0), sort_key: String(id * 10) }));
    const q = { ...DEFAULT_PROXIES_QUERY, limit: 2 };
    const page = pageOf(raw, q);
    expect(page.rows.map((r) => r.id)).toEqual([1, 2]);
    expect(decodeCursor(page.nextCursor as string)).toEqual({ sort: 'latency', key: '20', id: 2 });
    expect(pageOf(raw, { ...q, limit: 3 }).nextCursor).toBeNull();
    expect(pageOf([], q)).toEqual({ rows: [], nextCursor: null });
  });
});

describe('batches', () => {
  const list = ['1.1.1.1:1', 'u:p@1.1.1.1:2'].map((l) => parseProxyLine(l) as ParsedProxy);

  test('a batch is one statement with a fixed number of parameters, whatever its size', () => {
    const one = dialect.sqlToQuery(insertProxiesStatement('p', 'http', list.slice(0, 1), 0));
    const many = dialect.sqlToQuery(insertProxiesStatement('p', 'http', Array.from({ length: 5000 }, () => list[1] as ParsedProxy), 0));
    expect(many.params.length).toBe(one.params.length);
    expect(dialect.sqlToQuery(removeProxiesStatement('p', list)).params.length).toBe(dialect.sqlToQuery(removeProxiesStatement('p', [])).params.length);
  });

  test('values travel as array literals, quoted: credentials cannot end the literal or the statement', () => {
    const p = { host: '1.1.1.1', port: 1, username: 'a",NULL}', password: "b\\'", format: 'url_auth' as const, raw: '' };
    const q = dialect.sqlToQuery(insertProxiesStatement('p', 'http', [p], 0));
    expect(q.sql).not.toContain('NULL}');
    expect(q.params).toContain('{"a\\",NULL}"}');
    expect(q.params).toContain('{"b\\\\\'"}');
  });
});

describe('JOINED_ROW_COLUMNS', () => {
  test('the view\'s columns, in ROW_COLUMNS\' order, each from the table the newest pool_proxy_rows definition takes it from', () => {
    const dir = new URL('../../db/migrations/', import.meta.url).pathname;
    const views = readdirSync(dir)
      .filter((f) => f.endsWith('.sql'))
      .sort()
      .map((f) => readFileSync(dir + f, 'utf8'))
      .flatMap((text) => [...text.matchAll(/VIEW "pool_proxy_rows" AS\s+SELECT([\s\S]*?)\sFROM/g)].map((m) => m[1]!));
    const source = new Map(views[views.length - 1]!.split(',').map((c) => {
      const [, table, column] = /^\s*(\w+)\."(\w+)"\s*$/.exec(c)!;
      return [column!, table!] as const;
    }));
    const text = (q: typeof ROW_COLUMNS) => dialect.sqlToQuery(q).sql;
    const plain = text(ROW_COLUMNS).split(', ');
    const joined = text(JOINED_ROW_COLUMNS).split(', ');
    expect(joined).toEqual(plain.map((c) => `${source.get(c)}.${c}`));
  });
});
