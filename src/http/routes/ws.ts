/**
 * GET /ws?jobId=<id>: WebSocket progress of a check (DECISIONS "Progress");
 * GET /ws?pool=<id>: a pool's events (DECISIONS "Pools", src/pools/events-hub.ts).
 * The upgrade is refused with a JSON error before it happens: 400 for a bad
 * jobId, 401 for a missing (when WS_REQUIRE_AUTH) or invalid key. A key
 * (X-API-Key, Authorization: Bearer or ?apiKey=) limits the subscription to
 * the key's account. The hub does the rest (throttle, final message, close),
 * including the caps per account (WS_MAX_PER_ACCOUNT) and, for anonymous
 * subscribers, per client address (a quarter of WS_MAX_PER_ACCOUNT): over one the socket
 * opens and is closed at once with 1013, like the hub's global caps (one
 * place decides; a client sees the same code for every "try again later").
 *
 * `?pool=` always needs a key (401 without, whatever WS_REQUIRE_AUTH says),
 * and the pool must be the key's account's: an unknown pool and another
 * account's are refused alike, 404 before the upgrade, as GET /pools/{id}
 * answers. The socket then gets one JSON text message per event until the
 * client closes it, the pool is deleted (1000), it reads too slowly (1013)
 * or the server stops (1000).
 */
import type { ServerWebSocket } from 'bun';
import { Elysia } from 'elysia';
import { isJobId } from '../../job-id';
import { isPoolId } from '../../pools/pool-id';
import { invalidApiKey, invalidJobId, poolNotFound, poolWsApiKeyRequired, wsApiKeyRequired } from '../api-errors';
import type { Subscriber } from '../../jobs/progress-hub';
import { apiKeyFrom } from '../auth';
import type { AppDeps } from '../context';
import { apiErrorResponse } from '../errors';

interface WsState {
  accountId: string | null;
  unsubscribe: () => void;
}

export function wsRoutes(deps: AppDeps) {
  const accountOf = new WeakMap<Request, string | null>();
  const state = new WeakMap<object, WsState>();
  return new Elysia({ name: 'ws-routes' }).ws('/ws', {
    // Bun closes a socket whose buffered output passes this; the hub closes
    // slow readers earlier (1013), this is the hard stop.
    backpressureLimit: 1024 * 1024,
    closeOnBackpressureLimit: true,
    idleTimeout: 120,
    async beforeHandle({ request }) {
      const url = new URL(request.url);
      const pool = url.searchParams.get('pool');
      if (pool !== null) {
        const key = apiKeyFrom(request.headers, url.searchParams);
        if (key === null) return apiErrorResponse(poolWsApiKeyRequired());
        const account = await deps.accounts.findByApiKey(key);
        if (account === null) return apiErrorResponse(invalidApiKey());
        if (!isPoolId(pool) || (await deps.pools.get(account.id, pool)) === null) return apiErrorResponse(poolNotFound());
        accountOf.set(request, account.id);
        return;
      }
      const jobId = url.searchParams.get('jobId');
      if (jobId === null || !isJobId(jobId)) return apiErrorResponse(invalidJobId());
      const key = apiKeyFrom(request.headers, url.searchParams);
      if (key === null) {
        if (deps.http.wsRequireAuth) return apiErrorResponse(wsApiKeyRequired());
        accountOf.set(request, null);
        return;
      }
      const account = await deps.accounts.findByApiKey(key);
      if (account === null) return apiErrorResponse(invalidApiKey());
      accountOf.set(request, account.id);
    },
    open(ws) {
      const request = ws.data.request;
      const params = new URL(request.url).searchParams;
      const pool = params.get('pool');
      const jobId = params.get('jobId') ?? '';
      const accountId = accountOf.get(request) ?? null;
      const raw = ws.raw as unknown as ServerWebSocket<unknown>;
      const sub: Subscriber = {
        accountId,
        // the peer's address (not X-Forwarded-For: behind a proxy every anonymous client shares its address)
        address: raw.remoteAddress || null,
        send: (text) => {
          raw.sendText(text);
        },
        close: (code, reason) => raw.close(code, reason),
        bufferedAmount: () => raw.getBufferedAmount(),
      };
      const out = pool !== null && accountId !== null ? deps.poolEvents.subscribe(accountId, pool, sub) : deps.progress.subscribe(jobId, sub);
      if (!out.ok) {
        raw.close(out.code, out.reason);
        return;
      }
      state.set(raw, { accountId, unsubscribe: out.unsubscribe });
    },
    close(ws) {
      state.get(ws.raw)?.unsubscribe();
      state.delete(ws.raw);
    },
    message() {
      // the channel is server -> client only; client messages are ignored
    },
  });
}
