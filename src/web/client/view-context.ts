/**
 * What every component of a signed-in view shares: the key (asking to sign
 * in again when there is none) and how a failed API answer is shown (a 401
 * signs out; anything else is the answer's message in an error line).
 */
import type { Elem } from './browser';
import { setText } from './dom';
import { errorText } from './format';

export interface ViewDeps {
  key: () => string | null;
  onUnauthorized: () => void;
}

export interface ViewContext {
  /** The key, or null after asking to sign in again. */
  key(): string | null;
  /** The key without asking (null: signed out). */
  peekKey(): string | null;
  /** A failed answer: 401 signs out, anything else shows in `where`. */
  failed(status: number, body: unknown, where: Elem): void;
}

export function viewContext(deps: ViewDeps): ViewContext {
  return {
    key() {
      const k = deps.key();
      if (k === null) deps.onUnauthorized();
      return k;
    },
    peekKey: deps.key,
    failed(status, body, where) {
      if (status === 401) deps.onUnauthorized();
      else setText(where, errorText(status, body));
    },
  };
}
