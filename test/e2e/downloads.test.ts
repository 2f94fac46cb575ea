/**
 * Result downloads end to end: a real check against fake proxies on
 * 127.0.0.1, then the `.json`, `.csv` and `.txt` forms through the same
 * signed link (`result_urls` of the check response): content types,
 * attachment names, every CSV field, TXT in the submitted forms; 403 / 410 /
 * 404 exactly as for `.json`; and a 100 000-proxy file converted as a stream.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startHttpProxy } from '../fixtures/fake-proxies';
import { refusedPort, type FakeServer } from '../fixtures/fake-servers';
import { CSV_COLUMNS, CSV_HTTPS_COLUMN } from '../../src/results/export';
import { newResultId, signResultLink, type ResultExt } from '../../src/results/links';
import { buildProxyRecord } from '../../src/results/record';
import { openDirResultStore } from '../../src/results/dir-store';
import { startTestService, type TestService } from '../helpers/service';
// Every response is checked against the OpenAPI document the service serves (test/helpers/openapi-check.ts).
import { checkedCall as call, checkedFetch } from '../helpers/openapi-check';

let t: TestService;
let elite: FakeServer;
let auth: FakeServer;
let refused: number;
const servers: FakeServer[] = [];

beforeAll(async () => {
  t = await startTestService();
  elite = await startHttpProxy();
  auth = await startHttpProxy({ auth: { username: 'alice', password: 's3:cret@' } });
  servers.push(elite, auth);
  refused = await refusedPort();
}, 60_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await t?.stop();
}, 30_000);

/** Minimal RFC 4180 reader for assertions (quoted fields, doubled quotes, CRLF). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += c;
  }
  if (cell !== '' || row.length > 0) rows.push([...row, cell]);
  return rows;
}

const secret = () => t.service.config.storage.resultSecret!;
const nowS = () => Math.floor(Date.now() / 1000);

describe('result downloads', () => {
  let urls: { json: string; csv: string; txt: string };
  let submitted: string[];

  beforeAll(async () => {
    submitted = [
      `127.0.0.1:${elite.port}`,
      `127.0.0.1:${auth.port}:alice:s3:cret@`, // colon form (password after the 3rd colon)
      `HTTP://alice:s3%3Acret%40@127.0.0.1:${auth.port}/`, // url form, same proxy: a duplicate
      `https://alice:s3%3Acret%40@localhost:${auth.port}`, // url form on a host name (https:// names http, the check's type)
      `127.0.0.1:${refused}`,
    ];
    const r = await call(`${t.url}/check`, {
      method: 'POST',
      headers: { 'X-API-Key': t.key },
      json: { proxies: submitted, timeout: 2000 },
    });
    expect(r.status).toBe(200);
    urls = r.body.result_urls;
    expect(r.body.result_url).toBe(urls.json);
  }, 30_000);

  test('result_urls: one token and expiry, three extensions', () => {
    const [j, c, x] = [urls.json, urls.csv, urls.txt].map((u) => new URL(u));
    expect(j!.pathname).toMatch(/^\/result\/[A-Za-z0-9_-]{22}\.json$/);
    expect(c!.pathname).toBe(j!.pathname.replace(/\.json$/, '.csv'));
    expect(x!.pathname).toBe(j!.pathname.replace(/\.json$/, '.txt'));
    expect(c!.search).toBe(j!.search);
    expect(x!.search).toBe(j!.search);
  });

  test('.csv: attachment, header, one row per proxy, every field', async () => {
    const res = await checkedFetch(urls.csv);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present');
    const id = new URL(urls.csv).pathname.split('/').at(-1);
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${id}"`);
    const text = await res.text();
    expect(text.endsWith('\r\n')).toBe(true);
    const rows = parseCsv(text);
    expect(rows[0]).toEqual([...CSV_COLUMNS, CSV_HTTPS_COLUMN]); // the https check runs by default
    expect(rows).toHaveLength(1 + 4);
    const json = (await (await checkedFetch(urls.json)).json()) as any;
    expect(rows.length - 1).toBe(json.proxies.length);
    const byKey = new Map(rows.slice(1).map((r) => [`${r[0]}:${r[1]}:${r[3]}`, r]));
    const e = byKey.get(`127.0.0.1:${elite.port}:`)!;
    expect(e.slice(2, 10)).toEqual(['false', '', '', 'working', '200', e[7]!, 'elite', '127.0.0.1']);
    expect(Number(e[7])).toBeGreaterThan(0);
    const a = byKey.get(`127.0.0.1:${auth.port}:alice`)!;
    expect(a.slice(2, 7)).toEqual(['true', 'alice', 's3:cret@', 'working', '200']);
    const f = byKey.get(`127.0.0.1:${refused}:`)!;
    expect(f[5]).toBe('failed');
    expect(f[17]).toBe('connect_refused');
    expect(f[18]!.length).toBeGreaterThan(0);
    expect([e[19], a[19], f[19]]).toEqual(['true', 'true', '']);
    for (const r of rows) expect(r).toHaveLength(20);
  });

  test('.txt: working proxies only, in the form each was submitted', async () => {
    const res = await checkedFetch(urls.txt);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="[A-Za-z0-9_-]{22}\.txt"$/);
    const lines = (await res.text()).split('\n');
    expect(lines.at(-1)).toBe('');
    expect(lines.slice(0, -1).sort()).toEqual(
      [`127.0.0.1:${elite.port}`, `127.0.0.1:${auth.port}:alice:s3:cret@`, `alice:s3%3Acret%40@localhost:${auth.port}`].sort(),
    );
  });

  test('.json unchanged: inline, the result file', async () => {
    const res = await checkedFetch(urls.json);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('content-disposition')).toMatch(/^inline; /);
    const bytes = new Uint8Array(await res.clone().arrayBuffer());
    expect(res.headers.get('content-length')).toBe(String(bytes.length)); // sent with a length, not chunked
    const body = (await res.json()) as any;
    expect(body.proxies).toHaveLength(4);
    expect(body.proxies.find((p: any) => p.proxy.host === 'localhost').proxy.format).toBe('url_auth');
  });

  test('bad token 403, expired 410, unknown 404, for every extension', async () => {
    const id = new URL(urls.json).pathname.split('/').at(-1)!.replace(/\.json$/, '');
    for (const ext of ['csv', 'txt', 'json'] as ResultExt[]) {
      const good = new URL(urls[ext]);
      const bad = new URL(good);
      bad.searchParams.set('token', '0'.repeat(64));
      const r403 = await call(bad.toString());
      expect(r403.status).toBe(403);
      expect(r403.body.error).toBeDefined();
      expect((await call(`${good.origin}${good.pathname}`)).status).toBe(403);
      const expired = signResultLink({ contentUrl: t.url, resultId: id, secret: secret(), expiresAt: nowS() - 1, ext });
      const r410 = await call(expired);
      expect(r410.status).toBe(410);
      expect(r410.body).toEqual({ error: 'Link expired', message: expect.any(String) });
      const unknown = signResultLink({ contentUrl: t.url, resultId: 'AAAAAAAAAAAAAAAAAAAAAA', secret: secret(), expiresAt: nowS() + 60, ext });
      const r404 = await call(unknown);
      expect(r404.status).toBe(404);
      expect(r404.body.error).toBe('Not found');
    }
    expect((await call(urls.json.replace('.json?', '.xml?'))).status).toBe(404);
  });
});

describe('a 100 000-proxy result file', () => {
  test('converts to .csv and .txt as a stream', async () => {
    const resultId = newResultId();
    // written beside the service's own store, through the same port (the directory adapter)
    const store = await openDirResultStore({ dataDir: t.dataDir, fsync: false });
    const writer = await store.create(resultId);
    const n = 100_000;
    for (let i = 0; i < n; i++) {
      const ok = i % 10 === 0;
      await writer.addProxy(
        buildProxyRecord(
          { host: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, port: 1 + (i % 65535), format: 'standard' },
          ok
            ? { index: i, status: 'working', statusCode: 200, responseTimeMs: i % 997, anonymity: 'elite', origin: '10.0.0.1', error: null }
            : { index: i, status: 'failed', statusCode: null, responseTimeMs: 5, anonymity: null, origin: null, error: { code: 'connect_refused', message: 'refused' } },
          null,
        ),
      );
    }
    await writer.finish({ summary: { total_working: n / 10 }, metadata: {} });
    await store.close();
    const link = (ext: ResultExt) => signResultLink({ contentUrl: t.url, resultId, secret: secret(), expiresAt: nowS() + 600, ext });

    const t0 = performance.now();
    const csv = await fetch(link('csv'));
    expect(csv.status).toBe(200);
    let rows = 0;
    let firstChunkAt = 0;
    const reader = csv.body!.getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      if (firstChunkAt === 0) firstChunkAt = performance.now() - t0;
      for (const b of value) if (b === 10) rows++;
    }
    expect(rows).toBe(n + 1);
    // streamed: the first bytes arrive long before the whole conversion is done
    expect(firstChunkAt).toBeLessThan(performance.now() - t0);

    const txt = await (await fetch(link('txt'))).text();
    expect(txt.split('\n').length - 1).toBe(n / 10);
  }, 60_000);
});
