/** The pool commands' renderings (src/cli/pool-tables.ts). */
import { describe, expect, test } from 'bun:test';
import type { PoolChangedBody, PoolObject } from '../../src/cli/api-client';
import { poolObjectFixture } from '../helpers/pool-object';
import { dueText, renderAdded, renderCreated, renderPool, renderPoolWarnings, renderPools, stateText, withWarnings } from '../../src/cli/pool-tables';

const NOW = Date.UTC(2026, 10, 22, 10);
const pool: PoolObject = poolObjectFixture(NOW);
const changed = (s: Partial<PoolChangedBody['submitted']>): PoolChangedBody => ({ ...pool, submitted: { added: 0, removed: 0, total_invalid: 0, total_duplicates: 0, ...s } });

describe('pool renderings', () => {
  test('state and due times', () => {
    expect(stateText(pool)).toBe('active');
    expect(stateText({ state: 'paused', paused_reason: 'owner' })).toBe('paused by you');
    expect(stateText({ state: 'paused', paused_reason: 'insufficient_checks' })).toBe('paused: not enough checks');
    expect(dueText(null, NOW)).toBe('-');
    expect(dueText(new Date(NOW - 1).toISOString(), NOW)).toBe('now');
    expect(dueText(new Date(NOW + 250_000).toISOString(), NOW)).toBe('in 4m 10s');
  });

  test('list: a table; none: how to make one', () => {
    expect(renderPools([pool, { ...pool, id: 'zzzzzzzzzz', name: 'b', state: 'paused', paused_reason: 'owner', interval_s: 86_400 }], NOW)).toBe(
      [
        'id                    name          state          proxies  working  failed  unchecked  interval  next check',
        '--------------------  ------------  -------------  -------  -------  ------  ---------  --------  ----------',
        'k3v9q2m7x1c8b5n4z6w0  scraper list  active           1,200      800     300        100    10m 0s  in 4m 10s',
        'zzzzzzzzzz            b             paused by you    1,200      800     300        100     1d 0h  -',
      ].join('\n'),
    );
    expect(renderPools([], NOW)).toBe('No pools yet. Create one: proxycheck pool create <name> proxies.txt');
  });

  test('show: every field a line', () => {
    const lines = renderPool(pool, NOW).split('\n');
    expect(lines).toEqual([
      'pool        k3v9q2m7x1c8b5n4z6w0  "scraper list"',
      'state       active',
      'proxies     1,200: 800 working, 300 failed, 100 unchecked',
      'checks      http from us1, timeout 5000 ms, https on, working ones every 10m 0s',
      "cost        ~180,000 checks a day at today's states; 150,000 in the last 24 h",
      'last round  2026-11-22T09:55:00.000Z',
      'next check  in 4m 10s',
      'created     2026-11-20T10:00:00.000Z',
      'source      https://lists.example/p.txt (fetched every 1h 0m)',
      'target      example-com: https://example.com/ (200|204, "Example")',
    ]);
  });

  test('create, add and remove reports', () => {
    expect(renderCreated(changed({ added: 1200, total_invalid: 2, total_duplicates: 1 })).split('\n')[0]).toBe(
      'Created pool k3v9q2m7x1c8b5n4z6w0 "scraper list" with 1,200 proxies (skipped: 2 invalid, 1 duplicate).',
    );
    expect(renderAdded(changed({ added: 1 }), 'add')).toBe('Added 1 proxy to pool k3v9q2m7x1c8b5n4z6w0; it holds 1,200 proxies now.');
    expect(renderAdded(changed({ removed: 3, total_duplicates: 2 }), 'remove')).toBe('Removed 3 proxies from pool k3v9q2m7x1c8b5n4z6w0 (skipped: 2 duplicates); it holds 1,200 proxies now.');
  });
});

describe('the warnings of a create / PATCH answer', () => {
  test('balance_runs_out: its message; without one the code and the hours left; none: nothing added', () => {
    const message = 'The pools cost about 7,500 checks a day; the balance of 1,000 lasts about 3 hours.';
    expect(renderPoolWarnings([{ code: 'balance_runs_out', message, hours_left: 3.2 }])).toBe(`Warning: ${message}`);
    expect(renderPoolWarnings([{ code: 'balance_runs_out', hours_left: 26 }])).toBe('Warning: balance_runs_out (the balance lasts about 1d 2h more)');
    expect(renderPoolWarnings(undefined)).toBe('');
    expect(withWarnings('Resumed pool x.', {})).toBe('Resumed pool x.');
    expect(withWarnings('Resumed pool x.', { warnings: [{ code: 'balance_runs_out', message: 'm' }] })).toBe('Resumed pool x.\nWarning: m');
  });
});
