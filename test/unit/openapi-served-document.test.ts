/**
 * openapi.ts servedDocument(): what the plugin leaves inside schemas moved
 * where OpenAPI readers show it (parameters, response headers, answers'
 * examples and other media types; no content for an answer without a body),
 * and answer(): a route's declared answer as the plugin sees it.
 */
import { describe, expect, test } from 'bun:test';
import { Type as t } from '@sinclair/typebox';
import { answer, servedDocument } from '../../src/http/openapi';

/** An answer as the plugin writes a declared one (its description beside, its headers' schemas, the rest the media type's schema). */
const asPluginWrites = (a: ReturnType<typeof answer>) => {
  const { headers, ...schema } = JSON.parse(JSON.stringify(a));
  return {
    description: schema.description,
    ...(headers ? { headers: Object.fromEntries(Object.entries(headers).map(([k, h]) => [k, { schema: h }])) } : {}),
    content: { 'application/json': { schema } },
  };
};

describe('servedDocument', () => {
  test('a parameter\'s description and example move from its schema onto it (one already there is kept)', () => {
    const doc = {
      paths: {
        '/x': {
          get: {
            parameters: [
              { name: 'a', in: 'query', schema: { type: 'string', enum: ['1', '2'], description: 'A', examples: ['1'] } },
              { name: 'b', in: 'query', description: 'kept', schema: { type: 'string', description: 'B' } },
              { name: 'c', in: 'query', schema: { type: 'integer' } },
            ],
          },
        },
      },
    };
    servedDocument(doc as never);
    expect(doc.paths['/x'].get.parameters as unknown).toEqual([
      { name: 'a', in: 'query', schema: { type: 'string', enum: ['1', '2'] }, description: 'A', example: '1' },
      { name: 'b', in: 'query', description: 'kept', schema: { type: 'string' } },
      { name: 'c', in: 'query', schema: { type: 'integer' } },
    ]);
  });

  test('an answer: its $ref schema, one example or named ones, header descriptions, other media types; none for a body-less answer', () => {
    const doc = {
      paths: {
        '/x': {
          post: {
            responses: {
              '200': asPluginWrites(answer('Pool', 'The pool', { example: { id: 'p' }, headers: { Location: t.String({ description: 'where' }) }, content: { 'text/plain': { schema: { type: 'string' } } } })),
              '400': asPluginWrites(answer(['BadRequest', 'NotFound'], 'Bad', { examples: { one: { error: 'e' } } })),
              '204': asPluginWrites(answer(null, 'Deleted')),
            },
          },
        },
      },
    };
    servedDocument(doc as never);
    servedDocument(doc as never); // the plugin serves one document: a second pass changes nothing
    expect(doc.paths['/x'].post.responses as unknown).toEqual({
      '200': {
        description: 'The pool',
        headers: { Location: { schema: { type: 'string' }, description: 'where' } },
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Pool' }, example: { id: 'p' } }, 'text/plain': { schema: { type: 'string' } } },
      },
      '400': {
        description: 'Bad',
        content: { 'application/json': { schema: { oneOf: [{ $ref: '#/components/schemas/BadRequest' }, { $ref: '#/components/schemas/NotFound' }] }, examples: { one: { value: { error: 'e' } } } } },
      },
      '204': { description: 'Deleted' },
    });
  });

  test('an answer is never checked by Elysia (noValidate): what a handler sends is what it answers', () => {
    expect((answer('Pool', 'The pool') as { noValidate?: boolean }).noValidate).toBe(true);
  });
});
