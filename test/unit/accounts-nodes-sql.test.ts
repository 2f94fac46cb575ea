/**
 * The node lease statement builders are pure: SQL text and parameters. Their
 * behaviour against a real database: test/integration/jobs-node-lease.test.ts
 * and accounts-orphans.test.ts on both drivers.
 */
import { describe, expect, test } from 'bun:test';
import { PgDialect } from 'drizzle-orm/pg-core';
import {
  liveLeaseCondition,
  pruneNodesStatement,
  registerNodeStatement,
  releaseNodeStatement,
  renewLeaseStatement,
} from '../../src/accounts/nodes-sql';

const dialect = new PgDialect();
const q = (s: Parameters<PgDialect['sqlToQuery']>[0]) => dialect.sqlToQuery(s);
const id = 'api-1';

describe('node lease statements', () => {
  test('register: one upsert that reports whether a live lease of the same id was there, on the database clock', () => {
    const r = q(registerNodeStatement({ id, version: '1.2.3', host: 'h1', pid: 42, leaseMs: 30_000 }));
    expect(r.sql).not.toContain(';');
    expect(r.sql).toContain('INSERT INTO nodes');
    expect(r.sql).toContain('ON CONFLICT (id) DO UPDATE');
    expect(r.sql).toContain('lease_until > now() AS live');
    expect(r.sql).toMatch(/now\(\) \+ \(\$\d+::int \* interval '1 millisecond'\)/);
    expect(r.params).toEqual(expect.arrayContaining([id, '1.2.3', 'h1', 42, 30_000]));
  });

  test('renew: one UPDATE of this node only, returning the row (none: the row is gone)', () => {
    const r = q(renewLeaseStatement({ id, leaseMs: 9000 }));
    expect(r.sql).toStartWith('UPDATE nodes SET lease_until = now() +');
    expect(r.sql).toContain('WHERE id = $');
    expect(r.sql).toContain('RETURNING id');
    expect(r.params).toEqual([9000, id]);
  });

  test('release deletes this node only; prune deletes leases expired for longer than given', () => {
    const r = q(releaseNodeStatement({ id }));
    expect([r.sql, r.params]).toEqual(['DELETE FROM nodes WHERE id = $1', [id]]);
    const p = q(pruneNodesStatement({ afterMs: 3_600_000 }));
    expect(p.sql).toBe("DELETE FROM nodes WHERE lease_until < now() - ($1::int * interval '1 millisecond')");
    expect(p.params).toEqual([3_600_000]);
  });

  test('a live lease is one with lease_until after the database\'s now()', () => {
    const c = q(liveLeaseCondition(id));
    expect(c.sql).toBe('EXISTS (SELECT 1 FROM nodes n WHERE n.id = $1 AND n.lease_until > now())');
    expect(c.params).toEqual([id]);
  });

  test('inputs travel as parameters, never as SQL text', () => {
    const evil = "x'); DROP TABLE scans; --";
    for (const s of [
      registerNodeStatement({ id: evil, version: evil, host: evil, pid: null, leaseMs: 1 }),
      renewLeaseStatement({ id: evil, leaseMs: 1 }),
      releaseNodeStatement({ id: evil }),
      liveLeaseCondition(evil),
    ]) {
      const r = q(s);
      expect(r.sql).not.toContain('DROP TABLE');
      expect(r.params).toContain(evil);
    }
  });
});
