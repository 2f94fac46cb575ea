/** The txt and csv lines of a pool's proxies (src/pools/render.ts). */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { parseProxyLine } from '../../src/proxy/parse';
import { POOL_CSV_COLUMNS, poolCsvHeader, poolCsvRow, rowProtocol, txtLine } from '../../src/pools/render';
import type { PoolProxyObject } from '../../src/pools/shape';

describe('txt', () => {
  test('the submitted form, credentials kept, one per line', () => {
    expect(txtLine({ host: '1.2.3.4', port: 80, username: '', password: '', format: 'standard' })).toBe('1.2.3.4:80\n');
    expect(txtLine({ host: '::1', port: 80, username: 'u', password: 'p:q', format: 'colon_auth' })).toBe('[::1]:80:u:p:q\n');
    expect(txtLine({ host: 'h.example', port: 80, username: 'u@x', password: '', format: 'url_auth' })).toBe('u%40x:@h.example:80\n');
  });

  test('property: the list parser reads every line back to the same proxy', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('1.2.3.4', 'h.example', '2001:db8::1'),
        fc.integer({ min: 1, max: 65535 }),
        fc.option(fc.tuple(fc.string({ minLength: 1 }).filter((s) => !/[\u0000-\u001f\u007f\ud800-\udfff]/.test(s)), fc.string().filter((s) => !/[\u0000-\u001f\u007f\ud800-\udfff]/.test(s)))),
        fc.constantFrom('standard' as const, 'url_auth' as const, 'colon_auth' as const),
        (host, port, cred, format) => {
          const row = { host, port, username: cred?.[0] ?? '', password: cred?.[1] ?? '', format };
          const line = txtLine(row);
          expect(line.endsWith('\n')).toBe(true);
          const back = parseProxyLine(line.slice(0, -1));
          expect(back).not.toBeNull();
          expect([back?.host, back?.port, back?.username ?? '', back?.password ?? '']).toEqual([host, port, row.username, row.password]);
        },
      ),
    );
  });
});

describe('txt with scheme=true (DECISIONS "Mixed lists")', () => {
  test('<protocol>://[user:pass@]host:port, credentials in the URL form whatever the submitted one', () => {
    expect(txtLine({ host: '1.2.3.4', port: 1080, username: '', password: '', format: 'standard' }, 'socks5')).toBe('socks5://1.2.3.4:1080\n');
    expect(txtLine({ host: '::1', port: 80, username: 'u', password: 'p:q', format: 'colon_auth' }, 'http')).toBe('http://u:p%3Aq@[::1]:80\n');
    expect(parseProxyLine('socks4://u:p%3Aq@[::1]:80')).toMatchObject({ host: '::1', port: 80, username: 'u', password: 'p:q', protocol: 'socks4' });
  });

  test('rowProtocol: the pool type, or (auto) what the last passing check found; null when not known', () => {
    expect(rowProtocol({ type: null }, 'socks4')).toBe('socks4');
    expect(rowProtocol({ type: 'http' }, 'socks5')).toBe('socks5');
    expect(rowProtocol({ type: 'socks5' }, 'auto')).toBe('socks5');
    expect(rowProtocol({ type: null }, 'auto')).toBeNull();
  });
});

describe('csv', () => {
  const o: PoolProxyObject = {
    proxy: { host: '1.2.3.4', port: 80, hasAuth: true, username: '=cmd', password: 'a,b' },
    status: 'failed',
    error: { code: 'timeout', message: 'said "no"' },
    type: 'socks5',
    protocols: ['socks5', 'http'],
    anonymity: 'elite',
    https: false,
    origin: null,
    country: 'DE',
    country_name: 'Germany',
    location: null,
    isp: null,
    asn: 3320,
    responseTime: '12.50 ms',
    latency_p50_ms: 13,
    uptime: { h1: 0.5, h24: null, d7: 1 },
    checks: 4,
    first_seen_at: '2026-06-01T00:00:00.000Z',
    last_checked_at: null,
    last_change_at: null,
    next_check_at: '2026-06-01T01:00:00.000Z',
  };
  test('header and row line up; quoting, formula guard, empty nulls, CRLF', () => {
    expect(poolCsvHeader().split(',').length).toBe(POOL_CSV_COLUMNS.length);
    const row = poolCsvRow(o);
    expect(row.endsWith('\r\n')).toBe(true);
    expect(row).toBe(
      "1.2.3.4,80,true,'=cmd,\"a,b\",failed,socks5,socks5 http,elite,false,,DE,Germany,,,3320,12.5,13,0.5,,1,4,2026-06-01T00:00:00.000Z,,,2026-06-01T01:00:00.000Z,timeout,\"said \"\"no\"\"\"\r\n",
    );
    const plain = { ...o, proxy: { host: 'h', port: 1, hasAuth: false }, protocols: undefined, error: undefined } as PoolProxyObject;
    expect(poolCsvRow(plain).split(',')[7]).toBe('');
    expect(poolCsvRow(plain).split(',').length).toBe(POOL_CSV_COLUMNS.length);
  });
});
