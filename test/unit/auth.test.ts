/**
 * Tests for src/http/auth.ts: where the key is read from (X-API-Key wins,
 * Bearer in any case, ?apiKey= for the WebSocket), and authenticate()'s exact
 * seed 401 bodies for a missing or an unknown key.
 */
import { describe, expect, test } from 'bun:test';
import { apiKeyFrom, authenticate, type AuthenticatedAccount } from '../../src/http/auth';
import { ApiError } from '../../src/http/api-errors';

const h = (init: Record<string, string>) => new Headers(init);
const q = (s: string) => new URLSearchParams(s);

const MISSING_BODY = {
  error: 'API key is required',
  message: 'Please provide your API key in the X-API-Key header or the Authorization header (Bearer <key>)',
};
const INVALID_BODY = { error: 'Invalid API key', message: 'The provided API key is not valid' };

describe('apiKeyFrom', () => {
  test('X-API-Key header, trimmed', () => {
    expect(apiKeyFrom(h({ 'X-API-Key': 'pk_abc' }))).toBe('pk_abc');
    expect(apiKeyFrom(h({ 'x-api-key': '  pk_abc  ' }))).toBe('pk_abc');
  });

  test('Authorization: Bearer in any case, extra spaces tolerated', () => {
    for (const v of ['Bearer pk_1', 'bearer pk_1', 'BEARER pk_1', 'BeArEr    pk_1', '  Bearer pk_1  ', 'Bearer\tpk_1']) {
      expect(apiKeyFrom(h({ Authorization: v }))).toBe('pk_1');
    }
  });

  test('X-API-Key wins over Bearer and the query', () => {
    expect(apiKeyFrom(h({ 'X-API-Key': 'header-key', Authorization: 'Bearer bearer-key' }), q('apiKey=query-key'))).toBe('header-key');
  });

  test('Bearer wins over the query', () => {
    expect(apiKeyFrom(h({ Authorization: 'Bearer bearer-key' }), q('apiKey=query-key'))).toBe('bearer-key');
  });

  test('a blank X-API-Key falls back to Bearer', () => {
    expect(apiKeyFrom(h({ 'X-API-Key': '   ', Authorization: 'Bearer b' }))).toBe('b');
    expect(apiKeyFrom(h({ 'X-API-Key': '' }))).toBeNull();
  });

  test('the apiKey query parameter when no header carries a key', () => {
    expect(apiKeyFrom(h({}), q('jobId=j1&apiKey=qk'))).toBe('qk');
    expect(apiKeyFrom(h({}), q('apiKey=%20qk%20'))).toBe('qk');
    expect(apiKeyFrom(h({ Authorization: 'Basic dXNlcjpwYXNz' }), q('apiKey=qk'))).toBe('qk');
    expect(apiKeyFrom(h({}), q('apiKey='))).toBeNull();
    expect(apiKeyFrom(h({}), q('apikey=wrong-case'))).toBeNull();
  });

  test('no key anywhere, or an Authorization that is not a single Bearer token', () => {
    expect(apiKeyFrom(h({}))).toBeNull();
    expect(apiKeyFrom(h({}), q(''))).toBeNull();
    for (const v of ['Basic dXNlcjpwYXNz', 'Bearer', 'Bearer ', 'Bearer a b', 'Token abc', 'Bearerabc', 'pk_abc']) {
      expect(apiKeyFrom(h({ Authorization: v }))).toBeNull();
    }
  });
});

describe('authenticate', () => {
  const account: AuthenticatedAccount & { checks: number } = { id: 'acc-1', email: 'a@example.com', checks: 5 };
  function lookup() {
    const calls: string[] = [];
    return {
      calls,
      fn: async (key: string) => {
        calls.push(key);
        return key === 'good-key' ? account : null;
      },
    };
  }
  async function rejection(p: Promise<unknown>): Promise<ApiError> {
    let caught: unknown;
    try {
      await p;
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ApiError);
    return caught as ApiError;
  }

  test('a valid key (either header) returns the lookup\'s account, unchanged', async () => {
    const l = lookup();
    expect(await authenticate(h({ 'X-API-Key': 'good-key' }), l.fn)).toBe(account);
    expect(await authenticate(h({ Authorization: 'bearer good-key' }), l.fn)).toBe(account);
    expect(l.calls).toEqual(['good-key', 'good-key']);
  });

  test('no key: 401 with the seed\'s exact body; the lookup is not called', async () => {
    const l = lookup();
    const err = await rejection(authenticate(h({}), l.fn));
    expect(err.status).toBe(401);
    expect(err.body).toStrictEqual(MISSING_BODY);
    expect(err.headers).toEqual({});
    expect(l.calls).toEqual([]);
    const err2 = await rejection(authenticate(h({ Authorization: 'Basic dXNlcjpwYXNz' }), l.fn));
    expect(err2.body).toStrictEqual(MISSING_BODY);
  });

  test('unknown key: 401 Invalid API key with the exact body', async () => {
    const l = lookup();
    const err = await rejection(authenticate(h({ 'X-API-Key': 'nope' }), l.fn));
    expect(err.status).toBe(401);
    expect(err.body).toStrictEqual(INVALID_BODY);
    expect(l.calls).toEqual(['nope']);
  });

  test('the header key is checked, even when a Bearer token is valid', async () => {
    const l = lookup();
    const err = await rejection(authenticate(h({ 'X-API-Key': 'nope', Authorization: 'Bearer good-key' }), l.fn));
    expect(err.body).toStrictEqual(INVALID_BODY);
    expect(l.calls).toEqual(['nope']);
  });

  test('a failing lookup (database down) is not turned into a 401', async () => {
    const down = new Error('connection refused');
    let caught: unknown;
    try {
      await authenticate(h({ 'X-API-Key': 'k' }), async () => {
        throw down;
      });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBe(down);
  });
});
