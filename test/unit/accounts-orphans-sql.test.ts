/**
 * The orphan sweep's statement builders are pure: SQL text and parameters.
 * Against a real database: test/integration/accounts-orphans.test.ts.
 */
import { describe, expect, test } from 'bun:test';
import { PgDialect } from 'drizzle-orm/pg-core';
import { closeOrphanStatement, findOrphansStatement, INTERRUPTED, orphanCondition, OrphanScope } from '../../src/accounts/orphans-sql';

const dialect = new PgDialect();
const q = (s: Parameters<PgDialect['sqlToQuery']>[0]) => dialect.sqlToQuery(s);
const NO_LIVE_LEASE = 'NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = s.node_id AND n.lease_until > now())';

describe('orphanCondition', () => {
  test('expired: another node (null counts as another) holding no live lease', () => {
    const c = q(orphanCondition({ self: 'me', scope: OrphanScope.expired }));
    expect(c.sql).toBe(`(s.node_id IS DISTINCT FROM $1 AND ${NO_LIVE_LEASE})`);
    expect(c.params).toEqual(['me']);
  });

  test('own: its own id, or no live lease', () => {
    const c = q(orphanCondition({ self: 'me', scope: OrphanScope.own }));
    expect(c.sql).toBe(`(s.node_id = $1 OR ${NO_LIVE_LEASE})`);
    expect(c.params).toEqual(['me']);
  });

  test('all: every running scan', () => {
    expect(q(orphanCondition({ self: 'me', scope: OrphanScope.all })).sql).toBe('true');
  });
});

describe('the sweep statements', () => {
  test('find: running scans under the rule, oldest first, bounded', () => {
    const f = q(findOrphansStatement({ self: 'me', scope: OrphanScope.expired }, 500));
    expect(f.sql).toContain("WHERE s.status = 'running' AND (s.node_id IS DISTINCT FROM $1");
    expect(f.sql).toContain('ORDER BY s.id');
    expect(f.sql).toContain('LIMIT $2::int');
    expect(f.params).toEqual(['me', 500]);
  });

  test('close: one scan, only while running and still an orphan (the guard that makes the refund happen once)', () => {
    const c = q(closeOrphanStatement({ scanId: 7, rule: { self: 'me', scope: OrphanScope.expired }, now: new Date('2026-06-01T00:00:00Z') }));
    expect(c.sql).not.toContain(';');
    expect(c.sql).toContain("SET status = 'failed', error = $1");
    expect(c.sql).toContain("WHERE s.id = $3::int AND s.status = 'running' AND (s.node_id IS DISTINCT FROM $4 AND " + NO_LIVE_LEASE + ')');
    expect(c.sql).toContain('RETURNING s.account_id, s.job_id, s.node_id');
    expect(c.params).toEqual([INTERRUPTED, '2026-06-01T00:00:00.000Z', 7, 'me']);
    expect(INTERRUPTED).toBe('interrupted');
  });

  test('the node id travels as a parameter, never as SQL text', () => {
    const evil = "x'); DROP TABLE scans; --";
    for (const scope of Object.values(OrphanScope)) {
      const c = q(closeOrphanStatement({ scanId: 1, rule: { self: evil, scope }, now: new Date() }));
      expect(c.sql).not.toContain('DROP TABLE');
    }
  });
});
