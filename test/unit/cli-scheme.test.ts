/** src/cli/scheme.ts: `--scheme` lines, `<protocol>://[user:pass@]host:port`. */
import { describe, expect, test } from 'bun:test';
import { recordProtocol, schemeLine } from '../../src/cli/scheme';

describe('schemeLine', () => {
  test('the protocol as the scheme, credentials in the URL form, IPv6 bracketed', () => {
    expect(schemeLine({ host: '127.0.0.1', port: 47101 }, 'socks5')).toBe('socks5://127.0.0.1:47101');
    expect(schemeLine({ host: '10.0.0.1', port: 8080, username: 'alice', password: 's3:cret' }, 'http')).toBe('http://alice:s3%3Acret@10.0.0.1:8080');
    expect(schemeLine({ host: '2001:db8::1', port: 1080 }, 'socks4')).toBe('socks4://[2001:db8::1]:1080');
  });

  test('no known protocol: the address alone', () => {
    expect(schemeLine({ host: '10.0.0.1', port: 1 }, 'auto')).toBe('10.0.0.1:1');
    expect(schemeLine({ host: '10.0.0.1', port: 1 }, null)).toBe('10.0.0.1:1');
  });

  test("recordProtocol: the record's own type, else the check's", () => {
    expect(recordProtocol({ type: 'socks5' }, 'auto')).toBe('socks5');
    expect(recordProtocol({}, 'http')).toBe('http');
    expect(recordProtocol({ protocol: 'socks4' }, 'http')).toBe('socks4');
  });
});
