/** POST /pools and PATCH /pools/{id} validation (src/http/pool-request.ts): defaults, every error body, the order, limits, fuzzing. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { ApiError } from '../../src/http/api-errors';
import { validatePoolCreate, validatePoolPatch, type PoolRequestOptions } from '../../src/http/pool-request';
import { DEFAULT_POOL_LIMITS } from '../../src/pools/limits';

const OPTS: PoolRequestOptions = {
  limits: { ...DEFAULT_POOL_LIMITS, maxProxiesPerPool: 3, maxProxiesPerAccount: 5, maxPoolsPerAccount: 2 },
  maxCustomUrls: 2,
  acceptedRegions: ['us1', 'de1'],
};

function fail(f: () => unknown): { status: number; body: Record<string, unknown>; headers: Record<string, string> } {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    const err = e as ApiError;
    return { status: err.status, body: err.body, headers: err.headers };
  }
  throw new Error('expected an ApiError');
}
const bad = (message: string) => ({ status: 400, body: { error: 'Invalid request', message } });
const msg = (f: () => unknown) => {
  const r = fail(f);
  return { status: r.status, body: r.body };
};

describe('POST /pools', () => {
  test('defaults: http, us1, 600 s, 5000 ms, https on, no custom URLs or sources', () => {
    const p = validatePoolCreate({ name: 'mine', proxies: ['1.1.1.1:80', '1.1.1.1:80', 'junk'] }, OPTS);
    expect(p.settings).toEqual({ name: 'mine', type: 'http', region: 'us1', intervalS: 600, timeoutMs: 5000, https: true, customUrls: [], sources: [] });
    expect(p.proxies.map((x) => x.raw)).toEqual(['1.1.1.1:80']);
    expect([p.totalInvalid, p.totalDuplicates]).toEqual([1, 1]);
  });

  test('every field given; proxies and text merged, de-duplicated across both', () => {
    const p = validatePoolCreate(
      {
        name: 'x',
        proxies: ['1.1.1.1:80'],
        text: '# list\n1.1.1.1:80\r\n2.2.2.2:80\n',
        type: 'auto',
        region: 'de1',
        interval_s: 60,
        timeout: 20000,
        https: false,
        customUrls: [{ url: 'https://example.com/' }],
        sources: [{ url: 'https://lists.example/a.txt', every_s: 300 }, { url: 'http://lists.example/b' }],
      },
      OPTS,
    );
    expect(p.settings).toMatchObject({ type: 'auto', region: 'de1', intervalS: 60, timeoutMs: 20000, https: false });
    expect(p.settings.customUrls).toEqual([{ name: 'example-com', url: 'https://example.com/', requiredStatusCodes: [200], caseSensitive: false }]);
    expect(p.settings.sources).toEqual([{ url: 'https://lists.example/a.txt', everyS: 300 }, { url: 'http://lists.example/b', everyS: 3600 }]);
    expect(p.proxies.map((x) => x.host)).toEqual(['1.1.1.1', '2.2.2.2']);
    expect(p.totalDuplicates).toBe(1);
  });

  test('sources alone make a pool (its list comes later)', () => {
    expect(validatePoolCreate({ name: 'x', sources: [{ url: 'https://l.example/' }] }, OPTS).proxies).toEqual([]);
  });

  test('shape errors', () => {
    expect(msg(() => validatePoolCreate([], OPTS))).toEqual(bad('body: expected a JSON object'));
    expect(msg(() => validatePoolCreate({ proxies: ['1.1.1.1:1'] }, OPTS))).toEqual(bad('name: required'));
    expect(msg(() => validatePoolCreate({ name: 'x' }, OPTS))).toEqual(bad('proxies: required (an array of addresses), or text, or sources'));
    expect(msg(() => validatePoolCreate({ name: 'x', proxies: '1.1.1.1:1' }, OPTS))).toEqual(bad('proxies: expected an array of strings'));
    expect(msg(() => validatePoolCreate({ name: 'x', text: 5 }, OPTS))).toEqual(bad('text: expected a string'));
    expect(msg(() => validatePoolCreate({ name: 'x', text: 'a', sources: {} }, OPTS))).toEqual(bad('sources: expected an array of objects'));
  });

  test('each field rule, with the house bodies', () => {
    const base = { name: 'x', proxies: ['1.1.1.1:1'] };
    expect(msg(() => validatePoolCreate({ ...base, name: '' }, OPTS)).status).toBe(400);
    expect(msg(() => validatePoolCreate({ ...base, name: 'a'.repeat(101) }, OPTS)).body.message).toContain('name: expected 1 to 100');
    expect(validatePoolCreate({ ...base, name: '😀'.repeat(100) }, OPTS).settings.name.length).toBe(200);
    expect(msg(() => validatePoolCreate({ ...base, name: 'a\nb' }, OPTS)).status).toBe(400);
    expect(msg(() => validatePoolCreate({ ...base, region: 'xx1' }, OPTS)).body.error).toBe('Invalid region');
    expect(msg(() => validatePoolCreate({ ...base, type: 'socks6' }, OPTS)).body.error).toBe('Invalid proxy type');
    expect(msg(() => validatePoolCreate({ ...base, interval_s: 59 }, OPTS))).toEqual(bad('interval_s: expected an integer from 60 (server setting POOL_MIN_INTERVAL_S) to 86400'));
    expect(msg(() => validatePoolCreate({ ...base, interval_s: 86401 }, OPTS)).status).toBe(400);
    expect(msg(() => validatePoolCreate({ ...base, interval_s: '600' }, OPTS)).status).toBe(400);
    expect(validatePoolCreate({ ...base, interval_s: 5 }, { ...OPTS, limits: { ...OPTS.limits, minIntervalS: 2 } }).settings.intervalS).toBe(5);
    expect(msg(() => validatePoolCreate({ ...base, timeout: 999 }, OPTS)).body.error).toBe('Invalid timeout');
    expect(msg(() => validatePoolCreate({ ...base, timeout: '5000' }, OPTS)).body.error).toBe('Invalid timeout');
    expect(msg(() => validatePoolCreate({ ...base, https: 'yes' }, OPTS))).toEqual(bad('https: expected true or false'));
    expect(msg(() => validatePoolCreate({ ...base, customUrls: [{}, {}, {}] }, OPTS)).status).toBe(413);
    expect(msg(() => validatePoolCreate({ ...base, customUrls: [{ url: 'ftp://x' }] }, OPTS))).toEqual(bad('customUrls[0].url: expected an http or https URL'));
    expect(msg(() => validatePoolCreate({ ...base, sources: [{ url: 'https://a.example/', every_s: 299 }] }, OPTS))).toEqual(
      bad('sources[0].every_s: expected an integer from 300 to 86400'),
    );
    expect(msg(() => validatePoolCreate({ ...base, sources: [{ url: 'file:///etc/passwd' }] }, OPTS))).toEqual(bad('sources[0].url: expected an http or https URL'));
    expect(msg(() => validatePoolCreate({ ...base, sources: [5] }, OPTS))).toEqual(bad('sources[0]: expected an object {url, every_s}'));
    expect(msg(() => validatePoolCreate({ ...base, sources: Array(11).fill({ url: 'https://a.example/' }) }, OPTS))).toEqual(bad('sources: at most 10 list URLs'));
  });

  test('no valid proxy: 400; more unique than a pool holds: 413 per pool', () => {
    expect(msg(() => validatePoolCreate({ name: 'x', proxies: ['junk'] }, OPTS)).body.error).toBe('No valid proxies found');
    expect(msg(() => validatePoolCreate({ name: 'x', proxies: ['1.1.1.1:1', '1.1.1.1:2'], text: '1.1.1.1:3\n1.1.1.1:4' }, OPTS))).toEqual({
      status: 413,
      body: { error: 'Too many proxies', message: 'At most 3 proxies per pool (server setting MAX_PROXIES_PER_POOL)', max: 3 },
    });
    expect(validatePoolCreate({ name: 'x', proxies: ['1.1.1.1:1', '1.1.1.1:2'], text: '1.1.1.1:2\n1.1.1.1:3' }, OPTS).proxies.length).toBe(3);
  });

  test('the order: shape before name before region before type before interval', () => {
    expect(msg(() => validatePoolCreate({ name: '', region: 'zz', type: 'zz' }, OPTS))).toEqual(bad('proxies: required (an array of addresses), or text, or sources'));
    expect(msg(() => validatePoolCreate({ name: '', text: 'x', region: 'zz' }, OPTS)).body.message).toContain('name:');
    expect(msg(() => validatePoolCreate({ name: 'x', text: 'x', region: 'zz', type: 'zz' }, OPTS)).body.error).toBe('Invalid region');
    expect(msg(() => validatePoolCreate({ name: 'x', text: 'x', type: 'zz', interval_s: 1 }, OPTS)).body.error).toBe('Invalid proxy type');
  });
});

describe('targets (customUrls names)', () => {
  const create = (customUrls: unknown) => validatePoolCreate({ name: 'x', proxies: ['1.1.1.1:80'], customUrls }, OPTS);
  test('names given or made from the host, unique', () => {
    expect(create([{ url: 'https://Shop.example/' }, { url: 'https://shop.example/b' }]).settings.customUrls.map((r) => r.name)).toEqual(['shop-example', 'shop-example-2']);
    expect(create([{ url: 'https://Shop.example/' }, { url: 'http://127.0.0.1:9/', name: 'local' }]).settings.customUrls.map((r) => r.name)).toEqual(['shop-example', 'local']);
  });
  test('bad names: 400 with the field path', () => {
    expect(msg(() => create([{ url: 'https://a.example/', name: 'Shop' }]))).toEqual(bad('customUrls[0].name: expected 1 to 32 of a-z, 0-9 and -'));
    expect(msg(() => create([{ url: 'https://a.example/', name: '' }]))).toEqual(bad('customUrls[0].name: expected 1 to 32 of a-z, 0-9 and -'));
    expect(msg(() => create([{ url: 'https://a.example/', name: 'a'.repeat(33) }]))).toEqual(bad('customUrls[0].name: expected 1 to 32 of a-z, 0-9 and -'));
    expect(msg(() => create([{ url: 'https://a.example/', name: 7 }]))).toEqual(bad('customUrls[0].name: expected 1 to 32 of a-z, 0-9 and -'));
    expect(msg(() => create([{ url: 'https://a.example/', name: 'a' }, { url: 'https://b.example/', name: 'a' }]))).toEqual(bad('customUrls[1].name: "a" given twice'));
  });
  test('PATCH customUrls replaces the list ([] removes every target); each rule checked as in POST', () => {
    expect(validatePoolPatch({ customUrls: [] }, OPTS)).toEqual({ customUrls: [], schemes: { http: 0, socks4: 0, socks5: 0 } });
    expect(validatePoolPatch({ customUrls: [{ url: 'https://a.example/', name: 'shop', requiredText: 'ok' }] }, OPTS).customUrls).toEqual([
      { name: 'shop', url: 'https://a.example/', requiredStatusCodes: [200], requiredText: 'ok', caseSensitive: false },
    ]);
    expect(msg(() => validatePoolPatch({ customUrls: {} }, OPTS))).toEqual(bad('customUrls: expected an array of objects'));
    expect(msg(() => validatePoolPatch({ customUrls: [{ url: 'ftp://a.example/' }] }, OPTS)).status).toBe(400);
    expect(msg(() => validatePoolPatch({ customUrls: [{ url: 'https://a.example/', name: 'A' }] }, OPTS))).toEqual(bad('customUrls[0].name: expected 1 to 32 of a-z, 0-9 and -'));
  });
});

describe('PATCH /pools/{id}', () => {
  test('any of the fields; add and remove parsed', () => {
    expect(validatePoolPatch({ name: 'n', interval_s: 120, timeout: 3000, https: false, state: 'paused' }, OPTS)).toEqual({
      name: 'n',
      intervalS: 120,
      timeoutMs: 3000,
      https: false,
      state: 'paused',
      schemes: { http: 0, socks4: 0, socks5: 0 },
    });
    const p = validatePoolPatch({ add: ['1.1.1.1:1', 'junk', '1.1.1.1:1'], remove: ['2.2.2.2:2', 'junk'] }, OPTS);
    expect(p.add).toMatchObject({ totalInvalid: 1, totalDuplicates: 1 });
    expect(p.add?.proxies.length).toBe(1);
    expect(p.remove).toMatchObject({ totalInvalid: 1, totalDuplicates: 0 });
  });

  test('nothing to change, bad values, bad lists', () => {
    expect(msg(() => validatePoolPatch({}, OPTS))).toEqual(bad('body: expected at least one of name, interval_s, timeout, https, state, customUrls, add, remove'));
    expect(msg(() => validatePoolPatch({ intervalS: 60 }, OPTS)).status).toBe(400);
    expect(msg(() => validatePoolPatch({ state: 'stopped' }, OPTS))).toEqual(bad('state: expected "active" or "paused"'));
    expect(msg(() => validatePoolPatch({ add: 'x' }, OPTS))).toEqual(bad('add: expected an array of strings'));
    expect(msg(() => validatePoolPatch({ add: ['junk'] }, OPTS)).body.error).toBe('No valid proxies found');
    expect(msg(() => validatePoolPatch({ add: ['1.1.1.1:1', '1.1.1.1:2', '1.1.1.1:3', '1.1.1.1:4'] }, OPTS)).status).toBe(413);
    expect(validatePoolPatch({ add: [] }, OPTS).add?.proxies).toEqual([]);
    expect(validatePoolPatch({ remove: Array.from({ length: 10 }, (_, i) => `1.1.1.1:${i + 1}`) }, OPTS).remove?.proxies.length).toBe(10);
  });
});

describe('fuzzing', () => {
  const isContractError = (e: unknown) => e instanceof ApiError && [400, 413].includes(e.status);
  test('any JSON body: a typed value or a 400/413 ApiError, nothing else', () => {
    const field = fc.oneof(fc.anything(), fc.constantFrom('x', 60, 5000, true, 'active', ['1.1.1.1:1'], [{ url: 'https://a.example/' }]));
    const body = fc.oneof(
      fc.anything(),
      fc.record(
        { name: field, proxies: field, text: field, type: field, region: field, interval_s: field, timeout: field, https: field, customUrls: field, sources: field, state: field, add: field, remove: field },
        { requiredKeys: [] },
      ),
    );
    fc.assert(
      fc.property(body, (b) => {
        for (const f of [validatePoolCreate, validatePoolPatch]) {
          try {
            f(b, OPTS);
          } catch (e) {
            if (!isContractError(e)) throw e;
          }
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('schemes in a pool\'s lists (DECISIONS "Mixed lists": a pool proxy keeps its own protocol)', () => {
  test('a scheme is the proxy\'s protocol and part of its identity; the pool\'s own type is none; the schemes named are counted', () => {
    const c = validatePoolCreate({ name: 'x', proxies: ['socks5://1.1.1.1:1', 'http://1.1.1.1:1'], text: '1.1.1.1:1\nsocks5h://1.1.1.1:1\nsocks4://3.3.3.3:3\n' }, OPTS);
    expect(c.proxies.map((p) => [p.host, p.protocol ?? null])).toEqual([
      ['1.1.1.1', 'socks5'],
      ['1.1.1.1', null],
      ['3.3.3.3', 'socks4'],
    ]);
    expect(c.totalDuplicates).toBe(2);
    expect(c.schemes).toEqual({ http: 1, socks4: 1, socks5: 2 });
    // PATCH does not know the pool's type: every scheme kept (the store's SQL folds the pool's own into none)
    const p = validatePoolPatch({ add: ['socks5://1.1.1.1:1', 'http://2.2.2.2:2'] }, OPTS);
    expect(p.add!.proxies.map((x) => x.protocol)).toEqual(['socks5', 'http']);
    expect(p.schemes).toEqual({ http: 1, socks4: 0, socks5: 1 });
    expect(validatePoolCreate({ name: 'a', type: 'auto', proxies: ['socks4://1.1.1.1:1'] }, OPTS).proxies[0]!.protocol).toBe('socks4');
  });
});
