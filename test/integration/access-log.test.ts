/**
 * The access log of the app (src/http/app.ts, src/http/request-log.ts): one
 * `request` line per request at info level, except the built-in judge's
 * answers (GET /judge, 200): those are the probes' own traffic, one per
 * working proxy, and would flood the log (issue 14). A /judge request that
 * fails is still logged. app.handle, and once on a real listener (loopback,
 * port 0), as proxies reach the judge.
 */
import { describe, expect, test } from 'bun:test';
import { createApp } from '../../src/http/app';
import { memoryLogger } from '../../src/log';
import type { AppDeps } from '../../src/http/context';
import { fakeAppDeps } from '../helpers/app-deps';

describe('access log', () => {
  test('GET /health is logged; a 200 from GET /judge is not; a 405 on /judge is', async () => {
    const log = memoryLogger('info');
    const app = createApp(fakeAppDeps({ log }, 'the access log'));
    const requests = () => log.lines.filter((l) => l.msg === 'request' || l.message === 'request');
    await app.handle(new Request('http://127.0.0.1:3000/health'));
    await Bun.sleep(5); // onAfterResponse runs after the response is handed out
    expect(requests().map((l) => l.path)).toEqual(['/health']);

    const j = await app.handle(new Request('http://127.0.0.1:3000/judge?n=abc'));
    expect(j.status).toBe(200);
    await Bun.sleep(5);
    expect(requests().map((l) => l.path)).toEqual(['/health']);

    const bad = await app.handle(new Request('http://127.0.0.1:3000/judge', { method: 'POST' }));
    expect(bad.status).toBe(405);
    await Bun.sleep(5);
    expect(requests().map((l) => [l.path, l.status])).toEqual([
      ['/health', 200],
      ['/judge', 405],
    ]);
  });

  test('on a listener: GET /judge answers the signed judge body (not logged), POST /judge is a 405 (logged)', async () => {
    const log = memoryLogger('info');
    const app = createApp(fakeAppDeps({ log }, 'the access log'));
    app.listen({ hostname: '127.0.0.1', port: 0 });
    try {
      const base = `http://127.0.0.1:${app.server!.port}`;
      const r = await fetch(`${base}/judge?n=nonce123`, { headers: { 'X-Test': 'yes' } });
      expect(r.status).toBe(200);
      const body = (await r.json()) as Record<string, unknown>;
      expect(body.nonce).toBe('nonce123');
      expect(typeof body.sig).toBe('string');
      expect(JSON.stringify(body.headers).toLowerCase()).toContain('x-test');
      const bad = await fetch(`${base}/judge`, { method: 'POST' });
      expect(bad.status).toBe(405);
      await Bun.sleep(5);
      expect(log.lines.filter((l) => l.msg === 'request' || l.message === 'request').map((l) => [l.path, l.status])).toEqual([['/judge', 405]]);
    } finally {
      await app.stop(true);
    }
  });

  test("a route that returns a Response object is logged with that Response's status", async () => {
    const log = memoryLogger('info');
    const KEY = 'pc_access_log_key';
    const app = createApp(
      fakeAppDeps(
        {
          log,
          accounts: { findByApiKey: async (k) => (k === KEY ? { id: 'acc-1', email: 'a@b.io' } : null), overview: async () => ({}) },
          jobs: { status: async () => null, cancel: async () => ({ ok: true }) },
        } as Partial<AppDeps>,
        'the access log',
      ),
      [(a) => a.get('/teapot', () => new Response('short and stout', { status: 418 })) as unknown as typeof a],
    );
    const requests = () => log.lines.filter((l) => l.msg === 'request' || l.message === 'request').map((l) => [l.method, l.path, l.status]);
    // a route of the app's own (DELETE /checks/{jobId} answers `new Response(null, {status: 204})`)
    const del = await app.handle(new Request('http://127.0.0.1:3000/checks/job_abc', { method: 'DELETE', headers: { 'x-api-key': KEY } }));
    expect(del.status).toBe(204);
    // and one added to the app
    const tea = await app.handle(new Request('http://127.0.0.1:3000/teapot'));
    expect(tea.status).toBe(418);
    await Bun.sleep(5);
    expect(requests()).toEqual([
      ['DELETE', '/checks/job_abc', 204],
      ['GET', '/teapot', 418],
    ]);
  });
});
