/** Tests for src/http/check-request.ts: defaults, every error body, the order of checks. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { ApiError } from '../../src/http/api-errors';
import { validateCheckJson, validateCheckRaw, type CheckRequestOptions } from '../../src/http/check-request';
import { InvalidLines } from '../../src/proxy/invalid-lines';

const REGIONS = ['sg1', 'us1', 'de1'] as const;
const OPTS: CheckRequestOptions = { maxProxies: 3, maxCustomUrls: 2, acceptedRegions: REGIONS };

/** Run f, expecting an ApiError; return its status and body. */
function fail(f: () => unknown): { status: number; body: unknown } {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    const err = e as ApiError;
    return { status: err.status, body: err.body };
  }
  throw new Error('expected an ApiError');
}

const bad = (message: string) => ({ status: 400, body: { error: 'Invalid request', message } });
const INVALID_REGION = {
  status: 400,
  body: { error: 'Invalid region', message: 'Region must be one of: sg1, us1, de1', available_regions: ['sg1', 'us1', 'de1'] },
};
const INVALID_TYPE = {
  status: 400,
  body: {
    error: 'Invalid proxy type',
    message: 'Proxy type must be one of: http, socks4, socks5',
    available_types: ['http', 'socks4', 'socks5'],
  },
};
const INVALID_TIMEOUT = {
  status: 400,
  body: {
    error: 'Invalid timeout',
    message: 'timeout must be an integer number of milliseconds from 1000 to 20000',
    min: 1000,
    max: 20000,
  },
};
const INVALID_JOB_ID = {
  status: 400,
  body: { error: 'Invalid jobId', message: 'jobId must be 3 to 64 characters of letters, digits, "_" or "-"' },
};
const NO_VALID = {
  status: 400,
  body: {
    error: 'No valid proxies found',
    message:
      'Please provide at least one proxy in a supported format: host:port, username:password@host:port or host:port:username:password',
  },
};
const TOO_MANY_PROXIES = { status: 413, body: { error: 'Too many proxies', message: 'At most 3 unique proxies per request (server setting MAX_PROXIES)', max: 3 } };
const TOO_MANY_URLS = { status: 413, body: { error: 'Too many custom URLs', message: 'At most 2 custom URLs per request (server setting MAX_CUSTOM_URLS)', max: 2 } };
const INVALID_SAMPLES = bad('samples: expected an integer from 1 to 10');

const P = ['1.2.3.4:80'];

/** A query string from a record (an array value: the parameter repeated). */
function q(params: Record<string, string | string[]>): URLSearchParams {
  const out = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) for (const one of [v].flat()) out.append(k, one);
  return out;
}

describe('validateCheckJson: defaults and values', () => {
  test('minimal body gets the defaults', () => {
    const r = validateCheckJson({ proxies: ['1.2.3.4:80', 'bad', '1.2.3.4:80', '', 'u:p@h.io:1'] }, OPTS);
    expect(r).toEqual({
      route: 'check',
      proxies: [
        { host: '1.2.3.4', port: 80, format: 'standard', raw: '1.2.3.4:80' },
        { host: 'h.io', port: 1, username: 'u', password: 'p', format: 'url_auth', raw: 'u:p@h.io:1' },
      ],
      totalInvalid: 1,
      invalidLines: expect.any(InvalidLines),
      totalDuplicates: 1,
      region: 'us1',
      type: 'http',
      timeoutMs: 2000,
      samples: 1,
      jobId: null,
      customUrls: [],
    });
  });

  test('timeout default is 2000 for SOCKS too', () => {
    expect(validateCheckJson({ proxies: P, type: 'socks5' }, OPTS).timeoutMs).toBe(2000);
  });

  test('type "auto" (an extension) is accepted; timeout default 2000 as for any type', () => {
    const r = validateCheckJson({ proxies: P, type: 'auto' }, OPTS);
    expect([r.type, r.timeoutMs]).toEqual(['auto', 2000]);
  });

  test('an unknown type is 400 with the contract body: auto is not listed', () => {
    expect(fail(() => validateCheckJson({ proxies: P, type: 'AUTO' }, OPTS))).toEqual(INVALID_TYPE);
    expect(fail(() => validateCheckJson({ proxies: P, type: 'https' }, OPTS))).toEqual(INVALID_TYPE);
  });

  test('null fields mean the default; unknown fields are ignored', () => {
    const r = validateCheckJson(
      { proxies: P, region: null, type: null, timeout: null, jobId: null, customUrls: null, extra: { x: 1 } },
      OPTS,
    );
    expect([r.region, r.type, r.timeoutMs, r.jobId, r.customUrls]).toEqual(['us1', 'http', 2000, null, []]);
  });

  test('explicit values are taken', () => {
    const r = validateCheckJson({ proxies: P, region: 'de1', type: 'socks4', timeout: 20000, jobId: 'job_1-A' }, OPTS);
    expect([r.region, r.type, r.timeoutMs, r.jobId]).toEqual(['de1', 'socks4', 20000, 'job_1-A']);
    expect(validateCheckJson({ proxies: P, timeout: 1000 }, OPTS).timeoutMs).toBe(1000);
  });

  test('defaultRegion option', () => {
    expect(validateCheckJson({ proxies: P }, { ...OPTS, defaultRegion: 'sg1' }).region).toBe('sg1');
  });

  test('custom URL rules get their defaults', () => {
    const r = validateCheckJson(
      {
        proxies: P,
        customUrls: [
          { url: 'https://example.com/a?b=1' },
          { url: 'HTTP://h.io', requiredStatusCodes: [200, 204, 599, 100], requiredText: 'Ok', caseSensitive: true, x: 1 },
        ],
      },
      OPTS,
    );
    expect(r.customUrls).toEqual([
      { url: 'https://example.com/a?b=1', requiredStatusCodes: [200], caseSensitive: false },
      { url: 'HTTP://h.io', requiredStatusCodes: [200, 204, 599, 100], requiredText: 'Ok', caseSensitive: true },
    ]);
    expect('requiredText' in (r.customUrls[0] ?? {})).toBe(false);
  });

  test('jobId bounds: 3 and 64 characters', () => {
    expect(validateCheckJson({ proxies: P, jobId: 'abc' }, OPTS).jobId).toBe('abc');
    expect(validateCheckJson({ proxies: P, jobId: 'a'.repeat(64) }, OPTS).jobId).toBe('a'.repeat(64));
  });

  test('exactly maxProxies unique proxies (plus duplicates) is fine', () => {
    const r = validateCheckJson({ proxies: ['a.io:1', 'b.io:1', 'c.io:1', 'a.io:1'] }, OPTS);
    expect(r.proxies.length).toBe(3);
    expect(r.totalDuplicates).toBe(1);
  });
});

describe('validateCheckJson: errors', () => {
  test.each<[string, unknown, { status: number; body: unknown }]>([
    ['body is an array', [P], bad('body: expected a JSON object')],
    ['body is null', null, bad('body: expected a JSON object')],
    ['body is a string', 'x', bad('body: expected a JSON object')],
    ['proxies missing', {}, bad('proxies: required, expected an array of strings')],
    ['proxies a string', { proxies: '1.2.3.4:80' }, bad('proxies: expected an array of strings')],
    ['proxies an object', { proxies: { a: 1 } }, bad('proxies: expected an array of strings')],
    ['region a number', { proxies: P, region: 1 }, bad('region: expected a string')],
    ['type a boolean', { proxies: P, type: true }, bad('type: expected a string')],
    ['jobId a number', { proxies: P, jobId: 12345 }, bad('jobId: expected a string')],
    ['customUrls an object', { proxies: P, customUrls: {} }, bad('customUrls: expected an array of objects')],
    ['custom rule a string', { proxies: P, customUrls: ['http://a.io'] }, bad('customUrls[0]: expected an object')],
    ['custom url missing', { proxies: P, customUrls: [{}] }, bad('customUrls[0].url: required')],
    ['custom url a number', { proxies: P, customUrls: [{ url: 1 }] }, bad('customUrls[0].url: expected a string')],
    ...['ftp://a.io', 'a.io', 'http:a.io', 'http://', 'https:///x', 'http:\\\\a.io', ' http://a.io', 'http://a.io/\nx', 'http://a.io/ x', 'javascript:alert(1)', 'http://[::1'].map(
      (u): [string, unknown, { status: number; body: unknown }] => [
        `custom url ${JSON.stringify(u)}`,
        { proxies: P, customUrls: [{ url: 'http://ok.io' }, { url: u }] },
        bad('customUrls[1].url: expected an http or https URL'),
      ],
    ),
    [
      'custom url too long',
      { proxies: P, customUrls: [{ url: `http://a.io/${'x'.repeat(2048)}` }] },
      bad('customUrls[0].url: longer than 2048 characters'),
    ],
    [
      'status codes empty',
      { proxies: P, customUrls: [{ url: 'http://a.io', requiredStatusCodes: [] }] },
      bad('customUrls[0].requiredStatusCodes: expected a non-empty array of at most 100 integers'),
    ],
    [
      'status codes not an array',
      { proxies: P, customUrls: [{ url: 'http://a.io', requiredStatusCodes: 200 }] },
      bad('customUrls[0].requiredStatusCodes: expected a non-empty array of at most 100 integers'),
    ],
    ...[99, 600, 200.5, '200', null].map((c): [string, unknown, { status: number; body: unknown }] => [
      `status code ${JSON.stringify(c)}`,
      { proxies: P, customUrls: [{ url: 'http://a.io', requiredStatusCodes: [200, c] }] },
      bad('customUrls[0].requiredStatusCodes[1]: expected an integer from 100 to 599'),
    ]),
    [
      'requiredText a number',
      { proxies: P, customUrls: [{ url: 'http://a.io', requiredText: 5 }] },
      bad('customUrls[0].requiredText: expected a string'),
    ],
    [
      'requiredText too long',
      { proxies: P, customUrls: [{ url: 'http://a.io', requiredText: 'x'.repeat(1025) }] },
      bad('customUrls[0].requiredText: longer than 1024 characters'),
    ],
    [
      'caseSensitive a string',
      { proxies: P, customUrls: [{ url: 'http://a.io', caseSensitive: 'yes' }] },
      bad('customUrls[0].caseSensitive: expected a boolean'),
    ],
    ['unknown region', { proxies: P, region: 'mars1' }, INVALID_REGION],
    ['region in upper case', { proxies: P, region: 'US1' }, INVALID_REGION],
    ['test1 region', { proxies: P, region: 'test1' }, INVALID_REGION],
    ['empty region', { proxies: P, region: '' }, INVALID_REGION],
    ['unknown type', { proxies: P, type: 'https' }, INVALID_TYPE],
    ['type in upper case', { proxies: P, type: 'HTTP' }, INVALID_TYPE],
    ['timeout too small', { proxies: P, timeout: 999 }, INVALID_TIMEOUT],
    ['timeout too big', { proxies: P, timeout: 20001 }, INVALID_TIMEOUT],
    ['timeout with a fraction', { proxies: P, timeout: 1500.5 }, INVALID_TIMEOUT],
    ['timeout a string', { proxies: P, timeout: '2000' }, INVALID_TIMEOUT],
    ['timeout a boolean', { proxies: P, timeout: true }, INVALID_TIMEOUT],
    ['timeout NaN-like', { proxies: P, timeout: Number.NaN }, INVALID_TIMEOUT],
    ['timeout negative', { proxies: P, timeout: -2000 }, INVALID_TIMEOUT],
    ['jobId too short', { proxies: P, jobId: 'ab' }, INVALID_JOB_ID],
    ['jobId too long', { proxies: P, jobId: 'a'.repeat(65) }, INVALID_JOB_ID],
    ['jobId with a dot', { proxies: P, jobId: 'job.1' }, INVALID_JOB_ID],
    ['jobId with a space', { proxies: P, jobId: 'job 1' }, INVALID_JOB_ID],
    ['jobId empty', { proxies: P, jobId: '' }, INVALID_JOB_ID],
    ['too many custom URLs', { proxies: P, customUrls: [{ url: 'http://a.io' }, { url: 'http://b.io' }, { url: 'http://c.io' }] }, TOO_MANY_URLS],
    ['empty proxies', { proxies: [] }, NO_VALID],
    ['only invalid, blank and comment entries', { proxies: ['x', '', '# c', 5, null] }, NO_VALID],
    ['too many unique proxies', { proxies: ['a.io:1', 'b.io:1', 'c.io:1', 'd.io:1'] }, TOO_MANY_PROXIES],
  ])('%s', (_name, body, expected) => {
    expect(fail(() => validateCheckJson(body, OPTS))).toEqual(expected);
  });
});

describe('samples (an extension)', () => {
  test('/check: absent or null is 1; integers 1..10 are taken; type auto too', () => {
    expect(validateCheckJson({ proxies: P }, OPTS).samples).toBe(1);
    expect(validateCheckJson({ proxies: P, samples: null }, OPTS).samples).toBe(1);
    for (const n of [1, 2, 5, 10]) expect(validateCheckJson({ proxies: P, samples: n }, OPTS).samples).toBe(n);
    expect(validateCheckJson({ proxies: P, samples: 3, type: 'auto' }, OPTS)).toMatchObject({ type: 'auto', samples: 3 });
  });

  test.each<[string, unknown]>([
    ['zero', 0],
    ['eleven', 11],
    ['negative', -1],
    ['a fraction', 2.5],
    ['a numeric string', '3'],
    ['a boolean', true],
    ['an array', [3]],
    ['NaN-ish object', {}],
  ])('/check: %s is 400 Invalid request naming samples', (_name, samples) => {
    expect(fail(() => validateCheckJson({ proxies: P, samples }, OPTS))).toEqual(INVALID_SAMPLES);
  });

  test('/check-raw: ASCII digits 1..10; absent is 1', () => {
    expect(validateCheckRaw('a.io:1', q({}), OPTS).samples).toBe(1);
    expect(validateCheckRaw('a.io:1', q({ samples: '4' }), OPTS).samples).toBe(4);
    expect(validateCheckRaw('a.io:1', q({ samples: '010' }), OPTS).samples).toBe(10);
  });

  test.each<[string, Record<string, string | string[]>, { status: number; body: unknown }]>([
    ['zero', { samples: '0' }, INVALID_SAMPLES],
    ['eleven', { samples: '11' }, INVALID_SAMPLES],
    ['empty', { samples: '' }, INVALID_SAMPLES],
    ['signed', { samples: '+2' }, INVALID_SAMPLES],
    ['a fraction', { samples: '2.0' }, INVALID_SAMPLES],
    ['huge', { samples: '99999999999999999999' }, INVALID_SAMPLES],
    ['repeated', { samples: ['2', '2'] }, bad('samples: expected a single value, given 2 times')],
    ['repeated before region', { region: 'xx9', samples: ['2', '3'] }, bad('samples: expected a single value, given 2 times')],
    ['after timeout', { timeout: 'x', samples: '0' }, INVALID_TIMEOUT],
    ['before jobId', { samples: '0', jobId: '!' }, INVALID_SAMPLES],
  ])('/check-raw: %s', (_name, query, expected) => {
    expect(fail(() => validateCheckRaw('a.io:1', q(query), OPTS))).toEqual(expected);
  });

  test('/check order: after timeout, before jobId', () => {
    expect(fail(() => validateCheckJson({ proxies: P, timeout: 5, samples: 0 }, OPTS))).toEqual(INVALID_TIMEOUT);
    expect(fail(() => validateCheckJson({ proxies: P, samples: 0, jobId: '!' }, OPTS))).toEqual(INVALID_SAMPLES);
    expect(fail(() => validateCheckJson({ proxies: ['x'], samples: 11 }, OPTS))).toEqual(INVALID_SAMPLES);
  });
});

describe('validateCheckJson: order of checks', () => {
  const everythingWrong = {
    proxies: ['x', 'a.io:1', 'b.io:1', 'c.io:1', 'd.io:1'],
    region: 'mars1',
    type: 'ftp',
    timeout: 5,
    jobId: '!',
    customUrls: [{ url: 'http://a.io' }, { url: 'http://b.io' }, { url: 'http://c.io' }],
  };
  test.each<[string, Record<string, unknown>, { status: number; body: unknown }]>([
    ['shape before region', { customUrls: {} }, bad('customUrls: expected an array of objects')],
    ['a malformed rule after jobId (rules are looked at after the count)', { customUrls: [{ url: 'ftp://x' }], region: 'us1', type: 'http', timeout: 1000 }, INVALID_JOB_ID],
    ['custom URL count before any rule is looked at', { region: 'us1', type: 'http', timeout: 1000, jobId: 'abc', customUrls: [{ url: 'ftp://x' }, 5, null] }, TOO_MANY_URLS],
    ['each rule before proxies', { region: 'us1', type: 'http', timeout: 1000, jobId: 'abc', customUrls: [{ url: 'http://a.io' }, { url: 'ftp://x' }] }, bad('customUrls[1].url: expected an http or https URL')],
    ['shape (region type) first', { region: 7 }, bad('region: expected a string')],
    ['region before type', {}, INVALID_REGION],
    ['type before timeout', { region: 'us1' }, INVALID_TYPE],
    ['timeout before jobId', { region: 'us1', type: 'http' }, INVALID_TIMEOUT],
    ['jobId before custom URL count', { region: 'us1', type: 'http', timeout: 1000 }, INVALID_JOB_ID],
    ['custom URL count before proxies', { region: 'us1', type: 'http', timeout: 1000, jobId: 'abc' }, TOO_MANY_URLS],
    ['proxy limit last', { region: 'us1', type: 'http', timeout: 1000, jobId: 'abc', customUrls: [] }, TOO_MANY_PROXIES],
    ['no valid proxies before the limit', { region: 'us1', type: 'http', timeout: 1000, jobId: 'abc', customUrls: [], proxies: ['x'] }, NO_VALID],
  ])('%s', (_name, patch, expected) => {
    expect(fail(() => validateCheckJson({ ...everythingWrong, ...patch }, OPTS))).toEqual(expected);
  });
});

describe('validateCheckRaw', () => {
  test('defaults: timeout 5000 for http, 3000 for socks4/socks5', () => {
    const r = validateCheckRaw('1.2.3.4:80\r\nbad\r\n# c\r\n1.2.3.4:80\r\n', q({}), OPTS);
    expect(r).toEqual({
      route: 'check-raw',
      proxies: [{ host: '1.2.3.4', port: 80, format: 'standard', raw: '1.2.3.4:80' }],
      totalInvalid: 1,
      invalidLines: expect.any(InvalidLines),
      totalDuplicates: 1,
      region: 'us1',
      type: 'http',
      timeoutMs: 5000,
      samples: 1,
      jobId: null,
      customUrls: [],
    });
    expect(validateCheckRaw('a.io:1', q({ type: 'socks4' }), OPTS).timeoutMs).toBe(3000);
    expect(validateCheckRaw('a.io:1', q({ type: 'socks5' }), OPTS).timeoutMs).toBe(3000);
  });

  test('type=auto: accepted, default timeout 5000 (the http budget: auto tries http first)', () => {
    const r = validateCheckRaw('a.io:1', q({ type: 'auto' }), OPTS);
    expect([r.type, r.timeoutMs]).toEqual(['auto', 5000]);
    expect(validateCheckRaw('a.io:1', q({ type: 'auto', timeout: '1500' }), OPTS).timeoutMs).toBe(1500);
    expect(fail(() => validateCheckRaw('a.io:1', q({ type: 'Auto' }), OPTS))).toEqual(INVALID_TYPE);
  });

  test('query values are taken; unknown parameters (customUrls too, repeated or not) ignored', () => {
    const r = validateCheckRaw('a.io:1', q({ region: 'sg1', type: 'socks5', timeout: '07500', jobId: 'x-1', customUrls: 'http://a.io', foo: ['bar', 'baz'] }), OPTS);
    expect([r.region, r.type, r.timeoutMs, r.jobId, r.customUrls]).toEqual(['sg1', 'socks5', 7500, 'x-1', []]);
  });

  test.each<[string, string, Record<string, string | string[]>, { status: number; body: unknown }]>([
    ['repeated parameter', 'a.io:1', { region: ['us1', 'sg1'] }, bad('region: expected a single value, given 2 times')],
    ['repeated type (not its last value)', 'a.io:1', { type: ['http', 'socks5'] }, bad('type: expected a single value, given 2 times')],
    ['repeated with the same value', 'a.io:1', { timeout: ['2000', '2000', '2000'] }, bad('timeout: expected a single value, given 3 times')],
    ['repeated jobId', 'a.io:1', { jobId: ['abc', 'abd'] }, bad('jobId: expected a single value, given 2 times')],
    ['repeated parameter before region', 'a.io:1', { region: 'xx9', type: ['http', 'http'] }, bad('type: expected a single value, given 2 times')],
    ['unknown region', 'a.io:1', { region: 'xx9' }, INVALID_REGION],
    ['empty region', 'a.io:1', { region: '' }, INVALID_REGION],
    ['unknown type', 'a.io:1', { type: 'socks' }, INVALID_TYPE],
    ['timeout with a fraction', 'a.io:1', { timeout: '1500.5' }, INVALID_TIMEOUT],
    ['timeout signed', 'a.io:1', { timeout: '+2000' }, INVALID_TIMEOUT],
    ['timeout with spaces', 'a.io:1', { timeout: ' 2000' }, INVALID_TIMEOUT],
    ['timeout in exponent form', 'a.io:1', { timeout: '2e3' }, INVALID_TIMEOUT],
    ['timeout empty', 'a.io:1', { timeout: '' }, INVALID_TIMEOUT],
    ['timeout too big', 'a.io:1', { timeout: '99999999999999999999999' }, INVALID_TIMEOUT],
    ['timeout too small', 'a.io:1', { timeout: '999' }, INVALID_TIMEOUT],
    ['bad jobId', 'a.io:1', { jobId: 'a/b' }, INVALID_JOB_ID],
    ['empty body', '', {}, NO_VALID],
    ['only comments', '# a\n\n  \n', {}, NO_VALID],
    ['too many unique', 'a.io:1\nb.io:1\nc.io:1\nd.io:1\n', {}, TOO_MANY_PROXIES],
    ['region before type', 'x', { region: 'xx9', type: 'x' }, INVALID_REGION],
    ['type before timeout', 'x', { type: 'x', timeout: 'x' }, INVALID_TYPE],
    ['timeout before jobId', 'x', { timeout: 'x', jobId: '!' }, INVALID_TIMEOUT],
    ['jobId before proxies', 'x', { jobId: '!' }, INVALID_JOB_ID],
  ])('%s', (_name, text, query, expected) => {
    expect(fail(() => validateCheckRaw(text, q(query), OPTS))).toEqual(expected);
  });
});

describe('fuzz', () => {
  test('validateCheckJson only ever throws ApiError (400 or 413)', () => {
    const field = fc.oneof(fc.anything(), fc.constantFrom('us1', 'http', 'socks5', 2000, 'abc', ['1.2.3.4:80']));
    fc.assert(
      fc.property(
        fc.record(
          { proxies: fc.oneof(fc.anything(), fc.array(fc.oneof(fc.string(), fc.constant('1.2.3.4:80')))), region: field, type: field, timeout: field, samples: fc.oneof(field, fc.integer({ min: -2, max: 12 })), jobId: field, customUrls: fc.anything() },
          { requiredKeys: [] },
        ),
        (body) => {
          try {
            validateCheckJson(body, OPTS);
          } catch (e) {
            expect(e).toBeInstanceOf(ApiError);
            expect([400, 413]).toContain((e as ApiError).status);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
