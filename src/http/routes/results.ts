/**
 * GET /result/<id>.<json|csv|txt>?token=&expires=: a result file behind a
 * signed link (no key). One token serves all three forms (it covers the id
 * and expiry, not the extension). Bad or missing token 403, expired 410,
 * unknown id or a file removed by retention 404. The token is checked before
 * anything else, in constant time (src/results/links.ts).
 *
 * `.json` is the stored document itself. `.csv` (every field, one row per
 * proxy) and `.txt` (working proxies, one per line, in the submitted form)
 * are converted from its stream, one record at a time
 * (src/results/export.ts), so a 100 000-proxy result never sits in memory;
 * they are sent as attachments. `scheme=true` (`true` or `false`, else 400;
 * DECISIONS "Mixed lists") makes each `.txt` line
 * `<protocol>://[user:pass@]host:port`; the other forms ignore it.
 * Results come from the result store
 * (src/results/store.ts); this route knows no file layout.
 */
import { Elysia } from 'elysia';
import { ServiceError } from '../../errors';
import { HTTP_ERROR_CODES } from '../../error-codes';
import { forbidden, linkExpired, notFound } from '../api-errors';
import { booleanQueryValue } from '../check-request';
import { convertResult } from '../../results/export';
import { parseResultName, verifyResultLink, type ResultExt } from '../../results/links';
import type { AppDeps } from '../context';
import { docs } from '../openapi';
import { documentedOnly, orderedChecksOf } from '../refusals';
import { ResultParams, ResultQuery } from '../../contract/checks';

/** A valid link whose file is gone: retention (by age or by the disk cap) is the likely reason, and its settings say how long files stay. */
export const RESULT_GONE_MESSAGE = 'No such result (it may have passed its retention period: server settings RESULT_RETENTION_DAYS and RESULT_MAX_BYTES)';

const TYPES: Record<ResultExt, string> = {
  json: 'application/json; charset=utf-8',
  csv: 'text/csv; charset=utf-8; header=present',
  txt: 'text/plain; charset=utf-8',
};

/** A ReadableStream over string batches; cancelling it closes the generator (and the file). */
function textStream(gen: AsyncGenerator<string>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value, done } = await gen.next();
      if (done) controller.close();
      else controller.enqueue(encoder.encode(value));
    },
    async cancel() {
      await gen.return(undefined);
    },
  });
}

export function resultRoutes(deps: Pick<AppDeps, 'now' | 'results'>) {
  const { secret, store } = deps.results;
  if (secret === '') throw new ServiceError(HTTP_ERROR_CODES.RESULT_SECRET_MISSING, 'result routes need a non-empty result-link secret');
  /** The link's checks in their order: the name (404), the token (403), its expiry (410). */
  const checkLink = (request: Request, name: string) => {
    const parsed = parseResultName(name);
    if (parsed === null) throw notFound('No such result');
    const q = new URL(request.url).searchParams;
    const verdict = verifyResultLink({
      resultId: parsed.resultId,
      token: q.get('token'),
      expires: q.get('expires'),
      secret,
      now: Math.floor(deps.now().getTime() / 1000),
    });
    if (verdict === 'bad_token') throw forbidden('The result link token is not valid');
    if (verdict === 'expired') throw linkExpired();
    return { parsed, q };
  };
  // the route declares its path parameter (a refused one is answered by checkLink: refusals.ts) and, for the document, its query
  return new Elysia({ name: 'result-routes', normalize: false }).get(
    '/result/:name',
    async ({ params, request }) => {
      const { parsed, q } = checkLink(request, params.name);
      const scheme = booleanQueryValue(q, 'scheme') ?? false;
      const result = await store.open(parsed.resultId);
      if (result === null) throw notFound(RESULT_GONE_MESSAGE);
      const name = `${parsed.resultId}.${parsed.ext}`;
      const headers = {
        'content-type': TYPES[parsed.ext],
        'cache-control': 'private, max-age=300',
        'content-disposition': `${parsed.ext === 'json' ? 'inline' : 'attachment'}; filename="${name}"`,
        'x-content-type-options': 'nosniff',
      };
      if (parsed.ext === 'json') return new Response(result.stream(), { headers });
      return new Response(textStream(convertResult(parsed.ext, result.stream(), { scheme })), { headers });
    },
    {
      transform: ({ request, params }) => {
        const refused = () => checkLink(request, params.name ?? '');
        orderedChecksOf(request, { params: refused });
      },
      params: ResultParams,
      // its query (the contract's: `expires` an integer) for the document only: checkLink reads it from the URL (Elysia would not take a query string's digits for an integer)
      query: documentedOnly(ResultQuery),
      ...docs.result,
    },
  );
}
