/** The pool object and the pool proxy object (src/pools/shape.ts), and rows from either driver. */
import { describe, expect, test } from 'bun:test';
import { foldHistory } from '../../src/pools/history';
import { addressObject, poolObject, poolProxyObject, poolRowFromSql, protocolsMask, protocolsOfMask, rowFromSql, type PoolProxyRow, type PoolRow } from '../../src/pools/shape';

const NOW = Date.UTC(2026, 5, 1, 12);

const row = (over: Partial<PoolProxyRow> = {}): PoolProxyRow => ({
  id: 7,
  host: '1.2.3.4',
  port: 8080,
  username: '',
  password: '',
  format: 'standard',
  status: 'working',
  failures: 0,
  checks: 3,
  type: 'http',
  protocols: 1,
  anonymity: 'elite',
  https: true,
  origin: '1.2.3.4',
  country: 'DE',
  countryName: 'Germany',
  location: 'Berlin',
  isp: 'Example',
  asn: 64500,
  statusCode: 200,
  responseTimeMs: 123.456,
  errorCode: null,
  errorMessage: null,
  latencyP50Ms: 120,
  uptimeH24Ppm: 1_000_000,
  history: foldHistory(foldHistory(null, { passed: true, latencyMs: 120 }, NOW - 60_000), { passed: false }, NOW - 30_000),
  firstSeenAt: new Date(NOW - 3_600_000),
  lastCheckedAt: new Date(NOW - 30_000),
  lastChangeAt: new Date(NOW - 3_000_000),
  nextCheckAt: new Date(NOW + 500_000),
  ...over,
});

describe('pool proxy object', () => {
  test('every contract field, uptime and p50 read from the history at now', () => {
    expect(poolProxyObject(row(), 'http', NOW)).toEqual({
      proxy: { host: '1.2.3.4', port: 8080, hasAuth: false },
      status: 'working',
      type: 'http',
      anonymity: 'elite',
      https: true,
      origin: '1.2.3.4',
      country: 'DE',
      country_name: 'Germany',
      location: 'Berlin',
      isp: 'Example',
      asn: 64500,
      responseTime: '123.46 ms',
      latency_p50_ms: 120,
      uptime: { h1: 0.5, h24: 0.5, d7: 0.5 },
      checks: 3,
      first_seen_at: new Date(NOW - 3_600_000).toISOString(),
      last_checked_at: new Date(NOW - 30_000).toISOString(),
      last_change_at: new Date(NOW - 3_000_000).toISOString(),
      next_check_at: new Date(NOW + 500_000).toISOString(),
    });
  });

  test('credentials; error while failed; unchecked has nulls', () => {
    const o = poolProxyObject(row({ username: 'u', password: '', status: 'failed', errorCode: 'connect_refused', errorMessage: 'refused' }), 'socks5', NOW);
    expect(o.proxy).toEqual({ host: '1.2.3.4', port: 8080, hasAuth: true, username: 'u', password: '' });
    expect(o.error).toEqual({ code: 'connect_refused', message: 'refused' });
    expect(o.type).toBe('socks5');
    expect(o.country).toBe('DE'); // the last passing check's
    const u = poolProxyObject(row({ status: 'unchecked', responseTimeMs: null, lastCheckedAt: null, lastChangeAt: null, history: null }), 'http', NOW);
    expect(u.responseTime).toBeNull();
    expect(u.uptime).toEqual({ h1: null, h24: null, d7: null });
    expect(u.latency_p50_ms).toBeNull();
    expect(u.last_checked_at).toBeNull();
    expect(u).not.toHaveProperty('error');
  });

  test('auto pools: the passing type and protocols; other pools have no protocols key', () => {
    const o = poolProxyObject(row({ type: 'socks5', protocols: protocolsMask(['socks4', 'socks5']) }), 'auto', NOW);
    expect(o.type).toBe('socks5');
    expect(o.protocols).toEqual(['socks5', 'socks4']);
    expect(poolProxyObject(row({ status: 'failed', type: null, protocols: 0 }), 'auto', NOW).protocols).toEqual([]);
    expect(poolProxyObject(row({ status: 'failed', type: 'socks4', protocols: 2 }), 'auto', NOW)).toMatchObject({ type: 'socks4', protocols: ['socks4'] });
    expect(poolProxyObject(row(), 'http', NOW)).not.toHaveProperty('protocols');
  });

  test('protocol masks round-trip in the records order', () => {
    expect(protocolsOfMask(protocolsMask(['http', 'socks5']))).toEqual(['socks5', 'http']);
    expect(protocolsOfMask(0)).toEqual([]);
    expect(protocolsOfMask(7)).toEqual(['socks5', 'socks4', 'http']);
  });

  test('addressObject: hasAuth and both credentials, or neither', () => {
    expect(addressObject({ host: 'h', port: 1 })).toEqual({ host: 'h', port: 1, hasAuth: false });
    expect(addressObject({ host: 'h', port: 1, username: 'a' })).toEqual({ host: 'h', port: 1, hasAuth: true, username: 'a', password: '' });
  });
});

describe('rowFromSql', () => {
  test('strings for numbers, text timestamps, bytea as Buffer or its \\x text, null fields', () => {
    const h = foldHistory(null, { passed: true, latencyMs: 50 }, NOW);
    const raw = {
      id: '12',
      host: 'h',
      port: 80,
      username: '',
      password: '',
      format: 'standard',
      status: 'working',
      failures: 0,
      checks: '4',
      type: 'http',
      protocols: 1,
      anonymity: 'elite',
      https: 't',
      origin: null,
      country: null,
      country_name: null,
      location: null,
      isp: null,
      asn: null,
      status_code: 200,
      response_time_ms: '12.5',
      error_code: null,
      error_message: null,
      latency_p50_ms: 50,
      uptime_h24_ppm: 1000000,
      history: `\\x${Buffer.from(h).toString('hex')}`,
      first_seen_at: '2026-06-01 10:00:00+00',
      last_checked_at: new Date(NOW),
      last_change_at: null,
      next_check_at: '2026-06-01T12:10:00.000Z',
    };
    const r = rowFromSql(raw);
    expect(r).toMatchObject({ id: 12, checks: 4, https: true, responseTimeMs: 12.5, lastChangeAt: null });
    expect(r.history).toEqual(h);
    expect(r.firstSeenAt.toISOString()).toBe('2026-06-01T10:00:00.000Z');
    expect(rowFromSql({ ...raw, history: Buffer.from(h) }).history).toEqual(Buffer.from(h));
  });
});

describe('pool object', () => {
  const pool: PoolRow = {
    id: 'abcdefghij',
    accountId: 'acc',
    name: 'mine',
    type: 'auto',
    region: 'us1',
    intervalS: 300,
    timeoutMs: 5000,
    https: true,
    customUrls: [{ name: 'example-com', url: 'https://example.com/', requiredStatusCodes: [200], caseSensitive: false }],
    sources: [{ url: 'https://lists.example/x.txt', everyS: 3600 }],
    sourceStates: [{ nextFetchAt: null, lastFetch: null }],
    state: 'active',
    pausedReason: null,
    createdAt: new Date(NOW - 86_400_000),
    lastRoundAt: new Date(NOW - 10_000),
  };
  const stats = { counts: { total: 3, working: 1, failed: 1, unchecked: 1 }, nextDueAt: new Date(NOW + 1000), checksLast24h: 40, checksPerDay: 911.6 };

  test('every contract field (and customUrls, sources)', () => {
    expect(poolObject(pool, stats)).toEqual({
      id: 'abcdefghij',
      name: 'mine',
      type: 'auto',
      region: 'us1',
      interval_s: 300,
      timeout: 5000,
      https: true,
      state: 'active',
      paused_reason: null,
      created_at: new Date(NOW - 86_400_000).toISOString(),
      counts: { total: 3, working: 1, failed: 1, unchecked: 1, targets: { 'example-com': 0 } },
      last_round_at: new Date(NOW - 10_000).toISOString(),
      next_due_at: new Date(NOW + 1000).toISOString(),
      checks_last_24h: 40,
      checks_per_day: 912,
      customUrls: [{ name: 'example-com', url: 'https://example.com/', requiredStatusCodes: [200], caseSensitive: false }],
      sources: [{ url: 'https://lists.example/x.txt', every_s: 3600, next_fetch_at: null, last_fetch: null }],
    });
  });

  test("a source's state: its next fetch and its last outcome, read back from the row's jsonb", () => {
    const last = { at: new Date(NOW).toISOString(), error: null, found: 5, invalid: 1, added: 3, not_added: 2, limit: 'proxies_per_pool' as const };
    const next = new Date(NOW + 3_600_000).toISOString();
    const raw = {
      id: 'abcdefghij', account_id: 'acc', name: 'mine', type: 'http', region: 'us1', interval_s: 300, timeout_ms: 5000, https: true,
      custom_urls: '[]', state: 'active', paused_reason: null, created_at: new Date(NOW), last_round_at: null,
      sources: JSON.stringify([{ url: 'https://a.example/l.txt', every_s: 600, next_fetch_at: next, last_fetch: last }, { url: 'https://b.example/', every_s: 300 }]),
    };
    const o = poolObject(poolRowFromSql(raw), stats);
    expect(o.sources).toEqual([
      { url: 'https://a.example/l.txt', every_s: 600, next_fetch_at: next, last_fetch: last },
      { url: 'https://b.example/', every_s: 300, next_fetch_at: null, last_fetch: null },
    ]);
  });

  test('paused: its reason, and nothing is due', () => {
    const o = poolObject({ ...pool, state: 'paused', pausedReason: 'insufficient_checks' }, stats);
    expect(o.paused_reason).toBe('insufficient_checks');
    expect(o.next_due_at).toBeNull();
    expect(poolObject({ ...pool, pausedReason: 'owner' }, stats).paused_reason).toBeNull();
  });
});
