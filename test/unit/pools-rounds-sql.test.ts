/**
 * The pause / resume builders (src/pools/rounds-sql.ts) are pure: one
 * statement each, every value a parameter (a hostile string never reaches the
 * SQL text). Their behaviour on both drivers is
 * test/integration/jobs-pool-durable.test.ts's.
 */
import { describe, expect, test } from 'bun:test';
import { PgDialect } from 'drizzle-orm/pg-core';
import { pauseForChecksStatement, resumeForChecksStatement } from '../../src/pools/rounds-sql';

const dialect = new PgDialect();
const q = (s: Parameters<PgDialect['sqlToQuery']>[0]) => dialect.sqlToQuery(s);
const evil = "x'); DROP TABLE pools; --";
const NOW = Date.UTC(2026, 5, 1, 12);

describe('rounds-sql', () => {
  test('every value is a parameter; one statement each', () => {
    for (const s of [pauseForChecksStatement(evil, NOW), resumeForChecksStatement(evil, NOW)].map(q)) {
      expect(s.sql).not.toContain('DROP TABLE');
      expect(s.sql.trim().replace(/;$/, '')).not.toContain(';');
      expect(s.params).toContain(evil);
    }
  });

  test('pause and resume change only the state they expect (one row when they did)', () => {
    expect(q(pauseForChecksStatement('p', NOW)).sql).toContain(`WHERE id = $2 AND state = 'active'`);
    expect(q(resumeForChecksStatement('p', NOW)).sql).toContain(`state = 'paused' AND paused_reason = 'insufficient_checks'`);
  });
});
