/**
 * The hooks of the keyed routes that declare their schemas (the pools' and
 * the webhooks'; see refusals.ts for why they are hooks): Elysia checks a
 * route's `params` / `body` after them, so they give the contract's answers
 * that come first.
 *
 * - `keyed` (a route's transform hook; first step of jsonParse): the key
 *   (401; 429 past the account's request rate, its RateLimit-* headers on
 *   every answer from here on), then the 404 of an `id` that cannot be one
 *   (`idOf` throws it), the same 404 the schema's refusal of it answers.
 * - `jsonParse(schema, validate)` (a route's parse hook): keyed, then 415
 *   (JSON expected), the body read (413; 503 when every slot for bodies over
 *   1 MiB is taken: body.ts), 400 malformed JSON; what Elysia checks is the
 *   body with null members absent (refusals.ts nullsAsAbsent), and a body
 *   the schema refuses is answered by `validate` on the body as parsed.
 * - `validated(request, validate)`: the handler's ordered checks of the
 *   body as parsed (what a schema cannot say), the large body's slot given
 *   back after them.
 */
import type { TSchema } from '@sinclair/typebox';
import { setRateLimitHeaders } from './account-rate-limit';
import { unsupportedMediaType } from './api-errors';
import { authenticate } from './auth';
import { isJsonContentType, parseJsonBody, readHeldBody, releaseBody, type LargeBodyGate } from './body';
import type { AppDeps } from './context';
import { nullsAsAbsent, orderedChecksOf } from './refusals';
import { markAccount } from './request-log';

export type Account = Awaited<ReturnType<typeof authenticate>>;
export interface HookContext {
  request: Request;
  set: { headers: Record<string, unknown> };
  params?: Record<string, string | undefined>;
}

export function keyedHooks(deps: Pick<AppDeps, 'accounts'>, body: { maxBytes: number; gate: LargeBodyGate }, idOf: (id: string | undefined) => string) {
  const accounts = new WeakMap<Request, Account>();
  const parsed = new WeakMap<Request, unknown>();
  const keyed = async ({ request, set, params }: HookContext): Promise<void> => {
    const account = await authenticate(request.headers, (k) => deps.accounts.findByApiKey(k));
    markAccount(request, account.id);
    setRateLimitHeaders(set, account);
    accounts.set(request, account);
    if (params !== undefined) idOf(params.id);
    orderedChecksOf(request, { params: () => idOf(params?.id) });
  };
  const jsonParse = (schema: TSchema, validate: (json: unknown) => unknown) => [
    async (c: HookContext) => {
      await keyed(c);
      if (!isJsonContentType(c.request.headers.get('content-type'))) throw unsupportedMediaType('application/json');
      const json = parseJsonBody(await readHeldBody(c.request, body));
      parsed.set(c.request, json);
      orderedChecksOf(c.request, { params: () => idOf(c.params?.id), body: () => validate(json) });
      return nullsAsAbsent(schema, json);
    },
    'json' as const,
  ];
  const validated = <T>(request: Request, validate: (json: unknown) => T): T => {
    try {
      return validate(parsed.get(request));
    } finally {
      releaseBody(request);
    }
  };
  /** The key's account (keyed ran for every route of these hooks). */
  const owner = (request: Request): Account => accounts.get(request)!;
  return { keyed, jsonParse, validated, owner };
}
