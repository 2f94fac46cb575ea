/** Tests for src/cli/proxy-table.ts: the per-proxy digest of a result file and its rendering (protocols, https, samples, lying proxies). */
import { describe, expect, test } from 'bun:test';
import {
  errorDetail,
  exitsCell,
  httpsCell,
  isLying,
  msCell,
  protocolsCell,
  ProxyDigest,
  proxyLabel,
  renderProxyDetails,
  samplesCell,
  type RecordView,
} from '../../src/cli/proxy-table';

const plain = (port: number, status = 'working', extra: Partial<RecordView> = {}): RecordView => ({
  proxy: { host: '203.0.113.7', port, hasAuth: false },
  status,
  responseTime: '123.45 ms',
  ...extra,
});
const samples = (count: number, succeeded: number, unique: number) => ({ count, succeeded, unique_exit_ips: unique, exit_ips: [], success_rate: '', response_time_ms: null });

function digest(records: RecordView[], rows?: number, lying?: number): ProxyDigest {
  const d = new ProxyDigest(rows, lying);
  for (const r of records) d.add(r);
  return d;
}

describe('cells', () => {
  test('proxy label: user@ (never the password), IPv6 in brackets', () => {
    expect(proxyLabel({ host: '1.2.3.4', port: 80 })).toBe('1.2.3.4:80');
    expect(proxyLabel({ host: '1.2.3.4', port: 80, hasAuth: true, username: 'bob' })).toBe('bob@1.2.3.4:80');
    expect(proxyLabel({ host: '2001:db8::1', port: 1080 })).toBe('[2001:db8::1]:1080');
  });

  test('time, protocols, https, samples, exits', () => {
    expect(msCell('123.5 ms')).toBe('124 ms');
    expect(msCell(null)).toBe('-');
    expect(protocolsCell(['socks5', 'socks4'])).toBe('socks5 socks4');
    expect(protocolsCell([])).toBe('none');
    expect(protocolsCell(undefined)).toBe('-');
    expect([httpsCell(true), httpsCell(false), httpsCell(null), httpsCell(undefined)]).toEqual(['yes', 'no', 'unknown', '-']);
    expect(samplesCell(samples(3, 2, 2))).toBe('2/3');
    expect(samplesCell(undefined)).toBe('-');
    expect(exitsCell(samples(3, 3, 3))).toBe('3 rotating');
    expect(exitsCell(samples(3, 3, 1))).toBe('1');
    expect(exitsCell(samples(3, 0, 0))).toBe('-');
  });

  test('lying codes: tampered and tls_intercepted only', () => {
    expect(isLying('tampered')).toBe(true);
    expect(isLying('tls_intercepted')).toBe(true);
    expect(isLying('judge_mismatch')).toBe(false);
    expect(isLying(undefined)).toBe(false);
  });

  test('error detail: the message, then the other text the error carries (a certificate, whatever its field names)', () => {
    expect(errorDetail({ code: 'tampered', message: 'bytes injected: 42 bytes before the body' })).toBe('bytes injected: 42 bytes before the body');
    expect(errorDetail({ code: 'tls_intercepted', message: 'certificate not trusted', certificate: { subject: 'CN=evil', fingerprint: 'AB:CD' } })).toBe(
      'certificate not trusted; subject: CN=evil; fingerprint: AB:CD',
    );
    // a field already in the message is not repeated
    expect(errorDetail({ code: 'tls_intercepted', message: 'presented CN=evil', subject: 'CN=evil' })).toBe('presented CN=evil');
    expect(errorDetail(null)).toBe('');
  });
});

describe('ProxyDigest', () => {
  test('keeps the first rows and lying records, counts them all, notes the optional fields', () => {
    const records = [
      plain(1, 'working', { protocols: ['http'], samples: samples(3, 3, 3) }),
      plain(2, 'working', { protocols: ['socks5'], samples: samples(3, 3, 1) }),
      plain(3, 'failed', { error: { code: 'tampered', message: 'length differs: x' } }),
      plain(4, 'failed', { error: { code: 'tls_intercepted', message: 'y' } }),
      plain(5, 'failed', { error: { code: 'tampered', message: 'z' } }),
    ];
    const d = digest(records, 2, 2);
    expect(d.total).toBe(5);
    expect(d.rows.map((r) => r.proxy.port)).toEqual([1, 2]);
    expect(d.lying.map((r) => r.proxy.port)).toEqual([3, 4]);
    expect(d.lyingCount).toBe(3);
    expect(d.lyingByCode).toEqual({ tampered: 2, tls_intercepted: 1 });
    expect(d.columns).toEqual({ protocols: true, https: false, samples: true });
    expect(d.extended).toBe(true);
  });

  test('https is a column as soon as one record has it; a plain file has no extended column', () => {
    expect(digest([plain(1), plain(2, 'working', { https: false })]).columns.https).toBe(true);
    expect(digest([plain(1), plain(2, 'working', { https: null })]).columns.https).toBe(true);
    expect(digest([plain(1), plain(2, 'failed', { error: { code: 'timeout', message: '' } })]).extended).toBe(false);
  });
});

describe('renderProxyDetails', () => {
  test('a plain check: nothing at all', () => {
    expect(renderProxyDetails(digest([plain(1), plain(2, 'failed', { error: { code: 'connect_refused', message: 'refused' } })]), { color: false })).toBe('');
  });

  test('auto + samples: protocols, samples and exits columns; lying proxies with what they did', () => {
    const d = digest([
      plain(8001, 'working', { protocols: ['http'], samples: samples(3, 3, 3) }),
      plain(8002, 'working', { protocols: ['socks5', 'socks4'], samples: samples(3, 2, 1), responseTime: '5.2 ms' }),
      plain(8003, 'failed', { protocols: [], samples: samples(3, 0, 0), responseTime: '40.00 ms', error: { code: 'tampered', message: 'bytes injected: 30 bytes before the body' } }),
      plain(8004, 'failed', { protocols: [], samples: samples(3, 0, 0), responseTime: '1.00 ms', error: { code: 'connect_refused', message: 'refused' } }),
    ]);
    expect(renderProxyDetails(d, { color: false })).toBe(
      [
        'Proxies (4)',
        '  proxy             status     time  protocols      samples  exits       error',
        '  ----------------  -------  ------  -------------  -------  ----------  ---------------',
        '  203.0.113.7:8001  working  123 ms  http               3/3  3 rotating',
        '  203.0.113.7:8002  working    5 ms  socks5 socks4      2/3  1',
        '  203.0.113.7:8003  failed    40 ms  none               0/3  -           tampered',
        '  203.0.113.7:8004  failed     1 ms  none               0/3  -           connect_refused',
        '',
        'Lying proxies: 1 of 4 (tampered 1): they changed what they relayed or presented their own certificate',
        '  203.0.113.7:8003  tampered  bytes injected: 30 bytes before the body',
      ].join('\n'),
    );
  });

  test('https only (a plain check whose records say https); more rows than shown; colour marks status and lying codes', () => {
    const records = Array.from({ length: 3 }, (_, i) => plain(i + 1, 'working', { https: i === 0 }));
    records.push(plain(9, 'failed', { error: { code: 'tls_intercepted', message: 'certificate CN=mitm' } }));
    const text = renderProxyDetails(digest(records, 2, 0), { color: true });
    const lines = text.split('\n');
    expect(lines[0]).toBe('Proxies (first 2 of 4, working first; all of them in the result file)');
    expect(lines[1]).toMatch(/^ {2}proxy +status +time +https +error$/);
    expect(lines[3]).toContain('\x1b[32mworking\x1b[0m');
    expect(lines[3]).toMatch(/ yes$/);
    expect(lines[4]).toMatch(/ no$/);
    expect(text).toContain('\x1b[1;31mLying proxies: 1\x1b[0m of 4 (tls_intercepted 1)');
    expect(lines.at(-1)).toBe('  … and 1 more');
  });

  test('lying proxies alone (a plain check that caught one): no proxy table, long details clipped', () => {
    const d = digest([plain(1), plain(2, 'failed', { error: { code: 'tampered', message: `body replaced: ${'x'.repeat(200)}` } })]);
    const lines = renderProxyDetails(d, { color: false, width: 30 }).split('\n');
    expect(lines[0]).toMatch(/^Lying proxies: 1 of 2 \(tampered 1\)/);
    expect(lines[1]).toBe(`  203.0.113.7:2  tampered  body replaced: ${'x'.repeat(14)}…`);
    expect(lines).toHaveLength(2);
  });
});
