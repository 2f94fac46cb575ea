/**
 * API docs: the OpenAPI document at /docs/json (assembled by @elysiajs/openapi
 * from each route's `detail`) and a Swagger UI page at /docs whose assets come
 * from the swagger-ui-dist npm package, so the page renders with no internet.
 */
import { Elysia } from 'elysia';
import { openapi } from '@elysiajs/openapi';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import type { AppDeps } from '../context';
import { documentation, servedDocument } from '../openapi';
import { withPools } from '../openapi-pools';
import { withWebhooks } from '../openapi-webhooks';
import { notFound } from '../api-errors';

const require = createRequire(import.meta.url);
const ASSET_DIR = dirname(require.resolve('swagger-ui-dist/package.json'));
/** The served assets and their types: a Map, so `constructor` or `__proto__` is not an asset. */
const ASSETS: ReadonlyMap<string, string> = new Map([
  ['swagger-ui.css', 'text/css; charset=utf-8'],
  ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
  ['swagger-ui-standalone-preset.js', 'text/javascript; charset=utf-8'],
  ['favicon-32x32.png', 'image/png'],
]);

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Proxy checking API - docs</title>
  <link rel="icon" href="/docs/assets/favicon-32x32.png">
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>`;

const INIT = `window.ui = SwaggerUIBundle({ url: '/docs/json', dom_id: '#swagger-ui', deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset], layout: 'StandaloneLayout' });`;

export function docsRoutes(deps: AppDeps) {
  const doc = withWebhooks(withPools({ ...documentation, info: { ...documentation.info, version: deps.version } }));
  return new Elysia({ name: 'docs-routes' })
    // the generated document as served: descriptions and examples where OpenAPI readers show them (servedDocument)
    .onAfterHandle(({ path, response }) => {
      if (path === '/docs/json') servedDocument(response as never);
    })
    .use(openapi({ provider: null, path: '/docs', specPath: '/docs/json', documentation: doc as never }))
    .get('/docs', () => new Response(PAGE, { headers: { 'content-type': 'text/html; charset=utf-8' } }), { detail: { hide: true } })
    .get('/docs/init.js', () => new Response(INIT, { headers: { 'content-type': 'text/javascript; charset=utf-8' } }), { detail: { hide: true } })
    .get(
      '/docs/assets/:name',
      ({ params }) => {
        const type = ASSETS.get(params.name);
        if (type === undefined) throw notFound('No such asset');
        return new Response(Bun.file(join(ASSET_DIR, params.name)), {
          headers: { 'content-type': type, 'cache-control': 'public, max-age=86400' },
        });
      },
      { detail: { hide: true } },
    );
}
