/**
 * Errors of the account layer, with stable codes. The admin command maps
 * them to exit codes, the admin HTTP API to ApiErrors (src/admin/routes.ts),
 * both branching on the class; bootstrap on account_exists.
 */
import { ServiceError } from '../errors';

export const AccountErrorCode = Object.freeze({
  invalidInput: 'invalid_input',
  accountExists: 'account_exists',
  accountNotFound: 'account_not_found',
  keyNotFound: 'key_not_found',
  keyExists: 'key_exists',
} as const);
export type AccountErrorCode = (typeof AccountErrorCode)[keyof typeof AccountErrorCode];

export class AccountError extends ServiceError {
  declare readonly code: AccountErrorCode;
  constructor(code: AccountErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'AccountError';
  }
}
