/**
 * The contract holds both ways: request bodies generated (fast-check) from the
 * schemas of the served document (/docs/json) are not refused for their shape
 * by the validators (check-request.ts, pool-request.ts), and a body just
 * outside one bound, enum or required field of those schemas is a 400.
 *
 * The generator reads JSON Schema as the contract emits it: objects with
 * `required`, integers with minimum/maximum, booleans, strings with a
 * pattern or maxLength, enums (`enum`, the queries'; an anyOf of consts, the bodies'), other anyOf (a value or
 * null), arrays with min/maxItems (uniqueItems: given per field).
 * What the schema cannot say is given per field (`given`): the proxies
 * (valid addresses), the region (one the service accepts), URLs.
 */
import { beforeAll, describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { ApiError } from '../../src/http/api-errors';
import { validateCheckJson, validateCheckJsonOrdered, validateCheckRaw } from '../../src/http/check-request';
import { validateProxiesQuery } from '../../src/http/pool-proxies-query';
import { validateWebhookCreate, validateWebhookPatch } from '../../src/http/webhook-request';
import { validatePoolCreate, validatePoolPatch } from '../../src/http/pool-request';
import { DEFAULT_POOL_LIMITS } from '../../src/pools/limits';
import { ACCEPTED_REGIONS } from '../../src/regions';
import { servedOpenApiDocument } from '../helpers/served-doc';

type Schema = Record<string, any>;
let schemas: Record<string, Schema>;
beforeAll(async () => {
  const doc = await servedOpenApiDocument();
  schemas = { ...doc.components.schemas, CheckRawQuery: queryIn(doc, '/check-raw', 'post'), PoolProxiesQuery: queryIn(doc, '/pools/{id}/proxies', 'get') };
  // a cursor is only ever one the service gave (not generated); `async` is read by the route, not the validator
  delete schemas.PoolProxiesQuery!.properties.cursor;
  delete schemas.CheckRawQuery!.properties.async;
});

const PROXY = fc.tuple(fc.integer({ min: 1, max: 254 }), fc.integer({ min: 1, max: 65535 })).map(([a, p]) => `203.0.113.${a}:${p}`);
const given: Record<string, fc.Arbitrary<unknown>> = {
  proxies: fc.array(PROXY, { minLength: 1, maxLength: 5 }),
  add: fc.array(PROXY, { minLength: 1, maxLength: 3 }),
  remove: fc.array(PROXY, { maxLength: 3 }),
  region: fc.constantFrom(...ACCEPTED_REGIONS),
  url: fc.constantFrom('http://example.com/', 'https://example.com/list.txt?x=1'),
  // `events` of a webhook: each once (the schema's uniqueItems)
  events: fc.uniqueArray(fc.constantFrom('pool.proxies_changed', 'pool.paused', 'pool.resumed', 'check.completed'), { minLength: 1 }),
  text: PROXY,
};

/** An enum's values: JSON Schema `enum` (the queries' fields) or an anyOf of consts (the bodies'). */
const consts = (s: Schema): unknown[] | null =>
  Array.isArray(s.enum) ? s.enum : Array.isArray(s.anyOf) && s.anyOf.every((x: Schema) => 'const' in x) ? s.anyOf.map((x: Schema) => x.const) : null;

function arb(s: Schema, name: string): fc.Arbitrary<unknown> {
  if (given[name] !== undefined) return given[name];
  const values = consts(s);
  if (values !== null) return fc.constantFrom(...values);
  if (Array.isArray(s.anyOf)) return fc.oneof(...s.anyOf.map((x: Schema) => arb(x, name)));
  if (s.type === 'null') return fc.constant(null);
  if (s.type === 'integer') return fc.integer({ min: s.minimum ?? -1e6, max: s.maximum ?? 1e6 });
  if (s.type === 'number') return fc.double({ min: s.minimum ?? -1e6, max: s.maximum ?? 1e6, noNaN: true });
  if (s.type === 'boolean') return fc.boolean();
  if (s.type === 'string' && s.pattern !== undefined) return fc.stringMatching(new RegExp(s.pattern));
  if (s.type === 'string') return fc.string({ minLength: s.minLength ?? 0, maxLength: Math.min(s.maxLength ?? 40, 40) });
  if (s.type === 'array') return fc.array(arb(s.items, `${name}[]`), { minLength: s.minItems ?? 0, maxLength: Math.min(s.maxItems ?? 3, 3) });
  if (s.type === 'object') return objectArb(s);
  throw new Error(`no generator for ${name}: ${JSON.stringify(s)}`);
}

function objectArb(s: Schema): fc.Arbitrary<Record<string, unknown>> {
  const required = new Set<string>(s.required ?? []);
  const props = Object.fromEntries(Object.entries(s.properties as Record<string, Schema>).map(([k, v]) => [k, arb(v, k)]));
  return fc.record(props, { requiredKeys: [...required] });
}

/** Bodies just outside the schema: each bound, enum and required field once. */
function outside(s: Schema, valid: Record<string, unknown>): [string, Record<string, unknown>][] {
  const out: [string, Record<string, unknown>][] = [];
  for (const k of s.required ?? []) {
    const { [k]: _, ...rest } = valid;
    out.push([`${k} missing`, rest]);
  }
  for (const [k, p] of Object.entries(s.properties as Record<string, Schema>)) {
    if (p.type === 'integer' && p.minimum !== undefined) out.push([`${k} = minimum - 1`, { ...valid, [k]: p.minimum - 1 }]);
    if (p.type === 'integer' && p.maximum !== undefined) out.push([`${k} = maximum + 1`, { ...valid, [k]: p.maximum + 1 }]);
    if (p.type === 'integer') out.push([`${k} a fraction`, { ...valid, [k]: (p.minimum ?? 0) + 0.5 }]);
    if (p.type === 'number' && p.minimum !== undefined) out.push([`${k} under minimum`, { ...valid, [k]: p.minimum - 0.5 }]);
    if (p.type === 'number' && p.maximum !== undefined) out.push([`${k} over maximum`, { ...valid, [k]: p.maximum + 0.5 }]);
    if (p.type === 'boolean') out.push([`${k} not a boolean`, { ...valid, [k]: 'yes' }]);
    if (consts(p) !== null) out.push([`${k} outside its enum`, { ...valid, [k]: 'none-of-these' }]);
    if (p.type === 'string' && p.maxLength !== undefined) out.push([`${k} over maxLength`, { ...valid, [k]: 'x'.repeat(p.maxLength + 1) }]);
    if (p.type === 'string' && p.minLength !== undefined && p.minLength > 0) out.push([`${k} under minLength`, { ...valid, [k]: '' }]);
    if (p.type === 'string' && p.pattern !== undefined) {
      const miss = ['!', ' ', 'x\u0001'].find((v) => !new RegExp(p.pattern, 'u').test(v))!;
      out.push([`${k} outside its pattern`, { ...valid, [k]: miss }]);
    }
    if (p.type === 'array') out.push([`${k} not an array`, { ...valid, [k]: 'x' }]);
    const arr: Schema | undefined = p.type === 'array' ? p : p.anyOf?.find((x: Schema) => x.type === 'array');
    if (arr !== undefined) {
      const item = fc.sample(arb(arr.items, `${k}[]`), { numRuns: 1, seed: 31 })[0];
      if (arr.minItems > 0) out.push([`${k} under minItems`, { ...valid, [k]: [] }]);
      if (arr.maxItems !== undefined && !arr.uniqueItems) out.push([`${k} over maxItems`, { ...valid, [k]: Array.from({ length: arr.maxItems + 1 }, () => item) }]);
      if (arr.uniqueItems) out.push([`${k} with an item twice`, { ...valid, [k]: [item, item] }]);
      if (consts(arr.items) !== null) out.push([`${k} with an item outside its enum`, { ...valid, [k]: ['none-of-these'] }]);
      if (arr.items.pattern !== undefined) out.push([`${k} with an item outside its pattern`, { ...valid, [k]: ['!'] }]);
    }
  }
  return out;
}

const statusOf = (f: () => unknown): number => {
  try {
    f();
    return 200;
  } catch (e) {
    if (e instanceof ApiError) return e.status;
    throw e;
  }
};

const checkOpts = { maxProxies: 1000, maxCustomUrls: 10, acceptedRegions: ACCEPTED_REGIONS };
const poolOpts = { limits: DEFAULT_POOL_LIMITS, maxCustomUrls: 10, acceptedRegions: ACCEPTED_REGIONS };
const routes: [string, string, (body: unknown) => unknown][] = [
  ['POST /check', 'CheckBody', (b) => validateCheckJson(b, checkOpts)],
  ['POST /pools', 'PoolCreateBody', (b) => validatePoolCreate(b, poolOpts)],
  ['PATCH /pools/{id}', 'PoolPatchBody', (b) => validatePoolPatch(b, poolOpts)],
  ['POST /webhooks', 'WebhookCreateBody', (b) => validateWebhookCreate(b, { allowPrivateTargets: false })],
  ['PATCH /webhooks/{id}', 'WebhookPatchBody', (b) => validateWebhookPatch(b, { allowPrivateTargets: false })],
];

/** A query object as the URL carries it (numbers in decimal; the document's query schemas describe the values). */
const asQuery = (o: Record<string, unknown>) => new URLSearchParams(Object.entries(o).map(([k, v]): [string, string] => [k, String(v)]));
const queries: [string, string, (q: URLSearchParams) => unknown][] = [
  ['POST /check-raw', 'CheckRawQuery', (q) => validateCheckRaw('203.0.113.7:8080\n', q, checkOpts)],
  ['GET /pools/{id}/proxies', 'PoolProxiesQuery', (q) => validateProxiesQuery(q)],
];
const queryIn = (doc: any, path: string, method: string): Schema => {
  const params = (doc.paths[path][method].parameters as { name: string; in: string; required: boolean; schema: Schema }[]).filter((p) => p.in === 'query');
  return { type: 'object', properties: Object.fromEntries(params.map((p) => [p.name, p.schema])), required: params.filter((p) => p.required).map((p) => p.name) };
};

describe('the contract both ways (the served schemas against the validators)', () => {
  for (const [route, name, validate] of routes) {
    test(`${route}: a body valid for ${name} is accepted`, () => {
      fc.assert(
        fc.property(objectArb(schemas[name]!), (body) => {
          // what the schemas' descriptions say: PATCH needs one field at least; POST one of proxies, text, sources (a non-empty one)
          fc.pre(Object.keys(body).length > 0);
          if (name === 'PoolCreateBody') fc.pre('proxies' in body || 'text' in body || (Array.isArray(body.sources) && body.sources.length > 0));
          // the pools' targets: names given are unique in the list (as the description says)
          const named = Array.isArray(body.customUrls) ? (body.customUrls as { name?: string }[]).map((u) => u?.name).filter((n) => n !== undefined) : [];
          fc.pre(new Set(named).size === named.length);
          expect(statusOf(() => validate(body))).toBe(200);
        }),
        { numRuns: 300 },
      );
    });

    test(`${route}: just outside each bound, enum or required field of ${name} is a 400`, () => {
      const valid = fc.sample(objectArb(schemas[name]!).filter((b) => 'proxies' in b || 'url' in b || (name === 'PoolPatchBody' && Object.keys(b).length > 0)), { numRuns: 1, seed: 31 })[0]!;
      const cases = outside(schemas[name]!, valid);
      expect(cases.length).toBeGreaterThan(3);
      for (const [what, body] of cases) expect(`${what}: ${statusOf(() => validate(body))}`).toBe(`${what}: 400`);
    });
  }

  for (const [route, name, validate] of queries) {
    test(`${route}: a query valid for the document's parameters is accepted`, () => {
      fc.assert(
        fc.property(objectArb(schemas[name]!), (q) => {
          expect(statusOf(() => validate(asQuery(q)))).toBe(200);
        }),
        { numRuns: 300 },
      );
    });

    test(`${route}: a query just outside each parameter's bound, enum or pattern is a 400`, () => {
      const cases = outside(schemas[name]!, {});
      expect(cases.length).toBeGreaterThan(3);
      for (const [what, q] of cases) expect(`${what}: ${statusOf(() => validate(asQuery(q)))}`).toBe(`${what}: 400`);
    });
  }

  test('POST /check: the compiled schema first answers exactly as the ordered checks alone, whatever the body', () => {
    const outcome = (f: () => unknown) => {
      try {
        return { ok: f() };
      } catch (e) {
        if (e instanceof ApiError) return { status: e.status, body: e.body };
        throw e;
      }
    };
    const field = fc.constantFrom('proxies', 'region', 'type', 'timeout', 'samples', 'https', 'jobId', 'customUrls', 'other');
    const mutated = fc.tuple(objectArb(schemas.CheckBody!), fc.array(fc.tuple(field, fc.jsonValue({ maxDepth: 2 })), { maxLength: 2 })).map(([body, edits]) => {
      const b: Record<string, unknown> = { ...body };
      for (const [k, v] of edits) b[k] = v;
      return b;
    });
    const opts = { ...checkOpts, maxCustomUrls: 2 };
    fc.assert(
      fc.property(fc.oneof(objectArb(schemas.CheckBody!), mutated, fc.jsonValue({ maxDepth: 2 })), (body) => {
        expect(outcome(() => validateCheckJson(body, opts))).toEqual(outcome(() => validateCheckJsonOrdered(body, opts)));
      }),
      { numRuns: 1000 },
    );
  });
});
