/**
 * The dashboard's results-table model (src/web/client/table.ts): records ->
 * rows, filters, stable sort with empty values last, pagination.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { countryOptions, extraColumns, filterRows, isLying, paginate, parseResponseTime, sortRows, toRow, type ResultRecord } from '../../src/web/client/table';

const working = (host: string, port: number, ms: string, extra: Partial<ResultRecord> = {}): ResultRecord => ({
  proxy: { host, port, hasAuth: false },
  status: 'working',
  statusCode: 200,
  responseTime: ms,
  anonymity: 'elite',
  origin: host,
  country: null,
  country_name: null,
  location: null,
  isp: null,
  asn: null,
  coordinates: null,
  ...extra,
});
const failed = (host: string, port: number, code: string): ResultRecord => ({
  proxy: { host, port, hasAuth: false },
  status: 'failed',
  statusCode: null,
  responseTime: '1000.00 ms',
  anonymity: null,
  origin: null,
  error: { code, message: `${code} happened` },
});

const records: ResultRecord[] = [
  working('10.0.0.2', 8080, '120.50 ms', { country: 'DE', country_name: 'Germany', location: 'Berlin', isp: 'Hetzner', anonymity: 'anonymous' }),
  working('10.0.0.10', 3128, '15.00 ms', { country: 'FR', country_name: 'France', location: 'Paris', isp: 'OVH' }),
  failed('10.0.0.3', 80, 'timeout'),
  working('2001:db8::1', 1080, '60.00 ms', { country: 'DE', country_name: 'Germany', isp: 'Hetzner', anonymity: 'transparent' }),
  failed('10.0.0.1', 9999, 'connect_refused'),
  { ...working('10.0.0.4', 8000, '30.00 ms'), proxy: { host: '10.0.0.4', port: 8000, hasAuth: true, username: 'alice' } },
];
const rows = records.map(toRow);

describe('toRow', () => {
  test('flattens a record; brackets IPv6; shows the user, never the password', () => {
    expect(rows[0]).toMatchObject({ address: '10.0.0.2:8080', status: 'working', ms: 120.5, anonymity: 'anonymous', country: 'DE', countryName: 'Germany', city: 'Berlin', isp: 'Hetzner', error: '' });
    expect(rows[2]).toMatchObject({ address: '10.0.0.3:80', status: 'failed', anonymity: '', origin: '', error: 'timeout' });
    expect(rows[3]!.address).toBe('[2001:db8::1]:1080');
    expect(rows[5]!.address).toBe('alice@10.0.0.4:8000');
  });
  test('parseResponseTime', () => {
    expect(parseResponseTime('12.34 ms')).toBe(12.34);
    expect(parseResponseTime('7 ms')).toBe(7);
    expect(parseResponseTime('fast')).toBeNull();
    expect(parseResponseTime(null)).toBeNull();
  });
});

describe('filterRows', () => {
  test('by status, anonymity, country and unknown country', () => {
    expect(filterRows(rows, { status: 'failed' }).map((r) => r.error)).toEqual(['timeout', 'connect_refused']);
    expect(filterRows(rows, { anonymity: 'elite' })).toHaveLength(2);
    expect(filterRows(rows, { country: 'DE' })).toHaveLength(2);
    expect(filterRows(rows, { country: '-' })).toHaveLength(3);
    expect(filterRows(rows, {})).toHaveLength(rows.length);
  });
  test('free text: every word must match some column, case-insensitively (error messages too)', () => {
    expect(filterRows(rows, { text: 'hetzner BERLIN' }).map((r) => r.address)).toEqual(['10.0.0.2:8080']);
    expect(filterRows(rows, { text: 'happened' })).toHaveLength(2);
    expect(filterRows(rows, { text: '  ' })).toHaveLength(rows.length);
    expect(filterRows(rows, { text: 'nowhere' })).toHaveLength(0);
  });
});

describe('sortRows', () => {
  test('numbers ascending and descending; empty values last both ways', () => {
    expect(sortRows(rows, 'ms', 'ascending').map((r) => r.ms)).toEqual([15, 30, 60, 120.5, 1000, 1000]);
    const byCity = sortRows(rows, 'city', 'descending').map((r) => r.city);
    expect(byCity.slice(0, 2)).toEqual(['Paris', 'Berlin']);
    expect(byCity.slice(2).every((c) => c === '')).toBe(true);
    expect(sortRows(rows, 'city', 'ascending').slice(0, 2).map((r) => r.city)).toEqual(['Berlin', 'Paris']);
  });
  test('addresses sort numerically by IPv4 octets then port', () => {
    expect(sortRows(rows, 'address', 'ascending').map((r) => r.address)).toEqual([
      '10.0.0.1:9999',
      '10.0.0.2:8080',
      '10.0.0.3:80',
      'alice@10.0.0.4:8000',
      '10.0.0.10:3128',
      '[2001:db8::1]:1080',
    ]);
  });
  test('stable, does not mutate, and a permutation of its input', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 60 }), fc.constantFrom('ascending' as const, 'descending' as const), (ms, dir) => {
        const input = ms.map((m, i) => toRow(working(`10.0.${i >> 8}.${i & 255}`, 1000 + i, `${m}.00 ms`)));
        const copy = [...input];
        const out = sortRows(input, 'ms', dir);
        expect(input).toEqual(copy);
        expect(out.map((r) => r.address).sort()).toEqual(input.map((r) => r.address).sort());
        for (let i = 1; i < out.length; i++) {
          const a = out[i - 1]!;
          const b = out[i]!;
          const d = dir === 'ascending' ? b.ms! - a.ms! : a.ms! - b.ms!;
          expect(d).toBeGreaterThanOrEqual(0);
          if (d === 0) expect(input.indexOf(a)).toBeLessThan(input.indexOf(b));
        }
      }),
    );
  });
});

describe('paginate and countryOptions', () => {
  test('pages are clamped and report 1-based positions', () => {
    const xs = Array.from({ length: 120 }, (_, i) => i);
    expect(paginate(xs, 0, 50)).toMatchObject({ index: 0, pages: 3, first: 1, last: 50, total: 120 });
    expect(paginate(xs, 2, 50)).toMatchObject({ index: 2, first: 101, last: 120 });
    expect(paginate(xs, 9, 50).index).toBe(2);
    expect(paginate(xs, -1, 50).index).toBe(0);
    expect(paginate([], 0, 50)).toMatchObject({ items: [], pages: 1, first: 0, last: 0, total: 0 });
  });
  test('country options by name with counts, unknown left out', () => {
    expect(countryOptions(rows)).toEqual([
      { code: 'FR', name: 'France', count: 1 },
      { code: 'DE', name: 'Germany', count: 2 },
    ]);
  });
});

describe('auto, https, integrity and samples (the optional columns)', () => {
  const sampled = (n: number, ok: number, exits: number) => ({ count: n, succeeded: ok, unique_exit_ips: exits, exit_ips: [] });
  const ext: ResultRecord[] = [
    working('10.0.1.1', 8080, '20.00 ms', { type: 'http', protocols: ['http'], https: true, samples: sampled(3, 3, 3) }),
    working('10.0.1.2', 1080, '30.00 ms', { type: 'socks5', protocols: ['socks5', 'socks4'], https: false, samples: sampled(3, 2, 1) }),
    { ...failed('10.0.1.3', 80, 'tampered'), protocols: [], samples: sampled(3, 0, 0) },
    { ...failed('10.0.1.4', 443, 'tls_intercepted'), protocols: [], samples: sampled(3, 0, 0) },
    { ...failed('10.0.1.5', 81, 'judge_mismatch'), protocols: [], samples: sampled(3, 0, 0) },
  ];
  const xr = ext.map(toRow);

  test('rows carry protocols ("none" when none passed), https, the lying code, samples and exits', () => {
    expect(xr[0]).toMatchObject({ protocols: 'http', https: 'yes', integrity: '', samples: 3, succeeded: 3, exits: 3, rotating: true });
    expect(xr[1]).toMatchObject({ protocols: 'socks5 socks4', https: 'no', exits: 1, rotating: false });
    expect(xr[2]).toMatchObject({ protocols: 'none', https: '', integrity: 'tampered', error: 'tampered', errorMessage: 'tampered happened', exits: 0, rotating: false });
    expect(xr[3]!.integrity).toBe('tls_intercepted');
    expect(xr[4]!.integrity).toBe(''); // not a lie: the proxy answered something else
    // a plain record has none of them
    expect(rows[0]).toMatchObject({ protocols: '', https: '', integrity: '', samples: null, succeeded: null, exits: null, rotating: false });
    expect([isLying('tampered'), isLying('tls_intercepted'), isLying('timeout'), isLying(null)]).toEqual([true, true, false, false]);
  });

  test('extraColumns: each only when some row has its data; none for a plain job', () => {
    expect(extraColumns(xr)).toEqual({ protocols: true, https: true, integrity: true, rotation: true });
    expect(extraColumns(rows)).toEqual({ protocols: false, https: false, integrity: false, rotation: false });
    expect(extraColumns([toRow(failed('1.2.3.4', 1, 'tampered'))])).toEqual({ protocols: false, https: false, integrity: true, rotation: false });
    expect(extraColumns([toRow(working('1.2.3.4', 1, '1 ms', { https: false }))]).https).toBe(true);
    expect(extraColumns([toRow(working('1.2.3.4', 1, '1 ms', { https: null }))]).https).toBe(true);
  });

  test('filters: protocol (or none), https yes/no, lying only, rotating only; combined with the others', () => {
    const ports = (f: Parameters<typeof filterRows>[1]) => filterRows(xr, f).map((r) => Number(r.address.split(':')[1]));
    expect(ports({ protocol: 'socks4' })).toEqual([1080]);
    expect(ports({ protocol: 'http' })).toEqual([8080]);
    expect(ports({ protocol: 'none' })).toEqual([80, 443, 81]);
    expect(ports({ https: 'yes' })).toEqual([8080]);
    expect(ports({ https: 'no' })).toEqual([1080]);
    expect(ports({ lying: true })).toEqual([80, 443]);
    expect(ports({ rotating: true })).toEqual([8080]);
    expect(ports({ lying: true, status: 'working' })).toEqual([]);
    expect(ports({ lying: false, rotating: false, protocol: '', https: '' })).toEqual([8080, 1080, 80, 443, 81]);
    expect(ports({ text: 'rotating' })).toEqual([8080]);
  });

  test('sorts by exits (numbers) and by integrity (empty last)', () => {
    expect(sortRows(xr, 'exits', 'descending').map((r) => r.exits)).toEqual([3, 1, 0, 0, 0]);
    expect(sortRows(xr, 'integrity', 'ascending').map((r) => r.integrity)).toEqual(['tampered', 'tls_intercepted', '', '', '']);
  });
});
