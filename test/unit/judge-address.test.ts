/** Tests for src/judge/judge-address.ts (where the built-in judge is reached, by whom) and the pure readers of src/judge/local-addresses.ts. */
import { describe, expect, test } from 'bun:test';
import { judgeAddress, reachOf, type LocalAddresses } from '../../src/judge/judge-address';
import { defaultRouteV4, defaultRouteV6, ownAddresses } from '../../src/judge/local-addresses';

const machine = (eth0: { address: string; family: 'IPv4' | 'IPv6' }[], route: { v4?: string | null; v6?: string | null } = { v4: 'eth0', v6: 'eth0' }): LocalAddresses => ({
  interfaces: {
    lo: [
      { address: '127.0.0.1', family: 'IPv4', internal: true },
      { address: '::1', family: 'IPv6', internal: true },
    ],
    eth0: eth0.map((a) => ({ ...a, internal: false })),
  },
  defaultRoute: { v4: route.v4 ?? null, v6: route.v6 ?? null },
});
const PUBLIC = machine([{ address: '198.51.99.7', family: 'IPv4' }]);
const PRIVATE = machine([
  { address: '10.0.0.5', family: 'IPv4' },
  { address: 'fd00::5', family: 'IPv6' },
]);
const base = { judgeUrl: undefined, baseUrl: 'http://127.0.0.1:3000', baseUrlSet: false, listenHost: '0.0.0.0' };

describe('judgeAddress: decided at start from the settings and this machine\'s addresses', () => {
  test('every address: the default route\'s public address, said so', () => {
    expect(judgeAddress({ ...base, local: PUBLIC })).toEqual({ host: '198.51.99.7', reach: 'public', from: "eth0's address (the default route)" });
  });

  test('only private and loopback addresses: the derived base (loopback), this machine only', () => {
    expect(judgeAddress({ ...base, local: PRIVATE })).toEqual({ host: null, reach: 'this machine only', from: 'no public address on this machine' });
    expect(judgeAddress({ ...base, local: machine([]) }).reach).toBe('this machine only');
    // a public address on an interface without the default route is not taken
    expect(judgeAddress({ ...base, local: machine([{ address: '198.51.99.7', family: 'IPv4' }], { v4: 'wg0' }) }).host).toBeNull();
  });

  test('IPv6 only when the listener takes IPv6 (HOST=::), in brackets', () => {
    const v6 = machine([
      { address: '10.0.0.5', family: 'IPv4' },
      { address: '2a01:4f8::7', family: 'IPv6' },
    ]);
    expect(judgeAddress({ ...base, listenHost: '::', local: v6 })).toMatchObject({ host: '[2a01:4f8::7]', reach: 'public' });
    expect(judgeAddress({ ...base, listenHost: '0.0.0.0', local: v6 })).toMatchObject({ host: null, reach: 'this machine only' });
  });

  test('the listener on one address: that address, by its kind; on loopback only the operator chose', () => {
    expect(judgeAddress({ ...base, listenHost: '127.0.0.1', local: PUBLIC })).toEqual({ host: null, reach: null, from: 'HOST (loopback only)' });
    expect(judgeAddress({ ...base, listenHost: '::1', local: PUBLIC }).reach).toBeNull();
    expect(judgeAddress({ ...base, listenHost: '10.0.0.5', baseUrl: 'http://10.0.0.5:3000', local: PUBLIC })).toEqual({ host: null, reach: 'this network only', from: 'HOST' });
  });

  test('BASE_URL or JUDGE_URL set: the operator chose; nothing is judged', () => {
    expect(judgeAddress({ ...base, baseUrlSet: true, baseUrl: 'https://api.example.com', local: PUBLIC })).toEqual({ host: null, reach: null, from: 'BASE_URL' });
    expect(judgeAddress({ ...base, baseUrlSet: true, baseUrl: 'http://127.0.0.1:3000', local: PRIVATE }).reach).toBeNull();
    expect(judgeAddress({ ...base, judgeUrl: 'http://10.0.0.9/judge', local: PRIVATE })).toEqual({ host: null, reach: null, from: 'JUDGE_URL' });
  });

  test('reachOf: loopback, private, public, names', () => {
    expect(['127.0.0.1', '[::1]', 'localhost', '10.1.2.3', '[fd00::1]', '169.254.1.1', '8.8.8.8', '[2a01:4f8::1]', 'judge.example.com'].map(reachOf)).toEqual([
      'this machine only',
      'this machine only',
      'this machine only',
      'this network only',
      'this network only',
      'this network only',
      'public',
      'public',
      null,
    ]);
  });
});

describe('the default route, from /proc/net/route and /proc/net/ipv6_route', () => {
  test('IPv4: the first up route to 0.0.0.0/0', () => {
    const text = [
      'Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT',
      'eth1\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0',
      'eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0',
    ].join('\n');
    expect(defaultRouteV4(text)).toBe('eth0');
    expect(defaultRouteV4(text.split('\n').slice(0, 2).join('\n'))).toBeNull();
    expect(defaultRouteV4('')).toBeNull();
  });

  test('IPv6: ::/0 up, not the loopback\'s', () => {
    const z = '0'.repeat(32);
    const text = [
      `fd000000000000000000000000000000 40 ${z} 00 ${z} 00000100 00000001 00000000 00000001     eth0`,
      `${z} 00 ${z} 00 fd000000000000000000000000000001 00000400 00000003 00000000 00000003     eth0`,
    ].join('\n');
    expect(defaultRouteV6(text)).toBe('eth0');
    expect(defaultRouteV6(`${z} 00 ${z} 00 ${z} ffffffff 00000001 00000000 00200200       lo`)).toBeNull();
  });

  test('own addresses: every interface\'s, loopback included, lower-cased', () => {
    expect([...ownAddresses(machine([{ address: 'FD00::5', family: 'IPv6' }]))].sort()).toEqual(['127.0.0.1', '::1', 'fd00::5']);
  });
});
