/** src/http/request-id.ts: which client ids are kept, and that whatever is used is sane. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { isSaneRequestId, REQUEST_ID_MAX, requestIdFor } from '../../src/http/request-id';

const gen = () => 'generated';

describe('requestIdFor', () => {
  test.each([
    'a',
    'abc-123',
    '0b8f3c1e-4b7a-4e55-9c2f-0a1b2c3d4e5f',
    '01ARZ3NDEKTSV4RRFFQ69G5FAV',
    'Root=1-5759e988-bd862e3fe1be46a994272793',
    'dGhlIHNhbXBsZSBub25jZQ==',
    'a.b_c:d+e/f=g-h',
    'x'.repeat(REQUEST_ID_MAX),
  ])('keeps the sane %p', (id) => {
    expect(requestIdFor(id, gen)).toBe(id);
  });

  test.each([
    ['absent', null],
    ['empty', ''],
    ['too long', 'x'.repeat(REQUEST_ID_MAX + 1)],
    ['a space', 'a b'],
    ['a comma (two values joined)', 'a,b'],
    ['quotes', '"a"'],
    ['a control char', 'a\u0001b'],
    ['non-ASCII', 'caf\u00e9'],
    ['a log-injection attempt', 'x\n{"level":"error"}'],
    ['HTML', '<script>'],
  ] as const)('replaces %s', (_what, id) => {
    expect(requestIdFor(id, gen)).toBe('generated');
  });

  test('the default generator makes a random UUID, itself sane', () => {
    const a = requestIdFor(null);
    const b = requestIdFor('bad id');
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(b).not.toBe(a);
    expect(isSaneRequestId(a)).toBe(true);
  });

  test('fuzz: whatever the header, the id used is sane, and a sane header is kept as it is', () => {
    fc.assert(
      fc.property(fc.option(fc.string({ unit: 'binary', maxLength: 200 })), (h) => {
        const id = requestIdFor(h);
        expect(isSaneRequestId(id)).toBe(true);
        expect(id.length).toBeLessThanOrEqual(REQUEST_ID_MAX);
        if (h !== null && /^[A-Za-z0-9._:+/=-]{1,128}$/.test(h)) expect(id).toBe(h);
      }),
      { numRuns: 500 },
    );
  });
});
