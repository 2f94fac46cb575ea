/** GET /pools/{id}/proxies query validation (src/http/pool-proxies-query.ts): defaults, each parameter, cursors, fuzzing. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { ApiError } from '../../src/http/api-errors';
import { validateProxiesQuery } from '../../src/http/pool-proxies-query';
import { encodeCursor } from '../../src/pools/cursor';
import { DEFAULT_PROXIES_QUERY, PROXY_SORTS } from '../../src/pools/query';

const v = (qs: string) => validateProxiesQuery(new URLSearchParams(qs));
function message(qs: string): string {
  try {
    v(qs);
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).status).toBe(400);
    return String((e as ApiError).body.message);
  }
  throw new Error('expected a 400');
}

describe('proxies query', () => {
  test('defaults: working, latency, 100, json', () => {
    expect(v('')).toEqual({ ...DEFAULT_PROXIES_QUERY });
    expect(v('unknown=1')).toEqual({ ...DEFAULT_PROXIES_QUERY });
  });

  test('every parameter', () => {
    const c = encodeCursor({ sort: 'uptime', key: '990000', id: 12 });
    expect(v(`status=all&country=de&anonymity=elite&type=socks5&https=false&max_latency_ms=250&min_uptime=.95&sort=uptime&limit=10000&cursor=${c}&format=txt`)).toEqual({
      status: 'all',
      country: 'DE',
      anonymity: 'elite',
      type: 'socks5',
      https: false,
      maxLatencyMs: 250,
      minUptime: 0.95,
      sort: 'uptime',
      limit: 10000,
      cursor: { sort: 'uptime', key: '990000', id: 12 },
      format: 'txt',
    });
    expect(v('min_uptime=1').minUptime).toBe(1);
    expect(v('min_uptime=0').minUptime).toBe(0);
    expect(v('https=true').https).toBe(true);
  });

  test('each bad value names its parameter', () => {
    expect(message('status=up')).toBe('status: expected one of working, failed, unchecked, all');
    expect(message('country=DEU')).toBe('country: expected an ISO 3166 alpha-2 code (two letters)');
    expect(message('anonymity=high')).toBe('anonymity: expected one of elite, anonymous, transparent');
    expect(message('https=1')).toBe('https: expected one of true, false');
    expect(message('max_latency_ms=-1')).toBe('max_latency_ms: expected a whole number of milliseconds');
    expect(message('max_latency_ms=99999999999')).toBe('max_latency_ms: expected a whole number of milliseconds');
    for (const u of ['1.5', '-0.1', '2', 'abc', '', '.', '1e-1', '0x1']) expect(message(`min_uptime=${u}`)).toBe('min_uptime: expected a number from 0 to 1');
    expect(message('sort=fastest')).toBe('sort: expected one of latency, uptime, checked');
    for (const l of ['0', '10001', '5.5', '']) expect(message(`limit=${l}`)).toBe('limit: expected an integer from 1 to 10000');
    expect(message('cursor=abc')).toBe('cursor: not a next_cursor of this listing');
    expect(message(`cursor=${encodeCursor({ sort: 'checked', key: '2026-01-01T00:00:00.000000', id: 1 })}`)).toBe('cursor: belongs to sort=checked, not sort=latency');
    expect(message('format=xml')).toBe('format: expected one of json, txt, csv');
    expect(message('status=all&status=working')).toBe('status: expected a single value, given 2 times');
    for (const t of ['Shop', '', 'a_b', 'a'.repeat(33)]) expect(message(`target=${t}`)).toBe('target: expected a target name (1 to 32 of a-z, 0-9 and -)');
    expect(message('target=a&target=b')).toBe('target: expected a single value, given 2 times');
  });

  test('target: a name (whether the pool has it is the route\'s 400)', () => {
    expect(v('target=shop-example')).toEqual({ ...DEFAULT_PROXIES_QUERY, target: 'shop-example' });
    expect(v('target=a-b&format=txt&scheme=true')).toMatchObject({ target: 'a-b', format: 'txt', scheme: true, all: true });
  });

  test('txt and csv without limit list every match, in pages of 10 000; json keeps its pages (DECISIONS "Mixed lists")', () => {
    expect(v('format=txt')).toMatchObject({ all: true, limit: 10000 });
    expect(v('format=csv&status=all')).toMatchObject({ all: true, limit: 10000 });
    expect(v('format=txt&limit=5')).toMatchObject({ limit: 5 });
    expect('all' in v('format=txt&limit=5')).toBe(false);
    expect('all' in v('format=json')).toBe(false);
    expect(v('').limit).toBe(100);
  });

  test('scheme: true or false, else 400 naming it', () => {
    expect(v('format=txt&scheme=true').scheme).toBe(true);
    expect(v('format=txt&scheme=false').scheme).toBe(false);
    for (const bad of ['1', 'yes', '', 'True']) expect(message(`format=txt&scheme=${bad}`)).toBe('scheme: expected true or false');
    expect(message('scheme=true&scheme=false')).toBe('scheme: expected a single value, given 2 times');
  });

  test('type: the contract body of a bad proxy type', () => {
    try {
      v('type=auto');
      throw new Error('no error');
    } catch (e) {
      expect((e as ApiError).body).toMatchObject({ error: 'Invalid proxy type', available_types: ['http', 'socks4', 'socks5'] });
    }
  });

  test('property: any query string gives a valid query or a 400, nothing else', () => {
    const names = fc.constantFrom('status', 'country', 'anonymity', 'type', 'https', 'max_latency_ms', 'min_uptime', 'sort', 'limit', 'cursor', 'format', 'scheme', 'x');
    const values = fc.oneof(fc.string(), fc.constantFrom('all', 'DE', 'elite', 'http', 'true', 'false', '100', '0.5', 'checked', 'csv', 'txt'), fc.constantFrom(...PROXY_SORTS).map((s) => encodeCursor({ sort: s, key: s === 'checked' ? '2026-01-01T00:00:00.000000' : '5', id: 3 })));
    fc.assert(
      fc.property(fc.array(fc.tuple(names, values), { maxLength: 8 }), (pairs) => {
        const qs = new URLSearchParams(pairs);
        try {
          const q = validateProxiesQuery(qs);
          expect(q.limit).toBeGreaterThanOrEqual(1);
          expect(q.limit).toBeLessThanOrEqual(10000);
          if (q.cursor !== null) expect(q.cursor.sort).toBe(q.sort);
          if (q.minUptime !== null) expect(q.minUptime >= 0 && q.minUptime <= 1).toBe(true);
          if (q.country !== null) expect(q.country).toMatch(/^[A-Z]{2}$/);
          // txt and csv without limit: every match (pages of 10 000); json never
          if (q.all === true) expect([q.format !== 'json', q.limit, qs.has('limit')]).toEqual([true, 10000, false]);
          if (q.format !== 'json' && !qs.has('limit')) expect(q.all).toBe(true);
          if (q.scheme !== undefined) expect(qs.get('scheme')).toBe(String(q.scheme));
        } catch (e) {
          if (!(e instanceof ApiError) || e.status !== 400) throw e;
        }
      }),
      { numRuns: 2000 },
    );
  });
});
