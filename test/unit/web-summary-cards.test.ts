/** Tests for src/web/client/summary-cards.ts: the results view's summary cards (protocols, rotating, lying proxies). */
import { describe, expect, test } from 'bun:test';
import { summaryCards } from '../../src/web/client/summary-cards';

const metadata = { region_used: 'us1', region_name: 'Washington DC, USA', proxy_type: 'auto', timeout_used: '1000ms', total_checked: 1200, processing_time: '1.50s' };

describe('summaryCards', () => {
  test('a plain check on one machine: the region is the code and this machine, not a city; then the lying count (0)', () => {
    const c = summaryCards({ summary: { total_working: 3 }, metadata: { ...metadata, proxy_type: 'http', total_invalid: 1, total_duplicates: 2 } }, 0);
    expect(c.map((x) => [x.label, x.value])).toEqual([
      ['Working', '3 of 1,200'],
      ['Region', 'us1, probed from this machine'],
      ['Type', 'HTTP'],
      ['Timeout', '1000ms'],
      ['Took', '1.50s'],
      ['Skipped', '1 invalid, 2 duplicate'],
      ['Lying proxies', '0'],
    ]);
    expect(c.every((x) => x.cls === undefined)).toBe(true);
  });

  test("in a cluster the region's name: its agents probe from there", () => {
    const c = summaryCards({ summary: { total_working: 3 }, metadata }, 0, { cluster: true, judgeReach: null });
    expect(c.find((x) => x.label === 'Region')?.value).toBe('Washington DC, USA');
  });

  test('auto + samples: protocols and rotating cards; a non-zero lying count is an alert', () => {
    const c = summaryCards({ summary: { total_working: 1000, protocols: { http: 900, socks5: 1100 }, rotating: 12 }, metadata }, 3);
    expect(c.find((x) => x.label === 'Protocols')?.value).toBe('HTTP 900 · SOCKS4 0 · SOCKS5 1,100');
    expect(c.find((x) => x.label === 'Rotating')?.value).toBe('12 of 1,000 working');
    expect(c.find((x) => x.label === 'Lying proxies')).toEqual({ label: 'Lying proxies', value: '3', cls: 'alert' });
    expect(c.find((x) => x.label === 'Type')?.value).toBe('AUTO');
  });

  test('records not read: no lying card (the count is unknown); no metadata: placeholders', () => {
    const c = summaryCards({ summary: { total_working: 0 }, proxies: [{}, {}] }, null);
    expect(c.map((x) => x.label)).toEqual(['Working', 'Region', 'Type', 'Timeout', 'Took']);
    expect(c[0]!.value).toBe('0 of 2');
    expect(c[2]!.value).toBe('—');
  });
});
