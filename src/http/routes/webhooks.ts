/**
 * Webhooks (DECISIONS "Webhooks"; docs/API.md "Webhooks"), every route keyed
 * and rate-limited like /pools (the per-account token bucket of the key
 * lookup; its RateLimit-* headers on every answer past the key):
 *
 *   POST   /webhooks                       201 the endpoint + `secret` (shown only here), Location
 *   GET    /webhooks                       200 {webhooks: [endpoint]}, oldest first
 *   GET    /webhooks/{id}                  200 the endpoint
 *   PATCH  /webhooks/{id}                  200 the endpoint
 *   DELETE /webhooks/{id}                  204 (its pending deliveries go with it)
 *   POST   /webhooks/{id}/test             202 {id, event: "webhook.test"}: a message written, sent now
 *   POST   /webhooks/{id}/rotate-secret    200 {id, secret}: the old secret stops signing at once
 *   GET    /webhooks/{id}/deliveries       200 {deliveries: [delivery]}, newest first, at most 100
 *
 * Order of answers: 401 (key; 429 past the account's request rate) -> 404
 * for an id that cannot be an endpoint's -> POST/PATCH: 415, 413, 400
 * (malformed JSON), the validator's 400 (webhook-request.ts) -> 404 (not
 * this account's endpoint) -> 400 for pools that are not the account's and
 * for a URL whose name resolves to a private address (unless
 * ALLOW_PRIVATE_TARGETS) -> 429 with `limit` past 10 endpoints -> the answer.
 *
 * Hidden from the OpenAPI generator: their operations are the document
 * paths of openapi-webhooks.ts.
 */
import { Elysia } from 'elysia';
import { invalidRequest, serviceUnavailable, tooManyWebhooks, unsupportedMediaType, webhookNotFound } from '../api-errors';
import { setRateLimitHeaders } from '../account-rate-limit';
import { authenticate } from '../auth';
import { isJsonContentType, LargeBodyGate, parseJsonBody, withBodyText } from '../body';
import type { AppDeps, WebhooksPort } from '../context';
import { jsonResponse } from '../errors';
import { markAccount } from '../request-log';
import { validateWebhookCreate, validateWebhookPatch, type WebhookRequestOptions } from '../webhook-request';
import { isWebhookId } from '../../webhooks/seal';
import { TEST_EVENT } from '../../webhooks/types';

export function webhookRoutes(deps: AppDeps, bodies: LargeBodyGate = new LargeBodyGate(deps.limits.maxLargeBodies)) {
  const opts: WebhookRequestOptions = { allowPrivateTargets: deps.webhooks?.allowPrivateTargets ?? false };
  const body = { maxBytes: deps.limits.maxBodyBytes, gate: bodies };
  const port = (): WebhooksPort => {
    if (deps.webhooks === undefined) throw serviceUnavailable('Webhooks are not available on this server');
    return deps.webhooks;
  };
  const owner = async (request: Request, set: { headers: Record<string, unknown> }) => {
    const account = await authenticate(request.headers, (k) => deps.accounts.findByApiKey(k));
    markAccount(request, account.id);
    setRateLimitHeaders(set, account);
    return account;
  };
  const webhookId = (id: string | undefined): string => {
    if (id === undefined || !isWebhookId(id)) throw webhookNotFound();
    return id;
  };
  const jsonBody = async <T>(request: Request, validate: (json: unknown) => T): Promise<T> => {
    if (!isJsonContentType(request.headers.get('content-type'))) throw unsupportedMediaType('application/json');
    return withBodyText(request, body, (text) => validate(parseJsonBody(text)));
  };
  /** The checks that need the database or DNS: the pools are the account's, the URL's name is not private. */
  const checkTargets = async (accountId: string, url: string | undefined, pools: string[] | null | undefined): Promise<void> => {
    if (pools !== undefined && pools !== null) {
      const foreign = await port().foreignPools(accountId, pools);
      if (foreign.length > 0) throw invalidRequest(`pools[${pools.indexOf(foreign[0]!)}]: no pool ${foreign[0]} in this account`);
    }
    if (url !== undefined) {
      const refused = await port().refusedTarget(url);
      if (refused !== null) throw invalidRequest(`url: ${refused}`);
    }
  };

  return new Elysia({ name: 'webhook-routes' })
    .post(
      '/webhooks',
      async ({ request, set }) => {
        const account = await owner(request, set);
        const req = await jsonBody(request, (json) => validateWebhookCreate(json, opts));
        await checkTargets(account.id, req.url, req.pools);
        const made = await port().create(account.id, req);
        if (made === 'limit') throw tooManyWebhooks(port().maxPerAccount);
        return jsonResponse(201, { ...made.webhook, secret: made.secret }, { location: `/webhooks/${made.webhook.id}` });
      },
      { parse: 'none', detail: { hide: true } },
    )
    .get(
      '/webhooks',
      async ({ request, set }) => {
        const account = await owner(request, set);
        return jsonResponse(200, { webhooks: await port().list(account.id) });
      },
      { detail: { hide: true } },
    )
    .get(
      '/webhooks/:id',
      async ({ request, params, set }) => {
        const account = await owner(request, set);
        const w = await port().get(account.id, webhookId(params.id));
        if (w === null) throw webhookNotFound();
        return jsonResponse(200, w);
      },
      { detail: { hide: true } },
    )
    .patch(
      '/webhooks/:id',
      async ({ request, params, set }) => {
        const account = await owner(request, set);
        const id = webhookId(params.id);
        const patch = await jsonBody(request, (json) => validateWebhookPatch(json, opts));
        if ((await port().get(account.id, id)) === null) throw webhookNotFound();
        await checkTargets(account.id, patch.url, patch.pools);
        const w = await port().update(account.id, id, patch);
        if (w === null) throw webhookNotFound();
        return jsonResponse(200, w);
      },
      { parse: 'none', detail: { hide: true } },
    )
    .delete(
      '/webhooks/:id',
      async ({ request, params, set }) => {
        const account = await owner(request, set);
        if (!(await port().delete(account.id, webhookId(params.id)))) throw webhookNotFound();
        return new Response(null, { status: 204 });
      },
      { parse: 'none', detail: { hide: true } },
    )
    .post(
      '/webhooks/:id/test',
      async ({ request, params, set }) => {
        const account = await owner(request, set);
        const id = webhookId(params.id);
        if (!(await port().test(account.id, id))) throw webhookNotFound();
        return jsonResponse(202, { id, event: TEST_EVENT });
      },
      { parse: 'none', detail: { hide: true } },
    )
    .post(
      '/webhooks/:id/rotate-secret',
      async ({ request, params, set }) => {
        const account = await owner(request, set);
        const id = webhookId(params.id);
        const secret = await port().rotateSecret(account.id, id);
        if (secret === null) throw webhookNotFound();
        return jsonResponse(200, { id, secret });
      },
      { parse: 'none', detail: { hide: true } },
    )
    .get(
      '/webhooks/:id/deliveries',
      async ({ request, params, set }) => {
        const account = await owner(request, set);
        const list = await port().deliveries(account.id, webhookId(params.id));
        if (list === null) throw webhookNotFound();
        return jsonResponse(200, { deliveries: list });
      },
      { detail: { hide: true } },
    );
}
