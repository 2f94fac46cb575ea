/**
 * Errors of the account layer, with stable codes. The admin command maps
 * them to exit codes, the admin HTTP API to ApiErrors (src/admin/routes.ts).
 */

export const AccountErrorCode = Object.freeze({
  invalidInput: 'invalid_input',
  accountExists: 'account_exists',
  accountNotFound: 'account_not_found',
  keyNotFound: 'key_not_found',
  keyExists: 'key_exists',
} as const);
export type AccountErrorCode = (typeof AccountErrorCode)[keyof typeof AccountErrorCode];

export class AccountError extends Error {
  readonly code: AccountErrorCode;
  constructor(code: AccountErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AccountError';
    this.code = code;
  }
}
