/** POST /webhooks and PATCH /webhooks/{id} validation (src/http/webhook-request.ts): defaults, every rule's 400, the guard on literal addresses, fuzzing. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { ApiError } from '../../src/http/api-errors';
import { validateWebhookCreate, validateWebhookPatch } from '../../src/http/webhook-request';

const GUARDED = { allowPrivateTargets: false };
const OPEN = { allowPrivateTargets: true };

function fail(f: () => unknown): { status: number; body: Record<string, unknown> } {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    return { status: (e as ApiError).status, body: (e as ApiError).body };
  }
  throw new Error('expected an ApiError');
}
const bad = (message: string) => ({ status: 400, body: { error: 'Invalid request', message } });

describe('POST /webhooks', () => {
  test('defaults: the three pool events, all pools', () => {
    expect(validateWebhookCreate({ url: 'https://hooks.example.com/in' }, GUARDED)).toEqual({
      url: 'https://hooks.example.com/in',
      events: ['pool.proxies_changed', 'pool.paused', 'pool.resumed'],
      pools: null,
    });
    expect(validateWebhookCreate({ url: 'http://a.example/', events: ['check.completed'], pools: ['abcdefghij'] }, GUARDED)).toEqual({
      url: 'http://a.example/',
      events: ['check.completed'],
      pools: ['abcdefghij'],
    });
  });

  test('url: required, a string, http(s) only, at most 2 048 characters', () => {
    expect(fail(() => validateWebhookCreate({}, GUARDED))).toEqual(bad('url: required'));
    expect(fail(() => validateWebhookCreate({ url: 5 }, GUARDED))).toEqual(bad('url: expected a string'));
    expect(fail(() => validateWebhookCreate({ url: 'ftp://a.example/' }, GUARDED))).toEqual(bad('url: expected an http or https URL'));
    expect(fail(() => validateWebhookCreate({ url: 'javascript:alert(1)' }, GUARDED))).toEqual(bad('url: expected an http or https URL'));
    expect(fail(() => validateWebhookCreate({ url: `https://a.example/${'x'.repeat(2048)}` }, GUARDED))).toEqual(bad('url: longer than 2048 characters'));
    expect(validateWebhookCreate({ url: `https://a.example/${'x'.repeat(2048 - 18)}` }, GUARDED).url).toHaveLength(2048);
  });

  test('a literal private, loopback or link-local address is refused unless ALLOW_PRIVATE_TARGETS', () => {
    for (const u of ['http://127.0.0.1:8080/h', 'http://10.1.2.3/', 'http://[::1]/', 'http://169.254.169.254/latest', 'http://0x7f000001/']) {
      const r = fail(() => validateWebhookCreate({ url: u }, GUARDED));
      expect(r.status).toBe(400);
      expect(String(r.body.message)).toStartWith('url: ');
      expect(String(r.body.message)).toContain('ALLOW_PRIVATE_TARGETS=true');
      expect(validateWebhookCreate({ url: u }, OPEN).url).toBe(u);
    }
    expect(validateWebhookCreate({ url: 'http://1.1.1.1/' }, GUARDED).url).toBe('http://1.1.1.1/');
  });

  test('events: a non-empty array of known names, no repeats', () => {
    expect(fail(() => validateWebhookCreate({ url: 'https://a.example/', events: [] }, GUARDED))).toEqual(
      bad('events: expected a non-empty array of pool.proxies_changed, pool.paused, pool.resumed, check.completed'),
    );
    expect(fail(() => validateWebhookCreate({ url: 'https://a.example/', events: 'pool.paused' }, GUARDED)).status).toBe(400);
    expect(fail(() => validateWebhookCreate({ url: 'https://a.example/', events: ['pool.paused', 'proxy.up'] }, GUARDED))).toEqual(
      bad('events[1]: unknown event "proxy.up"; expected one of pool.proxies_changed, pool.paused, pool.resumed, check.completed'),
    );
    expect(fail(() => validateWebhookCreate({ url: 'https://a.example/', events: ['pool.paused', 'pool.paused'] }, GUARDED))).toEqual(bad('events[1]: pool.paused given twice'));
  });

  test('pools: null or pool ids, no repeats, at most 100', () => {
    expect(validateWebhookCreate({ url: 'https://a.example/', pools: null }, GUARDED).pools).toBeNull();
    expect(fail(() => validateWebhookCreate({ url: 'https://a.example/', pools: ['UPPER'] }, GUARDED))).toEqual(bad('pools[0]: expected a pool id'));
    expect(fail(() => validateWebhookCreate({ url: 'https://a.example/', pools: ['abcdefghij', 'abcdefghij'] }, GUARDED))).toEqual(bad('pools[1]: abcdefghij given twice'));
    const many = Array.from({ length: 101 }, (_, i) => `pool${String(i).padStart(8, '0')}`);
    expect(fail(() => validateWebhookCreate({ url: 'https://a.example/', pools: many }, GUARDED))).toEqual(bad('pools: expected null or an array of at most 100 pool ids'));
  });

  test('the body must be an object', () => {
    for (const b of [null, [], 'x', 3]) expect(fail(() => validateWebhookCreate(b, GUARDED))).toEqual(bad('body: expected a JSON object'));
  });
});

describe('PATCH /webhooks/{id}', () => {
  test('only what is given; pools null means all pools again; state', () => {
    expect(validateWebhookPatch({ state: 'disabled' }, GUARDED)).toEqual({ state: 'disabled' });
    expect(validateWebhookPatch({ pools: null }, GUARDED)).toEqual({ pools: null });
    expect(validateWebhookPatch({ url: 'https://b.example/', events: ['check.completed'] }, GUARDED)).toEqual({ url: 'https://b.example/', events: ['check.completed'] });
  });

  test('nothing to change, a bad state, the create rules', () => {
    expect(fail(() => validateWebhookPatch({}, GUARDED))).toEqual(bad('body: expected at least one of url, events, pools, state'));
    expect(fail(() => validateWebhookPatch({ stat: 'enabled' }, GUARDED))).toEqual(bad('body: expected at least one of url, events, pools, state'));
    expect(fail(() => validateWebhookPatch({ state: 'on' }, GUARDED))).toEqual(bad('state: expected "enabled" or "disabled"'));
    expect(fail(() => validateWebhookPatch({ url: 'http://192.168.1.1/' }, GUARDED)).status).toBe(400);
  });
});

describe('fuzzing', () => {
  test('any JSON value: a valid request or a 400 ApiError, nothing else', () => {
    const field = fc.oneof(fc.anything(), fc.constantFrom('https://a.example/', 'http://10.0.0.1/', ['pool.paused'], ['x'], null, ['abcdefghij'], 'enabled'));
    const body = fc.oneof(fc.anything(), fc.record({ url: field, events: field, pools: field, state: field }, { requiredKeys: [] }));
    fc.assert(
      fc.property(body, fc.boolean(), (b, allow) => {
        for (const f of [validateWebhookCreate, validateWebhookPatch]) {
          try {
            f(b, { allowPrivateTargets: allow });
          } catch (e) {
            if (!(e instanceof ApiError) || e.status !== 400) return false;
          }
        }
        return true;
      }),
      { numRuns: 2000 },
    );
  });
});
