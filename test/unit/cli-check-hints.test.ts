/** src/cli/check-hints.ts: the lines after a check's summary (private targets, SOCKS met on an http check, the check's warnings). */
import { describe, expect, test } from 'bun:test';
import type { CheckResponseBody } from '../../src/cli/api-client';
import { checkHints, isSocksAnswer } from '../../src/cli/check-hints';

function response(over: { type?: string; errors?: Record<string, number>; blocked?: number; warnings?: CheckResponseBody['metadata']['warnings'] } = {}): CheckResponseBody {
  return {
    summary: { total_working: 0, countries: {}, anonymity_levels: { elite: 0, anonymous: 0, transparent: 0 }, top_isps: {}, ...(over.errors ? { errors: over.errors } : {}) },
    metadata: {
      proxy_type: over.type ?? 'http',
      total_checked: 4,
      ...(over.blocked !== undefined ? { total_blocked: over.blocked } : {}),
      ...(over.warnings ? { warnings: over.warnings } : {}),
    },
    result_url: null,
  };
}

describe('checkHints', () => {
  test('nothing to say: no lines', () => {
    expect(checkHints(response({ errors: { connect_refused: 3, bad_response: 1 } }), { socksLike: 0 })).toEqual([]);
  });

  test('private targets name ALLOW_PRIVATE_TARGETS (total_blocked, else the blocked_target count)', () => {
    const [line] = checkHints(response({ blocked: 100, errors: { blocked_target: 100 } }), { socksLike: 0 });
    expect(line).toBe(
      'Hint: 100 proxies are on private, loopback or reserved addresses: refused (blocked_target), not checked, not charged. The service checks such proxies only when its operator sets ALLOW_PRIVATE_TARGETS=true.',
    );
    expect(checkHints(response({ errors: { blocked_target: 1 } }), null)[0]).toStartWith('Hint: 1 proxy is on private');
  });

  test('an http check that met SOCKS servers: --type auto, from the records or from many bad_response', () => {
    const fromRecords = checkHints(response({ errors: { bad_response: 2, connect_refused: 5 } }), { socksLike: 2 });
    expect(fromRecords).toEqual([
      'Hint: 2 proxies answered like a SOCKS server on this http check: check again with --type auto (tries http, socks4 and socks5), or write socks5:// (or socks4://) before them in the list.',
    ]);
    const fromCounts = checkHints(response({ errors: { bad_response: 2, connect_refused: 1 } }), null);
    expect(fromCounts[0]).toStartWith('Hint: 2 proxies failed with bad_response on this http check; if they are SOCKS proxies, check again with --type auto');
    // a few bad_response among many other failures: no guess
    expect(checkHints(response({ errors: { bad_response: 1, connect_refused: 5 } }), { socksLike: 0 })).toEqual([]);
    // not an http check: the hint does not apply
    expect(checkHints(response({ type: 'socks5', errors: { bad_response: 2 } }), { socksLike: 2 })).toEqual([]);
    expect(checkHints(response({ type: 'auto', errors: { bad_response: 2 } }), null)).toEqual([]);
  });

  test("the check's warnings, objects or strings", () => {
    expect(checkHints(response({ warnings: [{ code: 'judge_local_only', message: 'The judge is reachable from this machine only.' }, 'plain'] }), null)).toEqual([
      'Note: The judge is reachable from this machine only.',
      'Note: plain',
    ]);
  });

  test('isSocksAnswer: bad_response whose message says SOCKS', () => {
    expect(isSocksAnswer('bad_response', 'the proxy answered like a SOCKS5 server (first bytes 05 00)')).toBe(true);
    expect(isSocksAnswer('bad_response', 'not an HTTP response')).toBe(false);
    expect(isSocksAnswer('timeout', 'socks')).toBe(false);
    expect(isSocksAnswer('bad_response', undefined)).toBe(false);
  });
});
