/**
 * Integration tests for src/cli/probe.ts, run as a subprocess against fake
 * proxies on 127.0.0.1 (test/fixtures): one JSON line per result, then a summary.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHttpProxy, startSocksProxy } from '../fixtures/fake-proxies';
import { refusedPort, startBlackHole, startCaptive, type FakeServer } from '../fixtures/fake-servers';

const CLI = join(import.meta.dir, '../../src/cli/probe.ts');
const tmp = mkdtempSync(join(tmpdir(), 'probe-cli-'));
const servers: FakeServer[] = [];
let elite: FakeServer, transparent: FakeServer, hole: FakeServer, captive: FakeServer, socks: FakeServer;
let refused = 0;

beforeAll(async () => {
  elite = await startHttpProxy();
  transparent = await startHttpProxy({ addHeaders: (ip) => [['X-Forwarded-For', ip]] });
  hole = await startBlackHole();
  captive = await startCaptive();
  socks = await startSocksProxy({ auth: { username: 'u', password: 'p' } });
  servers.push(elite, transparent, hole, captive, socks);
  refused = await refusedPort();
});
afterAll(async () => {
  for (const s of servers) await s.close();
  rmSync(tmp, { recursive: true, force: true });
});

async function run(args: string[], stdin?: string): Promise<{ code: number; lines: Record<string, unknown>[]; stderr: string }> {
  const p = Bun.spawn([process.execPath, CLI, ...args], { stdin: stdin === undefined ? 'ignore' : new Blob([stdin]), stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, lines: out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>), stderr: err };
}

describe('probe CLI', () => {
  test('http: one line per proxy with exact verdicts, then a summary', async () => {
    const list = join(tmp, 'http.txt');
    const at = (s: FakeServer | number) => `127.0.0.1:${typeof s === 'number' ? s : s.port}`;
    writeFileSync(list, [at(elite), at(transparent), at(hole), at(captive), at(refused), '# comment', 'not a proxy', at(elite)].join('\n'));
    const { code, lines } = await run([list, '--type', 'http', '--timeout', '1000', '--concurrency', '3', '--allow-private']);
    expect(code).toBe(0);
    const summary = lines.pop()!.summary as Record<string, unknown>;
    const byProxy = new Map(lines.map((l) => [l.proxy, l]));
    expect(lines.length).toBe(5);
    expect(byProxy.get(at(elite))).toMatchObject({ status: 'working', statusCode: 200, anonymity: 'elite', origin: '127.0.0.1', country: null, asn: null, error: null });
    expect(byProxy.get(at(transparent))).toMatchObject({ status: 'working', anonymity: 'transparent' });
    expect(byProxy.get(at(hole))).toMatchObject({ status: 'failed', error: { code: 'timeout' } });
    expect(byProxy.get(at(captive))).toMatchObject({ status: 'failed', error: { code: 'judge_mismatch' } });
    expect(byProxy.get(at(refused))).toMatchObject({ status: 'failed', error: { code: 'connect_refused' } });
    expect(String(byProxy.get(at(elite))!.responseTime)).toMatch(/^\d+\.\d\d ms$/);
    expect(summary).toMatchObject({ total: 5, checked: 5, working: 2, failed: 3, invalid: 1, duplicates: 1, cancelled: false, concurrency: 3 });
    expect(summary.errors).toEqual({ timeout: 1, judge_mismatch: 1, connect_refused: 1 });
  });

  test('socks5 with credentials from stdin', async () => {
    const input = `u:p@127.0.0.1:${socks.port}\n127.0.0.1:${socks.port}:u:wrong\n`;
    const { code, lines } = await run(['-', '--type', 'socks5', '--timeout', '1500', '--allow-private'], input);
    expect(code).toBe(0);
    const summary = lines.pop()!.summary as Record<string, unknown>;
    expect(summary).toMatchObject({ total: 2, working: 1, failed: 1, type: 'socks5' });
    expect(lines.find((l) => l.status === 'working')).toMatchObject({ anonymity: 'elite' });
    expect(lines.find((l) => l.status === 'failed')).toMatchObject({ error: { code: 'auth_required' } });
  });

  test('without --allow-private loopback proxies are refused as blocked_target', async () => {
    const before = elite.accepted();
    const { code, lines } = await run(['-', '--timeout', '1000'], `127.0.0.1:${elite.port}\n`);
    expect(code).toBe(0);
    expect(lines[0]).toMatchObject({ status: 'failed', error: { code: 'blocked_target' } });
    expect(elite.accepted()).toBe(before); // refused before any connection
  });

  test('usage errors exit 2 with the usage text', async () => {
    for (const args of [[], ['a.txt', 'b.txt'], ['x.txt', '--type', 'ftp'], ['x.txt', '--timeout', 'soon'], ['x.txt', '--bogus']]) {
      const r = await run(args);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('usage:');
    }
    const missing = await run([join(tmp, 'nope.txt')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('cannot read');
  });
});
