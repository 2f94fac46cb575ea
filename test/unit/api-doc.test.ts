/**
 * docs/API.md against the OpenAPI document the app serves (/docs/json, the
 * app built in-process as src/server.ts builds it): the document is valid
 * OpenAPI (@seriousme/openapi-schema-validator), every operation (method +
 * path) has a section in docs/API.md, and every status it declares is
 * mentioned in that section. A route or status added to the document
 * without docs fails here (the coverage logic is tested on a synthetic
 * document too).
 */
import { beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { docCoverageProblems, markdownSections, routeSection } from '../helpers/api-doc-coverage';
import { servedOpenApiDocument } from '../helpers/served-doc';

const API_MD = readFileSync(join(import.meta.dir, '../../docs/API.md'), 'utf8');
let doc: any;

beforeAll(async () => {
  doc = await servedOpenApiDocument();
});

describe('the served OpenAPI document', () => {
  test('is valid OpenAPI 3.1', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  test('declares the public routes', () => {
    const ops = Object.entries(doc.paths as Record<string, object>).flatMap(([p, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`));
    for (const op of ['POST /check', 'POST /check-raw', 'GET /me', 'GET /regions', 'GET /health', 'GET /judge', 'GET /ws', 'GET /result/{name}']) {
      expect(ops).toContain(op);
    }
    // the admin API is served on its own listener, not by this app
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/admin'))).toEqual([]);
    // neither is /metrics (the admin listener's too)
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/metrics'))).toEqual([]);
  });

  test('every operation and every status it declares is in docs/API.md', () => {
    expect(docCoverageProblems(doc, API_MD)).toEqual([]);
  });

  test('docs/API.md does not point at files outside the repository', () => {
    expect(API_MD).not.toContain('../shared');
  });
});

describe('the coverage check itself (synthetic document)', () => {
  const spec = (paths: Record<string, Record<string, { responses: Record<string, object> }>>) => ({ paths });
  const md = [
    '# API',
    '## Checks',
    '### POST /check',
    'Answers: 200, 400 and `402`.',
    '#### Example',
    'a 413 inside a sub-section still belongs to POST /check',
    '### POST /check-raw',
    'Answers 200.',
    '```',
    '# GET /fenced is code, not a heading',
    '```',
    '## GET /me',
    'Answers 200 and 4010.',
  ].join('\n');

  test('a covered document has no problems', () => {
    const s = spec({ '/check': { post: { responses: { '200': {}, '400': {}, '402': {}, '413': {} } } }, '/check-raw': { post: { responses: { '200': {} } } } });
    expect(docCoverageProblems(s, md)).toEqual([]);
  });

  test('an undocumented route is reported', () => {
    const s = spec({ '/check': { post: { responses: { '200': {} } } }, '/fenced': { get: { responses: { '200': {} } } }, '/metrics': { get: { responses: {} } } });
    const p = docCoverageProblems(s, md);
    expect(p).toHaveLength(2);
    expect(p[0]).toContain('GET /fenced: no section');
    expect(p[1]).toContain('GET /metrics: no section');
  });

  test('an undocumented status is reported, in the section of its own route only', () => {
    const s = spec({
      '/check-raw': { post: { responses: { '200': {}, '402': {} } } }, // 402 is only in POST /check's section
      '/me': { get: { responses: { '200': {}, '401': {} } } }, // "4010" is not 401
    });
    expect(docCoverageProblems(s, md)).toEqual([
      'POST /check-raw: status 402 is declared but not mentioned in its section "POST /check-raw"',
      'GET /me: status 401 is declared but not mentioned in its section "GET /me"',
    ]);
  });

  test('POST /check does not match the heading of POST /check-raw, nor GET /me that of GET /metrics', () => {
    const sections = markdownSections('## POST /check-raw\nx\n## GET /metrics\ny\n');
    expect(routeSection(sections, 'post', '/check')).toBeUndefined();
    expect(routeSection(sections, 'get', '/me')).toBeUndefined();
    expect(routeSection(sections, 'post', '/check-raw')?.body).toBe('x');
  });

  test('a route added to the served document without docs would fail the real check', () => {
    const grown = structuredClone(doc);
    grown.paths['/stats'] = { get: { operationId: 'getStats', responses: { '200': { description: 'ok' } } } }; // documented nowhere
    grown.paths['/me'].get.responses['418'] = { description: 'teapot' };
    expect(docCoverageProblems(grown, API_MD)).toEqual([
      'GET /me: status 418 is declared but not mentioned in its section "GET /me"',
      'GET /stats: no section (a heading with "GET /stats") in docs/API.md',
    ]);
  });
});

describe('probe error codes', () => {
  test('every code a result record can carry is documented in docs/API.md', async () => {
    const { PROBE_ERROR_CODES } = await import('../../src/probe/types');
    // text_not_found is a custom URL's failure: per_url_summary lists proxies, not error codes
    const recordCodes = PROBE_ERROR_CODES.filter((code) => code !== 'text_not_found');
    expect(recordCodes).toContain('tampered');
    const missing = recordCodes.filter((code) => !API_MD.includes(`\`${code}\``));
    expect(missing).toEqual([]);
  });
});
