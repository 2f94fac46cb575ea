/** The proxy URLs for a pool (src/gateway/urls.ts). */
import { expect, test } from 'bun:test';
import { gatewayUrls } from '../../src/gateway/urls';

test('http:// and socks5:// with pool-<id> and the key; IPv6 bracketed; userinfo encoded; options in the grammar', () => {
  expect(gatewayUrls('gw.example.com', 8080, 'abcdefghij', 'key-123')).toEqual({
    http: 'http://pool-abcdefghij:key-123@gw.example.com:8080',
    socks5: 'socks5://pool-abcdefghij:key-123@gw.example.com:8080',
  });
  expect(gatewayUrls('::1', 1080, 'abcdefghij', 'k/y:@').http).toBe('http://pool-abcdefghij:k%2Fy%3A%40@[::1]:1080');
  expect(gatewayUrls('[::1]', 1080, 'abcdefghij', 'k').socks5).toBe('socks5://pool-abcdefghij:k@[::1]:1080');
  const u = gatewayUrls('h', 1, { poolId: 'abcdefghij', country: 'DE', type: 'socks5', target: null, session: 'x1', rotate: 'random' }, 'k');
  expect(u.http).toBe('http://pool-abcdefghij-country-DE-type-socks5-session-x1-rotate-random:k@h:1');
  expect(new URL(u.http).username).toBe('pool-abcdefghij-country-DE-type-socks5-session-x1-rotate-random');
});
