/**
 * GET /result/<id>.json?token=&expires=: a result file behind a signed link
 * (no key). Bad or missing token 403, expired 410, unknown id or a file
 * removed by retention 404. The token is checked before anything else, in
 * constant time (src/results/links.ts).
 */
import { Elysia } from 'elysia';
import { forbidden, linkExpired, notFound } from '../../errors';
import { parseResultName, verifyResultLink } from '../../results/links';
import { resultFilePath } from '../../results/writer';
import type { AppDeps } from '../context';

const TYPES = { json: 'application/json; charset=utf-8' } as const;

export function resultRoutes(deps: AppDeps) {
  return new Elysia({ name: 'result-routes' }).get(
    '/result/:name',
    async ({ params, request }) => {
      const parsed = parseResultName(params.name);
      if (parsed === null || !(parsed.ext in TYPES)) throw notFound('No such result');
      const q = new URL(request.url).searchParams;
      const verdict = verifyResultLink({
        resultId: parsed.resultId,
        token: q.get('token'),
        expires: q.get('expires'),
        secret: deps.config.resultSecret ?? '',
        now: Math.floor(deps.now().getTime() / 1000),
      });
      if (verdict === 'bad_token') throw forbidden('The result link token is not valid');
      if (verdict === 'expired') throw linkExpired();
      const file = Bun.file(resultFilePath(deps.config.dataDir, parsed.resultId));
      if (!(await file.exists())) throw notFound('No such result (it may have passed its retention period)');
      return new Response(file, {
        headers: {
          'content-type': TYPES[parsed.ext as keyof typeof TYPES],
          'cache-control': 'private, max-age=300',
          'content-disposition': `inline; filename="${parsed.resultId}.${parsed.ext}"`,
        },
      });
    },
    { detail: { hide: true } },
  );
}

