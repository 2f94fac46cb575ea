/**
 * Accounts and keys against a real database: create (lower-cased, unique),
 * issue/revoke/lookup keys (hash only stored, revoked = invalid, last_used_at
 * throttled), top-ups and plans with ledger rows, show.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { accounts, apiKeys } from '../../db/schema';
import {
  clearPlan,
  createAccount,
  findAccountByApiKey,
  findAccountByEmail,
  issueKey,
  normalizeEmail,
  requireAccountByEmail,
  revokeKey,
  setPlan,
  showAccount,
  topUp,
} from '../../src/accounts/accounts';
import { hashApiKey } from '../../src/accounts/keys';
import { ledgerOf } from '../../src/accounts/ledger';
import { freshDatabase, type TestDatabase } from '../helpers/db';
import { rejection } from '../helpers/rejection';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await freshDatabase();
}, 60_000);
afterAll(async () => {
  await tdb.cleanup();
});

describe('createAccount', () => {
  test('stores the e-mail lower-cased with balances and a signup ledger row', async () => {
    const acc = await createAccount(tdb.db, { email: '  Mixed.Case@Example.TEST ', checks: 7, temp: 3 });
    expect(acc).toMatchObject({ email: 'mixed.case@example.test', rootBalance: 7, tempBalance: 3, checksUsed: 0, unlimitedPro: false });
    expect(acc.id).toMatch(/^[0-9a-f-]{36}$/);
    const rows = await ledgerOf(tdb.db, acc.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ reason: 'signup', rootDelta: 7, tempDelta: 3, delta: 10, balanceAfter: 10 });
    expect((await findAccountByEmail(tdb.db, 'MIXED.case@example.test'))?.id).toBe(acc.id);
  });

  test('a duplicate e-mail (any case) is refused with account_exists', async () => {
    await createAccount(tdb.db, { email: 'dup@example.test' });
    expect(await rejection(createAccount(tdb.db, { email: 'DUP@example.test' }))).toMatchObject({ code: 'account_exists' });
  });

  test('no ledger row when created with zero balance; bad input is invalid_input', async () => {
    const acc = await createAccount(tdb.db, { email: 'zero@example.test' });
    expect(await ledgerOf(tdb.db, acc.id)).toEqual([]);
    expect(await rejection(createAccount(tdb.db, { email: 'not-an-email' }))).toMatchObject({ code: 'invalid_input' });
    expect(await rejection(createAccount(tdb.db, { email: 'neg@example.test', checks: -1 }))).toMatchObject({ code: 'invalid_input' });
    expect(() => normalizeEmail('a b@c')).toThrow();
  });

  test('the database refuses a negative balance (CHECK constraint)', async () => {
    const acc = await createAccount(tdb.db, { email: 'check@example.test', checks: 1 });
    expect(await rejection(topUp(tdb.db, { accountId: acc.id, units: 0 }))).toMatchObject({ code: 'invalid_input' });
    const negative = async () => {
      await tdb.db.update(accounts).set({ rootBalance: -1 }).where(eq(accounts.id, acc.id));
    };
    expect(await rejection(negative())).toBeInstanceOf(Error);
  });
});

describe('API keys', () => {
  test('issue -> lookup works, only the hash is stored, revoke -> null', async () => {
    const acc = await createAccount(tdb.db, { email: 'keys@example.test', checks: 1 });
    const k = await issueKey(tdb.db, { accountId: acc.id, label: 'ci' });
    expect(k.apiKey).toMatch(/^pc_[0-9A-Za-z]{32}$/);
    const [row] = await tdb.db.select().from(apiKeys).where(eq(apiKeys.id, k.keyId));
    expect(row?.keyHash).toBe(hashApiKey(k.apiKey));
    expect(JSON.stringify(row)).not.toContain(k.apiKey);
    expect((await findAccountByApiKey(tdb.db, k.apiKey))?.id).toBe(acc.id);
    expect(await findAccountByApiKey(tdb.db, k.apiKey + 'x')).toBeNull();
    expect(await findAccountByApiKey(tdb.db, '')).toBeNull();
    expect(await findAccountByApiKey(tdb.db, 'short')).toBeNull();
    const r = await revokeKey(tdb.db, k.apiKey);
    expect(r).toMatchObject({ keyId: k.keyId, accountId: acc.id, alreadyRevoked: false });
    expect(await findAccountByApiKey(tdb.db, k.apiKey)).toBeNull();
    expect((await revokeKey(tdb.db, k.apiKey)).alreadyRevoked).toBe(true);
    expect(await rejection(revokeKey(tdb.db, 'pc_doesnotexist000000000000000000'))).toMatchObject({ code: 'key_not_found' });
  });

  test('a given key (BOOTSTRAP_API_KEY) can be registered once', async () => {
    const acc = await createAccount(tdb.db, { email: 'given@example.test' });
    await issueKey(tdb.db, { accountId: acc.id, apiKey: 'my-fixed-key-0123456789' });
    expect((await findAccountByApiKey(tdb.db, 'my-fixed-key-0123456789'))?.email).toBe('given@example.test');
    expect(await rejection(issueKey(tdb.db, { accountId: acc.id, apiKey: 'my-fixed-key-0123456789' }))).toMatchObject({ code: 'key_exists' });
    expect(await rejection(issueKey(tdb.db, { accountId: acc.id, apiKey: 'too short' }))).toMatchObject({ code: 'invalid_input' });
  });

  test('last_used_at is written at most once a minute', async () => {
    const acc = await createAccount(tdb.db, { email: 'lastused@example.test' });
    const k = await issueKey(tdb.db, { accountId: acc.id });
    const lastUsed = async () => (await tdb.db.select().from(apiKeys).where(eq(apiKeys.id, k.keyId)))[0]?.lastUsedAt?.toISOString();
    const t0 = new Date('2026-05-01T10:00:00Z');
    await findAccountByApiKey(tdb.db, k.apiKey, t0);
    expect(await lastUsed()).toBe(t0.toISOString());
    await findAccountByApiKey(tdb.db, k.apiKey, new Date(t0.getTime() + 59_000));
    expect(await lastUsed()).toBe(t0.toISOString());
    const t2 = new Date(t0.getTime() + 61_000);
    await findAccountByApiKey(tdb.db, k.apiKey, t2);
    expect(await lastUsed()).toBe(t2.toISOString());
  });
});

describe('top-up, plans, show', () => {
  test('top-up adds to root or temp with a ledger row', async () => {
    const acc = await createAccount(tdb.db, { email: 'topup@example.test', checks: 1 });
    let after = await topUp(tdb.db, { accountId: acc.id, units: 5 });
    expect([after.rootBalance, after.tempBalance]).toEqual([6, 0]);
    after = await topUp(tdb.db, { accountId: acc.id, units: 4, temp: true });
    expect([after.rootBalance, after.tempBalance]).toEqual([6, 4]);
    const rows = (await ledgerOf(tdb.db, acc.id)).filter((r) => r.reason === 'top_up');
    expect(rows.map((r) => [r.rootDelta, r.tempDelta, r.balanceAfter])).toEqual([
      [5, 0, 6],
      [0, 4, 10],
    ]);
    expect(await rejection(topUp(tdb.db, { accountId: '00000000-0000-0000-0000-000000000000', units: 1 }))).toMatchObject({
      code: 'account_not_found',
    });
  });

  test('set-plan / clear-plan and show', async () => {
    const acc = await createAccount(tdb.db, { email: 'plan@example.test', checks: 2, temp: 1 });
    const until = new Date('2030-01-01T00:00:00Z');
    const now = new Date('2029-06-01T00:00:00Z');
    const set = await setPlan(tdb.db, { accountId: acc.id, unlimitedUntil: until, now });
    expect([set.unlimitedPro, set.unlimitedUntil?.toISOString()]).toEqual([true, until.toISOString()]);
    let shown = await showAccount(tdb.db, acc.id, now);
    expect(shown).toMatchObject({
      email: 'plan@example.test',
      checks: 3,
      root_balance: 2,
      temp_balance: 1,
      checks_used: 0,
      unlimited_pro: true,
      unlimited_until: until.toISOString(),
      subscription_detail: { UnlimitedPro: true, unlimited_expired_at: until.toISOString() },
      keys: [],
    });
    await clearPlan(tdb.db, { accountId: acc.id, now });
    shown = await showAccount(tdb.db, acc.id, now);
    expect(shown.subscription_detail).toEqual({ UnlimitedPro: false });
    expect(shown.unlimited_until).toBeNull();
    expect(await rejection(requireAccountByEmail(tdb.db, 'nobody@example.test'))).toMatchObject({ code: 'account_not_found' });
  });
});
