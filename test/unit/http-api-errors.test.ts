/**
 * Tests for src/http/api-errors.ts: the ApiError class and every constructor's exact
 * status, body and headers, as the seed's error table and DECISIONS "Errors"
 * and "Input" prescribe.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import * as errors from '../../src/http/api-errors';
import {
  ApiError,
  apiKeyRequired,
  wsApiKeyRequired,
  poolWsApiKeyRequired,
  forbidden,
  insufficientChecks,
  internalError,
  invalidApiKey,
  invalidJobId,
  invalidRegion,
  invalidRequest,
  invalidTimeout,
  invalidType,
  jobAlreadyRunning,
  jobCancelled,
  jobNodeUnreachable,
  jobNotFound,
  jobNotRunning,
  linkExpired,
  methodNotAllowed,
  noValidProxies,
  notFound,
  poolNotFound,
  payloadTooLarge,
  serviceUnavailable,
  regionUnavailable,
  tooManyCustomUrls,
  tooManyLargeBodies,
  tooManyPoolProxies,
  tooManyPools,
  tooManyWebhooks,
  webhookNotFound,
  tooManyProxies,
  tooManyRequests,
  unsupportedMediaType,
} from '../../src/http/api-errors';

function expectError(e: ApiError, status: number, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  expect(e).toBeInstanceOf(ApiError);
  expect(e).toBeInstanceOf(Error);
  expect(e.name).toBe('ApiError');
  expect(e.status).toBe(status);
  expect(e.body).toStrictEqual(body);
  expect(e.headers).toStrictEqual(headers);
  // bodies are plain JSON: they survive a round trip unchanged
  expect(JSON.parse(JSON.stringify(e.body))).toStrictEqual(body);
  expect(JSON.stringify(e.body)).not.toContain('stack');
}

describe('ApiError', () => {
  test('message is the body\'s error, else its message, else "HTTP <status>"', () => {
    expect(new ApiError(418, { error: 'Teapot', message: 'short and stout' }).message).toBe('Teapot');
    expect(new ApiError(405, { message: 'no' }).message).toBe('no');
    expect(new ApiError(599, {}).message).toBe('HTTP 599');
  });

  test('keeps status, body, headers and cause; headers default to {}', () => {
    const cause = new Error('db down');
    const e = new ApiError(503, { error: 'x', message: 'y' }, { 'Retry-After': '5' }, { cause });
    expect(e.status).toBe(503);
    expect(e.headers).toEqual({ 'Retry-After': '5' });
    expect(e.cause).toBe(cause);
    expect(new ApiError(400, { error: 'x' }).headers).toEqual({});
    expect(new ApiError(400, { error: 'x' }).cause).toBeUndefined();
    expect(e.stack).toContain('ApiError');
  });

  test('each call builds a fresh error (no shared mutable body)', () => {
    const a = notFound();
    const b = notFound();
    expect(a).not.toBe(b);
    expect(a.body).not.toBe(b.body);
    (a.body as Record<string, unknown>).extra = 1;
    expect(b.body).not.toHaveProperty('extra');
  });

  test('every exported constructor is covered here and returns an ApiError', () => {
    const calls: Record<string, () => ApiError> = {
      invalidRequest: () => invalidRequest('x'),
      invalidRegion: () => invalidRegion(['us1']),
      invalidType: () => invalidType(['http']),
      invalidTimeout: () => invalidTimeout(1000, 20000),
      noValidProxies: () => noValidProxies(),
      invalidJobId: () => invalidJobId(),
      apiKeyRequired: () => apiKeyRequired(),
      wsApiKeyRequired: () => wsApiKeyRequired(),
      poolWsApiKeyRequired: () => poolWsApiKeyRequired(),
      invalidApiKey: () => invalidApiKey(),
      insufficientChecks: () => insufficientChecks(2, 1),
      forbidden: () => forbidden('x'),
      notFound: () => notFound(),
      poolNotFound: () => poolNotFound(),
      methodNotAllowed: () => methodNotAllowed('/check', ['POST']),
      jobAlreadyRunning: () => jobAlreadyRunning('job'),
      linkExpired: () => linkExpired(),
      tooManyProxies: () => tooManyProxies(1),
      tooManyPoolProxies: () => tooManyPoolProxies(1, 'pool'),
      tooManyPools: () => tooManyPools(1),
      tooManyWebhooks: () => tooManyWebhooks(10),
      webhookNotFound: () => webhookNotFound(),
      payloadTooLarge: () => payloadTooLarge(1),
      tooManyCustomUrls: () => tooManyCustomUrls(1),
      unsupportedMediaType: () => unsupportedMediaType('application/json'),
      tooManyRequests: () => tooManyRequests(1),
      internalError: () => internalError(),
      serviceUnavailable: () => serviceUnavailable('x'),
      regionUnavailable: () => regionUnavailable('de1'),
      tooManyLargeBodies: () => tooManyLargeBodies(1),
      jobNotRunning: () => jobNotRunning('job', 'completed'),
      jobCancelled: () => jobCancelled(),
      jobNotFound: () => jobNotFound('job'),
      jobNodeUnreachable: () => jobNodeUnreachable(),
    };
    const exported = Object.keys(errors).filter((k) => k !== 'ApiError' && typeof (errors as Record<string, unknown>)[k] === 'function');
    expect(exported.sort()).toEqual(Object.keys(calls).sort());
    for (const make of Object.values(calls)) {
      const e = make();
      expect(e).toBeInstanceOf(ApiError);
      expect(e.status).toBeGreaterThanOrEqual(400);
      expect(typeof e.body.message).toBe('string');
    }
  });
});

describe('the job resource errors', () => {
  test('409 Job not running names the job and how it ended; 404 and 503 are the contract bodies', () => {
    expectError(jobNotRunning('job-1', 'cancelled'), 409, {
      error: 'Job not running',
      message: 'Job job-1 has already ended (cancelled); there is nothing to cancel',
      jobId: 'job-1',
      status: 'cancelled',
    });
    expect(jobNotFound('job-1').status).toBe(404);
    expect(jobNotFound('job-1').body.error).toBe('Not found');
    const down = jobNodeUnreachable();
    expect(down.status).toBe(503);
    expect(down.body.error).toBe('Service unavailable');
    expect(down.headers).toEqual({ 'Retry-After': '5' });
  });
});

describe('503 Region unavailable', () => {
  test('names the region, nothing else', () => {
    expectError(regionUnavailable('de1'), 503, {
      error: 'Region unavailable',
      message: 'No probe agent is serving region de1 right now; retry later or pick another region',
      region: 'de1',
    });
  });
});

describe('400', () => {
  test('Invalid request: the field path message as given', () => {
    expectError(invalidRequest('proxies: expected an array of strings'), 400, {
      error: 'Invalid request',
      message: 'proxies: expected an array of strings',
    });
  });

  test('Invalid region with available_regions (a copy of the list)', () => {
    const list = ['sg1', 'us1'];
    const e = invalidRegion(list);
    expectError(e, 400, {
      error: 'Invalid region',
      message: 'Region must be one of: sg1, us1',
      available_regions: ['sg1', 'us1'],
    });
    expect(e.body.available_regions).not.toBe(list);
    list.push('zz1');
    expect(e.body.available_regions).toEqual(['sg1', 'us1']);
  });

  test('Invalid proxy type with available_types', () => {
    expectError(invalidType(['http', 'socks4', 'socks5']), 400, {
      error: 'Invalid proxy type',
      message: 'Proxy type must be one of: http, socks4, socks5',
      available_types: ['http', 'socks4', 'socks5'],
    });
  });

  test('Invalid timeout with min and max', () => {
    expectError(invalidTimeout(1000, 20000), 400, {
      error: 'Invalid timeout',
      message: 'timeout must be an integer number of milliseconds from 1000 to 20000',
      min: 1000,
      max: 20000,
    });
  });

  test('No valid proxies found, asking for a proxy in a supported format', () => {
    const e = noValidProxies();
    expectError(e, 400, {
      error: 'No valid proxies found',
      message:
        'Please provide at least one proxy in a supported format: host:port, username:password@host:port or host:port:username:password',
    });
  });

  test('Invalid jobId', () => {
    expectError(invalidJobId(), 400, {
      error: 'Invalid jobId',
      message: 'jobId must be 3 to 64 characters of letters, digits, "_" or "-"',
    });
  });
});

describe('401 / 402 / 403', () => {
  test('API key is required (mentions both headers)', () => {
    const e = apiKeyRequired();
    expectError(e, 401, {
      error: 'API key is required',
      message: 'Please provide your API key in the X-API-Key header or the Authorization header (Bearer <key>)',
    });
    expect(e.body.message).toContain('X-API-Key');
    expect(e.body.message).toContain('Authorization');
  });

  test('/ws under WS_REQUIRE_AUTH: the same error, a message naming the setting and the three ways to give the key', () => {
    expectError(wsApiKeyRequired(), 401, {
      error: 'API key is required',
      message:
        'This server requires an API key on /ws (server setting WS_REQUIRE_AUTH): provide it in the X-API-Key header, the Authorization header (Bearer <key>) or the apiKey query parameter',
    });
  });

  test('/ws?pool= without a key: always a 401, naming the three ways to give it', () => {
    expectError(poolWsApiKeyRequired(), 401, {
      error: 'API key is required',
      message: "A pool's events need its owner's API key: provide it in the X-API-Key header, the Authorization header (Bearer <key>) or the apiKey query parameter",
    });
  });

  test('Invalid API key', () => {
    expectError(invalidApiKey(), 401, { error: 'Invalid API key', message: 'The provided API key is not valid' });
  });

  test('Insufficient Checks: DECISIONS message, required, available, shortfall', () => {
    expectError(insufficientChecks(150, 40), 402, {
      error: 'Insufficient Checks',
      message: 'You need 150 checks but only have 40 remaining.',
      required: 150,
      available: 40,
      shortfall: 110,
    });
    expectError(insufficientChecks(1, 0), 402, {
      error: 'Insufficient Checks',
      message: 'You need 1 checks but only have 0 remaining.',
      required: 1,
      available: 0,
      shortfall: 1,
    });
  });

  test('Insufficient Checks: shortfall is always required minus available', () => {
    fc.assert(
      fc.property(fc.nat(1_000_000), fc.nat(1_000_000), (a, extra) => {
        const required = a + extra + 1;
        const body = insufficientChecks(required, a).body;
        return (
          body.shortfall === required - a &&
          body.message === `You need ${required} checks but only have ${a} remaining.` &&
          body.required === required &&
          body.available === a
        );
      }),
      { numRuns: 100 },
    );
  });

  test('Forbidden (bad result-link token)', () => {
    expectError(forbidden('The result link token is not valid'), 403, {
      error: 'Forbidden',
      message: 'The result link token is not valid',
    });
  });
});

describe('404 / 405 / 409 / 410', () => {
  test('Not found, default and custom message', () => {
    expectError(notFound(), 404, { error: 'Not found', message: 'The requested resource does not exist' });
    expectError(notFound('No such result'), 404, { error: 'Not found', message: 'No such result' });
  });

  test('405 for POST routes: only {message}, "accepts POST only", Allow header', () => {
    for (const path of ['/check', '/check-raw']) {
      const e = methodNotAllowed(path, ['POST']);
      expectError(e, 405, { message: `The ${path} route accepts POST only` }, { Allow: 'POST' });
      expect(Object.keys(e.body)).toEqual(['message']);
      expect(e.body.message).toContain('accepts POST only');
      expect(e.message).toBe(`The ${path} route accepts POST only`);
    }
  });

  test('405 for GET routes: "accepts GET only"; HEAD is listed in Allow but not in the message', () => {
    const e = methodNotAllowed('/me', ['GET', 'HEAD']);
    expectError(e, 405, { message: 'The /me route accepts GET only' }, { Allow: 'GET, HEAD' });
    expect(methodNotAllowed('/regions', ['GET']).headers).toEqual({ Allow: 'GET' });
  });

  test('Job already running, with the jobId', () => {
    expectError(jobAlreadyRunning('scan_42'), 409, {
      error: 'Job already running',
      message: 'A job with id scan_42 is still running; wait for it to finish or use another jobId',
      jobId: 'scan_42',
    });
  });

  test('Link expired', () => {
    expectError(linkExpired(), 410, {
      error: 'Link expired',
      message: 'This result link has expired; fetch a fresh one from GET /me',
    });
  });
});

describe('413 / 415 / 429', () => {
  test('pools: Too many proxies per pool / per account (413, max), too many pools (429 with limit, no Retry-After)', () => {
    expectError(tooManyPoolProxies(100000, 'pool'), 413, { error: 'Too many proxies', message: 'At most 100000 proxies per pool (server setting MAX_PROXIES_PER_POOL)', max: 100000 });
    expectError(tooManyPoolProxies(200000, 'account'), 413, {
      error: 'Too many proxies',
      message: "At most 200000 proxies in all of an account's pools together (twice the server setting MAX_PROXIES_PER_POOL)",
      max: 200000,
    });
    expectError(tooManyPools(20), 429, { error: 'Too many requests', message: 'At most 20 pools per account (server setting MAX_POOLS_PER_ACCOUNT); delete one to create another', limit: 20 });
    expect(tooManyPools(20).headers).toEqual({});
    expectError(tooManyWebhooks(10), 429, { error: 'Too many requests', message: 'At most 10 webhooks per account; delete one to add another', limit: 10 });
    expectError(webhookNotFound(), 404, { error: 'Not found', message: 'No webhook with this id in this account' });
  });

  test('Too many proxies, Payload too large, Too many custom URLs: each with max', () => {
    expectError(tooManyProxies(100000), 413, {
      error: 'Too many proxies',
      message: 'At most 100000 unique proxies per request (server setting MAX_PROXIES)',
      max: 100000,
    });
    expectError(payloadTooLarge(16777216), 413, {
      error: 'Payload too large',
      message: 'The request body may be at most 16777216 bytes (server setting MAX_BODY_BYTES)',
      max: 16777216,
    });
    expectError(tooManyCustomUrls(10), 413, {
      error: 'Too many custom URLs',
      message: 'At most 10 custom URLs per request (server setting MAX_CUSTOM_URLS)',
      max: 10,
    });
  });

  test('Unsupported media type (JSON expected on /check)', () => {
    expectError(unsupportedMediaType('application/json'), 415, {
      error: 'Unsupported media type',
      message: 'Content-Type must be application/json',
    });
  });

  test('Too many requests with Retry-After', () => {
    expectError(
      tooManyRequests(30),
      429,
      { error: 'Too many requests', message: 'Slow down; retry in 30 s' },
      { 'Retry-After': '30' },
    );
  });

  test('Too many requests: a given message; Retry-After whole seconds, at least 1', () => {
    expectError(tooManyRequests(2, 'At most 1 request per second'), 429, { error: 'Too many requests', message: 'At most 1 request per second' }, { 'Retry-After': '2' });
    expect(tooManyRequests(0.2).headers).toEqual({ 'Retry-After': '1' });
    expect(tooManyRequests(1.5).headers).toEqual({ 'Retry-After': '2' });
  });
});

describe('500 / 503', () => {
  test('Internal server error: the seed\'s exact body; the cause is kept off the body', () => {
    const cause = new Error('secret stack detail');
    const e = internalError(cause);
    expectError(e, 500, { error: 'Internal server error', message: 'An unexpected error occurred' });
    expect(e.cause).toBe(cause);
    expect(JSON.stringify(e.body)).not.toContain('secret');
    expectError(internalError(), 500, { error: 'Internal server error', message: 'An unexpected error occurred' });
  });

  test('Service unavailable', () => {
    expectError(serviceUnavailable('The service is shutting down'), 503, {
      error: 'Service unavailable',
      message: 'The service is shutting down',
    });
  });

  test('Service unavailable: too many large bodies, with Retry-After', () => {
    expectError(
      tooManyLargeBodies(1),
      503,
      { error: 'Service unavailable', message: 'Too many large request bodies are being read (2 at once); retry in 1 s' },
      { 'Retry-After': '1' },
    );
  });
});
