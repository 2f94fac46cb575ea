/**
 * Targets in pools (issue 33, DECISIONS "Targets in pools") in the running
 * service: a local site (127.0.0.1, port 0) refuses requests carrying
 * X-Forwarded-For. A pool of an elite and a transparent proxy with that site
 * as its target: both are `working` (the judge check), only the elite one
 * passes the target; `?target=`, `counts.targets` and the gateway's
 * `-target-<name>` agree; a PATCHed target takes effect from each proxy's
 * next check; bad input is a clear 400.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startHttpProxy } from '../fixtures/fake-proxies';
import type { FakeServer } from '../fixtures/fake-servers';
import { haveChromium, launchChromium, see } from '../helpers/browser';
import { runCli } from '../helpers/cli';
import { curl } from '../helpers/gateway';
import { call, startTestService, type TestService } from '../helpers/service';

let t: TestService;
let elite: FakeServer;
let transparent: FakeServer;
let site: Server;
let siteUrl = '';
/** X-Forwarded-For of each request the site saw (null: none). */
const seen: (string | null)[] = [];

beforeAll(async () => {
  t = await startTestService({ GATEWAY_PORT: '0', POOL_MIN_INTERVAL_S: '1', POOL_FLUSH_S: '1', RATE_LIMIT_PER_S: '100000' });
  elite = await startHttpProxy();
  transparent = await startHttpProxy({ addHeaders: (ip) => [['X-Forwarded-For', ip]] });
  site = createServer((req, res) => {
    const xff = req.headers['x-forwarded-for'];
    seen.push(typeof xff === 'string' ? xff : null);
    if (xff !== undefined) {
      res.writeHead(403, { 'content-type': 'text/plain' }).end('proxies not welcome\n');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' }).end('welcome to the shop\n');
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', () => r()));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await elite?.close();
  await transparent?.close();
  await new Promise<void>((r) => (site ? site.close(() => r()) : r()));
}, 30_000);

const headers = () => ({ 'x-api-key': t.key });
const get = (path: string) => call(`${t.url}${path}`, { headers: headers() });

async function until<T>(what: string, f: () => Promise<T | null>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== null) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}

interface TargetState {
  ok: boolean;
  status: number | null;
  responseTime: string | null;
  last_checked_at: string | null;
  uptime_h24: number | null;
}
interface ProxyObject {
  proxy: { port: number };
  status: string;
  anonymity: string | null;
  targets?: Record<string, TargetState>;
}

const byPort = (list: ProxyObject[]) => new Map(list.map((p) => [p.proxy.port, p]));

describe('targets in pools', () => {
  let id = '';

  test('a transparent proxy is working but fails the site; an elite one passes; ?target=, counts.targets and the gateway agree', async () => {
    const created = await call(`${t.url}/pools`, {
      method: 'POST',
      headers: headers(),
      json: { name: 'shop', interval_s: 1, proxies: [`127.0.0.1:${elite.port}`, `127.0.0.1:${transparent.port}`], customUrls: [{ url: `${siteUrl}/`, requiredText: 'welcome' }] },
    });
    expect(created.status).toBe(201);
    id = created.body.id as string;
    // the name made from the host
    expect(created.body.customUrls).toEqual([{ name: '127-0-0-1', url: `${siteUrl}/`, requiredStatusCodes: [200], requiredText: 'welcome', caseSensitive: false }]);

    const all = await until('both proxies checked against the target', async () => {
      const r = await get(`/pools/${id}/proxies?status=all`);
      const list = r.body.proxies as ProxyObject[];
      return list.length === 2 && list.every((p) => p.targets?.['127-0-0-1']?.last_checked_at != null) ? byPort(list) : null;
    });
    const e = all.get(elite.port)!;
    const tr = all.get(transparent.port)!;
    expect({ status: e.status, anonymity: e.anonymity }).toEqual({ status: 'working', anonymity: 'elite' });
    expect({ status: tr.status, anonymity: tr.anonymity }).toEqual({ status: 'working', anonymity: 'transparent' });
    expect(e.targets!['127-0-0-1']).toMatchObject({ ok: true, status: 200 });
    expect(e.targets!['127-0-0-1']!.uptime_h24).toBeGreaterThan(0);
    expect(tr.targets!['127-0-0-1']).toMatchObject({ ok: false, status: 403, uptime_h24: 0 });

    const only = await get(`/pools/${id}/proxies?target=127-0-0-1`);
    expect(only.status).toBe(200);
    expect((only.body.proxies as ProxyObject[]).map((p) => p.proxy.port)).toEqual([elite.port]);
    const txt = await fetch(`${t.url}/pools/${id}/proxies?target=127-0-0-1&format=txt`, { headers: headers() });
    expect(await txt.text()).toBe(`127.0.0.1:${elite.port}\n`);
    const pool = await get(`/pools/${id}`);
    expect(pool.body.counts).toMatchObject({ total: 2, working: 2, targets: { '127-0-0-1': 1 } });

    // the gateway: -target-<name> only over the elite one (the site never sees a forwarded address); without it, both
    const gw = t.service.gatewayPort as number;
    const through = (user: string) => curl(['-x', `http://${user}:${t.key}@127.0.0.1:${gw}`, `${siteUrl}/via`]);
    seen.length = 0;
    for (let i = 0; i < 4; i++) expect((await through(`pool-${id}-target-127-0-0-1`)).status).toBe(200);
    expect(seen).toEqual([null, null, null, null]);
    seen.length = 0;
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await through(`pool-${id}`)).status);
    expect(statuses.sort()).toEqual([200, 200, 403, 403]);
    // a target the pool does not have: no upstream matches
    expect((await through(`pool-${id}-target-nope`)).status).not.toBe(200);
  }, 60_000);

  test('a PATCHed target takes effect from each proxy\'s next check', async () => {
    const patchedAt = Date.now();
    const r = await call(`${t.url}/pools/${id}`, { method: 'PATCH', headers: headers(), json: { customUrls: [{ name: 'shop', url: `${siteUrl}/`, requiredText: 'closed today' }] } });
    expect(r.status).toBe(200);
    expect(r.body.customUrls.map((u: { name: string }) => u.name)).toEqual(['shop']);
    expect(r.body.counts.targets).toEqual({ shop: 0 });
    const all = await until('the new target checked through both', async () => {
      const list = (await get(`/pools/${id}/proxies?status=all`)).body.proxies as ProxyObject[];
      const done = list.every((p) => {
        const at = p.targets?.shop?.last_checked_at;
        return at != null && Date.parse(at) >= patchedAt;
      });
      return done ? byPort(list) : null;
    });
    // the old target is gone; the elite proxy now fails (the text is not there)
    expect(Object.keys(all.get(elite.port)!.targets!)).toEqual(['shop']);
    expect(all.get(elite.port)!.targets!.shop).toMatchObject({ ok: false, status: 200 });
    expect(all.get(transparent.port)!.targets!.shop).toMatchObject({ ok: false, status: 403 });
    expect((await get(`/pools/${id}/proxies?target=shop`)).body.proxies).toEqual([]);
    // back to a passing text: the elite proxy passes again from its next check
    await call(`${t.url}/pools/${id}`, { method: 'PATCH', headers: headers(), json: { customUrls: [{ name: 'shop', url: `${siteUrl}/`, requiredText: 'shop' }] } });
    await until('the elite proxy passes again', async () => {
      const list = (await get(`/pools/${id}/proxies?target=shop`)).body.proxies as ProxyObject[];
      return list.length === 1 && list[0]!.proxy.port === elite.port ? true : null;
    });
  }, 60_000);

  test('the CLI: pool create --target NAME=URL,text=..., pool working --target NAME, pool show', async () => {
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: t.dataDir, XDG_CONFIG_HOME: `${t.dataDir}/cfg`, PROXYCHECK_URL: t.url, PROXYCHECK_API_KEY: t.key };
    const created = await runCli(['--json', 'pool', 'create', 'cli', `127.0.0.1:${elite.port}`, `127.0.0.1:${transparent.port}`, '--interval', '1', '--target', `shop=${siteUrl}/,text=welcome,status=200`], { env });
    expect(created.code, created.stderr).toBe(0);
    const pool = JSON.parse(created.stdout) as { id: string; customUrls: unknown[] };
    expect(pool.customUrls).toEqual([{ name: 'shop', url: `${siteUrl}/`, requiredStatusCodes: [200], requiredText: 'welcome', caseSensitive: false }]);
    const lines = await until('the CLI lists the passing proxy', async () => {
      const r = await runCli(['pool', 'working', pool.id, '--target', 'shop'], { env });
      return r.code === 0 && r.stdout !== '' ? r.stdout : null;
    });
    expect(lines).toBe(`127.0.0.1:${elite.port}\n`);
    const show = await runCli(['pool', 'show', pool.id], { env });
    expect(show.stdout).toContain(`target      shop: ${siteUrl}/ (200, "welcome"): 1 working pass it`);
    const unknown = await runCli(['pool', 'working', pool.id, '--target', 'nope'], { env });
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('the pool has no target "nope"');
    expect((await call(`${t.url}/pools/${pool.id}`, { method: 'DELETE', headers: headers() })).status).toBe(204);
  }, 60_000);

  test.skipIf(!haveChromium())('the dashboard: a column per target and the Target filter in the pool\'s proxies table', async () => {
    const browser = await launchChromium({ width: 1280, height: 900 });
    try {
      browser.ctx.setDefaultTimeout(8000);
      const page = browser.ctx.pages()[0] ?? (await browser.ctx.newPage());
      const problems: string[] = [];
      page.on('pageerror', (e) => problems.push(e.message));
      await page.goto(`${t.url}/app#/pools/${id}`);
      await page.fill('#key', t.key);
      await page.click('#signin-submit');
      await see(page.locator('#pool-proxies thead th', { hasText: 'Target shop' })).toHaveCount(1);
      expect(await page.$$eval('#pf-target option', (os) => os.map((o) => o.textContent))).toEqual(['Any', 'shop']);
      await page.selectOption('#pf-status', '');
      await see(page.locator('#pool-proxies tbody tr')).toHaveCount(2);
      await see(page.locator('#pool-proxies tbody .badge', { hasText: 'passes 200' })).toHaveCount(1);
      await see(page.locator('#pool-proxies tbody .badge', { hasText: 'fails 403' })).toHaveCount(1);
      await page.selectOption('#pf-target', 'shop');
      await see(page.locator('#pool-proxies tbody tr')).toHaveCount(1);
      await see(page.locator('#pool-proxies tbody tr td.mono')).toHaveText(`127.0.0.1:${elite.port}`);
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 60_000);

  test('bad input: a clear 400 for each new field', async () => {
    const post = (customUrls: unknown) => call(`${t.url}/pools`, { method: 'POST', headers: headers(), json: { name: 'x', proxies: ['127.0.0.1:9'], customUrls } });
    expect((await post([{ url: `${siteUrl}/`, name: 'Shop' }])).body).toEqual({ error: 'Invalid request', message: 'customUrls[0].name: expected 1 to 32 of a-z, 0-9 and -' });
    expect((await post([{ url: `${siteUrl}/`, name: 'a' }, { url: `${siteUrl}/b`, name: 'a' }])).body).toEqual({ error: 'Invalid request', message: 'customUrls[1].name: "a" given twice' });
    const patch = await call(`${t.url}/pools/${id}`, { method: 'PATCH', headers: headers(), json: { customUrls: 'x' } });
    expect({ status: patch.status, body: patch.body }).toEqual({ status: 400, body: { error: 'Invalid request', message: 'customUrls: expected an array of objects' } });
    const unknown = await get(`/pools/${id}/proxies?target=nope`);
    expect({ status: unknown.status, body: unknown.body }).toEqual({ status: 400, body: { error: 'Invalid request', message: 'target: the pool has no target "nope" (its targets: shop)' } });
    const malformed = await get(`/pools/${id}/proxies?target=NO_PE`);
    expect({ status: malformed.status, body: malformed.body }).toEqual({ status: 400, body: { error: 'Invalid request', message: 'target: expected a target name (1 to 32 of a-z, 0-9 and -)' } });
  });
});
