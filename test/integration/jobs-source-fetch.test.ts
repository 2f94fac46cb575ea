/**
 * The fetch of a pool's list URL (src/jobs/source-fetch.ts) against a real
 * HTTP server on loopback, port 0: the body, the size cap (declared and
 * counted), the one deadline, redirects (followed, limited, each hop
 * guarded), only http(s), the status. The server is on 127.0.0.1, which the
 * real guard refuses: the tests that reach it either allow private targets
 * (ALLOW_PRIVATE_TARGETS, as the service tests do) or narrow the guard to
 * another loopback address (`blocked`), so a redirect to that one is refused
 * while the first hop is let through.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { JOB_ERROR_CODES } from '../../src/error-codes';
import { errorCode } from '../../src/errors';
import { fetchSource, type SourceFetchOptions } from '../../src/jobs/source-fetch';

let server: Server;
let base = '';
const LIST = '1.2.3.4:8080\n# comment\nuser:pass@5.6.7.8:3128\n';

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = req.url ?? '/';
    if (path === '/list.txt') res.end(LIST);
    else if (path === '/big') res.end('x'.repeat(5000));
    else if (path === '/big-chunked') {
      // no Content-Length: the cap counts what arrives
      res.write('1.2.3.4:80\n'.repeat(300));
      res.end('1.2.3.4:80\n'.repeat(300));
    } else if (path === '/slow') setTimeout(() => res.end(LIST), 2000);
    else if (path === '/hang-body') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('1.2.3.4:80\n'); // and never ends
    } else if (path.startsWith('/redirect/')) {
      const n = Number(path.slice('/redirect/'.length));
      res.writeHead(302, { location: n <= 0 ? '/list.txt' : `/redirect/${n - 1}` }).end();
    } else if (path === '/to-other-loopback') res.writeHead(301, { location: `http://127.0.0.2:${(server.address() as AddressInfo).port}/list.txt` }).end();
    else if (path === '/to-file') res.writeHead(302, { location: 'file:///etc/passwd' }).end();
    else if (path === '/missing') res.writeHead(404).end('no');
    else res.writeHead(500).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

const allowed: SourceFetchOptions = { maxBytes: 1024, timeoutMs: 1000, allowPrivateTargets: true };
const codeOf = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p;
  } catch (err) {
    return errorCode(err);
  }
  return 'no error';
};

describe('fetchSource', () => {
  test('reads the body as text', async () => {
    expect(await fetchSource(`${base}/list.txt`, allowed)).toBe(LIST);
  });

  test('the size cap: a declared length over it, and a counted one', async () => {
    expect(await codeOf(fetchSource(`${base}/big`, allowed))).toBe(JOB_ERROR_CODES.SOURCE_TOO_LARGE);
    expect(await codeOf(fetchSource(`${base}/big-chunked`, allowed))).toBe(JOB_ERROR_CODES.SOURCE_TOO_LARGE);
    expect((await fetchSource(`${base}/big`, { ...allowed, maxBytes: 5000 })).length).toBe(5000);
  });

  test('one deadline: a slow answer and a body that never ends', async () => {
    const t0 = performance.now();
    expect(await codeOf(fetchSource(`${base}/slow`, { ...allowed, timeoutMs: 200 }))).toBe(JOB_ERROR_CODES.SOURCE_TIMEOUT);
    expect(await codeOf(fetchSource(`${base}/hang-body`, { ...allowed, timeoutMs: 200 }))).toBe(JOB_ERROR_CODES.SOURCE_TIMEOUT);
    expect(performance.now() - t0).toBeLessThan(1500);
  });

  test('redirects: followed up to the limit, then refused', async () => {
    expect(await fetchSource(`${base}/redirect/3`, allowed)).toBe(LIST);
    // /redirect/3 -> /2 -> /1 -> /0 -> /list.txt: four redirects
    expect(await codeOf(fetchSource(`${base}/redirect/3`, { ...allowed, maxRedirects: 4 }))).toBe('no error');
    expect(await codeOf(fetchSource(`${base}/redirect/3`, { ...allowed, maxRedirects: 3 }))).toBe(JOB_ERROR_CODES.SOURCE_TOO_MANY_REDIRECTS);
  });

  test('only http(s), at every hop', async () => {
    expect(await codeOf(fetchSource(`${base}/to-file`, allowed))).toBe(JOB_ERROR_CODES.SOURCE_BAD_REDIRECT);
    expect(await codeOf(fetchSource('ftp://127.0.0.1/list.txt', allowed))).toBe(JOB_ERROR_CODES.SOURCE_BAD_REDIRECT);
  });

  test('a status other than 2xx', async () => {
    expect(await codeOf(fetchSource(`${base}/missing`, allowed))).toBe(JOB_ERROR_CODES.SOURCE_HTTP_STATUS);
  });

  test('the guard: loopback refused without ALLOW_PRIVATE_TARGETS (a literal and a name resolving to it)', async () => {
    const guarded: SourceFetchOptions = { maxBytes: 1024, timeoutMs: 1000, allowPrivateTargets: false };
    expect(await codeOf(fetchSource(`${base}/list.txt`, guarded))).toBe(JOB_ERROR_CODES.SOURCE_BLOCKED_TARGET);
    const port = (server.address() as AddressInfo).port;
    const viaName = { ...guarded, resolve: async () => ['203.0.113.9', '127.0.0.1'] };
    expect(await codeOf(fetchSource(`http://lists.example:${port}/list.txt`, viaName))).toBe(JOB_ERROR_CODES.SOURCE_BLOCKED_TARGET);
    expect(await codeOf(fetchSource(`http://[::1]:${port}/list.txt`, guarded))).toBe(JOB_ERROR_CODES.SOURCE_BLOCKED_TARGET);
  });

  test('each hop is guarded: a redirect to a refused address fails, unless private targets are allowed', async () => {
    const narrow: SourceFetchOptions = { maxBytes: 1024, timeoutMs: 1000, allowPrivateTargets: false, blocked: (ip) => ip === '127.0.0.2' };
    expect(await fetchSource(`${base}/list.txt`, narrow)).toBe(LIST); // the first hop passes this guard
    expect(await codeOf(fetchSource(`${base}/to-other-loopback`, narrow))).toBe(JOB_ERROR_CODES.SOURCE_BLOCKED_TARGET);
    // a name that resolves to the refused address, after a redirect
    const port = (server.address() as AddressInfo).port;
    const named: SourceFetchOptions = { ...narrow, resolve: async (h) => (h === 'ok.example' ? ['127.0.0.1'] : ['127.0.0.2']) };
    expect(await fetchSource(`http://ok.example:${port}/list.txt`, named)).toBe(LIST); // the connection goes to the address judged
    expect(await codeOf(fetchSource(`http://bad.example:${port}/list.txt`, named))).toBe(JOB_ERROR_CODES.SOURCE_BLOCKED_TARGET);
  });

  test('a name that does not resolve; a port nobody listens on', async () => {
    const o: SourceFetchOptions = { ...allowed, resolve: async () => [] };
    expect(await codeOf(fetchSource('http://nowhere.example/l.txt', o))).toBe(JOB_ERROR_CODES.SOURCE_DNS_FAILED);
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    closed.close();
    expect(await codeOf(fetchSource(`http://127.0.0.1:${port}/`, allowed))).toBe(JOB_ERROR_CODES.SOURCE_FETCH_FAILED);
  });
});
