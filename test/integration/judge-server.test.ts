/** The raw judge: echoes request line, raw headers in order with case, remote address and nonce; plus the Fetch-API handler. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { connect } from 'node:net';
import { judgeResponseFor, parseRequestHead, startJudgeServer, unwrapMappedAddress, type JudgeServer } from '../../src/judge/server';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readOrCreateJudgeCertificate } from '../../src/judge/tls-cert';
import { verifyJudgeBody } from '../../src/probe/codec/integrity';

const KEY = 'judge-server-test-key';

let judge: JudgeServer;
let judge6: JudgeServer;
let signing: JudgeServer;
beforeAll(async () => {
  judge = await startJudgeServer();
  judge6 = await startJudgeServer({ host: '::1' });
  signing = await startJudgeServer({ key: KEY });
});
afterAll(async () => {
  await judge.close();
  await judge6.close();
  await signing.close();
});

function raw(port: number, request: string, host = '127.0.0.1'): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect({ host, port });
    let out = '';
    s.on('data', (d) => (out += d.toString('utf8')));
    s.on('end', () => resolve(out));
    s.on('error', reject);
    s.write(request);
  });
}

describe('startJudgeServer', () => {
  test('echoes in order with original case, Content-Length and Connection: close', async () => {
    expect(judge.url).toBe(`http://127.0.0.1:${judge.port}/judge`);
    const res = await raw(judge.port, 'GET /judge?n=N1 HTTP/1.1\r\nHost: x\r\nX-Zeta: 1\r\nx-alpha: two\r\nVia: 1.1 a\r\n\r\n');
    const [head = '', body = ''] = res.split('\r\n\r\n');
    expect(head).toStartWith('HTTP/1.1 200 OK\r\n');
    expect(head).toContain('Content-Type: application/json');
    expect(head).toContain(`Content-Length: ${Buffer.byteLength(body)}`);
    expect(head).toContain('Connection: close');
    expect(JSON.parse(body)).toEqual({
      judge: 'proxycheck/1',
      nonce: 'N1',
      remoteAddress: '127.0.0.1',
      requestLine: 'GET /judge?n=N1 HTTP/1.1',
      headers: [
        ['Host', 'x'],
        ['X-Zeta', '1'],
        ['x-alpha', 'two'],
        ['Via', '1.1 a'],
      ],
    });
  });
  test('head split across packets and absolute-form targets', async () => {
    const s = connect({ host: '127.0.0.1', port: judge.port });
    const out = await new Promise<string>((resolve) => {
      let acc = '';
      s.on('data', (d) => (acc += d.toString()));
      s.on('end', () => resolve(acc));
      s.write('GET http://j/judge?a=1&n=N2 HT');
      setTimeout(() => s.write('TP/1.1\r\nHost: j\r\n\r\n'), 20);
    });
    expect(JSON.parse(out.split('\r\n\r\n')[1] ?? '')).toMatchObject({ nonce: 'N2', requestLine: 'GET http://j/judge?a=1&n=N2 HTTP/1.1' });
  });
  test('IPv6 listener reports ::1', async () => {
    const res = await raw(judge6.port, 'GET /judge HTTP/1.1\r\nHost: x\r\n\r\n', '::1');
    expect(JSON.parse(res.split('\r\n\r\n')[1] ?? '')).toMatchObject({ remoteAddress: '::1', nonce: null });
  });
  test('with a key: the same echo, its exact body signed (the last member, sig); without one: unsigned', async () => {
    const res = await raw(signing.port, 'GET /judge?n=N4 HTTP/1.1\r\nHost: x\r\nX-Name: caf\u00e9\r\n\r\n');
    const body = res.slice(res.indexOf('\r\n\r\n') + 4);
    expect(res).toContain(`Content-Length: ${Buffer.byteLength(body)}`);
    expect(verifyJudgeBody(Buffer.from(body, 'latin1'), KEY)).toBe(true);
    expect(verifyJudgeBody(Buffer.from(body, 'latin1'), 'another-key-of-16-chars')).toBe(false);
    const parsed = JSON.parse(body) as Record<string, unknown>;
    expect(Object.keys(parsed)).toEqual(['judge', 'nonce', 'remoteAddress', 'requestLine', 'headers', 'sig']);
    // the head is read as latin1 (UTF-8 é is two chars); on the wire the body is ASCII with JSON escapes
    expect(parsed).toMatchObject({ nonce: 'N4', headers: [['Host', 'x'], ['X-Name', 'caf\u00c3\u00a9']] });
    expect(body).toContain('"caf\\u00c3\\u00a9"');
    const plain = await raw(judge.port, 'GET /judge?n=N4 HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(plain).not.toContain('"sig"');
  });
  test('malformed requests get 400', async () => {
    expect(await raw(judge.port, 'NONSENSE\r\n\r\n')).toStartWith('HTTP/1.1 400 Bad Request');
    expect(await raw(judge.port, 'GET / HTTP/1.1\r\nno colon here\r\n\r\n')).toStartWith('HTTP/1.1 400');
  });
  test('oversized heads get 431', async () => {
    expect(await raw(judge.port, 'GET / HTTP/1.1\r\nX: ' + 'a'.repeat(20_000))).toStartWith('HTTP/1.1 431');
  });
});

describe('idle connections', () => {
  /** ms until the server closes a connection that sends nothing, or null when it is still open after `waitMs`. */
  const closedAfter = (port: number, waitMs: number): Promise<number | null> =>
    new Promise((resolve) => {
      const t0 = performance.now();
      const s = connect({ host: '127.0.0.1', port });
      s.on('error', () => {});
      const timer = setTimeout(() => {
        s.destroy();
        resolve(null);
      }, waitMs);
      s.on('close', () => {
        clearTimeout(timer);
        resolve(performance.now() - t0);
      });
    });

  test('closed after the idle time, over TLS too when no handshake ever starts (a tunnel a proxy keeps open)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'judge-idle-'));
    const cert = await readOrCreateJudgeCertificate(dir);
    const plain = await startJudgeServer({ idleMs: 1000 });
    const tls = await startJudgeServer({ idleMs: 1000, tls: { key: cert.key, cert: cert.cert } });
    try {
      // Bun's socket timeouts tick every few seconds: 1 s idle closes within ~4 s; never is the bug
      const [p, t] = await Promise.all([closedAfter(plain.port, 9000), closedAfter(tls.port, 9000)]);
      expect(p).not.toBeNull();
      expect(t).not.toBeNull();
    } finally {
      await plain.close();
      await tls.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 20_000);
});

describe('helpers', () => {
  test('parseRequestHead', () => {
    expect(parseRequestHead('GET /x HTTP/1.0\nA: 1\n b\n\n')).toEqual({ requestLine: 'GET /x HTTP/1.0', target: '/x', headers: [['A', '1 b']] });
    expect(parseRequestHead('GET /x\r\n\r\n')).toBeNull();
    expect(parseRequestHead('GET /x SPDY/3\r\n\r\n')).toBeNull();
  });
  test('unwrapMappedAddress', () => {
    expect(unwrapMappedAddress('::ffff:1.2.3.4')).toBe('1.2.3.4');
    expect(unwrapMappedAddress('::FFFF:1.2.3.4')).toBe('1.2.3.4');
    expect(unwrapMappedAddress('::1')).toBe('::1');
    expect(unwrapMappedAddress('1.2.3.4')).toBe('1.2.3.4');
  });
  test('judgeResponseFor renders the same body from a Fetch Request', async () => {
    const res = judgeResponseFor(new Request('http://svc.example/judge?n=N3', { headers: { 'X-Test': 'v' } }), '::ffff:203.0.113.4', KEY);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    const body = (await res.json()) as { headers: [string, string][] };
    expect(body).toMatchObject({ judge: 'proxycheck/1', nonce: 'N3', remoteAddress: '203.0.113.4', requestLine: 'GET /judge?n=N3 HTTP/1.1' });
    expect(body.headers).toContainEqual(['x-test', 'v']);
  });
  test('judgeResponseFor signs with the key it is given (the service\'s judge key)', async () => {
    const req = () => new Request('http://svc.example/judge?n=N5');
    const own = Buffer.from(await judgeResponseFor(req(), '127.0.0.1', KEY).arrayBuffer());
    expect(verifyJudgeBody(own, KEY)).toBe(true);
    const other = Buffer.from(await judgeResponseFor(req(), '127.0.0.1', 'explicit-key-16-chars').arrayBuffer());
    expect(verifyJudgeBody(other, 'explicit-key-16-chars')).toBe(true);
    expect(verifyJudgeBody(other, KEY)).toBe(false);
  });
});
