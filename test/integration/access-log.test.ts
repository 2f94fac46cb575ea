/**
 * The access log of the app (src/http/app.ts, src/http/request-log.ts): one
 * `request` line per request at info level, except the built-in judge's
 * answers (GET /judge, 200): those are the probes' own traffic, one per
 * working proxy, and would flood the log (issue 14). A /judge request that
 * fails is still logged. No sockets: app.handle.
 */
import { describe, expect, test } from 'bun:test';
import { createApp } from '../../src/http/app';
import { memoryLogger } from '../../src/log';
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
});
