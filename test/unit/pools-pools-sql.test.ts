/**
 * The builders over the `pools` table (src/pools/pools-sql.ts) are pure:
 * one statement each, every value a parameter. Their behaviour on both
 * drivers is test/integration/pools-store.test.ts.
 */
import { describe, expect, test } from 'bun:test';
import { PgDialect } from 'drizzle-orm/pg-core';
import {
  clampDueStatement,
  deletePoolStatement,
  insertPoolStatement,
  lockAccountPoolsStatement,
  POOLS_LOCK_CLASS,
  poolObjectsStatement,
  poolTypeStatement,
  updatePoolStatement,
} from '../../src/pools/pools-sql';

const dialect = new PgDialect();
const q = (s: Parameters<PgDialect['sqlToQuery']>[0]) => dialect.sqlToQuery(s);
const evil = "x'); DROP TABLE pools; --";
const ACCOUNT = '0b8f3c1e-4b7a-4e55-9c2f-0a1b2c3d4e5f';
const NOW = Date.UTC(2026, 5, 1, 12);

describe('pools-sql', () => {
  test('the lock: the two-key advisory lock of the account, for the transaction', () => {
    const l = q(lockAccountPoolsStatement(evil));
    expect(l.sql).toBe('SELECT pg_advisory_xact_lock($1::int, hashtext($2::text))::text AS locked');
    expect(l.params).toEqual([POOLS_LOCK_CLASS, evil]);
    expect(POOLS_LOCK_CLASS).toBeLessThan(2 ** 31);
  });

  test('insert: every setting a parameter; json as text cast to jsonb; sources in the API\'s snake_case', () => {
    const i = q(
      insertPoolStatement('abcdefghij', ACCOUNT, {
        name: evil,
        type: 'auto',
        region: 'de1',
        intervalS: 300,
        timeoutMs: 3000,
        https: false,
        customUrls: [{ name: 'a-example', url: 'https://a.example/', requiredStatusCodes: [200], caseSensitive: false }],
        sources: [{ url: 'https://l.example/', everyS: 900 }],
      }, NOW),
    );
    expect(i.sql).not.toContain('DROP');
    expect(i.params).toEqual([
      'abcdefghij', ACCOUNT, evil, 'auto', 'de1', 300, 3000, false,
      '[{"name":"a-example","url":"https://a.example/","requiredStatusCodes":[200],"caseSensitive":false}]', '[{"url":"https://l.example/","every_s":900}]',
      new Date(NOW).toISOString(), new Date(NOW).toISOString(),
    ]);
  });

  test('the pool objects: the account\'s pools (or one) with their stats, oldest first', () => {
    const all = q(poolObjectsStatement(ACCOUNT, null, NOW));
    expect(all.sql).toContain('WHERE p.account_id = $');
    expect(all.sql).not.toContain('AND p.id =');
    expect(all.sql).toMatch(/GROUP BY p\.id\s+ORDER BY p\.created_at, p\.id$/);
    const one = q(poolObjectsStatement(ACCOUNT, evil, NOW));
    expect(one.sql).toContain('AND p.id = $');
    expect(one.params).toContain(evil);
    expect(q(poolTypeStatement(ACCOUNT, evil)).params).toEqual([evil, ACCOUNT]);
  });

  test('update: only the given settings; paused by its owner, or active with no reason; the old state returned', () => {
    const none = q(updatePoolStatement(ACCOUNT, 'abcdefghij', {}, NOW));
    expect(none.sql).toMatch(/SET updated_at = \$\d+::timestamptz\s+FROM old/);
    const all = q(updatePoolStatement(ACCOUNT, 'abcdefghij', { name: evil, intervalS: 60, timeoutMs: 2000, https: true, state: 'paused' }, NOW));
    expect(all.sql).toContain("state = 'paused', paused_reason = 'owner'");
    expect(all.sql).toContain('FOR UPDATE');
    expect(all.sql).toContain('RETURNING old.state AS old_state, old.interval_s AS old_interval_s, p.type, p.interval_s, p.state');
    expect(all.params).toEqual(['abcdefghij', ACCOUNT, new Date(NOW).toISOString(), evil, 60, 2000, true]);
    expect(q(updatePoolStatement(ACCOUNT, 'abcdefghij', { state: 'active' }, NOW)).sql).toContain("state = 'active', paused_reason = NULL");
  });

  test('clamp and delete', () => {
    const c = q(clampDueStatement('abcdefghij', NOW, 600));
    expect(c.sql).toContain('next_check_at > $');
    expect(c.params).toEqual([new Date(NOW).toISOString(), 600_000, 'abcdefghij', new Date(NOW + 600_000).toISOString()]);
    const d = q(deletePoolStatement(ACCOUNT, evil));
    expect(d.sql).toBe('DELETE FROM pools WHERE id = $1 AND account_id = $2::uuid RETURNING id');
    expect(d.params).toEqual([evil, ACCOUNT]);
  });
});
