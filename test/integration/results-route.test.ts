/**
 * Tests for src/http/routes/results.ts inside the real app (createApp, no
 * sockets) over a fake ResultStore: the token before the store (a bad link
 * never reaches it), 404 when the store has no such result, `.json` as the
 * store's bytes, `.csv`/`.txt` converted from the store's stream, and an
 * empty secret refused when the routes are built.
 */
import { describe, expect, test } from 'bun:test';
import { isServiceError } from '../../src/errors';
import { createApp } from '../../src/http/app';
import type { AppDeps } from '../../src/http/context';
import { resultRoutes } from '../../src/http/routes/results';
import { newResultId, signResultLink, type ResultExt } from '../../src/results/links';
import type { StoredResult } from '../../src/results/store';
import { fakeAppDeps } from '../helpers/app-deps';

const secret = 'route-secret-0123456789abcdef';
const DOC = '{"summary":{},"metadata":{"proxy_type":"http"},"proxies":[\n{"proxy":{"host":"192.0.2.9","port":8080,"hasAuth":false,"format":"standard"},"status":"working","responseTime":"1.00 ms"},\n{"proxy":{"host":"192.0.2.9","port":1080,"hasAuth":false,"format":"standard"},"status":"working","responseTime":"1.00 ms","type":"socks5"}\n]}\n';
const stored = newResultId();
const opened: string[] = [];

function deps(): AppDeps {
  return fakeAppDeps(
    {
      results: {
        secret,
        store: {
          async open(id): Promise<StoredResult | null> {
            opened.push(id);
            if (id !== stored) return null;
            return { resultId: id, bytes: Buffer.byteLength(DOC), stream: () => new Response(DOC).body! };
          },
        },
      },
    },
    'the result routes',
  );
}

const app = createApp(deps());
const link = (resultId: string, ext: ResultExt, expiresAt = Math.floor(Date.now() / 1000) + 600) =>
  signResultLink({ contentUrl: 'http://127.0.0.1:3000', resultId, secret, expiresAt, ext });
const get = (url: string) => app.handle(new Request(url));

describe('GET /result/<id>.<ext>', () => {
  test('the route declares its path parameter and query; what they refuse is answered in the link\'s order: 404 name, 403 token', async () => {
    const good = new URL(link(stored, 'json'));
    const without = new URL(good);
    without.searchParams.delete('token');
    expect((await get(without.toString())).status).toBe(403);
    const letters = new URL(good);
    letters.searchParams.set('expires', 'soon');
    expect((await get(letters.toString())).status).toBe(403);
    const name = new URL(without.toString().replace(`${stored}.json`, 'not-a-result.json'));
    expect((await get(name.toString())).status).toBe(404);
    expect((await get(`${good.toString()}&unknown=1`)).status).toBe(200);
  });

  test('a bad or expired token never reaches the store', async () => {
    opened.length = 0;
    const bad = new URL(link(stored, 'json'));
    bad.searchParams.set('token', '0'.repeat(64));
    expect((await get(bad.toString())).status).toBe(403);
    expect((await get(link(stored, 'csv', Math.floor(Date.now() / 1000) - 1))).status).toBe(410);
    expect(opened).toEqual([]);
  });

  test('no such result in the store: 404 whose message names the retention settings', async () => {
    const id = newResultId();
    const res = await get(link(id, 'txt'));
    expect(res.status).toBe(404);
    expect(opened.at(-1)).toBe(id);
    expect(await res.json()).toEqual({
      error: 'Not found',
      message: 'No such result (it may have passed its retention period: server settings RESULT_RETENTION_DAYS and RESULT_MAX_BYTES)',
    });
  });

  test('.json is the stored bytes, inline', async () => {
    const res = await get(link(stored, 'json'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toBe(`inline; filename="${stored}.json"`);
    expect(await res.text()).toBe(DOC);
  });

  test('.csv and .txt are converted from the stored stream', async () => {
    const csv = await (await get(link(stored, 'csv'))).text();
    expect(csv.split('\r\n')[1]!.startsWith('192.0.2.9,8080,false,,,working,,1,')).toBe(true);
    expect(await (await get(link(stored, 'txt'))).text()).toBe('192.0.2.9:8080\n192.0.2.9:1080\n');
  });

  test('.txt?scheme=true: each line <protocol>://host:port (the record type, else the check type); false as without', async () => {
    expect(await (await get(`${link(stored, 'txt')}&scheme=true`)).text()).toBe('http://192.0.2.9:8080\nsocks5://192.0.2.9:1080\n');
    expect(await (await get(`${link(stored, 'txt')}&scheme=false`)).text()).toBe('192.0.2.9:8080\n192.0.2.9:1080\n');
  });

  test('a bad scheme is a 400 naming it (after the token: a bad link is still 403)', async () => {
    for (const bad of ['yes', '1', '', 'TRUE']) {
      const res = await get(`${link(stored, 'txt')}&scheme=${bad}`);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: 'Invalid request', message: 'scheme: expected true or false' });
    }
    const twice = await get(`${link(stored, 'txt')}&scheme=true&scheme=true`);
    expect(twice.status).toBe(400);
    const bad = new URL(`${link(stored, 'txt')}&scheme=yes`);
    bad.searchParams.set('token', '0'.repeat(64));
    expect((await get(bad.toString())).status).toBe(403);
  });

  test('an empty secret is refused when the routes are built', () => {
    let code = '';
    try {
      resultRoutes({ now: () => new Date(), results: { secret: '', store: deps().results.store } });
    } catch (err) {
      code = isServiceError(err) ? err.code : String(err);
    }
    expect(code).toBe('result_secret_missing');
  });
});
