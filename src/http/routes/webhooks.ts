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
 * The routes declare their schemas (src/contract/webhooks.ts: the `id` path
 * parameter, the POST and PATCH bodies; the OpenAPI plugin writes those parts
 * of their operations, openapi-webhooks.ts the rest). The key is looked up
 * before Elysia checks them: in the parse hook of a route with a body (with
 * the 404 of an id that cannot be a webhook's, 415, 413, malformed JSON), in
 * the transform hook of the others. A part the schema refuses is answered by
 * the ordered checks (refusals.ts): an id, 404; a body, webhook-request.ts's
 * exact 400. The handler runs those checks on the body as parsed.
 */
import { Elysia } from 'elysia';
import { invalidRequest, serviceUnavailable, tooManyWebhooks, webhookNotFound } from '../api-errors';
import { LargeBodyGate } from '../body';
import type { AppDeps, WebhooksPort } from '../context';
import { jsonResponse } from '../errors';
import { keyedHooks } from '../keyed-hooks';
import { open } from '../refusals';
import { validateWebhookCreate, validateWebhookPatch, type WebhookRequestOptions } from '../webhook-request';
import { webhookDocs } from '../openapi-webhooks';
import { isWebhookId } from '../../webhooks/seal';
import { TEST_EVENT } from '../../webhooks/types';
import { WebhookCreateBody, WebhookIdParams, WebhookPatchBody } from '../../contract/webhooks';

export function webhookRoutes(deps: AppDeps, bodies: LargeBodyGate = new LargeBodyGate(deps.limits.maxLargeBodies)) {
  const opts: WebhookRequestOptions = { allowPrivateTargets: deps.webhooks?.allowPrivateTargets ?? false };
  const port = (): WebhooksPort => {
    if (deps.webhooks === undefined) throw serviceUnavailable('Webhooks are not available on this server');
    return deps.webhooks;
  };
  const webhookId = (id: string | undefined): string => {
    if (id === undefined || !isWebhookId(id)) throw webhookNotFound();
    return id;
  };
  const { keyed, jsonParse, validated, owner } = keyedHooks(deps, { maxBytes: deps.limits.maxBodyBytes, gate: bodies }, webhookId);
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
  const create = (json: unknown) => validateWebhookCreate(json, opts);
  const patchOf = (json: unknown) => validateWebhookPatch(json, opts);
  const byId = { params: WebhookIdParams };

  return new Elysia({ name: 'webhook-routes', normalize: false })
    .model({ WebhookCreateBody: open(WebhookCreateBody), WebhookPatchBody: open(WebhookPatchBody) }) // by name: the document's request bodies are $refs to the contract's
    .post(
      '/webhooks',
      async ({ request }) => {
        const account = owner(request);
        const req = validated(request, create);
        await checkTargets(account.id, req.url, req.pools);
        const made = await port().create(account.id, req);
        if (made === 'limit') throw tooManyWebhooks(port().maxPerAccount);
        return jsonResponse(201, { ...made.webhook, secret: made.secret }, { location: `/webhooks/${made.webhook.id}` });
      },
      { parse: jsonParse(WebhookCreateBody, create), body: 'WebhookCreateBody', ...webhookDocs.create },
    )
    .get('/webhooks', async ({ request }) => jsonResponse(200, { webhooks: await port().list(owner(request).id) }), { transform: keyed, ...webhookDocs.list })
    .get(
      '/webhooks/:id',
      async ({ request, params }) => {
        const w = await port().get(owner(request).id, params.id);
        if (w === null) throw webhookNotFound();
        return jsonResponse(200, w);
      },
      { transform: keyed, ...byId, ...webhookDocs.get },
    )
    .patch(
      '/webhooks/:id',
      async ({ request, params }) => {
        const account = owner(request);
        const id = params.id;
        const patch = validated(request, patchOf);
        if ((await port().get(account.id, id)) === null) throw webhookNotFound();
        await checkTargets(account.id, patch.url, patch.pools);
        const w = await port().update(account.id, id, patch);
        if (w === null) throw webhookNotFound();
        return jsonResponse(200, w);
      },
      { parse: jsonParse(WebhookPatchBody, patchOf), ...byId, body: 'WebhookPatchBody', ...webhookDocs.update },
    )
    .delete(
      '/webhooks/:id',
      async ({ request, params }) => {
        if (!(await port().delete(owner(request).id, params.id))) throw webhookNotFound();
        return new Response(null, { status: 204 });
      },
      { parse: 'none', transform: keyed, ...byId, ...webhookDocs.delete },
    )
    .post(
      '/webhooks/:id/test',
      async ({ request, params }) => {
        if (!(await port().test(owner(request).id, params.id))) throw webhookNotFound();
        return jsonResponse(202, { id: params.id, event: TEST_EVENT });
      },
      { parse: 'none', transform: keyed, ...byId, ...webhookDocs.test },
    )
    .post(
      '/webhooks/:id/rotate-secret',
      async ({ request, params }) => {
        const secret = await port().rotateSecret(owner(request).id, params.id);
        if (secret === null) throw webhookNotFound();
        return jsonResponse(200, { id: params.id, secret });
      },
      { parse: 'none', transform: keyed, ...byId, ...webhookDocs.rotate },
    )
    .get(
      '/webhooks/:id/deliveries',
      async ({ request, params }) => {
        const list = await port().deliveries(owner(request).id, params.id);
        if (list === null) throw webhookNotFound();
        return jsonResponse(200, { deliveries: list });
      },
      { transform: keyed, ...byId, ...webhookDocs.deliveries },
    );
}
