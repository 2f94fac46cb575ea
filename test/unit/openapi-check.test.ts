/**
 * The response checker of test/helpers/openapi-check.ts: bodies that match
 * the served document pass; a wrong body, an undeclared status, an
 * undeclared media type, a 404 with the wrong shape, a 405 on a path that
 * does not declare it, a JSON media type without a schema are all reported.
 */
import { beforeAll, describe, expect, test } from 'bun:test';
import { OpenApiResponseChecker, type ResponseSample } from '../helpers/openapi-check';
import { servedOpenApiDocument } from '../helpers/served-doc';

const JSON_TYPE = 'application/json; charset=utf-8';
const health = { status: 'ok', version: '0.1.0', uptime: 3, timestamp: '2026-11-22T10:00:00.000Z', regions: 19, database: 'ok' };
const sample = (method: string, url: string, status: number, body: unknown, contentType: string | null = JSON_TYPE): ResponseSample => ({
  method,
  url,
  status,
  contentType,
  text: typeof body === 'string' ? body : JSON.stringify(body),
});

let checker: OpenApiResponseChecker;
beforeAll(async () => {
  checker = await OpenApiResponseChecker.create(await servedOpenApiDocument());
});

describe('against the served document', () => {
  test('real shapes pass', () => {
    expect(checker.problems(sample('GET', 'http://127.0.0.1:3000/health', 200, health))).toEqual([]);
    expect(checker.problems(sample('GET', '/health', 503, { ...health, status: 'degraded', database: 'down' }))).toEqual([]);
    expect(checker.problems(sample('GET', '/nope', 404, { error: 'Not found', message: 'No route GET /nope' }))).toEqual([]);
    expect(checker.problems(sample('POST', '/me', 405, { message: 'The /me route accepts GET only' }))).toEqual([]);
    expect(checker.problems(sample('POST', '/check', 402, { error: 'Insufficient Checks', message: 'm', required: 10, available: 7, shortfall: 3 }))).toEqual([]);
    expect(checker.problems(sample('GET', '/result/AAAAAAAAAAAAAAAAAAAAAA.csv?token=x&expires=1', 200, 'a,b\r\n', 'text/csv; charset=utf-8; header=present'))).toEqual([]);
  });

  test('a deliberately wrong body is reported', () => {
    const missing = checker.problems(sample('GET', '/health', 200, { ...health, database: undefined }));
    expect(missing.join('\n')).toContain("must have required property 'database'");
    const extra = checker.problems(sample('GET', '/health', 200, { ...health, extra: 1 }));
    expect(extra.join('\n')).toContain('must NOT have additional properties');
    const type = checker.problems(sample('POST', '/check', 402, { error: 'Insufficient Checks', message: 'm', required: '10', available: 7, shortfall: 3 }));
    expect(type.join('\n')).toContain('/required must be integer');
    expect(checker.problems(sample('GET', '/health', 200, 'not json'))).toHaveLength(1);
  });

  test('an undeclared status is reported even with a fine body', () => {
    const p = checker.problems(sample('GET', '/regions', 418, { error: 'Not found', message: 'x' }));
    expect(p).toHaveLength(1);
    expect(p[0]).toContain('status 418 is not declared');
  });

  test('an undeclared media type is reported', () => {
    expect(checker.problems(sample('GET', '/health', 200, '<html>', 'text/html'))[0]).toContain('media type "text/html" is not declared');
  });

  test('unknown paths must be the 404 body; known paths with another method must be 405', () => {
    expect(checker.problems(sample('GET', '/nope', 200, health))[0]).toContain('not in the OpenAPI document');
    expect(checker.problems(sample('GET', '/nope', 404, { message: 'x' })).length).toBeGreaterThan(0);
    expect(checker.problems(sample('DELETE', '/me', 200, {}))[0]).toContain('not 405');
    expect(checker.problems(sample('POST', '/me', 405, { error: 'x', message: 'y' })).join('\n')).toContain('additional properties');
  });
});

describe('against a synthetic document', () => {
  const doc = {
    openapi: '3.1.0',
    info: { title: 't', version: '1' },
    paths: {
      '/a': {
        get: {
          operationId: 'getA',
          responses: {
            '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } } } } },
            '204': { description: 'empty' },
            '500': { description: 'no schema', content: { 'application/json': {} } },
          },
        },
      },
    },
    components: { schemas: { NotFound: { type: 'object', required: ['error'] } } },
  };

  test('schema, empty body, missing schema', async () => {
    const c = await OpenApiResponseChecker.create(doc);
    expect(c.problems(sample('GET', '/a', 200, { n: 1 }))).toEqual([]);
    expect(c.problems(sample('GET', '/a', 200, { n: 'one' }))[0]).toContain('/n must be integer');
    expect(c.problems(sample('GET', '/a', 204, '', null))).toEqual([]);
    expect(c.problems(sample('GET', '/a', 204, 'x', 'text/plain'))[0]).toContain('declares no body');
    expect(c.problems(sample('GET', '/a', 500, {}))[0]).toContain('without a schema');
    expect(c.problems(sample('GET', '/a', 201, { n: 1 }))[0]).toContain('status 201 is not declared');
    expect(() => c.assert(sample('GET', '/a', 201, { n: 1 }))).toThrow('does not match the OpenAPI document');
  });
});
