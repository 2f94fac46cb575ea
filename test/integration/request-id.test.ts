/**
 * X-Request-Id in the app (src/http/app.ts, request-log.ts, errors.ts,
 * serve-options.ts, src/admin/app.ts), with app.handle and fake ports: the
 * client's sane id is echoed, anything else replaced by a generated one, on
 * every answer (successes, 4xx, the 500, unknown paths, wrong methods; what
 * Bun catches itself: test/unit/serve-options.test.ts); the
 * access log line and every line logged while handling the request carry it
 * as `requestId`; the 500 body adds it as `request_id`, and nothing else.
 */
import { describe, expect, test } from 'bun:test';
import { createAdminApp } from '../../src/admin/app';
import { createApp } from '../../src/http/app';
import { memoryLogger } from '../../src/log';
import { fakeAppDeps } from '../helpers/app-deps';

const KEY = 'pc_request-id-key';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function app() {
  const log = memoryLogger('debug');
  const a = createApp(
    fakeAppDeps(
      {
        log,
        accounts: {
          findByApiKey: async (k) => {
            if (k === 'pc_crash') throw new Error('database gone: SELECT * FROM api_keys');
            return k === KEY ? { id: 'acc-1', email: 'a@b.io' } : null;
          },
          overview: async () => ({ user: {} }),
        },
        checks: {
          assertAccepting: () => {},
          run: async (_owner, _req, _signal, requestLog) => {
            requestLog?.warn('something the job logged');
            return { ok: true };
          },
          submit: async () => {
            throw new Error('not used here');
          },
        },
      },
      'the request id',
    ),
  );
  return { app: a, log };
}

const get = (a: ReturnType<typeof app>['app'], path: string, init: RequestInit = {}) => a.handle(new Request(`http://127.0.0.1:3000${path}`, init));
const settle = () => Bun.sleep(5); // the access log line is written after the response

describe('X-Request-Id', () => {
  test('a sane client id is echoed and is on the access log line', async () => {
    const { app: a, log } = app();
    const r = await get(a, '/health', { headers: { 'X-Request-Id': 'client-id.42' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-request-id')).toBe('client-id.42');
    await settle();
    expect(log.lines.filter((l) => l.msg === 'request')).toEqual([expect.objectContaining({ path: '/health', status: 200, requestId: 'client-id.42' })]);
  });

  test('no id, or one that is not sane: a generated UUID, a new one each time', async () => {
    const { app: a, log } = app();
    const ids: string[] = [];
    for (const h of [undefined, '', 'two words', 'x'.repeat(129), 'a,b']) {
      const r = await get(a, '/regions', { headers: h === undefined ? {} : { 'X-Request-Id': h } });
      const id = r.headers.get('x-request-id') ?? '';
      expect(id).toMatch(UUID);
      ids.push(id);
    }
    expect(new Set(ids).size).toBe(ids.length);
    await settle();
    expect(log.lines.filter((l) => l.msg === 'request').map((l) => l.requestId)).toEqual(ids);
  });

  test('every kind of answer carries it: 404, 405, 401, 400, a keyed success, a check', async () => {
    const { app: a } = app();
    const answers = [
      await get(a, '/nope', { headers: { 'X-Request-Id': 'r1' } }),
      await get(a, '/me', { method: 'DELETE', headers: { 'X-Request-Id': 'r2' } }),
      await get(a, '/me', { headers: { 'X-Request-Id': 'r3' } }),
      await get(a, '/check', { method: 'POST', headers: { 'X-Request-Id': 'r4', 'X-API-Key': KEY, 'content-type': 'application/json' }, body: '{' }),
      await get(a, '/me', { headers: { 'X-Request-Id': 'r5', 'X-API-Key': KEY } }),
      await get(a, '/check-raw', { method: 'POST', headers: { 'X-Request-Id': 'r6', 'X-API-Key': KEY }, body: '1.2.3.4:80' }),
    ];
    expect(answers.map((r) => r.status)).toEqual([404, 405, 401, 400, 200, 200]);
    expect(answers.map((r) => r.headers.get('x-request-id'))).toEqual(['r1', 'r2', 'r3', 'r4', 'r5', 'r6']);
  });

  test('what a job logs while the request is handled carries the id', async () => {
    const { app: a, log } = app();
    await get(a, '/check-raw', { method: 'POST', headers: { 'X-Request-Id': 'job-req', 'X-API-Key': KEY }, body: '1.2.3.4:80' });
    expect(log.lines.find((l) => l.msg === 'something the job logged')).toMatchObject({ level: 'warn', requestId: 'job-req' });
  });

  test('a 500: the contract body plus request_id only; the error line and the access line carry the same id; no detail leaks', async () => {
    const { app: a, log } = app();
    const r = await get(a, '/me', { headers: { 'X-API-Key': 'pc_crash', 'X-Request-Id': 'boom-1' } });
    expect(r.status).toBe(500);
    expect(r.headers.get('x-request-id')).toBe('boom-1');
    expect(await r.json()).toEqual({ error: 'Internal server error', message: 'An unexpected error occurred', request_id: 'boom-1' });
    await settle();
    expect(log.lines.find((l) => l.msg === 'unhandled error')).toMatchObject({ level: 'error', requestId: 'boom-1' });
    expect(log.lines.find((l) => l.msg === 'request')).toMatchObject({ status: 500, requestId: 'boom-1' });

    const generated = await get(a, '/me', { headers: { 'X-API-Key': 'pc_crash' } });
    const body = (await generated.json()) as { request_id: string };
    expect(body.request_id).toMatch(UUID);
    expect(generated.headers.get('x-request-id')).toBe(body.request_id);
  });

  test('the admin listener too', async () => {
    const log = memoryLogger('debug');
    const admin = createAdminApp({ database: {} as never, adminToken: 'admin-token-0123456789abcdef', log });
    const r = await admin.handle(new Request('http://127.0.0.1:1/admin/show', { method: 'POST', headers: { 'X-Request-Id': 'adm-1' } }));
    expect(r.status).toBe(401);
    expect(r.headers.get('x-request-id')).toBe('adm-1');
    const nf = await admin.handle(new Request('http://127.0.0.1:1/elsewhere'));
    expect(nf.status).toBe(404);
    expect(nf.headers.get('x-request-id')).toMatch(UUID);
  });
});
