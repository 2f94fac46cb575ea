/** SSRF guard: every blocked range and a set of public addresses, IPv4 and IPv6. */
import { describe, expect, test } from 'bun:test';
import { blockedTargetMessage, isBlockedAddress } from '../../src/probe/codec/ssrf';

const BLOCKED = [
  '0.0.0.0', '0.255.255.255', '10.0.0.1', '10.255.255.255', '100.64.0.1', '100.127.255.255', '127.0.0.1',
  '127.255.255.254', '169.254.169.254', '172.16.0.1', '172.31.255.255', '192.0.0.8', '192.0.2.1', '192.88.99.1',
  '192.168.1.1', '198.18.0.1', '198.19.255.255', '198.51.100.7', '203.0.113.9', '224.0.0.1', '239.255.255.250',
  '240.0.0.1', '255.255.255.255',
  '::', '::1', 'fc00::1', 'fd12:3456::1', 'fe80::1', 'fe80::1%eth0', 'febf::1', 'ff02::1', 'ff00::',
  '::ffff:127.0.0.1', '::ffff:10.1.2.3', '::ffff:7f00:1', '64:ff9b::a00:1', '2002:0a00:0001::1', '2001:db8::1',
  '2001::1', '2001:0:4136:e378::1', '3fff::1', '100::1', '::a00:1', '5f00::1', 'e000::1',
];
const PUBLIC = [
  '1.1.1.1', '8.8.8.8', '9.255.255.255', '11.0.0.0', '100.63.255.255', '100.128.0.0', '126.255.255.255',
  '128.0.0.1', '169.253.255.255', '172.15.255.255', '172.32.0.0', '192.0.1.1', '192.167.255.255', '192.169.0.0',
  '198.17.255.255', '198.20.0.0', '223.255.255.255',
  '2001:4860:4860::8888', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:0808:0808::1',
  '2a00:1450:4001::1', '3ffe::1',
];
const INVALID = ['', 'localhost', '1.2.3', '1.2.3.4.5', '256.1.1.1', '01.2.3.4', '1.2.3.4 ', 'gggg::1', '1:2:3:4:5:6:7:8:9', ':::1', '[::1]'];

describe('isBlockedAddress', () => {
  test.each(BLOCKED)('blocks %s', (ip) => {
    expect(isBlockedAddress(ip)).toBe(true);
  });
  test.each(PUBLIC)('allows %s', (ip) => {
    expect(isBlockedAddress(ip)).toBe(false);
  });
  test.each(INVALID)('fails closed on non-address %p', (ip) => {
    expect(isBlockedAddress(ip)).toBe(true);
  });
});

describe('blockedTargetMessage', () => {
  test('names the address, the name it came from, and the setting that allows it', () => {
    expect(blockedTargetMessage('10.0.0.1')).toBe('10.0.0.1 is in a private, loopback or reserved range; refused unless the server sets ALLOW_PRIVATE_TARGETS=true');
    expect(blockedTargetMessage('::1', 'proxy.lan')).toBe('proxy.lan resolves to ::1, a private, loopback or reserved address; refused unless the server sets ALLOW_PRIVATE_TARGETS=true');
  });
});
