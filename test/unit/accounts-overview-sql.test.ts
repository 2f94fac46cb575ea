/**
 * The /me statement builder and its row decoder are pure: the SQL text and
 * parameters, and the decoding of the row as either driver returns it (json
 * parsed or as text, numbers or numeric strings). Against a real database:
 * test/integration/accounts-overview.test.ts on both drivers.
 */
import { describe, expect, test } from 'bun:test';
import { PgDialect } from 'drizzle-orm/pg-core';
import { decodeOverviewRow, overviewStatement, type OverviewRow } from '../../src/accounts/overview-sql';

const dialect = new PgDialect();
const base = { accountId: '0b8f3c1e-4b7a-4e55-9c2f-0a1b2c3d4e5f', windowStart: new Date('2026-10-24T00:00:00Z'), limit: 30 };

describe('overviewStatement', () => {
  test('one statement: the account row with its scans folded in; inputs as parameters', () => {
    const q = dialect.sqlToQuery(overviewStatement(base));
    expect(q.sql).not.toContain(';');
    expect(q.sql.startsWith('SELECT')).toBe(true);
    expect(q.sql).toContain('FROM accounts a WHERE a.id = $');
    expect(q.sql).toContain('ORDER BY created_at DESC, id DESC LIMIT $');
    expect(q.params).toEqual(expect.arrayContaining([base.accountId, '2026-10-24T00:00:00.000Z', 30]));
    const evil = "x'; DROP TABLE scans; --";
    const e = dialect.sqlToQuery(overviewStatement({ ...base, accountId: evil }));
    expect(e.sql).not.toContain('DROP TABLE');
    expect(e.params).toContain(evil);
  });
});

const row = (over: Partial<OverviewRow> = {}): OverviewRow => ({
  email: 'a@example.test',
  root_balance: 5,
  temp_balance: 2,
  unlimited_pro: false,
  unlimited_until_ms: null,
  history_count: 2,
  usage: [['2026-11-21', 3], ['2026-11-22', 4]],
  recent: [
    [12, 4, 1, 'ref-12', 'socks5', 1_795_400_000_123, 'completed', null],
    [11, 0, 0, null, 'http', 1_795_300_000_000, 'failed', 'interrupted'],
  ],
  ...over,
});

describe('decodeOverviewRow', () => {
  test('typed data from parsed json and numbers', () => {
    expect(decodeOverviewRow(row())).toEqual({
      account: { email: 'a@example.test', rootBalance: 5, tempBalance: 2, unlimitedPro: false, unlimitedUntil: null },
      historyCount: 2,
      usage: new Map([
        ['2026-11-21', 3],
        ['2026-11-22', 4],
      ]),
      recent: [
        { id: 12, totalChecked: 4, totalWorking: 1, resultRef: 'ref-12', proxyType: 'socks5', createdAt: new Date(1_795_400_000_123), status: 'completed', error: null },
        { id: 11, totalChecked: 0, totalWorking: 0, resultRef: null, proxyType: 'http', createdAt: new Date(1_795_300_000_000), status: 'failed', error: 'interrupted' },
      ],
    });
  });

  test('the same from json text and numeric strings', () => {
    const r = row();
    const asText = row({
      root_balance: '5',
      temp_balance: '2',
      history_count: '2',
      unlimited_until_ms: '1800000000000',
      unlimited_pro: true,
      usage: JSON.stringify(r.usage),
      recent: JSON.stringify(r.recent),
    });
    const d = decodeOverviewRow(asText);
    expect(d.recent).toEqual(decodeOverviewRow(r).recent);
    expect(d.usage).toEqual(decodeOverviewRow(r).usage);
    expect(d.account).toEqual({ email: 'a@example.test', rootBalance: 5, tempBalance: 2, unlimitedPro: true, unlimitedUntil: new Date(1_800_000_000_000) });
    expect(d.historyCount).toBe(2);
  });

  test('no scans: empty usage and history', () => {
    const d = decodeOverviewRow(row({ history_count: 0, usage: '[]', recent: [] }));
    expect(d.usage.size).toBe(0);
    expect(d.recent).toEqual([]);
  });

  test('a row that is not the statement\'s shape is refused', () => {
    expect(() => decodeOverviewRow(row({ usage: '{}' }))).toThrow(TypeError);
    expect(() => decodeOverviewRow(row({ recent: null }))).toThrow(TypeError);
  });
});
