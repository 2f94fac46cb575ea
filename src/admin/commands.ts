/**
 * The admin commands over a database: one function per command, each taking
 * a validated AdminRequest (src/admin/args.ts) and returning the JSON the
 * command prints. Used by the CLI (direct database access) and by the admin
 * HTTP API (src/admin/routes.ts), so both print exactly the same thing.
 */
import type { Db } from '../../db/client';
import {
  clearPlan,
  createAccount,
  issueKey,
  listAccounts,
  requireAccountByEmail,
  revokeKey,
  setPlan,
  showAccount,
  topUp,
} from '../accounts/accounts';
import { subscriptionDetail } from '../accounts/plan';
import { LIST_ACCOUNTS_DEFAULT_LIMIT, type AdminRequest } from './args';

export type AdminResult = Record<string, unknown>;

function planView(row: { id: string; email: string; unlimitedPro: boolean; unlimitedUntil: Date | null }, now: Date): AdminResult {
  return {
    id: row.id,
    email: row.email,
    unlimited_pro: row.unlimitedPro,
    unlimited_until: row.unlimitedUntil?.toISOString() ?? null,
    subscription_detail: subscriptionDetail(row, now),
  };
}

export async function runAdminCommand(db: Db, req: AdminRequest, now: Date = new Date()): Promise<AdminResult> {
  switch (req.command) {
    case 'create-account': {
      const account = await createAccount(db, {
        email: req.email,
        checks: req.checks ?? 0,
        temp: req.temp ?? 0,
        unlimitedUntil: req.unlimitedUntil === undefined ? null : new Date(req.unlimitedUntil),
        now,
      });
      const key = await issueKey(db, { accountId: account.id, label: 'admin' });
      return { id: account.id, email: account.email, apiKey: key.apiKey };
    }
    case 'issue-key': {
      const account = await requireAccountByEmail(db, req.email);
      const key = await issueKey(db, { accountId: account.id, label: req.label ?? null });
      return { apiKey: key.apiKey, keyId: key.keyId, accountId: account.id, email: account.email, label: key.label };
    }
    case 'revoke-key': {
      const r = await revokeKey(db, req.key, now);
      return { revoked: true, keyId: r.keyId, accountId: r.accountId, revokedAt: r.revokedAt.toISOString(), alreadyRevoked: r.alreadyRevoked };
    }
    case 'top-up': {
      const account = await requireAccountByEmail(db, req.email);
      const after = await topUp(db, { accountId: account.id, units: req.checks, temp: req.temp === true, now });
      return {
        id: after.id,
        email: after.email,
        added: req.checks,
        balance: req.temp === true ? 'temp' : 'root',
        checks: after.rootBalance + after.tempBalance,
        root_balance: after.rootBalance,
        temp_balance: after.tempBalance,
      };
    }
    case 'set-plan': {
      const account = await requireAccountByEmail(db, req.email);
      return planView(await setPlan(db, { accountId: account.id, unlimitedUntil: new Date(req.unlimitedUntil), now }), now);
    }
    case 'clear-plan': {
      const account = await requireAccountByEmail(db, req.email);
      return planView(await clearPlan(db, { accountId: account.id, now }), now);
    }
    case 'show': {
      const account = await requireAccountByEmail(db, req.email);
      return { ...(await showAccount(db, account.id, now)) };
    }
    case 'list-accounts':
      return { ...(await listAccounts(db, req.limit ?? LIST_ACCOUNTS_DEFAULT_LIMIT, now)) };
  }
}
