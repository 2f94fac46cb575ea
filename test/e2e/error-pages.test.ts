/**
 * No response is ever Bun's HTML developer error page (it shows the source
 * and the server's working directory): the docs asset lookup refuses names of
 * Object.prototype (`constructor`, `__proto__`, ...) with the JSON 404, and
 * the app's listener runs in production mode with the contract's 500 JSON for
 * errors Bun catches itself (src/http/serve-options.ts). Over real sockets.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Elysia } from 'elysia';
import { inProcessApp } from '../helpers/served-doc';
import { startTestService, type TestService } from '../helpers/service';

const PROTOTYPE_NAMES = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf'];
/** The contract's 500 body, plus the one field it gains: the request id, also in the X-Request-Id header. */
const INTERNAL = { error: 'Internal server error', message: 'An unexpected error occurred', request_id: expect.stringMatching(/^[0-9a-f-]{36}$/) };

async function answer(url: string) {
  const res = await fetch(url);
  return { status: res.status, type: res.headers.get('content-type'), requestId: res.headers.get('x-request-id'), text: await res.text() };
}

describe('the real service', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  }, 60_000);
  afterAll(async () => {
    await t?.stop();
  }, 30_000);

  test.each(PROTOTYPE_NAMES)('GET /docs/assets/%s is the JSON 404', async (name) => {
    const r = await answer(`${t.url}/docs/assets/${name}`);
    expect(r.status).toBe(404);
    expect(r.type).toBe('application/json; charset=utf-8');
    expect(JSON.parse(r.text)).toEqual({ error: 'Not found', message: 'No such asset' });
  });

  test('a real asset is still served', async () => {
    const r = await answer(`${t.url}/docs/assets/swagger-ui.css`);
    expect(r.status).toBe(200);
    expect(r.type).toBe('text/css; charset=utf-8');
  });
});

describe('the app listening as the service listens (createApp)', () => {
  let app: Elysia;
  let base = '';
  beforeAll(() => {
    app = inProcessApp([
      (a) =>
        a
          .get('/test-throws', () => {
            throw new Error(`plain failure in ${process.cwd()}`);
          })
          // an error Bun meets while sending the body, outside Elysia's onError
          .get('/test-missing-file', () => new Response(Bun.file('/nonexistent/pc-error-pages-test'))) as unknown as Elysia,
    ]) as unknown as Elysia;
    app.listen({ port: 0, hostname: '127.0.0.1' });
    base = `http://127.0.0.1:${app.server!.port}`;
  });
  afterAll(async () => {
    await app.stop(true);
  });

  test('Bun runs it in production mode', () => {
    expect(app.server!.development).toBe(false);
  });

  test.each(['/test-throws', '/test-missing-file'])('%s: the contract 500 JSON, never text/html, no path', async (path) => {
    const r = await answer(base + path);
    expect(r.status).toBe(500);
    expect(r.type).toBe('application/json; charset=utf-8');
    expect(JSON.parse(r.text)).toEqual(INTERNAL);
    expect(JSON.parse(r.text).request_id).toBe(r.requestId);
    expect(r.text).not.toContain(process.cwd());
  });
});
