/** The Pools page's pure helpers (src/web/client/pool-format.ts): texts, the create form, the listing's query, escaped markup. */
import { describe, expect, test } from 'bun:test';
import {
  applyPoolEvent,
  changesProxies,
  isPoolEvent,
  MAX_LIVE_EVENTS,
  poolEventHtml,
  poolEventText,
  type PoolEventView,
  downloadName,
  dueText,
  intervalText,
  poolCards,
  poolCreateBody,
  poolGatewayUrls,
  poolRowHtml,
  poolWarningTexts,
  protocolText,
  proxiesQuery,
  proxyRowHtml,
  targetCellHtml,
  targetHeadHtml,
  relativeTime,
  stateText,
  uptimeText,
  type PoolProxyView,
  type PoolView,
} from '../../src/web/client/pool-format';
import { poolObjectFixture } from '../helpers/pool-object';

const NOW = Date.UTC(2026, 10, 22, 10);
const at = (ms: number) => new Date(NOW + ms).toISOString();
const pool: PoolView = poolObjectFixture(NOW, { id: 'abcdefghij0123456789', name: 'my <list> & "more"', next_due_at: at(240_000), checks_per_day: 150_000 });
const proxy: PoolProxyView = {
  proxy: { host: '203.0.113.7', port: 8080, hasAuth: true, username: 'u<1>' },
  status: 'failed',
  error: { code: 'timeout', message: 'no "answer"' },
  type: 'http',
  anonymity: null,
  https: null,
  origin: null,
  country: 'DE',
  country_name: 'Germany',
  location: null,
  isp: null,
  asn: null,
  responseTime: null,
  latency_p50_ms: 1234,
  uptime: { h1: 0, h24: 0.9613, d7: null },
  checks: 12,
  first_seen_at: at(-86_400_000),
  last_checked_at: at(-5000),
  last_change_at: at(-7_200_000),
  next_check_at: at(60_000),
};

describe('texts', () => {
  test('state, interval, relative times, due, uptime', () => {
    expect([stateText(pool), stateText({ state: 'paused', paused_reason: 'owner' }), stateText({ state: 'paused', paused_reason: 'insufficient_checks' })]).toEqual([
      'Active',
      'Paused',
      'Paused: not enough checks',
    ]);
    expect([45, 600, 5400, 86_400, 172_800].map(intervalText)).toEqual(['45 s', '10 min', '1.5 h', '1 day', '2 days']);
    expect([relativeTime(at(240_000), NOW), relativeTime(at(-5000), NOW), relativeTime(at(-7_200_000), NOW), relativeTime(at(0), NOW), relativeTime(null, NOW), relativeTime('x', NOW)]).toEqual([
      'in 4 min',
      '5 s ago',
      '2 h ago',
      'now',
      '—',
      '—',
    ]);
    expect([dueText(at(-1000), NOW), dueText(at(240_000), NOW), dueText(null, NOW)]).toEqual(['due now', 'in 4 min', '—']);
    expect([uptimeText(1), uptimeText(0.9613), uptimeText(0), uptimeText(null)]).toEqual(['100.0%', '96.1%', '0.0%', '—']);
  });
});

describe('the create form', () => {
  const ok = { name: ' mine ', proxies: '# c\n1.1.1.1:80\n\nu:p@2.2.2.2:81\n', type: 'socks5', region: 'de1', interval: '300', timeout: '3000' };
  test('a body with the list parsed as the check form parses it', () => {
    expect(poolCreateBody(ok)).toEqual({ body: { name: 'mine', proxies: ['1.1.1.1:80', 'u:p@2.2.2.2:81'], type: 'socks5', region: 'de1', interval_s: 300, timeout: 3000 } });
  });
  test('the first problem and its field', () => {
    expect(poolCreateBody({ ...ok, name: '  ' })).toEqual({ error: 'Give the pool a name.', field: 'name' });
    expect(poolCreateBody({ ...ok, name: 'x'.repeat(101) })).toMatchObject({ field: 'name' });
    expect(poolCreateBody({ ...ok, proxies: '# only a comment\n' })).toEqual({ error: 'Paste at least one proxy, one per line.', field: 'proxies' });
    for (const interval of ['', '0', '1.5', '86401', 'x']) expect(poolCreateBody({ ...ok, interval })).toMatchObject({ field: 'interval' });
    for (const timeout of ['999', '20001', '']) expect(poolCreateBody({ ...ok, timeout })).toMatchObject({ field: 'timeout' });
  });
});

describe('the listing', () => {
  const none = { status: '', country: '', anonymity: '', type: '', https: '', sort: '' };
  test('query: only what is set; all for no status; a country only when it is two letters', () => {
    expect(proxiesQuery(none, { format: 'json', limit: 50 })).toBe('status=all&limit=50&format=json');
    expect(proxiesQuery({ status: 'working', country: ' de ', anonymity: 'elite', type: 'socks5', https: 'true', sort: 'uptime' }, { format: 'txt', limit: 10000, cursor: 'abc' })).toBe(
      'status=working&country=DE&anonymity=elite&type=socks5&https=true&sort=uptime&limit=10000&cursor=abc&format=txt',
    );
    expect(proxiesQuery({ ...none, country: 'Ger' }, { format: 'csv', limit: 1 })).toBe('status=all&limit=1&format=csv');
  });
  test('download names', () => {
    expect(downloadName('My List (EU)', 'working', 'txt')).toBe('my-list-eu-working.txt');
    expect(downloadName('***', '', 'csv')).toBe('pool-all.csv');
  });
});

describe('markup is escaped', () => {
  test('a pool row: link, badge, counts, due, actions', () => {
    const html = poolRowHtml(pool, NOW);
    expect(html).toContain('<a href="#/pools/abcdefghij0123456789">my &lt;list&gt; &amp; &quot;more&quot;</a>');
    expect(html).toContain('<td class="num">1,200</td>');
    expect(html).toContain('<td>in 4 min</td>');
    expect(html).toContain('data-act="pause"');
    expect(html).not.toContain('<list>');
    expect(poolRowHtml({ ...pool, state: 'paused', paused_reason: 'owner' }, NOW)).toContain('data-act="resume"');
  });
  test('a proxy row: address without the password, uptimes, latency, error with its message', () => {
    const html = proxyRowHtml(proxy, NOW);
    expect(html).toContain('<td class="mono">u&lt;1&gt;@203.0.113.7:8080</td>');
    expect(html).toContain('<span class="badge bad">failed</span></td><td>http</td>');
    expect(html).toContain('<td class="num">96.1%</td><td class="num">—</td><td class="num">1,234 ms</td>');
    expect(html).toContain('<td>2 h ago</td><td>Germany</td>');
    expect(html).toContain('<code>timeout</code> <span class="err-msg" title="no &quot;answer&quot;">no &quot;answer&quot;</span>');
  });
  test('targets: a column per target of the pool (passes / fails with the status seen, — not fetched yet); the filter in the query', () => {
    const seen = { responseTime: '12.00 ms', last_checked_at: null, uptime_h24: null };
    const html = proxyRowHtml({ ...proxy, targets: { shop: { ok: true, status: 200, ...seen }, 'a<b': { ok: false, status: 403, ...seen } } }, NOW, ['shop', 'a<b', 'news']);
    expect(html).toContain('<td><span class="badge ok">passes 200</span></td><td><span class="badge bad">fails 403</span></td><td class="muted">—</td><td class="err">');
    expect(proxyRowHtml(proxy, NOW)).not.toContain('passes');
    expect(targetCellHtml({ ok: false, status: null })).toBe('<td><span class="badge bad">fails</span></td>');
    expect(targetHeadHtml(['shop', 'a<b'])).toBe('<th scope="col">Target shop</th><th scope="col">Target a&lt;b</th>');
    expect(proxiesQuery({ status: 'working', country: '', anonymity: '', type: '', https: '', sort: '', target: 'shop' }, { format: 'json', limit: 50 })).toBe('status=working&target=shop&limit=50&format=json');
  });
  test('cards', () => {
    expect(poolCards(pool, NOW)).toEqual([
      ['Working now', '800 of 1,200'],
      ['Failed', '300'],
      ['Not checked yet', '100'],
      ['State', 'Active'],
      ['Checked every', '10 min (http, us1)'],
      ['Next check', 'in 4 min'],
      ['Checks per day', '150,000'],
    ]);
  });
});

describe('protocol, warnings, gateway', () => {
  test('the protocol column: what a working proxy passed as, else its type, else a dash', () => {
    expect(protocolText({ status: 'working', type: 'socks5', protocols: ['socks5', 'socks4'] })).toBe('socks5 socks4');
    expect(protocolText({ status: 'working', type: 'http' })).toBe('http');
    expect(protocolText({ status: 'failed', type: 'http', protocols: [] })).toBe('http');
    expect(protocolText({ status: 'unchecked', type: null })).toBe('—');
  });

  test("a create / PATCH answer's warnings: the message, else the code and the hours left", () => {
    expect(poolWarningTexts({ warnings: [{ code: 'balance_runs_out', message: 'The balance lasts about 3 hours.', hours_left: 3.2 }] })).toEqual(['The balance lasts about 3 hours.']);
    expect(poolWarningTexts({ warnings: [{ code: 'balance_runs_out', hours_left: 26.4 }, 'x', null] })).toEqual(['balance_runs_out: about 26 hours of checks left']);
    expect(poolWarningTexts({ id: 'p' })).toEqual([]);
    expect(poolWarningTexts(null)).toEqual([]);
  });

  test("the gateway's URLs for a pool: its host, else the page's; none without a gateway", () => {
    expect(poolGatewayUrls({ host: null, port: 8000 }, 'example.test', 'abcdefghij', 'pc_k')).toEqual({
      http: 'http://pool-abcdefghij:pc_k@example.test:8000',
      socks5: 'socks5://pool-abcdefghij:pc_k@example.test:8000',
    });
    expect(poolGatewayUrls({ host: '10.0.0.5', port: 8000 }, 'example.test', 'abcdefghij', 'pc_k')?.http).toBe('http://pool-abcdefghij:pc_k@10.0.0.5:8000');
    expect(poolGatewayUrls({ host: null, port: 8000 }, '[::1]', 'abcdefghij', 'pc_k')?.socks5).toBe('socks5://pool-abcdefghij:pc_k@[::1]:8000');
    expect(poolGatewayUrls(null, 'example.test', 'abcdefghij', 'pc_k')).toBeNull();
  });
});

describe('live events (/ws?pool=)', () => {
  const pool: PoolView = poolObjectFixture(NOW, { id: 'poolaaaaaa1', counts: { total: 3, working: 3, failed: 0, unchecked: 0 }, last_round_at: null });
  const counts = { total: 3, working: 2, failed: 1, unchecked: 0 };
  const down: PoolEventView = { pool: 'poolaaaaaa1', event: 'proxy.down', at: '2026-11-26T12:00:05.000Z', proxy: { host: '10.0.0.1', port: 80, hasAuth: true, username: 'u<b>' }, counts, error: { code: 'timeout', message: 'no <answer>' } };

  test('isPoolEvent: only an event of this pool', () => {
    expect(isPoolEvent(down, 'poolaaaaaa1')).toBe(true);
    expect(isPoolEvent(down, 'poolbbbbbb2')).toBe(false);
    expect(isPoolEvent({ pool: 'poolaaaaaa1', event: 'proxy.down' }, 'poolaaaaaa1')).toBe(false);
    expect(isPoolEvent(null, 'poolaaaaaa1')).toBe(false);
  });

  test('applyPoolEvent: counts from the event; state on a pause and a resume; the round time', () => {
    expect(applyPoolEvent(pool, down).counts).toEqual(counts);
    const paused = applyPoolEvent(pool, { ...down, event: 'pool.paused', reason: 'insufficient_checks' });
    expect([paused.state, paused.paused_reason]).toEqual(['paused', 'insufficient_checks']);
    expect(applyPoolEvent(paused, { ...down, event: 'pool.resumed' })).toMatchObject({ state: 'active', paused_reason: null });
    expect(applyPoolEvent(pool, { ...down, event: 'round.completed' }).last_round_at).toBe(down.at);
    expect(pool.counts.working).toBe(3); // not changed in place
  });

  test('changesProxies and the list item (escaped, no password)', () => {
    expect(changesProxies(down)).toBe(true);
    expect(changesProxies({ ...down, event: 'pool.paused' })).toBe(false);
    const html = poolEventHtml(down);
    expect(html).toContain('class="pool-event down"');
    expect(html).toContain('u&lt;b&gt;@10.0.0.1:80 is down: no &lt;answer&gt;');
    expect(poolEventText({ ...down, event: 'round.completed', round: { checked: 3, working: 2, failed: 1, not_tried: 0, charged: 3 } }).text).toBe('Round: 3 checked, 2 working, 1 failed');
    expect(poolEventText({ ...down, event: 'pool.paused', reason: 'owner' }).text).toBe('Paused by you');
    expect(poolEventText({ ...down, event: 'proxy.up', responseTime: '12.00 ms' }).text).toBe('u<b>@10.0.0.1:80 is up (12.00 ms)');
    expect(MAX_LIVE_EVENTS).toBe(20);
  });
});
