/**
 * The web dashboard's routes (an Elysia plugin mounted by src/http/app.ts):
 *   GET /                -> 302 /app
 *   GET /app             the page (src/web/page.ts)
 *   GET /app/app.js      the client bundle (src/web/bundle.ts, built once)
 *   GET /app/app.css     the stylesheet (src/web/app.css)
 *   GET /app/world.json  land and borders for the map (src/web/world-map.ts)
 *   GET /app/favicon.svg
 * Everything is served from this process (no CDN). The page gets a strict
 * Content-Security-Policy: scripts, styles, images and connections only from
 * this origin (plus its WebSocket), no inline script or style, no framing.
 */
import { Elysia } from 'elysia';
import { join } from 'node:path';
import { errorText } from '../errors';
import { internalError } from '../http/api-errors';
import { requestLog } from '../http/request-log';
import type { Logger } from '../log';
import { cachedClient, type Bundle } from './bundle';
import { dashboardPage } from './page';
import { worldJson } from './world-map';

const CSS_FILE = join(import.meta.dir, 'app.css');

const FAVICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><circle cx="12" cy="12" r="10" fill="#0b5cad"/>' +
  '<path d="M2 12h20M12 2c3 3 3 17 0 20M12 2c-3 3-3 17 0 20" fill="none" stroke="#fff" stroke-width="1.5"/></svg>';

/** The page's CSP; `host` is the Host the browser used (for the WebSocket source). */
export function contentSecurityPolicy(host: string | null): string {
  const safeHost = host !== null && /^[A-Za-z0-9.:[\]-]+$/.test(host) ? host : null;
  const ws = safeHost === null ? '' : ` ws://${safeHost} wss://${safeHost}`;
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src 'self'${ws}`,
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

function notModified(request: Request, etag: string): boolean {
  return request.headers.get('if-none-match') === etag;
}

/** What the dashboard's routes use of the app's deps (src/http/app.ts passes them). */
export interface WebDeps {
  /** The service version, shown on the page. */
  version: string;
  log: Logger;
}

export interface WebRoutesOptions {
  /** The client bundle (tests inject a fake or a counting builder). */
  bundle?: () => Promise<Bundle>;
}

export function webRoutes(deps: WebDeps, opts: WebRoutesOptions = {}) {
  const bundle = opts.bundle ?? cachedClient();
  const page = dashboardPage(deps.version);
  const html = (request: Request) =>
    new Response(page, {
      headers: {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-cache',
        'content-security-policy': contentSecurityPolicy(request.headers.get('host')),
        ...SECURITY_HEADERS,
      },
    });
  const hide = { detail: { hide: true } };
  return new Elysia({ name: 'web-routes' })
    .get('/', () => new Response(null, { status: 302, headers: { location: '/app' } }), hide)
    .get('/app', ({ request }) => html(request), hide)
    .get(
      '/app/app.js',
      async ({ request }) => {
        let b: Bundle;
        try {
          b = await bundle();
        } catch (err) {
          requestLog(request, deps.log).error('dashboard bundle failed', { error: errorText(err) });
          throw internalError(err);
        }
        const headers = { etag: b.etag, 'cache-control': 'no-cache', ...SECURITY_HEADERS };
        if (notModified(request, b.etag)) return new Response(null, { status: 304, headers });
        return new Response(b.js, { headers: { ...headers, 'content-type': 'text/javascript; charset=utf-8' } });
      },
      hide,
    )
    .get(
      '/app/app.css',
      () =>
        new Response(Bun.file(CSS_FILE), {
          headers: { 'content-type': 'text/css; charset=utf-8', 'cache-control': 'no-cache', ...SECURITY_HEADERS },
        }),
      hide,
    )
    .get(
      '/app/world.json',
      ({ request }) => {
        const w = worldJson();
        const headers = { etag: w.etag, 'cache-control': 'public, max-age=86400', ...SECURITY_HEADERS };
        if (notModified(request, w.etag)) return new Response(null, { status: 304, headers });
        return new Response(w.json, { headers: { ...headers, 'content-type': 'application/json; charset=utf-8' } });
      },
      hide,
    )
    .get(
      '/app/favicon.svg',
      () => new Response(FAVICON, { headers: { 'content-type': 'image/svg+xml', 'cache-control': 'public, max-age=86400', ...SECURITY_HEADERS } }),
      hide,
    );
}
