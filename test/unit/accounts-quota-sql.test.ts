/**
 * The reservation statement builder is pure: the SQL text and its parameters
 * for given inputs. Its behaviour against a real database is covered by
 * test/integration/accounts-quota.test.ts on both drivers.
 */
import { describe, expect, test } from 'bun:test';
import { PgDialect } from 'drizzle-orm/pg-core';
import { reserveStatement } from '../../src/accounts/quota-sql';

const dialect = new PgDialect();
const base = { accountId: '0b8f3c1e-4b7a-4e55-9c2f-0a1b2c3d4e5f', runId: 'run_x', units: 7, now: new Date('2026-11-22T00:00:00Z') };

describe('reserveStatement', () => {
  test('one statement that locks the account row before charging it (NO KEY: not against rows that reference the account)', () => {
    const q = dialect.sqlToQuery(reserveStatement(base));
    expect(q.sql).not.toContain(';');
    const lock = q.sql.indexOf('FOR NO KEY UPDATE');
    expect(lock).toBeGreaterThan(0);
    expect(q.sql.indexOf('UPDATE accounts a')).toBeGreaterThan(lock);
    expect(q.sql).toContain('INSERT INTO quota_ledger');
    expect(q.params).toContain(base.accountId);
    expect(q.params).toContain('run_x');
    expect(q.params).toContain(7);
    expect(q.params).toContain('2026-11-22T00:00:00.000Z');
  });

  test('the scan row is inserted only when asked for', () => {
    expect(dialect.sqlToQuery(reserveStatement(base)).sql).not.toContain('INSERT INTO scans');
    const q = dialect.sqlToQuery(
      reserveStatement({ ...base, scan: { proxyType: 'socks5', region: 'de1', timeoutMs: 3000, totalSubmitted: 9 } }),
    );
    expect(q.sql).toContain('INSERT INTO scans');
    expect(q.params).toEqual(expect.arrayContaining(['socks5', 'de1', 3000, 9]));
  });

  test('inputs travel as parameters, never as SQL text', () => {
    const evil = "x'); DROP TABLE accounts; --";
    const q = dialect.sqlToQuery(reserveStatement({ ...base, runId: evil, scan: { proxyType: evil, region: evil, timeoutMs: 1, totalSubmitted: 1 } }));
    expect(q.sql).not.toContain('DROP TABLE');
    expect(q.params.filter((p) => p === evil).length).toBeGreaterThanOrEqual(3);
  });

  test('without a node: no lease guard and no node on the scan (lease_live is true)', () => {
    const q = dialect.sqlToQuery(reserveStatement({ ...base, scan: { proxyType: 'http', region: 'us1', timeoutMs: 1, totalSubmitted: 1 } }));
    expect(q.sql).not.toContain('FROM nodes');
    expect(q.sql).toContain('SELECT true AS live');
    expect(q.sql).toContain('node_id');
  });

  test('with a node: the scan records it, and nothing is charged unless its lease is live', () => {
    const q = dialect.sqlToQuery(
      reserveStatement({ ...base, nodeId: 'api-7', scan: { proxyType: 'http', region: 'us1', timeoutMs: 1, totalSubmitted: 1 } }),
    );
    expect(q.sql).toContain('EXISTS (SELECT 1 FROM nodes n WHERE n.id = $1 AND n.lease_until > now()) AS live');
    // the guard sits on the charge itself: no charge, no ledger row, no scan without it
    expect(q.sql).toMatch(/WHERE a\.id = c\.id AND c\.enough AND \(SELECT live FROM node\)/);
    expect(q.sql).toContain('(SELECT live FROM node) AS lease_live');
    expect(q.sql).toMatch(/INSERT INTO scans \([^)]*\bnode_id\b[^)]*\)/);
    expect(q.params.filter((p) => p === 'api-7').length).toBe(2);
  });

  test('the client jobId: recorded on the scan; a running scan with it (any account) charges nothing', () => {
    const scan = { proxyType: 'http', region: 'us1', timeoutMs: 1, totalSubmitted: 1 };
    const q = dialect.sqlToQuery(reserveStatement({ ...base, scan, clientJobId: 'job-x' }));
    expect(q.sql).toMatch(/INSERT INTO scans \([^)]*client_job_id\)/);
    // the check is global: by jobId and status only, never by account
    expect(q.sql).toMatch(/busy AS \(\s*SELECT EXISTS \(SELECT 1 FROM scans s WHERE s\.client_job_id = \$\d+ AND s\.status = 'running'\) AS running/);
    expect(q.sql).toMatch(/WHERE a\.id = c\.id AND c\.enough AND \(SELECT live FROM node\) AND NOT \(SELECT running FROM busy\)/);
    expect(q.sql).toContain('(SELECT running FROM busy) AS job_running');
    expect(q.params.filter((p) => p === 'job-x').length).toBe(2);
  });

  test('without a client jobId (or without a scan): nothing to check, client_job_id null', () => {
    const scan = { proxyType: 'http', region: 'us1', timeoutMs: 1, totalSubmitted: 1 };
    for (const input of [{ ...base, scan }, { ...base, scan, clientJobId: null }]) {
      const q = dialect.sqlToQuery(reserveStatement(input));
      expect(q.sql).toContain('SELECT false AS running');
      expect(q.sql).not.toContain('client_job_id =');
      expect(q.sql).toMatch(/INSERT INTO scans \([^)]*client_job_id\)/);
    }
    // no scan: the jobId is not looked at (it names no running scan to record)
    const q = dialect.sqlToQuery(reserveStatement({ ...base, clientJobId: 'job-x' }));
    expect(q.sql).toContain('SELECT false AS running');
    expect(q.params).not.toContain('job-x');
  });
});
