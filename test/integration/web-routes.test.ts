/**
 * The dashboard's routes (src/web/routes.ts) inside the real app
 * (createApp): / redirects, the page and its CSP, the bundle built by
 * Bun.build from src/web/client (ETag / 304, built once, a failed build
 * answered as JSON 500 and retried), the stylesheet, the map data drawn from
 * world-atlas, 405 and 404 on the dashboard's paths. No sockets: app.handle.
 */
import { describe, expect, test } from 'bun:test';
import { Elysia } from 'elysia';
import { createApp } from '../../src/http/app';
import type { AppDeps } from '../../src/http/context';
import { fakeAppDeps } from '../helpers/app-deps';
import { ServiceError } from '../../src/errors';
import { cachedClient, type Bundle } from '../../src/web/bundle';
import { contentSecurityPolicy, webRoutes } from '../../src/web/routes';
import { MAP } from '../../src/web/client/geo';
import { HTTP_ERROR_CODES } from '../../src/error-codes';

const deps = (): AppDeps => fakeAppDeps({ version: '9.9.9' }, 'the dashboard routes');

const app = createApp(deps());
const get = (path: string, headers: Record<string, string> = {}) => app.handle(new Request(`http://127.0.0.1:3000${path}`, { headers }));

describe('dashboard routes', () => {
  test('/ redirects to /app; /app/ is the page too', async () => {
    const r = await get('/');
    expect(r.status).toBe(302);
    expect(r.headers.get('location')).toBe('/app');
    const slash = await get('/app/');
    expect(slash.status).toBe(200);
    expect(await slash.text()).toContain('id="view-signin"');
  });

  test('/app: the page, its labelled views and a strict CSP naming this host for the WebSocket', async () => {
    const r = await get('/app', { host: '127.0.0.1:3000' });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = r.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain('connect-src \'self\' ws://127.0.0.1:3000 wss://127.0.0.1:3000');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await r.text();
    for (const id of ['view-signin', 'view-check', 'view-results', 'view-account', 'p-live', 'r-map', 'r-table', 'a-usage']) expect(html).toContain(`id="${id}"`);
    expect(html).toContain('src="/app/app.js?v=9.9.9"');
    // nothing from another host (an input's placeholder, such as the webhook form's example URL, is only text)
    expect(html.replace(/ placeholder="[^"]*"/g, '')).not.toMatch(/https?:\/\/(?!www\.w3\.org)/);
    expect(html).not.toMatch(/<script>|style="/); // no inline script or style (the CSP forbids them)
  });

  test('a Host header that is not a plain host[:port] is left out of the CSP', () => {
    expect(contentSecurityPolicy('evil.test; script-src *')).not.toContain('evil');
    expect(contentSecurityPolicy(null)).toContain("connect-src 'self';");
    expect(contentSecurityPolicy('[::1]:8080')).toContain('ws://[::1]:8080');
  });

  test('/app/app.js: the client bundle, with an ETag and 304 on revalidation', async () => {
    const r = await get('/app/app.js');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const js = await r.text();
    expect(js.length).toBeGreaterThan(5000);
    expect(js.length).toBeLessThan(120_000);
    expect(js).toContain('/check');
    expect(js).not.toMatch(/^import /m); // one self-contained module
    const etag = r.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f]{16}"$/);
    const again = await get('/app/app.js', { 'if-none-match': etag });
    expect(again.status).toBe(304);
  }, 20_000);

  test('/app/app.css and /app/favicon.svg', async () => {
    const css = await get('/app/app.css');
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(await css.text()).toContain(':focus-visible');
    const icon = await get('/app/favicon.svg');
    expect(icon.headers.get('content-type')).toBe('image/svg+xml');
  });

  test('/app/world.json: land and borders from world-atlas as SVG paths in map units', async () => {
    const r = await get('/app/world.json');
    expect(r.status).toBe(200);
    const w = (await r.json()) as { width: number; height: number; land: string; borders: string };
    expect(w.width).toBe(MAP.width);
    expect(w.height).toBe(MAP.height);
    expect(w.land).toMatch(/^M[\d.]+,[\d.]+L/);
    expect(w.land.length).toBeGreaterThan(20_000);
    expect(w.borders.length).toBeGreaterThan(5_000);
    const nums = w.land.match(/-?\d+(?:\.\d+)?/g)!.map(Number);
    expect(Math.min(...nums)).toBeGreaterThanOrEqual(-1);
    expect(Math.max(...nums)).toBeLessThanOrEqual(MAP.width + 1);
    const etag = r.headers.get('etag')!;
    expect((await get('/app/world.json', { 'if-none-match': etag })).status).toBe(304);
  });

  test('wrong method on / and /app is 405 with Allow; unknown dashboard paths are JSON 404', async () => {
    const post = await app.handle(new Request('http://127.0.0.1:3000/app', { method: 'POST' }));
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET');
    const root = await app.handle(new Request('http://127.0.0.1:3000/', { method: 'DELETE' }));
    expect(root.status).toBe(405);
    const missing = await get('/app/nope.js');
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: string }).error).toBe('Not found');
  });
});

describe('bundle cache', () => {
  test('built once and shared; a failed build answers JSON 500 and is retried', async () => {
    let calls = 0;
    const build = async (): Promise<Bundle> => {
      calls++;
      if (calls === 1) throw new ServiceError(HTTP_ERROR_CODES.BUNDLE_FAILED, 'boom');
      return { js: 'export {}', etag: '"x"' };
    };
    const d = deps();
    const small = new Elysia().use(webRoutes(d, { bundle: cachedClient(build) }));
    const first = await small.handle(new Request('http://127.0.0.1:3000/app/app.js'));
    // createApp's onError maps the ApiError to its JSON body; on the bare plugin it is still a 500
    expect(first.status).toBe(500);
    expect((d.log as unknown as { lines: { msg: string }[] }).lines.some((l) => l.msg === 'dashboard bundle failed')).toBe(true);
    const second = await small.handle(new Request('http://127.0.0.1:3000/app/app.js'));
    expect(second.status).toBe(200);
    expect(await second.text()).toBe('export {}');
    await small.handle(new Request('http://127.0.0.1:3000/app/app.js'));
    expect(calls).toBe(2);
  });
});
