/**
 * The rounds' builders (src/pools/rounds-sql.ts) are pure: one statement
 * each, every value a parameter (a hostile string never reaches the SQL
 * text). Their behaviour on both drivers is
 * test/integration/pools-rounds-store.test.ts.
 */
import { describe, expect, test } from 'bun:test';
import { PgDialect } from 'drizzle-orm/pg-core';
import {
  claimDueStatement,
  nextDueStatement,
  pauseForChecksStatement,
  recheckStatement,
  resumeForChecksStatement,
  runnablePoolsStatement,
  spreadAllOverdueStatement,
} from '../../src/pools/rounds-sql';

const dialect = new PgDialect();
const q = (s: Parameters<PgDialect['sqlToQuery']>[0]) => dialect.sqlToQuery(s);
const evil = "x'); DROP TABLE pools; --";
const NOW = Date.UTC(2026, 5, 1, 12);

describe('rounds-sql', () => {
  test('every value is a parameter; one statement each', () => {
    const all = [
      runnablePoolsStatement(NOW, 4, 2000, [evil]),
      nextDueStatement(),
      claimDueStatement(evil, NOW, 10, NOW + 1),
      pauseForChecksStatement(evil, NOW),
      resumeForChecksStatement(evil, NOW),
      spreadAllOverdueStatement(NOW),
      recheckStatement(evil, [{ host: evil, port: 1, username: evil, password: evil }], NOW),
    ].map(q);
    for (const s of all) {
      expect(s.sql).not.toContain('DROP TABLE');
      expect(s.sql.trim().replace(/;$/, '')).not.toContain(';');
    }
    expect(all[0]!.params).toContain(new Date(NOW).toISOString());
  });

  test('the claim: most overdue first, SKIP LOCKED, pushed to the horizon, the rows returned', () => {
    const c = q(claimDueStatement('p1', NOW, 7, NOW + 60_000));
    expect(c.sql).toContain('ORDER BY next_check_at, id');
    expect(c.sql).toContain('FOR UPDATE SKIP LOCKED');
    expect(c.sql).toMatch(/RETURNING id, host, port/);
    expect(c.params).toEqual(['p1', new Date(NOW).toISOString(), 7, new Date(NOW + 60_000).toISOString()]);
  });

  test('runnable: never a pool its owner paused; the due count capped; exclude as one array parameter', () => {
    const r = q(runnablePoolsStatement(NOW, 3, 2000, ['a', 'b']));
    expect(r.sql).toContain(`p.state = 'active' OR (p.state = 'paused' AND p.paused_reason = 'insufficient_checks')`);
    expect(r.params).toEqual([new Date(NOW).toISOString(), 2000, new Date(NOW).toISOString(), '{"a","b"}', 3]);
  });

  test('pause and resume change only the state they expect (one row when they did)', () => {
    expect(q(pauseForChecksStatement('p', NOW)).sql).toContain(`WHERE id = $2 AND state = 'active'`);
    expect(q(resumeForChecksStatement('p', NOW)).sql).toContain(`state = 'paused' AND paused_reason = 'insufficient_checks'`);
  });
});
