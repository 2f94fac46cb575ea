/**
 * The SQL builders of a pool's sources (src/pools/sources-sql.ts) are pure:
 * one statement each, every value a parameter. Their behaviour on a real
 * database (both drivers) is test/integration/jobs-pool-sources.test.ts.
 */
import { describe, expect, test } from 'bun:test';
import { PgDialect } from 'drizzle-orm/pg-core';
import { claimSourceStatement, dueSourcesStatement, nextSourceDueStatement, recordSourceStatement } from '../../src/pools/sources-sql';

const dialect = new PgDialect();
const evil = "x'); DROP TABLE pools; --";
const NOW = Date.UTC(2026, 5, 1, 12);

describe('sources-sql', () => {
  test('the due scan: active pools only, never-fetched first, the time and limit as parameters', () => {
    const q = dialect.sqlToQuery(dueSourcesStatement(NOW, 64));
    expect(q.sql).toContain("p.state = 'active'");
    expect(q.sql).toContain('NULLS FIRST');
    expect(q.params).toEqual([new Date(NOW).toISOString(), 64]);
    expect(dialect.sqlToQuery(nextSourceDueStatement(NOW)).params).toEqual([new Date(NOW).toISOString()]);
  });

  test('the claim: only while the stored due time is the one read (IS NOT DISTINCT FROM: null for never fetched)', () => {
    const q = dialect.sqlToQuery(claimSourceStatement(evil, 2, evil, null, NOW + 1000));
    expect(q.sql).not.toContain('DROP');
    expect(q.sql).toContain('IS NOT DISTINCT FROM');
    expect(q.sql).toContain("state = 'active'");
    expect(q.params).toContain(evil);
    expect(q.params).toContain(new Date(NOW + 1000).toISOString());
    expect(q.params).toContain('2');
  });

  test('the record: the outcome as one jsonb parameter; without an outcome only the due time moves', () => {
    const outcome = { at: new Date(NOW).toISOString(), error: evil, found: 1, invalid: 0, added: 1, not_added: 0, limit: null };
    const q = dialect.sqlToQuery(recordSourceStatement('pool', 0, 'https://l.example/', outcome));
    expect(q.sql).toContain("'last_fetch'");
    expect(q.sql).not.toContain("'next_fetch_at'");
    expect(q.params).toContain(JSON.stringify(outcome));
    const r = dialect.sqlToQuery(recordSourceStatement('pool', 0, 'https://l.example/', null, NOW));
    expect(r.sql).not.toContain("'last_fetch'");
    expect(r.sql).toContain("'next_fetch_at'");
  });
});
