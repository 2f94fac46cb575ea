/**
 * Tests for src/http/async-check.ts: which requests ask for an asynchronous
 * answer (Prefer: respond-async per RFC 7240, ?async=true|false), the 400s
 * of a bad `async`, and the 202 it answers with. The Prefer reader is fuzzed
 * (fast-check): it never throws, and it finds respond-async wherever it
 * stands in a list of other preferences.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { ApiError } from '../../src/http/api-errors';
import { acceptedResponse, asyncAsk, jobUrls, prefersRespondAsync } from '../../src/http/async-check';

const ask = (headers: Record<string, string>, qs = '') => asyncAsk(new Headers(headers), new URLSearchParams(qs));
const refusal = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return e;
  }
  return null;
};

describe('prefersRespondAsync', () => {
  test.each([
    ['respond-async', true],
    ['Respond-Async', true],
    ['  respond-async  ', true],
    ['wait=10, respond-async', true],
    ['respond-async; foo=bar', true],
    ['respond-async=', true],
    ['return=minimal,respond-async', true],
    ['handling=lenient', false],
    ['respond-asynchronously', false],
    ['x="respond-async"', false],
    ['x="a, respond-async"', false],
    ['', false],
  ])('%j -> %p', (value, expected) => {
    expect(prefersRespondAsync(value)).toBe(expected);
  });

  test('no header: false', () => {
    expect(prefersRespondAsync(null)).toBe(false);
  });

  test('fuzz: never throws; found among any other preferences in any case', () => {
    const token = fc.stringMatching(/^[a-z][a-z0-9-]{0,12}$/).filter((t) => t !== 'respond-async');
    const pref = fc.tuple(token, fc.option(fc.stringMatching(/^[a-z0-9]{0,6}$/))).map(([k, v]) => (v === null ? k : `${k}=${v}`));
    fc.assert(
      fc.property(fc.array(pref, { maxLength: 5 }), fc.nat(5), fc.boolean(), (others, at, upper) => {
        const me = upper ? 'RESPOND-ASYNC' : 'respond-async';
        const list = [...others];
        list.splice(Math.min(at, list.length), 0, me);
        expect(prefersRespondAsync(list.join(', '))).toBe(true);
        expect(prefersRespondAsync(others.join(', '))).toBe(false);
      }),
    );
    fc.assert(
      fc.property(fc.string(), (s) => {
        expect(typeof prefersRespondAsync(s)).toBe('boolean');
      }),
    );
  });
});

describe('asyncAsk', () => {
  test('the header or the query asks; async=false asks for the synchronous answer whatever the header says', () => {
    expect(ask({})).toBeNull();
    expect(ask({ Prefer: 'respond-async' })).toBe('prefer');
    expect(ask({}, 'async=true')).toBe('query');
    expect(ask({ Prefer: 'respond-async' }, 'async=true')).toBe('query');
    expect(ask({ Prefer: 'respond-async' }, 'async=false')).toBeNull();
    expect(ask({}, 'other=1&other=2')).toBeNull();
  });

  test.each([
    ['async=yes', 'async: expected true or false'],
    ['async=', 'async: expected true or false'],
    ['async=TRUE', 'async: expected true or false'],
    ['async=true&async=true', 'async: given more than once'],
  ])('?%s is a 400 Invalid request', (qs, message) => {
    const e = refusal(() => ask({}, qs));
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).status).toBe(400);
    expect((e as ApiError).body).toEqual({ error: 'Invalid request', message });
  });
});

describe('the 202', () => {
  test('Location, Preference-Applied only when the header asked, the URLs from BASE_URL', async () => {
    const r = acceptedResponse('https://api.example.com/', 'job-1', 'prefer');
    expect(r.status).toBe(202);
    expect(r.headers.get('location')).toBe('/checks/job-1');
    expect(r.headers.get('preference-applied')).toBe('respond-async');
    expect(await r.json()).toEqual({ jobId: 'job-1', status: 'running', status_url: 'https://api.example.com/checks/job-1', progress_url: 'wss://api.example.com/ws?jobId=job-1' });
    expect(acceptedResponse('http://127.0.0.1:3000', 'job-1', 'query').headers.get('preference-applied')).toBeNull();
  });

  test('a base URL with a path keeps it', () => {
    expect(jobUrls('http://h:8080/api', 'a_b-c')).toEqual({ location: '/checks/a_b-c', statusUrl: 'http://h:8080/api/checks/a_b-c', progressUrl: 'ws://h:8080/api/ws?jobId=a_b-c' });
  });
});
