/**
 * src/http/refusals.ts: a request part a route's schema refused is answered
 * with its ordered checks' own 400; without them (or should they accept it),
 * with `Invalid request` naming the field Elysia reports.
 */
import { describe, expect, test } from 'bun:test';
import { ApiError, invalidTimeout } from '../../src/http/api-errors';
import { Type as t } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { nullsAsAbsent, open, orderedChecksOf, refusal } from '../../src/http/refusals';

const request = () => new Request('http://127.0.0.1/x', { method: 'POST' });

describe('refusal', () => {
  test('the ordered checks of the refused part give the answer, with the value Elysia checked', () => {
    const r = request();
    const seen: unknown[] = [];
    orderedChecksOf(r, {
      body: (v) => {
        seen.push(v);
        throw invalidTimeout(1000, 20000);
      },
      query: () => {
        throw new Error('not this part');
      },
    });
    const err = refusal(r, { type: 'body', value: { timeout: 'x' } });
    expect(err.status).toBe(400);
    expect(err.body).toEqual({ error: 'Invalid timeout', message: 'timeout must be an integer number of milliseconds from 1000 to 20000', min: 1000, max: 20000 });
    expect(seen).toEqual([{ timeout: 'x' }]);
  });

  test('no ordered checks for the part, or checks that accept it: Invalid request naming the field', () => {
    const r = request();
    orderedChecksOf(r, { body: () => 'accepted' });
    const accepted = refusal(r, { type: 'body', value: {}, valueError: { path: '/customUrls/0/url', message: 'Expected string' } });
    expect(accepted.body).toEqual({ error: 'Invalid request', message: 'customUrls.0.url: Expected string' });
    const none = refusal(request(), { type: 'params', value: {} });
    expect(none).toBeInstanceOf(ApiError);
    expect(none.body).toEqual({ error: 'Invalid request', message: 'params: invalid' });
  });

  test('an error that is not the contract\'s is not hidden as a 400', () => {
    const r = request();
    orderedChecksOf(r, {
      body: () => {
        throw new TypeError('bug');
      },
    });
    expect(() => refusal(r, { type: 'body', value: {} })).toThrow('bug');
  });
});

describe('nullsAsAbsent', () => {
  const schema = t.Object({ url: t.Optional(t.String()), pools: t.Optional(t.Union([t.Array(t.String()), t.Null()])) });
  test('a null member is dropped unless its schema takes null; members the schema does not name (Object.prototype\'s too) are left as they are', () => {
    expect(nullsAsAbsent(schema, { url: null, pools: null, other: null, valueOf: null })).toEqual({ pools: null, other: null, valueOf: null });
    const same = { url: 'x' };
    expect(nullsAsAbsent(schema, same)).toBe(same);
    for (const v of [null, [null], 'x', 3]) expect(nullsAsAbsent(schema, v)).toEqual(v);
  });

  test('in the objects the schema nests too (a custom URL rule); a list of strings is left as it is', () => {
    const nested = t.Object({ proxies: t.Array(t.Unknown()), customUrls: t.Optional(t.Array(t.Object({ url: t.String(), requiredText: t.Optional(t.String()) }))) });
    const proxies = ['1.2.3.4:80', null];
    const out = nullsAsAbsent(nested, { proxies, customUrls: [{ url: 'http://a/', requiredText: null }, 'x', null] }) as Record<string, unknown>;
    expect(out).toEqual({ proxies: ['1.2.3.4:80', null], customUrls: [{ url: 'http://a/' }, 'x', null] });
    expect(out.proxies).toBe(proxies);
  });
});

describe('open', () => {
  test('every object of the copy takes members its schema does not name (Elysia would refuse them); the schema itself is untouched', () => {
    const closedByElysia = t.Object({ a: t.Optional(t.Array(t.Object({ b: t.String() }))), c: t.Object({ d: t.Integer() }, { additionalProperties: false }) });
    const o = open(closedByElysia);
    expect(o.additionalProperties).toBe(true);
    expect((o.properties.a as any).items.additionalProperties).toBe(true);
    expect(o.properties.c.additionalProperties).toBe(false); // said explicitly: kept
    expect(closedByElysia.additionalProperties).toBeUndefined();
    const check = TypeCompiler.Compile(o);
    expect(check.Check({ a: [{ b: 'x', more: 1 }], c: { d: 1 }, more: 2 })).toBe(true);
    expect(check.Check({ a: [{ b: 1 }], c: { d: 1 } })).toBe(false);
  });
});
