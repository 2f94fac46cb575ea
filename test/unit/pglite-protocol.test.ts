/**
 * db/pglite-protocol.ts: errors cross the thread with PostgreSQL's fields,
 * and a query's parsers cross as identity OIDs (drizzle's config), anything
 * else refused.
 */
import { describe, expect, test } from 'bun:test';
import { PglitePreparedQuery } from 'drizzle-orm/pglite/session';
import { NoopLogger } from 'drizzle-orm/logger';
import { NoopCache } from 'drizzle-orm/cache/core/cache';
import { toWireError } from '../../src/errors';
import { identityParserOids, identityParsers, PgliteThreadError } from '../../db/pglite-protocol';
import { isRunningClientJobConflict, RUNNING_CLIENT_JOB_INDEX } from '../../src/accounts/client-job-conflict';

describe('errors across the thread', () => {
  test('name, message, stack and every string or number field survive; code and constraint read as before', () => {
    const original = Object.assign(new Error('duplicate key value violates unique constraint'), {
      name: 'error',
      code: '23505',
      constraint: RUNNING_CLIENT_JOB_INDEX,
      detail: 'Key (client_job_id)=(x) already exists.',
      length: 180,
      params: ['not', 'copied'],
      hint: undefined,
    });
    const wire = toWireError(original);
    // the wire form is plain data: it survives structured clone
    const back = new PgliteThreadError(structuredClone(wire));
    expect(back).toBeInstanceOf(Error);
    expect(back.name).toBe('error');
    expect(back.message).toBe(original.message);
    expect(back.stack).toBe(original.stack);
    expect(back.code).toBe('23505');
    expect(back.constraint).toBe(RUNNING_CLIENT_JOB_INDEX);
    expect(back.detail).toBe(original.detail);
    expect(back.length).toBe(180);
    expect(back.params).toBeUndefined();
    // what the reservation's conflict check reads (drizzle puts the driver's error in `cause`)
    expect(isRunningClientJobConflict(new Error('Failed query', { cause: back }))).toBe(true);
  });

  test('a thrown non-Error becomes its text', () => {
    expect(new PgliteThreadError(toWireError('boom')).message).toBe('boom');
  });
});

describe('parsers across the thread', () => {
  test("drizzle-orm/pglite's two configs are identity parsers, rebuilt on the other side", () => {
    const q = new PglitePreparedQuery({} as never, 'select 1', [], new NoopLogger(), new NoopCache(), undefined, undefined, undefined, undefined, false);
    const configs = [(q as unknown as { queryConfig: { parsers: Record<number, (v: string, t: number) => unknown> } }).queryConfig, (q as unknown as { rawQueryConfig: { parsers: Record<number, (v: string, t: number) => unknown> } }).rawQueryConfig];
    for (const c of configs) {
      const oids = identityParserOids(c.parsers);
      expect(oids.sort((a, b) => a - b)).toEqual([1082, 1114, 1115, 1182, 1184, 1185, 1186, 1187, 1231]);
      const rebuilt = identityParsers(oids);
      for (const oid of oids) expect(rebuilt[oid]?.('2026-01-02 03:04:05+00')).toBe('2026-01-02 03:04:05+00');
    }
    expect(identityParserOids(undefined)).toEqual([]);
  });

  test('a parser that is not the identity is refused (a function cannot cross)', () => {
    expect(() => identityParserOids({ 1184: (v: string) => new Date(v) })).toThrow(/not the identity/);
  });
});
