/**
 * The built-in judge's TLS listener in its own thread (src/judge/tls-judge-thread.ts):
 * the https check through it with the real probe path, its handshakes counted
 * in this thread's counters (/metrics), a port in use named as the bind's
 * error, a crashed thread started again on its port, close() twice.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { connect as tlsConnect } from 'node:tls';
import { bindAsync } from '../../src/compose/bind';
import { parseJudgeUrl } from '../../src/judge/calibrate';
import { judgeTlsHandshakes, startJudgeServer, type JudgeServer } from '../../src/judge/server';
import { startJudgeTlsThread, type JudgeTlsThread } from '../../src/judge/tls-judge-thread';
import { fingerprintOfDer, pemCertificateDer } from '../../src/probe/codec/cert-pin';
import { clearSessions } from '../../src/probe/net/tls-sessions';
import { runProbe } from '../../src/probe/probe';
import type { ProtocolSettings } from '../../src/probe/types';
import { startHttpProxy, startSocksProxy } from '../fixtures/fake-proxies';
import type { FakeServer } from '../fixtures/fake-servers';
import { TEST_CERT, TEST_KEY } from '../fixtures/tls-cert';
import { rejection as expectRejection } from '../helpers/rejection';

const KEY = 'tls-thread-test-judge-key-0123';
const PIN = fingerprintOfDer(pemCertificateDer(TEST_CERT)!);
const TLS = { key: TEST_KEY, cert: TEST_CERT };
let judge: JudgeServer;
let thread: JudgeTlsThread;
let http: FakeServer;
let socks: FakeServer;

beforeAll(async () => {
  judge = await startJudgeServer({ key: KEY });
  thread = await startJudgeTlsThread({ host: '127.0.0.1', port: 0, key: KEY, tls: TLS, restartDelayMs: 50 });
  http = await startHttpProxy();
  socks = await startSocksProxy();
});

afterAll(async () => {
  await thread.close();
  await judge.close();
  await http.close();
  await socks.close();
});

const settings = (type: 'http' | 'socks5', tlsPort: number): ProtocolSettings => ({
  type,
  timeoutMs: 2000,
  judge: parseJudgeUrl(judge.url),
  checkerIps: ['127.0.0.1'],
  baselineHeaders: [],
  allowPrivateTargets: true,
  judgeKey: KEY,
  tlsJudge: { ...parseJudgeUrl(`https://127.0.0.1:${tlsPort}/judge`), protocol: 'https:', fingerprint: PIN, key: KEY },
});

/** One TLS connection straight to the listener: whether the handshake completed within `ms`. */
function handshake(port: number, ms = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    const s = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      s.destroy();
      resolve(true);
    });
    s.setTimeout(ms, () => {
      s.destroy();
      resolve(false);
    });
    s.on('error', () => resolve(false));
  });
}

describe('the judge TLS listener in its own thread', () => {
  test('a working proxy gets https true through it (http and socks5); the handshakes are counted in this thread', async () => {
    clearSessions();
    const before = { ...judgeTlsHandshakes };
    const viaHttp = await runProbe({ index: 1, proxy: { host: '127.0.0.1', port: http.port } }, settings('http', thread.port));
    const viaSocks = await runProbe({ index: 2, proxy: { host: '127.0.0.1', port: socks.port } }, settings('socks5', thread.port));
    expect(viaHttp).toMatchObject({ status: 'working', https: true });
    expect(viaSocks).toMatchObject({ status: 'working', https: true });
    // the second resumed the first's session (tls-sessions.ts): one full, one resumed, counted by the thread into ours
    expect(judgeTlsHandshakes.full - before.full + (judgeTlsHandshakes.resumed - before.resumed)).toBe(2);
    expect(judgeTlsHandshakes.full - before.full).toBeGreaterThanOrEqual(1);
  });

  test('url and port name the bound listener', () => {
    expect(thread.port).toBeGreaterThan(0);
    expect(thread.url).toBe(`https://127.0.0.1:${thread.port}/judge`);
  });

  test('a crashed thread is started again on the same port', async () => {
    const port = thread.port;
    const restarts = thread.restarts;
    await thread.terminateThread();
    const deadline = Date.now() + 15_000;
    while (thread.restarts === restarts && Date.now() < deadline) await Bun.sleep(20);
    expect(thread.restarts).toBe(restarts + 1);
    expect(thread.port).toBe(port);
    expect(await handshake(port)).toBe(true);
    const r = await runProbe({ index: 3, proxy: { host: '127.0.0.1', port: http.port } }, settings('http', port));
    expect(r).toMatchObject({ status: 'working', https: true });
  });

  test('a port in use: the start rejects with EADDRINUSE, which bindAsync names as port_in_use', async () => {
    const holder = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
    try {
      const err = await expectRejection(startJudgeTlsThread({ host: '127.0.0.1', port: holder.port, key: KEY, tls: TLS }));
      expect((err as { code?: string }).code).toBe('EADDRINUSE');
      const named = await expectRejection(bindAsync({ setting: 'JUDGE_TLS_PORT', host: '127.0.0.1', port: holder.port }, () => startJudgeTlsThread({ host: '127.0.0.1', port: holder.port, key: KEY, tls: TLS })));
      expect(named).toMatchObject({ code: 'port_in_use' });
      expect((named as Error).message).toContain('JUDGE_TLS_PORT');
    } finally {
      holder.stop(true);
    }
  });

  test('a thread that cannot load: judge_thread_failed', async () => {
    const err = await expectRejection(startJudgeTlsThread({ host: '127.0.0.1', port: 0, key: KEY, tls: TLS, filename: `${import.meta.dir}/../fixtures/no-such-thread.ts` }));
    expect(err).toMatchObject({ code: 'judge_thread_failed' });
  });

  test('close() twice; the port is free afterwards; a crash after close starts nothing', async () => {
    const t = await startJudgeTlsThread({ host: '127.0.0.1', port: 0, key: KEY, tls: TLS, restartDelayMs: 10 });
    const port = t.port;
    expect(await handshake(port)).toBe(true);
    await Promise.all([t.close(), t.close()]);
    await t.close();
    expect(await handshake(port, 500)).toBe(false);
    await t.terminateThread();
    await Bun.sleep(100);
    expect(t.restarts).toBe(0);
    // the port can be bound again
    const again = Bun.listen({ hostname: '127.0.0.1', port, socket: { data() {} } });
    again.stop(true);
  });

  test('close() while the thread is being started again: no thread is left listening', async () => {
    const t = await startJudgeTlsThread({ host: '127.0.0.1', port: 0, key: KEY, tls: TLS, restartDelayMs: 100 });
    const port = t.port;
    await t.terminateThread();
    await Bun.sleep(20); // restarting: its timer armed
    await t.close();
    await Bun.sleep(300);
    expect(t.restarts).toBe(0);
    expect(await handshake(port, 500)).toBe(false);
  });
});
