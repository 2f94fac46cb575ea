/**
 * First start: the demo account is created once, with BOOTSTRAP_CHECKS and a
 * key that works (deterministic with BOOTSTRAP_API_KEY), logged once.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { findAccountByApiKey } from '../../src/accounts/accounts';
import { DEMO_EMAIL, ensureBootstrapAccount } from '../../src/accounts/bootstrap';
import { memoryLogger } from '../../src/log';
import { freshDatabase, type TestDatabase } from '../helpers/db';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await freshDatabase();
}, 60_000);
afterAll(async () => {
  await tdb.cleanup();
});

describe('ensureBootstrapAccount', () => {
  test('creates demo@localhost once with the given key, printed whatever LOG_LEVEL; a second call does nothing', async () => {
    const log = memoryLogger('warn'); // LOG_LEVEL=warn: the key is still printed, once
    const key = 'bootstrap-key-0123456789abcdef';
    const r = await ensureBootstrapAccount(tdb.db, { checks: 1000, apiKey: key, baseUrl: 'http://127.0.0.1:3999' }, log);
    expect(r).toMatchObject({ email: DEMO_EMAIL, apiKey: key });
    const acc = await findAccountByApiKey(tdb.db, key);
    expect(acc).toMatchObject({ email: 'demo@localhost', rootBalance: 1000, tempBalance: 0 });
    expect(log.lines).toHaveLength(1);
    expect(String(log.lines[0]?.msg)).toContain(key);
    expect(String(log.lines[0]?.msg)).toContain('http://127.0.0.1:3999/me');
    expect(await ensureBootstrapAccount(tdb.db, { checks: 5 }, log)).toBeNull();
    expect(log.lines).toHaveLength(1);
  });
});
