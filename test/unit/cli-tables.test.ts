/** Tests for src/cli/tables.ts: aligned tables, the check summary, the usage chart, me / regions / health pages. */
import { describe, expect, test } from 'bun:test';
import type { CheckResponseBody, MeBody } from '../../src/cli/api-client';
import { fmtUptime, pct, renderFailures, renderHealth, renderMe, renderRegions, renderSummary, table, topEntries, usageChart } from '../../src/cli/tables';

const response: CheckResponseBody = {
  summary: {
    total_working: 600,
    countries: { Germany: 300, 'United States': 200, France: 50, Japan: 20, Brazil: 20, Unknown: 10 },
    anonymity_levels: { elite: 300, anonymous: 200, transparent: 100 },
    top_isps: { 'Hetzner Online GmbH': 300, 'Example AS': 300 },
  },
  metadata: {
    user: { email: 'a@b.c', checks_used: 1000, remaining_checks: 9000, subscription_detail: { UnlimitedPro: false } },
    region_used: 'us1',
    region_name: 'Washington DC, USA',
    proxy_type: 'http',
    timeout_used: '2000ms',
    total_checked: 1000,
    total_invalid: 2,
    total_duplicates: 1,
    processing_time: '3.21s',
    job_id: 'j',
  },
  result_url: 'http://x/result/a.json?token=t&expires=1',
};

describe('table', () => {
  test('aligns left/right, header rule, indent', () => {
    expect(table([['a', 'n'], ['long', '1'], ['b', '100']], ['l', 'r'], { header: true })).toBe(
      ['  a       n', '  ----  ---', '  long    1', '  b     100'].join('\n'),
    );
    expect(table([['x', 'y']], ['l', 'l'], { indent: '' })).toBe('x  y');
  });

  test('ANSI colour codes do not count as width', () => {
    expect(table([['\x1b[32mok\x1b[0m', 'x'], ['long', 'y']], ['l', 'l'], { indent: '' })).toBe('\x1b[32mok\x1b[0m    x\nlong  y');
  });
});

describe('topEntries and pct', () => {
  test('largest first, ties by name, n at most', () => {
    expect(topEntries({ b: 2, a: 2, c: 5, d: 1 }, 3)).toEqual([['c', 5], ['a', 2], ['b', 2]]);
    expect(pct(1, 3)).toBe('33.3%');
    expect(pct(1, 0)).toBe('0.0%');
  });
});

describe('renderSummary', () => {
  test('working/total, skipped, anonymity split, top countries and ISPs, checks left', () => {
    const s = renderSummary(response, { color: false });
    expect(s).toBe(
      [
        'Checked 1,000 proxies [http, us1 (Washington DC, USA), timeout 2000ms] in 3.21s',
        'Working: 600 / 1,000 (60.0%)   skipped: 2 invalid, 1 duplicate',
        '',
        '  Anonymity    proxies  share',
        '  -----------  -------  -----',
        '  elite            300  50.0%',
        '  anonymous        200  33.3%',
        '  transparent      100  16.7%',
        '',
        '  Top countries  proxies  share',
        '  -------------  -------  -----',
        '  Germany            300  50.0%',
        '  United States      200  33.3%',
        '  France              50   8.3%',
        '  Brazil              20   3.3%',
        '  Japan               20   3.3%',
        '  … and 1 more',
        '',
        '  Top ISPs             proxies  share',
        '  -------------------  -------  -----',
        '  Example AS               300  50.0%',
        '  Hetzner Online GmbH      300  50.0%',
        '',
        'Checks left: 9,000',
      ].join('\n'),
    );
  });

  test('type auto: a protocols split after the ISPs; samples: the rotating count under the working line', () => {
    const auto: CheckResponseBody = {
      ...response,
      summary: { ...response.summary, protocols: { http: 450, socks4: 30, socks5: 120 }, rotating: 42 },
      metadata: { ...response.metadata, proxy_type: 'auto' },
    };
    const lines = renderSummary(auto, { color: false }).split('\n');
    expect(lines[0]).toBe('Checked 1,000 proxies [auto, us1 (Washington DC, USA), timeout 2000ms] in 3.21s');
    expect(lines[2]).toBe('Rotating: 42 / 600 working (more than one exit address across the samples)');
    const at = lines.indexOf('  Protocols  proxies  share');
    expect(at).toBeGreaterThan(lines.findIndex((l) => l.startsWith('  Top ISPs')));
    expect(lines.slice(at + 1, at + 5)).toEqual(['  ---------  -------  -----', '  http           450  75.0%', '  socks4          30   5.0%', '  socks5         120  20.0%']);
    // the plain response's rendering has neither
    const plain = renderSummary(response, { color: false });
    expect(plain).not.toContain('Rotating');
    expect(plain).not.toContain('Protocols');
    // one machine: the region is a name, its probes come from this machine
    expect(renderSummary(response, { color: false, oneMachine: true }).split('\n')[0]).toBe('Checked 1,000 proxies [http, us1 (probed from this machine), timeout 2000ms] in 3.21s');
    // rotating 0 is still said (a sampled check where nothing rotates)
    expect(renderSummary({ ...response, summary: { ...response.summary, rotating: 0 } }, { color: false })).toContain('Rotating: 0 / 600 working');
  });

  test('nothing working: no tables; colour marks the count; UnlimitedPro noted', () => {
    const r: CheckResponseBody = {
      ...response,
      summary: { total_working: 0, countries: {}, anonymity_levels: { elite: 0, anonymous: 0, transparent: 0 }, top_isps: {} },
      metadata: { total_checked: 1, user: { remaining_checks: 5, subscription_detail: { UnlimitedPro: true } } },
    };
    const s = renderSummary(r, { color: true });
    expect(s).toContain('Working: \x1b[31m0\x1b[0m / 1 (0.0%)');
    expect(s).not.toContain('Anonymity');
    expect(s).toContain('Checked 1 proxy in ?');
    expect(s).toContain('Checks left: 5 (UnlimitedPro: not charged)');
  });

  test('summary.errors: a table of the failures per code, most frequent first, share of the failed; none without it', () => {
    const r: CheckResponseBody = {
      ...response,
      summary: { ...response.summary, errors: { timeout: 100, connect_refused: 250, blocked_target: 0, http_status: 50 } },
    };
    expect(renderSummary(r, { color: false })).toContain(
      [
        '  Failed because   proxies  share',
        '  ---------------  -------  -----',
        '  connect_refused      250  62.5%',
        '  timeout              100  25.0%',
        '  http_status           50  12.5%',
      ].join('\n'),
    );
    expect(renderSummary(response, { color: false })).not.toContain('Failed because');
    expect(renderFailures({}, 5)).toBe('');
    expect(renderFailures(undefined, 5)).toBe('');
    // more codes than rows: the rest summed in one line
    const many = renderFailures({ a: 5, b: 4, c: 3, d: 2, e: 1 }, 3).split('\n');
    expect(many.at(-1)).toBe('  2 other codes         3  20.0%');
    expect(many).toHaveLength(6);
  });
});

describe('usageChart', () => {
  const days = Array.from({ length: 30 }, (_, i) => ({ day: `2026-11-${String(i + 1).padStart(2, '0')}`, total_checked: i === 29 ? 80 : i === 10 ? 10 : i === 5 ? 1 : 0 }));

  test('one column per day, scaled to the maximum, non-zero days visible, axis and dates', () => {
    const lines = usageChart(days, { height: 4 }).split('\n');
    expect(lines).toHaveLength(6);
    expect(lines[0]).toBe('  80 │                             █');
    expect(lines[3]).toBe('   0 │     ▁    ▄                  █');
    expect(lines[4]).toBe('     └──────────────────────────────');
    expect(lines[5]).toBe('      11-01                    11-30');
  });

  test('ascii and all-zero', () => {
    const a = usageChart(days, { height: 2, ascii: true }).split('\n');
    expect(a[0]).toBe('  80 |                             #');
    expect(a[1]).toBe('   0 |     #    #                  #');
    expect(a[2]).toBe('     +------------------------------');
    const z = usageChart(days.map((d) => ({ ...d, total_checked: 0 })), { height: 2 }).split('\n');
    expect(z[0]).toBe('  0 │');
  });
});

describe('renderMe', () => {
  const me: MeBody = {
    user: { id: 'u-1', email: 'a@b.c', checks: 997, breakdown: { root_balance: 990, temp_balance: 7 }, subscription_detail: { UnlimitedPro: true, unlimited_expired_at: '2027-01-01T00:00:00.000Z' } },
    history: [
      { id: 2, total_checked: 3, total_working: 2, result_url: 'http://x/result/a.json?token=t&expires=1', proxy_type: 'http', scanned_at: '2026-11-22T10:00:00.000Z', status: 'completed', error: null },
      { id: 1, total_checked: 4, total_working: 0, result_url: null, proxy_type: 'socks5', scanned_at: '2026-11-01T09:30:00.000Z', status: 'completed', error: null },
    ],
    history_count: 2,
    usage_last_30_days: [{ day: '2026-10-24', total_checked: 0 }, { day: '2026-11-22', total_checked: 7 }],
  };

  test('balance, plan, chart, history; links on request', () => {
    const s = renderMe(me, { links: false, ascii: false, now: new Date('2026-11-22T12:00:00Z') });
    expect(s).toContain('Account   a@b.c  (u-1)');
    expect(s).toContain('Balance   997 checks  (base 990, promotional 7)');
    expect(s).toContain('Plan      UnlimitedPro until 2027-01-01 (checks are not charged)');
    expect(s).toContain('Checks per day, last 2 days (UTC): 7 in total');
    expect(s).toContain('Recent checks (2 of 2)');
    expect(s).toContain('   2  2026-11-22 10:00  http          3        2  66.7%  available\n   1  2026-11-01 09:30  socks5        4        0   0.0%  expired');
    expect(s).toContain('proxycheck me --links');
    const l = renderMe(me, { links: true, ascii: false, now: new Date() });
    expect(l).toContain('     2  http://x/result/a.json?token=t&expires=1');
    const none = renderMe({ ...me, history: [], user: { email: 'z@z.z', remaining_checks: 1 } }, { links: false, ascii: true, now: new Date() });
    expect(none).toContain('Recent checks: none yet');
    expect(none).toContain('Plan      pay per check');
  });
});

describe('regions and health', () => {
  test('regions table marks the default and test1', () => {
    const s = renderRegions({ regions: [{ code: 'sg1', name: 'Singapore', endpoints: 16 }, { code: 'us1', name: 'Washington DC, USA', endpoints: 16 }, { code: 'test1', name: 'TEST - DO NOT USE', endpoints: 6 }], default: 'us1' });
    expect(s.split('\n')).toEqual([
      '  code   name                endpoints  note',
      '  -----  ------------------  ---------  --------------',
      '  sg1    Singapore                  16',
      '  us1    Washington DC, USA         16  default',
      '  test1  TEST - DO NOT USE           6  not for checks',
    ]);
    const one = renderRegions({ regions: [{ code: 'us1', name: 'Washington DC, USA', endpoints: 16 }], default: 'us1' }, true);
    expect(one).toContain('\n\nThis service runs on one machine: every region probes from this machine, whatever its name');
  });

  test('health and uptime', () => {
    expect(renderHealth({ status: 'ok', version: '0.1.0', uptime: 3725, regions: 19, database: 'ok', judge_reachable: 'this machine only', gateway: { host: null, port: 47002 } }, 'http://h:3000')).toBe(
      [
        'service   http://h:3000',
        'status    ok',
        'version   0.1.0',
        'uptime    1h 2m',
        'database  ok',
        'regions   19, all probed from this machine',
        'judge     reachable from this machine only',
        "gateway   h:47002 (`proxycheck pool gateway <id>` prints a pool's proxy URLs)",
      ].join('\n'),
    );
    const cluster = renderHealth({ status: 'ok', regions: 19, agents: [{}, {}], gateway: { host: '10.0.0.5', port: 8000 } }, 'http://h');
    expect(cluster).toContain('regions   19, 2 live region agents');
    expect(cluster).toContain('judge     at the address its operator set');
    expect(cluster).toContain('gateway   10.0.0.5:8000');
    expect(renderHealth({ status: 'ok' }, 'http://h')).toContain('gateway   off (the operator turns it on with GATEWAY_PORT)');
    expect(fmtUptime(9)).toBe('9s');
    expect(fmtUptime(125)).toBe('2m 5s');
    expect(fmtUptime(90000)).toBe('1d 1h');
  });
});
