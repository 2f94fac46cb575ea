/**
 * API-key authentication for /check, /check-raw and /me (and optionally /ws):
 * `X-API-Key: <key>` or `Authorization: Bearer <key>`, the seed's exact 401
 * bodies when missing or invalid. The key itself is never logged or kept.
 */
import { apiKeyRequired, invalidApiKey } from './api-errors';

/** The token of `Authorization: Bearer <token>`, or null. */
export function bearerToken(headers: Headers): string | null {
  const m = /^\s*bearer\s+(\S+)\s*$/i.exec(headers.get('authorization') ?? '');
  return m?.[1] ?? null;
}

/** The key a request carries, or null. X-API-Key wins when both are sent. */
export function apiKeyFrom(headers: Headers, query?: URLSearchParams): string | null {
  const header = headers.get('x-api-key');
  if (header !== null && header.trim() !== '') return header.trim();
  const bearer = bearerToken(headers);
  if (bearer !== null) return bearer;
  const q = query?.get('apiKey');
  if (q !== null && q !== undefined && q.trim() !== '') return q.trim();
  return null;
}

export interface AuthenticatedAccount {
  id: string;
  email: string;
}

export type KeyLookup<A extends AuthenticatedAccount> = (key: string) => Promise<A | null>;

/** Resolves the account of a request or throws the seed's 401. */
export async function authenticate<A extends AuthenticatedAccount>(headers: Headers, lookup: KeyLookup<A>): Promise<A> {
  const key = apiKeyFrom(headers);
  if (key === null) throw apiKeyRequired();
  const account = await lookup(key);
  if (account === null) throw invalidApiKey();
  return account;
}
