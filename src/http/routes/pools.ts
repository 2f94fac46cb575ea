/**
 * Pools (DECISIONS "Pools"; docs/API.md "Pools"), every route keyed and
 * rate-limited like /check and /me (the per-account token bucket of the
 * key lookup; its RateLimit-* headers on every answer past the key):
 *
 *   POST   /pools                 201 the pool (+ `submitted`), Location /pools/{id}
 *   GET    /pools                 200 {pools: [pool]}, oldest first
 *   GET    /pools/{id}            200 the pool
 *   PATCH  /pools/{id}            200 the pool (+ `submitted`)
 *   DELETE /pools/{id}            204, no body
 *   GET    /pools/{id}/proxies    200 json {proxies, next_cursor} | txt | csv
 *
 * Order of answers: 401 (key; 429 past the account's request rate) -> 404
 * for an id that cannot be a pool's (`[a-z0-9]{10,32}`) -> POST/PATCH: 415
 * (JSON expected), 413 (body size; 503 when every slot for bodies over 1 MiB
 * is taken, body.ts), 400 (malformed JSON), the validator's 400/413
 * (pool-request.ts); GET .../proxies: the query's 400 (pool-proxies-query.ts)
 * -> 404 (no such pool of this account: another account's pool is 404 too,
 * never 403) -> the limits counted in the database (429 pools per account,
 * 413 proxies per pool / per account; src/pools/store.ts) -> the answer.
 * Nothing here charges: pools are charged per round checked.
 *
 * `warnings` (POST and PATCH, DECISIONS "Mixed lists"): [], or
 * `{code: "balance_runs_out", message, hours_left}` when the pool's schedule
 * (proxies x 86 400 / interval_s a day) costs more than the account's
 * checks left (src/pools/balance-warning.ts).
 *
 * `submitted` (POST and PATCH): what the request's addresses did, counted as
 * /check counts them: `added` (new to the pool), `removed`, `total_invalid`
 * (entries that are no address; PATCH: of `add` and `remove` together),
 * `total_duplicates` (repeats within the request).
 *
 * The proxies listing: `format=json` (default) is `{proxies, next_cursor}`;
 * `txt` is one address per line as it was given (credentials kept) and
 * nothing else (`scheme=true`: `<protocol>://` first), `csv` a header row
 * and a row per proxy (src/pools/render.ts). Without `limit` these two list
 * every match (DECISIONS "Mixed lists"), streamed, each row once: from the
 * pool owner's memory when it is in this process, in one pass (its order
 * taken at the request, src/pools/proxy-listing.ts; written a bounded piece
 * at a time, the event loop let go between two); in a cluster, the same
 * listing of the node holding the pool, pulled from it a chunk at a time
 * (src/cluster/pool-reads.ts; that node gone midway: the answer ends in an
 * error, not short); otherwise (no node holds the pool, or it does not
 * answer) pages of 10 000 of the durable copy fetched one after the other
 * (a row whose sort key changed between two pages is not written twice).
 * A pool deleted meanwhile ends the text where it is. With `limit`, one page, whose next cursor is in
 * `X-Next-Cursor` (absent on the last page), so a scraper can page through
 * them too.
 *
 * The routes declare their schemas (src/contract/pools.ts: the `id` path
 * parameter, the POST and PATCH bodies as read: poolBodiesAsRead, with this
 * server's POOL_MIN_INTERVAL_S), and the OpenAPI plugin writes those parts
 * of their operations (openapi-pools.ts poolDocs the rest); the key and the
 * gates before them are keyed-hooks.ts's, a refused id is the 404, a refused
 * body pool-request.ts's exact 400. GET .../proxies declares its query for
 * the document only (pool-proxies-query.ts checks it).
 */
import { Elysia } from 'elysia';
import { invalidRequest, poolNotFound } from '../api-errors';
import { ACCEPTED_REGIONS } from '../../regions';
import { nextTurn } from '../../clock';
import { LargeBodyGate } from '../body';
import type { AppDeps } from '../context';
import { jsonResponse } from '../errors';
import { keyedHooks } from '../keyed-hooks';
import { documentedOnly, open } from '../refusals';
import { validatePoolCreate, validatePoolPatch, type PoolRequestOptions } from '../pool-request';
import { validateProxiesQuery } from '../pool-proxies-query';
import { poolDocs } from '../openapi-pools';
import { isPoolId } from '../../pools/pool-id';
import { poolCsvHeader, textRows, type TextPageOptions } from '../../pools/render';
import { poolProxyObject, type PoolObject } from '../../pools/shape';
import { balanceWarnings, type BalanceWarning } from '../../pools/balance-warning';
import { decodeCursor } from '../../pools/cursor';
import type { PoolProxiesListing } from '../../pools/store';
import type { ProxyListing } from '../../pools/proxy-listing';
import type { ListingStream } from '../../pools/ports';
import { PoolIdParams, PoolProxiesQuery, poolBodiesAsRead } from '../../contract/pools';

type ProxiesPage = PoolProxiesListing['page'];

/**
 * Every page of a txt/csv listing from `first` on, as a stream: the next page
 * is fetched only when the reader wants more; a row already written (its
 * sort key changed between pages) is not written again; a pool deleted
 * meanwhile ends the text where it is.
 */
function allPages(
  head: string,
  first: ProxiesPage,
  more: (cursor: string) => Promise<{ page: ProxiesPage } | null>,
  opts: TextPageOptions,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const written = new Set<number>();
  let page: ProxiesPage | null = first;
  let pending = head;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        if (page === null) {
          if (pending !== '') controller.enqueue(encoder.encode(pending));
          controller.close();
          return;
        }
        const fresh = page.rows.filter((r) => !written.has(r.id));
        for (const r of fresh) written.add(r.id);
        const text = pending + textRows(fresh, opts);
        pending = '';
        const next: string | null = page.nextCursor;
        page = next === null ? null : ((await more(next))?.page ?? null);
        if (text !== '') {
          controller.enqueue(encoder.encode(text));
          return;
        }
      }
    },
  });
}

/** The listing's pieces run back to back for this long in one turn of the event loop, ms. */
export const LISTING_TURN_MS = 8;
/** Bytes of a listing queued ahead of the reader (a slow reader holds the rest back). */
export const LISTING_QUEUE_BYTES = 1024 * 1024;

/**
 * A listing from the owner's memory (store.ts `all`) as a stream: each time
 * the reader wants more, the listing's next pieces (each a bounded piece of
 * work, src/pools/proxy-listing.ts), back to back for LISTING_TURN_MS, then a
 * macrotask before the next, until LISTING_QUEUE_BYTES wait for the reader:
 * a listing of 1 000 000 never holds the event loop much longer than
 * LISTING_TURN_MS, and one of 10 000 (~200 KiB) is written in one turn. (A
 * macrotask before every piece made a 10 000-line txt wait for three turns of
 * a busy main thread, each behind a flush chunk or a results batch: p99
 * 250-300 ms beside a p50 of 20, bench/RESULTS.md "Flushes paced, txt in one
 * turn".)
 */
function memoryText(head: string, all: ProxyListing, opts: TextPageOptions): ReadableStream<Uint8Array> {
  let first = true;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (first && head !== '') controller.enqueue(new TextEncoder().encode(head));
        first = false;
        let turn = performance.now();
        for (;;) {
          if (performance.now() - turn >= LISTING_TURN_MS) {
            await nextTurn();
            turn = performance.now();
          }
          const chunk = all.next(opts);
          if (chunk === null) return controller.close();
          if (chunk.length === 0) continue;
          controller.enqueue(chunk);
          if ((controller.desiredSize ?? 0) <= 0) return;
        }
      },
    },
    { highWaterMark: LISTING_QUEUE_BYTES, size: (chunk) => chunk?.byteLength ?? 0 },
  );
}

/**
 * A listing pulled from the node holding the pool (store.ts `stream`), as a
 * stream: a chunk each time the reader wants more (one more in flight at
 * most, src/cluster/pool-reads.ts); a chunk that does not come errors the
 * stream, so the answer ends without its last chunk (the client sees a cut
 * answer, never a short text as if whole); a reader gone lets the owner
 * drop the listing.
 */
function pulledText(head: string, stream: ListingStream): ReadableStream<Uint8Array> {
  let first = true;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (first && head !== '') controller.enqueue(new TextEncoder().encode(head));
      first = false;
      const chunk = await stream.next();
      if (chunk === null) return controller.close();
      controller.enqueue(chunk);
    },
    cancel() {
      stream.close();
    },
  });
}

/** The header that carries `next_cursor` on txt and csv pages. */
export const NEXT_CURSOR_HEADER = 'X-Next-Cursor';

const TEXT_TYPES = { txt: 'text/plain; charset=utf-8', csv: 'text/csv; charset=utf-8' } as const;

interface Submitted {
  added: number;
  removed: number;
  total_invalid: number;
  total_duplicates: number;
}

export function poolRoutes(deps: AppDeps, bodies: LargeBodyGate = new LargeBodyGate(deps.limits.maxLargeBodies)) {
  const options = (): PoolRequestOptions => ({ limits: deps.pools.limits, maxCustomUrls: deps.limits.maxCustomUrls, acceptedRegions: ACCEPTED_REGIONS });
  const poolId = (id: string | undefined): string => {
    if (id === undefined || !isPoolId(id)) throw poolNotFound();
    return id;
  };
  const { keyed, jsonParse, validated, owner } = keyedHooks(deps, { maxBytes: deps.limits.maxBodyBytes, gate: bodies }, poolId);
  /** balance_runs_out when the pool's schedule costs more a day than the account has (balance-warning.ts). */
  const warningsOf = async (accountId: string, pool: PoolObject): Promise<BalanceWarning[]> => {
    const b = await deps.accounts.balance?.(accountId, deps.now());
    if (b === undefined || b === null) return [];
    return balanceWarnings({ proxies: pool.counts.total, intervalS: pool.interval_s, balance: b.checks, unlimited: b.unlimited, paused: pool.state === 'paused' });
  };
  const create = (json: unknown) => validatePoolCreate(json, options());
  const patchOf = (json: unknown) => validatePoolPatch(json, options());
  // by name: the document's request bodies are $refs to the contract's components, what Elysia checks is the bodies as read
  const read = poolBodiesAsRead(deps.pools.limits.minIntervalS);
  const models = { PoolCreateBody: open(read.PoolCreateBody), PoolPatchBody: open(read.PoolPatchBody) };
  const byId = { params: PoolIdParams };

  return new Elysia({ name: 'pool-routes', normalize: false })
    .model(models)
    .post(
      '/pools',
      async ({ request }) => {
        const account = owner(request);
        const req = validated(request, create);
        const made = await deps.pools.create(account.id, req);
        const submitted: Submitted = { added: made.added, removed: 0, total_invalid: req.totalInvalid, total_duplicates: req.totalDuplicates };
        const warnings = await warningsOf(account.id, made.pool);
        return jsonResponse(201, { ...made.pool, submitted, warnings }, { location: `/pools/${made.pool.id}` });
      },
      { parse: jsonParse(models.PoolCreateBody, create), body: 'PoolCreateBody', ...poolDocs.create },
    )
    .get('/pools', async ({ request }) => jsonResponse(200, { pools: await deps.pools.list(owner(request).id) }), { transform: keyed, ...poolDocs.list })
    .get(
      '/pools/:id',
      async ({ request, params }) => {
        const pool = await deps.pools.get(owner(request).id, params.id);
        if (pool === null) throw poolNotFound();
        return jsonResponse(200, pool);
      },
      { transform: keyed, ...byId, ...poolDocs.get },
    )
    .patch(
      '/pools/:id',
      async ({ request, params }) => {
        const account = owner(request);
        const patch = validated(request, patchOf);
        const u = await deps.pools.update(account.id, params.id, patch);
        if (u === null) throw poolNotFound();
        const submitted: Submitted = {
          added: u.added,
          removed: u.removed,
          total_invalid: (patch.add?.totalInvalid ?? 0) + (patch.remove?.totalInvalid ?? 0),
          total_duplicates: (patch.add?.totalDuplicates ?? 0) + (patch.remove?.totalDuplicates ?? 0),
        };
        const warnings = await warningsOf(account.id, u.pool);
        return jsonResponse(200, { ...u.pool, submitted, warnings });
      },
      { parse: jsonParse(models.PoolPatchBody, patchOf), ...byId, body: 'PoolPatchBody', ...poolDocs.update },
    )
    .delete(
      '/pools/:id',
      async ({ request, params }) => {
        if (!(await deps.pools.delete(owner(request).id, params.id))) throw poolNotFound();
        return new Response(null, { status: 204 });
      },
      { parse: 'none', transform: keyed, ...byId, ...poolDocs.delete },
    )
    .get(
      '/pools/:id/proxies',
      async ({ request, params }) => {
        const account = owner(request);
        const id = params.id;
        const query = validateProxiesQuery(new URL(request.url).searchParams);
        const listing = await deps.pools.proxies(account.id, id, query);
        if (listing === null) throw poolNotFound();
        if (listing.unknownTarget === true) {
          throw invalidRequest(`target: the pool has no target "${query.target}" (${(listing.targets ?? []).length === 0 ? 'it has none' : `its targets: ${(listing.targets ?? []).join(', ')}`})`);
        }
        const { rows, nextCursor } = listing.page;
        if (query.format === 'json') {
          return jsonResponse(200, { proxies: rows.map((r) => poolProxyObject(r, listing.type, listing.nowMs)), next_cursor: nextCursor });
        }
        const opts: TextPageOptions = { format: query.format, scheme: query.scheme === true, poolType: listing.type, nowMs: listing.nowMs };
        const head = query.format === 'csv' ? poolCsvHeader() : '';
        const headers: Record<string, string> = { 'content-type': TEXT_TYPES[query.format] };
        if (query.all !== true) {
          if (nextCursor !== null) headers[NEXT_CURSOR_HEADER] = nextCursor;
          return new Response(head + textRows(rows, opts), { status: 200, headers });
        }
        if (listing.all !== undefined) return new Response(memoryText(head, listing.all, opts), { status: 200, headers });
        if (listing.stream !== undefined) return new Response(pulledText(head, listing.stream), { status: 200, headers });
        // the next pages as pages (`all` off): a listing taken from the cursor on would come back with no rows
        const more = (cursor: string) => deps.pools.proxies(account.id, id, { ...query, all: false, cursor: decodeCursor(cursor) });
        return new Response(allPages(head, listing.page, more, opts), { status: 200, headers });
      },
      // its query is checked by validateProxiesQuery alone (its exact 400s), declared for the document
      { transform: keyed, ...byId, query: documentedOnly(PoolProxiesQuery), ...poolDocs.proxies },
    );
}
