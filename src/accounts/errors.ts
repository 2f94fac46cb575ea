/**
 * Errors of the account layer, with stable codes (the account ones of
 * DOMAIN_ERROR_CODES, src/error-codes.ts). The admin command maps them to
 * exit codes, the admin HTTP API to ApiErrors (src/admin/routes.ts), both
 * branching on the class; bootstrap on account_exists.
 */
import { ServiceError } from '../errors';
import type { DOMAIN_ERROR_CODES } from '../error-codes';

export type AccountErrorCode = (typeof DOMAIN_ERROR_CODES)['INVALID_INPUT' | 'ACCOUNT_EXISTS' | 'ACCOUNT_NOT_FOUND' | 'KEY_NOT_FOUND' | 'KEY_EXISTS'];

export class AccountError extends ServiceError {
  declare readonly code: AccountErrorCode;
  constructor(code: AccountErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'AccountError';
  }
}
