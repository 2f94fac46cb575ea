/** Anonymity classifier: exact address tokens, header-name normalisation, baseline subtraction. */
import { describe, expect, test } from 'bun:test';
import { addressTokens, classifyAnonymity, isRevealingHeader, tokenAddress } from '../../src/probe/codec/anonymity';
import type { Anonymity } from '../../src/probe/types';

const ME = ['1.2.3.4', '2001:db8:1::5'];
const BASE_HEADERS: [string, string][] = [
  ['Host', '203.0.113.10:8080'],
  ['User-Agent', 'Mozilla/5.0 (compatible; ProxyCheck/1.0)'],
  ['Accept', '*/*'],
  ['Connection', 'close'],
];

type Row = [string, [string, string][], string[], string[], Anonymity];
const TABLE: Row[] = [
  ['no extra headers', [], ME, [], 'elite'],
  ['XFF with my address', [['X-Forwarded-For', '1.2.3.4']], ME, [], 'transparent'],
  ['XFF list with my address last', [['X-Forwarded-For', '10.0.0.1, 1.2.3.4']], ME, [], 'transparent'],
  ['XFF with a longer address that contains mine', [['X-Forwarded-For', '1.2.3.45']], ME, [], 'anonymous'],
  ['XFF with an address that ends like mine', [['X-Forwarded-For', '11.2.3.4']], ME, [], 'anonymous'],
  ['XFF with my address and a port', [['X-Forwarded-For', '1.2.3.4:5555']], ME, [], 'transparent'],
  ['Forwarded for=', [['Forwarded', 'for=1.2.3.4;proto=http;by=9.9.9.9']], ME, [], 'transparent'],
  ['Forwarded quoted IPv6 with port', [['Forwarded', 'for="[2001:db8:1::5]:4711"']], ME, [], 'transparent'],
  ['IPv6 spelled differently', [['X-Real-IP', '2001:0DB8:0001:0000:0000:0000:0000:0005']], ME, [], 'transparent'],
  ['IPv4-mapped IPv6 of mine', [['X-Client-IP', '::ffff:1.2.3.4']], ME, [], 'transparent'],
  ['my address inside Via comment', [['Via', '1.1 proxy (squid) (1.2.3.4)']], ME, [], 'transparent'],
  ['my address in an unusual header', [['X-My-Thing', 'client=1.2.3.4']], ME, [], 'transparent'],
  ['my address only in Host is ignored', [['Host', '1.2.3.4:80']], ME, [], 'elite'],
  ['Via only', [['Via', '1.1 squid']], ME, [], 'anonymous'],
  ['lower-case via', [['via', '1.1 squid']], ME, [], 'anonymous'],
  ['upper-case VIA with spaces', [[' VIA ', '1.1 squid']], ME, [], 'anonymous'],
  ['X-Forwarded-For unknown', [['X-Forwarded-For', 'unknown']], ME, [], 'anonymous'],
  ['Proxy-Connection', [['Proxy-Connection', 'keep-alive']], ME, [], 'anonymous'],
  ['X-Tinyproxy with proxy address', [['X-Tinyproxy', '5.6.7.8']], ME, [], 'anonymous'],
  ['X-Forwarded-Host', [['X-Forwarded-Host', 'judge']], ME, [], 'anonymous'],
  ['X-Forwarded-Proto', [['X-Forwarded-Proto', 'http']], ME, [], 'anonymous'],
  ['X-Originating-IP of someone else', [['X-Originating-IP', '8.8.8.8']], ME, [], 'anonymous'],
  ['Client-IP', [['Client-IP', '8.8.8.8']], ME, [], 'anonymous'],
  ['X-Proxy-ID', [['X-Proxy-ID', 'abc']], ME, [], 'anonymous'],
  ['Proxy-Agent', [['Proxy-Agent', 'x']], ME, [], 'anonymous'],
  ['X-BlueCoat-Via', [['X-BlueCoat-Via', 'abc']], ME, [], 'anonymous'],
  ['X-Cache', [['X-Cache', 'MISS from proxy']], ME, [], 'anonymous'],
  ['Forwarded-For', [['Forwarded-For', '8.8.8.8']], ME, [], 'anonymous'],
  ['unknown x-forwarded-* prefix', [['X-Forwarded-Scheme', 'http']], ME, [], 'anonymous'],
  ['baseline header subtracted', [['X-Forwarded-For', '8.8.8.8']], ME, ['x-forwarded-for'], 'elite'],
  ['baseline name given in mixed case', [['Via', '1.1 lb']], ME, ['Via'], 'elite'],
  ['baseline does not hide my address', [['X-Forwarded-For', '1.2.3.4']], ME, ['x-forwarded-for'], 'transparent'],
  ['baseline does not hide other revealing headers', [['Via', 'lb'], ['X-Real-IP', '8.8.8.8']], ME, ['via'], 'anonymous'],
  ['harmless extra headers', [['Cache-Control', 'max-age=0'], ['Accept-Encoding', 'gzip']], ME, [], 'elite'],
  ['no checker addresses known', [['X-Forwarded-For', '1.2.3.4']], [], [], 'anonymous'],
  ['checker address given as mapped IPv6', [['X-Forwarded-For', '1.2.3.4']], ['::ffff:1.2.3.4'], [], 'transparent'],
  ['garbage checker addresses ignored', [['X-Forwarded-For', '1.2.3.4']], ['nonsense', ' '], [], 'anonymous'],
  ['IPv6 prefix of mine does not match', [['X-Forwarded-For', '2001:db8:1::50']], ME, [], 'anonymous'],
  ['bracketed IPv6 with port', [['X-Forwarded-For', '[2001:db8:1::5]:80']], ME, [], 'transparent'],
];

describe('classifyAnonymity', () => {
  test.each(TABLE)('%s', (_name, extra, ips, baseline, expected) => {
    expect(classifyAnonymity([...BASE_HEADERS, ...extra], ips, baseline)).toBe(expected);
  });
});

describe('tokens', () => {
  test('tokenAddress strips IPv4 ports only', () => {
    expect(tokenAddress('1.2.3.4:80')).toBe('1.2.3.4');
    expect(tokenAddress('1.2.3.4:')).toBeNull();
    expect(tokenAddress('1.2.3.4:123456')).toBeNull();
    expect(tokenAddress('::1')).toBe('0:0:0:0:0:0:0:1');
    expect(tokenAddress('host:80')).toBeNull();
  });
  test('addressTokens splits on separators', () => {
    expect(addressTokens('for="[::1]:80";by=1.2.3.4, 5.6.7.8 (9.9.9.9)')).toEqual([
      '0:0:0:0:0:0:0:1',
      '1.2.3.4',
      '5.6.7.8',
      '9.9.9.9',
    ]);
    expect(addressTokens('')).toEqual([]);
  });
  test('isRevealingHeader', () => {
    expect(isRevealingHeader('via')).toBe(true);
    expect(isRevealingHeader('x-proxy-whatever')).toBe(true);
    expect(isRevealingHeader('user-agent')).toBe(false);
    expect(isRevealingHeader('accept')).toBe(false);
  });
});

describe("the probe socket's local address counts as ours", () => {
  const XFF = (v: string): [string, string][] => [...BASE_HEADERS, ['X-Forwarded-For', v]];
  test('an address calibration never learned, seen as the local address, makes the proxy transparent', () => {
    expect(classifyAnonymity(XFF('10.9.8.7'), ME, [])).toBe('anonymous');
    expect(classifyAnonymity(XFF('10.9.8.7'), ME, [], '10.9.8.7')).toBe('transparent');
    expect(classifyAnonymity(XFF('10.9.8.7:40000'), ME, [], '10.9.8.7')).toBe('transparent');
  });
  test('with no calibrated or configured address at all', () => {
    expect(classifyAnonymity(XFF('10.9.8.7'), [], [], '10.9.8.7')).toBe('transparent');
  });
  test('IPv6 loopback against 127.0.0.1 calibrated', () => {
    expect(classifyAnonymity(XFF('::1'), ['127.0.0.1'], [])).toBe('anonymous');
    expect(classifyAnonymity(XFF('::1'), ['127.0.0.1'], [], '::1')).toBe('transparent');
    expect(classifyAnonymity([...BASE_HEADERS, ['Forwarded', 'for="[0:0::1]:5"']], ['127.0.0.1'], [], '::1')).toBe('transparent');
  });
  test('spellings: IPv4-mapped IPv6, upper case, zone', () => {
    expect(classifyAnonymity(XFF('10.9.8.7'), ME, [], '::ffff:10.9.8.7')).toBe('transparent');
    expect(classifyAnonymity(XFF('::ffff:10.9.8.7'), ME, [], '10.9.8.7')).toBe('transparent');
    expect(classifyAnonymity(XFF('2001:db8:2::9'), ME, [], '2001:DB8:2:0::9')).toBe('transparent');
    expect(classifyAnonymity(XFF('fe80::1'), ME, [], 'fe80::1%veth0')).toBe('transparent');
  });
  test('only the exact address: no prefix match, no other address', () => {
    expect(classifyAnonymity(XFF('10.9.8.70'), ME, [], '10.9.8.7')).toBe('anonymous');
    expect(classifyAnonymity(XFF('10.9.8.7'), ME, [], '10.9.8.70')).toBe('anonymous');
    expect(classifyAnonymity([...BASE_HEADERS, ['Host', '10.9.8.7:80']], ME, [], '10.9.8.7')).toBe('elite');
  });
  test('unknown, unparsable or unspecified local addresses add nothing', () => {
    expect(classifyAnonymity(XFF('10.9.8.7'), ME, [], null)).toBe('anonymous');
    expect(classifyAnonymity(XFF('10.9.8.7'), ME, [], '')).toBe('anonymous');
    expect(classifyAnonymity(XFF('10.9.8.7'), ME, [], 'nonsense')).toBe('anonymous');
    expect(classifyAnonymity(XFF('0.0.0.0'), ME, [], '0.0.0.0')).toBe('anonymous');
    expect(classifyAnonymity(XFF('::'), ME, [], '::')).toBe('anonymous');
  });
  test('the calibrated addresses still count beside it', () => {
    expect(classifyAnonymity(XFF('1.2.3.4'), ME, [], '10.9.8.7')).toBe('transparent');
    expect(classifyAnonymity([...BASE_HEADERS, ['Via', '1.1 x']], ME, [], '10.9.8.7')).toBe('anonymous');
    expect(classifyAnonymity(BASE_HEADERS, ME, [], '10.9.8.7')).toBe('elite');
  });
});
