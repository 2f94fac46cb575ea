/**
 * One webhook attempt (src/webhooks/sender.ts) against real servers on
 * 127.0.0.1: the request as sent, the SSRF guard (a literal address and a
 * name resolved to a blocked one; off with ALLOW_PRIVATE_TARGETS), a redirect
 * recorded and not followed, the answer read up to its cap and no further,
 * the deadline, a refused connection.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendAttempt } from '../../src/webhooks/sender';

const servers: Server[] = [];
afterAll(() => {
  for (const s of servers) s.close();
});

function serve(handler: Parameters<typeof createServer>[1]): Promise<number> {
  const s = createServer(handler);
  servers.push(s);
  return new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve((s.address() as AddressInfo).port)));
}

const input = (url: string) => ({ url, body: '{"type":"webhook.test"}', headers: { 'webhook-id': 'msg_1', 'webhook-timestamp': '1', 'webhook-signature': 'v1,x' } });

describe('sendAttempt', () => {
  test('POSTs the body with its headers; a 2xx is the status, no error', async () => {
    let seen: { method?: string; headers?: Record<string, unknown>; body?: string } = {};
    const port = await serve((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen = { method: req.method, headers: req.headers, body };
        res.writeHead(200).end('ok');
      });
    });
    const out = await sendAttempt(input(`http://127.0.0.1:${port}/h`), { allowPrivateTargets: true });
    expect(out).toMatchObject({ status: 200, error: null });
    expect(seen.method).toBe('POST');
    expect(seen.body).toBe('{"type":"webhook.test"}');
    expect(seen.headers).toMatchObject({ 'content-type': 'application/json', 'webhook-id': 'msg_1', 'webhook-signature': 'v1,x' });
  });

  test('the SSRF guard: a literal loopback address and a name that resolves to one are refused before any connection', async () => {
    let hits = 0;
    const port = await serve((_req, res) => {
      hits++;
      res.writeHead(200).end();
    });
    const literal = await sendAttempt(input(`http://127.0.0.1:${port}/h`), { allowPrivateTargets: false });
    expect(literal.status).toBeNull();
    expect(literal.error).toStartWith('blocked_target: 127.0.0.1 is in a private');
    const named = await sendAttempt(input(`http://hooks.example.test:${port}/h`), { allowPrivateTargets: false, resolve: async () => ['127.0.0.1'] });
    expect(named.error).toStartWith('blocked_target: hooks.example.test resolves to 127.0.0.1');
    const unresolved = await sendAttempt(input(`http://hooks.example.test:${port}/h`), { allowPrivateTargets: false, resolve: async () => [] });
    expect(unresolved.error).toStartWith('dns_failed');
    expect(hits).toBe(0);
    // the name's address is the one connected to (the guard allows it here)
    const allowed = await sendAttempt(input(`http://hooks.example.test:${port}/h`), { allowPrivateTargets: false, blocked: () => false, resolve: async () => ['127.0.0.1'] });
    expect(allowed.status).toBe(200);
    expect(hits).toBe(1);
  });

  test('a redirect is recorded, not followed', async () => {
    let followed = 0;
    const target = await serve((_req, res) => {
      followed++;
      res.writeHead(200).end();
    });
    const port = await serve((_req, res) => res.writeHead(307, { location: `http://127.0.0.1:${target}/` }).end());
    const out = await sendAttempt(input(`http://127.0.0.1:${port}/`), { allowPrivateTargets: true });
    expect(out).toMatchObject({ status: 307, error: 'redirect not followed (HTTP 307)' });
    expect(followed).toBe(0);
  });

  test('an endless answer is read up to the cap, then the connection is closed', async () => {
    let closed = false;
    const port = await serve((_req, res) => {
      res.writeHead(500);
      const chunk = Buffer.alloc(16 * 1024, 120);
      const timer = setInterval(() => res.write(chunk), 1);
      res.on('close', () => {
        closed = true;
        clearInterval(timer);
      });
    });
    const out = await sendAttempt(input(`http://127.0.0.1:${port}/`), { allowPrivateTargets: true, maxBytes: 64 * 1024, timeoutMs: 5000 });
    expect(out).toMatchObject({ status: 500, error: 'HTTP 500' });
    expect(out.durationMs).toBeLessThan(4000);
    for (let i = 0; i < 100 && !closed; i++) await Bun.sleep(10);
    expect(closed).toBe(true);
  });

  test('aborted by the service stopping: marked aborted (not an attempt)', async () => {
    const port = await serve(() => {}); // never answers
    const stop = new AbortController();
    const pending = sendAttempt(input(`http://127.0.0.1:${port}/`), { allowPrivateTargets: true, timeoutMs: 5000, signal: stop.signal });
    await Bun.sleep(50);
    stop.abort();
    expect(await pending).toMatchObject({ status: null, aborted: true });
  });

  test('no answer within the deadline: a timeout; a refused connection: connect_failed', async () => {
    const port = await serve(() => {}); // never answers
    const out = await sendAttempt(input(`http://127.0.0.1:${port}/`), { allowPrivateTargets: true, timeoutMs: 200 });
    expect(out).toMatchObject({ status: null, error: 'timeout: no answer within 200 ms' });
    expect(out.durationMs).toBeGreaterThanOrEqual(190);
    const free = await serve(() => {});
    servers.at(-1)!.close();
    await Bun.sleep(20);
    const refused = await sendAttempt(input(`http://127.0.0.1:${free}/`), { allowPrivateTargets: true, timeoutMs: 2000 });
    expect(refused.status).toBeNull();
    expect(refused.error).toStartWith('connect_failed');
  });
});
