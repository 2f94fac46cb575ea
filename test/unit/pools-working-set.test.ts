/**
 * A pool's working proxies as gateway upstreams (src/pools/working-set.ts):
 * no row = not the account's pool (null); one row of nulls = no working
 * proxy; credentials kept; an auto pool's protocols from the mask; sameUpstreams.
 */
import { describe, expect, test } from 'bun:test';
import { PgDialect } from 'drizzle-orm/pg-core';
import { sameUpstreams, upstreamsOf, workingUpstreamsStatement } from '../../src/pools/working-set';

const row = (over: Record<string, unknown> = {}) => ({ pool_id: 'poolaaaaaa1', id: 1, host: '10.0.0.1', port: 3128, username: '', password: '', type: 'http', protocols: 1, country: 'DE', ...over });

describe('working set', () => {
  test('statement: the owned pool joined to its working proxies, every value a parameter', () => {
    const q = new PgDialect().sqlToQuery(workingUpstreamsStatement('0b6f9f5e-3c1a-4f7e-9a57-2f4f1c2d8e11', 'poolaaaaaa1'));
    expect(q.sql).toContain("pp.status = 'working'");
    expect(q.sql).toContain('p.account_id = $2::uuid');
    expect(q.params).toEqual(['poolaaaaaa1', '0b6f9f5e-3c1a-4f7e-9a57-2f4f1c2d8e11']);
  });

  test('no row: null (not the account\'s pool); a row of nulls: an empty list', () => {
    expect(upstreamsOf([])).toBeNull();
    expect(upstreamsOf([{ pool_id: 'poolaaaaaa1', id: null, host: null, port: null, username: null, password: null, type: null, protocols: null, country: null }])).toEqual([]);
  });

  test('upstreams: key from the address and credentials, type, protocols (an auto pool\'s mask), country', () => {
    const got = upstreamsOf([row(), row({ id: 2, host: '10.0.0.2', port: 1080, username: 'u', password: 'p:w', type: 'socks5', protocols: 5, country: null })]);
    expect(got).toEqual([
      { key: '10.0.0.1 3128', host: '10.0.0.1', port: 3128, type: 'http', protocols: ['http'], country: 'DE' },
      { key: '10.0.0.2 1080 1 up:w', host: '10.0.0.2', port: 1080, username: 'u', password: 'p:w', type: 'socks5', protocols: ['socks5', 'http'], country: null },
    ]);
  });

  test('a row without a known type is skipped; no mask: [type]', () => {
    expect(upstreamsOf([row({ type: null }), row({ id: 2, type: 'socks4', protocols: 0 })])).toEqual([{ key: '10.0.0.1 3128', host: '10.0.0.1', port: 3128, type: 'socks4', protocols: ['socks4'], country: 'DE' }]);
  });

  test('sameUpstreams: order, key, type, country and protocols count', () => {
    const a = upstreamsOf([row(), row({ id: 2, host: '10.0.0.2' })])!;
    expect(sameUpstreams(a, upstreamsOf([row(), row({ id: 2, host: '10.0.0.2' })])!)).toBe(true);
    expect(sameUpstreams(a, [...a].reverse())).toBe(false);
    expect(sameUpstreams(a, a.slice(1))).toBe(false);
    expect(sameUpstreams(a, upstreamsOf([row({ country: 'FR' }), row({ id: 2, host: '10.0.0.2' })])!)).toBe(false);
    expect(sameUpstreams(a, upstreamsOf([row({ protocols: 3 }), row({ id: 2, host: '10.0.0.2' })])!)).toBe(false);
  });
});
