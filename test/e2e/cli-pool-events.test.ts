/**
 * `proxycheck pool watch` and `proxycheck pool gateway` as subprocesses
 * against the real service (GATEWAY_PORT=0):
 * - watch: the pool's events as lines (published through the service's
 *   PoolEventsPort as the rounds do, and the owner's pause), --json as one
 *   event per line; the pool deleted ends it with exit 0; another account's
 *   pool exit 5.
 * - gateway: the http:// and socks5:// URLs with the gateway's address from
 *   /health and the key; its options in the username; --json; the printed
 *   URL works with curl through the pool's working proxy (a fake HTTP proxy
 *   seeded as working in the store: the service's gateway over a real pool);
 *   another account's pool exit 5; a service without a gateway exit 5.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { proxyEvent } from '../../src/pools/events';
import { REPO, runCli } from '../helpers/cli';
import { curl, startTarget, type Target } from '../helpers/gateway';
import { seedVerdicts, working } from '../helpers/pool-seed';
import { call, startTestService, type TestService } from '../helpers/service';
import { startHttpProxy } from '../fixtures/fake-proxies';
import type { FakeServer } from '../fixtures/fake-servers';

let t: TestService;
let dir: string;
let otherKey = '';
let proxy: FakeServer;
let target: Target;

beforeAll(async () => {
  t = await startTestService({ GATEWAY_PORT: '0', RATE_LIMIT_PER_S: '100000' });
  dir = mkdtempSync(join(tmpdir(), 'pc-cli-pool-events-'));
  const admin = { Authorization: `Bearer ${t.service.config.http.adminToken}` };
  otherKey = (await call(`${t.adminUrl}/admin/create-account`, { method: 'POST', headers: admin, json: { email: 'other@example.com', checks: 10 } })).body.apiKey;
  proxy = await startHttpProxy();
  target = startTarget();
}, 60_000);
afterAll(async () => {
  await t?.stop();
  await proxy?.close();
  await target?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 30_000);

const env = (key = t.key, url = t.url) => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, XDG_CONFIG_HOME: join(dir, 'cfg'), PROXYCHECK_URL: url, PROXYCHECK_API_KEY: key });

async function newPool(proxies: string[]): Promise<string> {
  const r = await call(`${t.url}/pools`, { method: 'POST', headers: { 'x-api-key': t.key }, json: { name: 'cli', proxies } });
  expect(r.status).toBe(201);
  return r.body.id as string;
}

async function until(what: string, f: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

/** `proxycheck ...args` running in the background; its output as it comes. */
function spawnCli(args: string[]) {
  const child = Bun.spawn([process.execPath, 'src/cli/main.ts', ...args], { cwd: REPO, env: env(), stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' });
  const out = { stdout: '', stderr: '' };
  const pump = async (s: ReadableStream<Uint8Array>, k: 'stdout' | 'stderr') => {
    const d = new TextDecoder();
    for await (const chunk of s) out[k] += d.decode(chunk, { stream: true });
  };
  const done = Promise.all([pump(child.stdout, 'stdout'), pump(child.stderr, 'stderr')]);
  return { child, out, done };
}

const COUNTS = { total: 1, working: 0, failed: 1, unchecked: 0 };

describe('proxycheck pool watch', () => {
  test('a line per event until the pool is deleted (exit 0); --json one event per line', async () => {
    const id = await newPool(['10.9.0.1:8080']);
    const account = (await call(`${t.url}/me`, { headers: { 'x-api-key': t.key } })).body.user.id as string;
    const human = spawnCli(['pool', 'watch', id]);
    const json = spawnCli(['--json', 'pool', 'watch', id]);
    try {
      // both sockets open (the service's feed is the embedded PoolEventsHub)
      await until('two subscribers', () => (t.service.poolEvents as unknown as { subscribers: number }).subscribers === 2);
      await until('the banner', () => human.out.stderr.includes(`Watching pool ${id} (cli): 0 of 1 working. Ctrl-C to stop.`));
      t.service.poolEvents.publish(account, proxyEvent(id, 'proxy.down', Date.UTC(2026, 10, 26, 12), { host: '10.9.0.1', port: 8080 }, COUNTS, { error: { code: 'timeout', message: 'no answer' } }));
      expect((await call(`${t.url}/pools/${id}`, { method: 'PATCH', headers: { 'x-api-key': t.key }, json: { state: 'paused' } })).status).toBe(200);
      await until('two lines', () => human.out.stdout.split('\n').length >= 3 && json.out.stdout.split('\n').length >= 3);
      expect((await call(`${t.url}/pools/${id}`, { method: 'DELETE', headers: { 'x-api-key': t.key } })).status).toBe(204);
      expect(await human.child.exited).toBe(0);
      expect(await json.child.exited).toBe(0);
      await Promise.all([human.done, json.done]);
      const lines = human.out.stdout.trimEnd().split('\n');
      expect(lines[0]?.replace(/\s+/g, ' ')).toBe('2026-11-26 12:00:00 down 10.9.0.1:8080 timeout: no answer working 0/1');
      expect(lines[1]).toMatch(/ paused +by its owner +working 0\/1$/);
      expect(human.out.stderr).toContain(`Pool ${id} was deleted.`);
      const events = json.out.stdout.trimEnd().split('\n').map((l) => JSON.parse(l));
      expect(events.map((e) => e.event)).toEqual(['proxy.down', 'pool.paused']);
      expect(json.out.stderr).toBe('');
    } finally {
      human.child.kill();
      json.child.kill();
    }
  }, 30_000);

  test('another account\'s pool: exit 5, nothing on standard output', async () => {
    const id = await newPool(['10.9.0.2:8080']);
    const r = await runCli(['pool', 'watch', id], { env: env(otherKey) });
    expect([r.code, r.stdout]).toEqual([5, '']);
  });
});

describe('proxycheck pool gateway', () => {
  test('the URLs from /health and the key; options in the username; --json; curl through the printed URL reaches the pool\'s working proxy', async () => {
    const id = await newPool([`127.0.0.1:${proxy.port}`]);
    await seedVerdicts(t.service.database.db, id, { poolType: 'http', intervalS: 600, nowMs: Date.now(), plan: () => [{ probe: working(5) }] });
    const port = t.service.gatewayPort as number;
    const r = await runCli(['pool', 'gateway', id], { env: env() });
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toBe(`http://pool-${id}:${t.key}@127.0.0.1:${port}\nsocks5://pool-${id}:${t.key}@127.0.0.1:${port}\n`);
    const opts = await runCli(['--json', 'pool', 'gateway', id, '--country', 'de', '--session', 'abc'], { env: env() });
    expect(JSON.parse(opts.stdout)).toEqual({
      http: `http://pool-${id}-country-DE-session-abc:${t.key}@127.0.0.1:${port}`,
      socks5: `socks5://pool-${id}-country-DE-session-abc:${t.key}@127.0.0.1:${port}`,
    });
    const through = await curl(['-x', r.stdout.split('\n')[0] as string, `${target.url}/via-gateway`]);
    expect({ exit: through.exit, status: through.status }).toEqual({ exit: 0, status: 200 });
    expect(through.headers.get('x-gateway-upstream')).toBe(`127.0.0.1:${proxy.port}`);
    expect(target.seen.some((s) => s.path === '/via-gateway')).toBe(true);
  });

  test('another account\'s pool exit 5; a service without a gateway exit 5 naming GATEWAY_PORT', async () => {
    const id = await newPool(['10.9.0.3:8080']);
    expect((await runCli(['pool', 'gateway', id], { env: env(otherKey) })).code).toBe(5);
    const plain = await startTestService();
    try {
      const made = await call(`${plain.url}/pools`, { method: 'POST', headers: { 'x-api-key': plain.key }, json: { name: 'x', proxies: ['10.9.0.4:8080'] } });
      const r = await runCli(['pool', 'gateway', made.body.id as string], { env: env(plain.key, plain.url) });
      expect(r.code).toBe(5);
      expect(r.stderr).toContain('runs no gateway');
      expect(r.stderr).toContain('GATEWAY_PORT');
    } finally {
      await plain.stop();
    }
  }, 60_000);
});
