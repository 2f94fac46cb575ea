/**
 * Accounts and API keys: create, issue/revoke keys, authenticate a key,
 * top up, set/clear the UnlimitedPro plan, show, list. Every balance change writes
 * a ledger row in the same transaction. E-mails are stored lower-cased.
 */
import { and, asc, count, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { accounts, apiKeys, type AccountRow } from '../../db/schema';
import { AccountError } from './errors';
import { DOMAIN_ERROR_CODES } from '../error-codes';
import { generateApiKey, hashApiKey, isPlausibleApiKey, safeEqual } from './keys';
import { insertLedger, LedgerReason, type DbOrTx } from './ledger';
import { subscriptionDetail, type SubscriptionDetail } from './plan';

export type { AccountRow } from '../../db/schema';

/** last_used_at is written at most this often per key. */
export const LAST_USED_RESOLUTION_MS = 60_000;

const EMAIL_RE = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

/** Trimmed, lower-cased e-mail, or AccountError(invalid_input). */
export function normalizeEmail(email: string): string {
  const e = email.trim().toLowerCase();
  if (!EMAIL_RE.test(e)) throw new AccountError(DOMAIN_ERROR_CODES.INVALID_INPUT, `not an e-mail address: "${email}"`);
  return e;
}

function checkUnits(name: string, n: number, min: number): void {
  if (!Number.isSafeInteger(n) || n < min) {
    throw new AccountError(DOMAIN_ERROR_CODES.INVALID_INPUT, `${name} must be an integer >= ${min}, got ${n}`);
  }
}

export interface CreateAccountInput {
  email: string;
  /** Root balance (default 0). */
  checks?: number;
  /** Temp balance (default 0). */
  temp?: number;
  /** Sets the UnlimitedPro flag with this expiry. */
  unlimitedUntil?: Date | null;
  now?: Date;
}

export async function createAccount(db: DbOrTx, input: CreateAccountInput): Promise<AccountRow> {
  const email = normalizeEmail(input.email);
  const root = input.checks ?? 0;
  const temp = input.temp ?? 0;
  checkUnits('checks', root, 0);
  checkUnits('temp', temp, 0);
  const now = input.now ?? new Date();
  return db.transaction(async (tx) => {
    const [row] = await tx
      .insert(accounts)
      .values({
        email,
        rootBalance: root,
        tempBalance: temp,
        unlimitedPro: input.unlimitedUntil !== undefined && input.unlimitedUntil !== null,
        unlimitedUntil: input.unlimitedUntil ?? null,
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoNothing({ target: accounts.email })
      .returning();
    if (row === undefined) throw new AccountError(DOMAIN_ERROR_CODES.ACCOUNT_EXISTS, `an account with e-mail ${email} already exists`);
    if (root + temp > 0) {
      await insertLedger(tx, {
        accountId: row.id,
        reason: LedgerReason.signup,
        tempDelta: temp,
        rootDelta: root,
        units: 0,
        balanceAfter: root + temp,
        createdAt: now,
      });
    }
    return row;
  });
}

export async function findAccountByEmail(db: Db, email: string): Promise<AccountRow | null> {
  const [row] = await db.select().from(accounts).where(eq(accounts.email, normalizeEmail(email)));
  return row ?? null;
}

export async function getAccount(db: Db, accountId: string): Promise<AccountRow | null> {
  const [row] = await db.select().from(accounts).where(eq(accounts.id, accountId));
  return row ?? null;
}

/** The account or AccountError(account_not_found). */
export async function requireAccountByEmail(db: Db, email: string): Promise<AccountRow> {
  const row = await findAccountByEmail(db, email);
  if (row === null) throw new AccountError(DOMAIN_ERROR_CODES.ACCOUNT_NOT_FOUND, `no account with e-mail ${normalizeEmail(email)}`);
  return row;
}

export interface IssuedKey {
  apiKey: string;
  keyId: string;
  accountId: string;
  label: string | null;
  createdAt: Date;
}

/** Issues a new key (or registers the given one, e.g. BOOTSTRAP_API_KEY). The key is returned once, never stored. */
export async function issueKey(db: DbOrTx, input: { accountId: string; label?: string | null; apiKey?: string }): Promise<IssuedKey> {
  const apiKey = input.apiKey ?? generateApiKey();
  if (!isPlausibleApiKey(apiKey)) throw new AccountError(DOMAIN_ERROR_CODES.INVALID_INPUT, 'an API key must be 16 to 200 printable characters');
  const [row] = await db
    .insert(apiKeys)
    .values({ accountId: input.accountId, keyHash: hashApiKey(apiKey), label: input.label ?? null })
    .onConflictDoNothing({ target: apiKeys.keyHash })
    .returning();
  if (row === undefined) throw new AccountError(DOMAIN_ERROR_CODES.KEY_EXISTS, 'this API key is already registered');
  return { apiKey, keyId: row.id, accountId: row.accountId, label: row.label, createdAt: row.createdAt };
}

export interface RevokedKey {
  keyId: string;
  accountId: string;
  revokedAt: Date;
  alreadyRevoked: boolean;
}

/** Revokes a key (idempotent: a second call reports the first revocation). */
export async function revokeKey(db: Db, apiKey: string, now: Date = new Date()): Promise<RevokedKey> {
  const hash = hashApiKey(apiKey);
  const [updated] = await db
    .update(apiKeys)
    .set({ revokedAt: now })
    .where(and(eq(apiKeys.keyHash, hash), isNull(apiKeys.revokedAt)))
    .returning();
  if (updated !== undefined) {
    return { keyId: updated.id, accountId: updated.accountId, revokedAt: now, alreadyRevoked: false };
  }
  const [existing] = await db.select().from(apiKeys).where(eq(apiKeys.keyHash, hash));
  if (existing === undefined || existing.revokedAt === null) throw new AccountError(DOMAIN_ERROR_CODES.KEY_NOT_FOUND, 'no such API key');
  return { keyId: existing.id, accountId: existing.accountId, revokedAt: existing.revokedAt, alreadyRevoked: true };
}

/**
 * The account owning a live (not revoked) key, or null. The lookup is by the
 * key's sha256 (an index probe; timing reveals nothing about the key) and the
 * stored hash is compared again in constant time. last_used_at is refreshed at
 * most once per LAST_USED_RESOLUTION_MS, so most requests do not write.
 */
export async function findAccountByApiKey(db: Db, apiKey: string, now: Date = new Date()): Promise<AccountRow | null> {
  if (!isPlausibleApiKey(apiKey)) return null;
  const hash = hashApiKey(apiKey);
  const [hit] = await db
    .select({ account: accounts, keyId: apiKeys.id, keyHash: apiKeys.keyHash, lastUsedAt: apiKeys.lastUsedAt })
    .from(apiKeys)
    .innerJoin(accounts, eq(accounts.id, apiKeys.accountId))
    .where(and(eq(apiKeys.keyHash, hash), isNull(apiKeys.revokedAt)));
  if (hit === undefined || !safeEqual(hit.keyHash, hash)) return null;
  if (hit.lastUsedAt === null || now.getTime() - hit.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS) {
    await db.update(apiKeys).set({ lastUsedAt: now }).where(eq(apiKeys.id, hit.keyId));
  }
  return hit.account;
}

/** Adds units to the root balance (or the temp balance) with a ledger row; returns the account after. */
export async function topUp(
  db: Db,
  input: { accountId: string; units: number; temp?: boolean; reason?: LedgerReason; now?: Date },
): Promise<AccountRow> {
  checkUnits('checks', input.units, 1);
  const now = input.now ?? new Date();
  const toTemp = input.temp === true;
  return db.transaction(async (tx) => {
    const [row] = await tx
      .update(accounts)
      .set(
        toTemp
          ? { tempBalance: sql`${accounts.tempBalance} + ${input.units}`, updatedAt: now }
          : { rootBalance: sql`${accounts.rootBalance} + ${input.units}`, updatedAt: now },
      )
      .where(eq(accounts.id, input.accountId))
      .returning();
    if (row === undefined) throw new AccountError(DOMAIN_ERROR_CODES.ACCOUNT_NOT_FOUND, `no account ${input.accountId}`);
    await insertLedger(tx, {
      accountId: row.id,
      reason: input.reason ?? LedgerReason.topUp,
      tempDelta: toTemp ? input.units : 0,
      rootDelta: toTemp ? 0 : input.units,
      units: 0,
      balanceAfter: row.rootBalance + row.tempBalance,
      createdAt: now,
    });
    return row;
  });
}

async function updatePlan(db: Db, accountId: string, unlimitedPro: boolean, until: Date | null, now: Date): Promise<AccountRow> {
  const [row] = await db
    .update(accounts)
    .set({ unlimitedPro, unlimitedUntil: until, updatedAt: now })
    .where(eq(accounts.id, accountId))
    .returning();
  if (row === undefined) throw new AccountError(DOMAIN_ERROR_CODES.ACCOUNT_NOT_FOUND, `no account ${accountId}`);
  return row;
}

/** Sets the UnlimitedPro flag with an expiry (null = no expiry). */
export function setPlan(db: Db, input: { accountId: string; unlimitedUntil: Date | null; now?: Date }): Promise<AccountRow> {
  return updatePlan(db, input.accountId, true, input.unlimitedUntil, input.now ?? new Date());
}

export function clearPlan(db: Db, input: { accountId: string; now?: Date }): Promise<AccountRow> {
  return updatePlan(db, input.accountId, false, null, input.now ?? new Date());
}

export interface AccountSummary {
  id: string;
  email: string;
  checks: number;
  root_balance: number;
  temp_balance: number;
  checks_used: number;
  unlimited_pro: boolean;
  unlimited_until: string | null;
  subscription_detail: SubscriptionDetail;
  created_at: string;
  keys: { id: string; label: string | null; created_at: string; last_used_at: string | null; revoked_at: string | null }[];
}

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());

/** What the admin `show` command prints (no key material: keys are listed by id). */
export async function showAccount(db: Db, accountId: string, now: Date = new Date()): Promise<AccountSummary> {
  const account = await getAccount(db, accountId);
  if (account === null) throw new AccountError(DOMAIN_ERROR_CODES.ACCOUNT_NOT_FOUND, `no account ${accountId}`);
  const keys = await db.select().from(apiKeys).where(eq(apiKeys.accountId, accountId)).orderBy(asc(apiKeys.createdAt));
  return {
    id: account.id,
    email: account.email,
    checks: account.rootBalance + account.tempBalance,
    root_balance: account.rootBalance,
    temp_balance: account.tempBalance,
    checks_used: account.checksUsed,
    unlimited_pro: account.unlimitedPro,
    unlimited_until: iso(account.unlimitedUntil),
    subscription_detail: subscriptionDetail(account, now),
    created_at: account.createdAt.toISOString(),
    keys: keys.map((k) => ({
      id: k.id,
      label: k.label,
      created_at: k.createdAt.toISOString(),
      last_used_at: iso(k.lastUsedAt),
      revoked_at: iso(k.revokedAt),
    })),
  };
}

/** One account in the admin `list-accounts` answer (no key material). */
export interface AccountListItem {
  id: string;
  email: string;
  checks: number;
  checks_used: number;
  subscription_detail: SubscriptionDetail;
  created_at: string;
  /** keys not revoked */
  active_keys: number;
  /** the latest use of any of its keys (to LAST_USED_RESOLUTION_MS) */
  last_used_at: string | null;
}

/** What the admin `list-accounts` command prints: the oldest accounts first, at most `limit`, and how many there are. */
export async function listAccounts(db: Db, limit: number, now: Date = new Date()): Promise<{ total: number; accounts: AccountListItem[] }> {
  const [{ total } = { total: 0 }] = await db.select({ total: count() }).from(accounts);
  const rows = await db.select().from(accounts).orderBy(asc(accounts.createdAt), asc(accounts.id)).limit(limit);
  const keys =
    rows.length === 0
      ? []
      : await db
          .select({ accountId: apiKeys.accountId, revokedAt: apiKeys.revokedAt, lastUsedAt: apiKeys.lastUsedAt })
          .from(apiKeys)
          .where(inArray(apiKeys.accountId, rows.map((r) => r.id)));
  const byAccount = new Map<string, { active: number; lastUsed: number | null }>();
  for (const k of keys) {
    const a = byAccount.get(k.accountId) ?? { active: 0, lastUsed: null };
    if (k.revokedAt === null) a.active++;
    if (k.lastUsedAt !== null && (a.lastUsed === null || k.lastUsedAt.getTime() > a.lastUsed)) a.lastUsed = k.lastUsedAt.getTime();
    byAccount.set(k.accountId, a);
  }
  return {
    total,
    accounts: rows.map((r) => {
      const k = byAccount.get(r.id);
      return {
        id: r.id,
        email: r.email,
        checks: r.rootBalance + r.tempBalance,
        checks_used: r.checksUsed,
        subscription_detail: subscriptionDetail(r, now),
        created_at: r.createdAt.toISOString(),
        active_keys: k?.active ?? 0,
        last_used_at: k?.lastUsed == null ? null : new Date(k.lastUsed).toISOString(),
      };
    }),
  };
}
