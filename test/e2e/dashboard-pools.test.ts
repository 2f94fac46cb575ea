/**
 * The dashboard's Pools page in headless Chromium (Debian's `chromium`,
 * playwright-core), against the real service on 127.0.0.1: an empty list,
 * the create form (its checks, then a pool from a pasted list), the pool's
 * cards and proxies over verdicts written as the rounds will write them
 * (test/helpers/pool-seed.ts): status, uptime 24 h / 7 d, latency, last
 * change; the filters, sort and pages; the TXT / CSV / JSON downloads of
 * the listing (every page); the protocol column; the gateway's URLs; the
 * warnings of a PATCH answer; pause, resume and delete (two clicks); a phone
 * width; no console error, every request to the service itself.
 *
 * Without /usr/bin/chromium the file registers one test that says so
 * (test/helpers/browser.ts). DASHBOARD_SCREENSHOTS=<dir> also saves the
 * pictures of docs/DASHBOARD.md (`npm run screenshots`).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { haveChromium, launchChromium, reportNoBrowser, see, type Browser } from '../helpers/browser';
import { proxyEvent, resumedEvent } from '../../src/pools/events';
import { failed, seedVerdicts, working } from '../helpers/pool-seed';
import { startTestService, type TestService } from '../helpers/service';

const SHOTS = process.env.DASHBOARD_SCREENSHOTS;
/** Public test addresses (RFC 5737) with made-up places, as the results screenshot uses: nothing is probed. */
const PLACES = [
  { country: 'DE', country_name: 'Germany', location: 'Frankfurt am Main', isp: 'Example Hosting', asn: 64500, coordinates: null },
  { country: 'US', country_name: 'United States', location: 'Ashburn', isp: 'Example Cloud', asn: 64501, coordinates: null },
  { country: 'NL', country_name: 'Netherlands', location: 'Amsterdam', isp: 'Example Transit', asn: 64502, coordinates: null },
  { country: 'JP', country_name: 'Japan', location: 'Tokyo', isp: 'Example Mobile', asn: 64503, coordinates: null },
];

if (!haveChromium()) {
  reportNoBrowser('dashboard pools e2e');
} else {
  describe('the Pools page in Chromium', () => {
    let t: TestService;
    let browser: Browser;
    let page: Page;
    let poolId = '';
    const problems: string[] = [];
    const foreign: string[] = [];

    const shot = async (name: string, fullPage = false) => {
      if (!SHOTS) return;
      mkdirSync(SHOTS, { recursive: true });
      await page.screenshot({ path: join(SHOTS, `dashboard-${name}.png`), fullPage });
    };
    const proxyRows = () => page.locator('#pool-proxies tbody tr');
    /** After a filter, sort or page change: the listing asked for last has been drawn. */
    const drawn = () => page.locator('#pool-proxies tbody[aria-busy="false"]').waitFor({ state: 'attached' });
    const cells = (i: number) => page.$$eval(`#pool-proxies tbody tr td:nth-child(${i})`, (tds) => tds.map((td) => td.textContent ?? ''));

    beforeAll(async () => {
      // a balance that covers the pools' schedules: a warning shows only where the test makes one
      t = await startTestService({ POOL_MIN_INTERVAL_S: '60', POOL_ROUNDS: 'false' /* verdicts seeded, none checked */, GATEWAY_PORT: '0', BOOTSTRAP_CHECKS: '1000000' });
      browser = await launchChromium({ width: 1280, height: 900 });
      browser.ctx.setDefaultTimeout(8000);
      page = browser.ctx.pages()[0] ?? (await browser.ctx.newPage());
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(`console: ${m.text()}`);
      });
      page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
      page.on('request', (r) => {
        const u = r.url();
        const host = new URL(t.url).host;
        if (!(u.startsWith(`http://${host}/`) || u.startsWith('blob:') || u.startsWith('data:'))) foreign.push(u);
      });
      await page.goto(`${t.url}/app#/pools`);
      await page.fill('#key', t.key);
      await page.click('#signin-submit');
      await page.locator('#pools-h').waitFor();
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
      await t?.stop();
    }, 30_000);

    test('no pools yet; the form says what is missing; a pool from a pasted list opens with its proxies', async () => {
      expect(await page.title()).toBe('Pools · Proxy checker');
      expect(await page.getAttribute('a[data-route="pools"]', 'aria-current')).toBe('page');
      await see(page.locator('#pools-empty')).toBeVisible();
      await see(page.locator('#pool-region option')).toHaveCount(19);
      await page.click('#pool-create');
      await see(page.locator('#pool-form-error')).toHaveText('Give the pool a name.');
      expect(await page.getAttribute('#pool-name', 'aria-invalid')).toBe('true');
      await page.fill('#pool-name', 'scraper list');
      await page.click('#pool-create');
      await see(page.locator('#pool-form-error')).toHaveText('Paste at least one proxy, one per line.');
      const list = [
        '# from the provider',
        ...Array.from({ length: 56 }, (_, i) => `203.0.113.${i + 1}:${8000 + i}`),
        'user:secret@198.51.100.7:3128',
        '198.51.100.8:1080:bob:pw',
        '203.0.113.1:8000',
        'not a proxy',
      ].join('\n');
      await page.fill('#pool-proxies-text', list);
      await page.fill('#pool-interval', '300');
      await page.click('#pool-create');
      await page.waitForURL(/#\/pools\/[a-z0-9]{20}$/);
      poolId = /#\/pools\/([a-z0-9]{20})$/.exec(page.url())![1]!;
      await see(page.locator('#pool-created')).toHaveText('Created “scraper list” with 58 proxies (2 invalid or duplicate lines skipped).');
      await see(page.locator('#pools-table tbody tr')).toHaveCount(1);
      await see(page.locator('#pool-h')).toHaveText('scraper list');
      await see(page.locator('#pool-cards')).toContainText('0 of 58');
      await see(page.locator('#pool-cards')).toContainText('5 min (http, us1)');
      // working is the default filter: none has been checked yet
      await see(proxyRows()).toHaveText('No proxies match these filters.');
      await page.selectOption('#pf-status', 'unchecked');
      await see(proxyRows()).toHaveCount(50);
      await see(page.locator('#pp-count')).toHaveText('Proxies 1 to 50 (more on the next page)');
      expect(problems).toEqual([]);
    });

    test('over verdicts: status, uptime, latency, last change; filters, sort and pages', async () => {
      const now = Date.now();
      // a week of checks, one every 6 hours: most up, some flaky, five dead since the last day, two never checked
      await seedVerdicts(t.service.database.db, poolId, {
        poolType: 'http',
        intervalS: 300,
        nowMs: now,
        stepMs: 6 * 3_600_000,
        plan: (row, i) => {
          if (i >= 56) return null;
          const place = PLACES[i % PLACES.length]!;
          const anonymity = i % 5 === 0 ? 'transparent' : i % 3 === 0 ? 'anonymous' : 'elite';
          return Array.from({ length: 28 }, (_, k) => {
            const dead = i % 11 === 4 && k >= 25;
            const flaky = i % 4 === 1 && k % 3 === 1;
            return { probe: dead || flaky ? failed() : working(60 + ((i * 37) % 400) + (k % 5) * 3, { anonymity, https: i % 2 === 0, origin: row.host }), geo: place };
          });
        },
      });
      await page.reload();
      await page.locator('#pool-detail:not([hidden])').waitFor();
      await see(page.locator('#pool-cards .card').first().locator('dd')).toHaveText('51 of 58');
      await see(page.locator('#pool-cards')).toContainText('Failed5');
      await see(proxyRows()).toHaveCount(50);
      const latency = (await cells(6)).map((s) => Number.parseInt(s, 10));
      expect(latency).toEqual([...latency].sort((a, b) => a - b));
      expect(new Set(await cells(2))).toEqual(new Set(['working']));
      // the protocol column: what each passed as
      expect(new Set(await cells(3))).toEqual(new Set(['http']));
      await see(page.locator('#pp-count')).toHaveText('Proxies 1 to 50 (more on the next page)');
      await shot('pools');
      await page.click('#pp-next');
      await see(proxyRows()).toHaveCount(1);
      await see(page.locator('#pp-count')).toHaveText('Proxies 51 to 51');
      expect(await page.isDisabled('#pp-next')).toBe(true);
      await page.click('#pp-prev');
      await see(proxyRows()).toHaveCount(50);
      expect(await page.isDisabled('#pp-prev')).toBe(true);

      // the flaky ones show below 100 % over 24 h and 7 days; sorting by uptime puts the steady ones first
      await page.selectOption('#pf-sort', 'uptime');
      await drawn();
      await see(proxyRows()).toHaveCount(50);
      const h24 = (await cells(4)).map((s) => Number.parseFloat(s));
      expect(h24).toEqual([...h24].sort((a, b) => b - a));
      expect(h24[0]).toBe(100);
      expect(h24.at(-1)).toBeLessThan(100);
      // the dead ones: failed, with the error and when they went down
      await page.selectOption('#pf-status', 'failed');
      await drawn();
      await see(proxyRows()).toHaveCount(5);
      await see(proxyRows().first().locator('td.err')).toContainText('timeout');
      expect(new Set(await cells(7))).toEqual(new Set(['12 h ago']));
      // country and anonymity filters
      await page.selectOption('#pf-status', 'working');
      await page.fill('#pf-country', 'de');
      await page.locator('#pf-country').dispatchEvent('change');
      await page.selectOption('#pf-anon', 'elite');
      await drawn();
      const rows = await proxyRows().count();
      expect(rows).toBeGreaterThan(0);
      expect(new Set(await cells(8))).toEqual(new Set(['Germany']));
      expect(new Set(await cells(9))).toEqual(new Set(['elite']));
      expect(problems).toEqual([]);
    });

    test('downloads of the listing with its filters: TXT (as given, credentials kept), CSV, JSON', async () => {
      await page.fill('#pf-country', '');
      await page.locator('#pf-country').dispatchEvent('change');
      await page.selectOption('#pf-anon', '');
      await page.selectOption('#pf-status', '');
      const [txt] = await Promise.all([page.waitForEvent('download'), page.click('#pd-txt')]);
      expect(txt.suggestedFilename()).toBe('scraper-list-all.txt');
      const lines = readFileSync((await txt.path())!, 'utf8').split('\n').filter((l) => l !== '');
      expect(lines).toHaveLength(58);
      expect(lines).toContain('user:secret@198.51.100.7:3128');
      expect(lines).toContain('198.51.100.8:1080:bob:pw');
      await page.selectOption('#pf-status', 'working');
      const [csv] = await Promise.all([page.waitForEvent('download'), page.click('#pd-csv')]);
      const rows = readFileSync((await csv.path())!, 'utf8').split('\r\n').filter((l) => l !== '');
      expect(rows[0]).toStartWith('proxy_host,proxy_port,');
      expect(rows).toHaveLength(52);
      const [json] = await Promise.all([page.waitForEvent('download'), page.click('#pd-json')]);
      const body = JSON.parse(readFileSync((await json.path())!, 'utf8')) as { proxies: { status: string }[] };
      expect(body.proxies).toHaveLength(51);
      expect(new Set(body.proxies.map((p) => p.status))).toEqual(new Set(['working']));
    });

    test('live events: an event of the open pool shows at once in the list, the cards and the pools table', async () => {
      await page.goto(`${t.url}/app#/pools/${poolId}`);
      await page.locator('#pool-detail:not([hidden])').waitFor();
      await see(page.locator('#pool-live-state')).toHaveText('(live)');
      await see(page.locator('#pool-live-empty')).toBeVisible();
      const me = (await (await fetch(`${t.url}/me`, { headers: { 'X-API-Key': t.key } })).json()) as { user: { id: string } };
      const counts = { total: 60, working: 7, failed: 50, unchecked: 3 };
      t.service.poolEvents.publish(
        me.user.id,
        proxyEvent(poolId, 'proxy.down', Date.now(), { host: '192.0.2.9', port: 8080 }, counts, { error: { code: 'timeout', message: 'no answer within 5000 ms' } }),
      );
      await see(page.locator('#pool-events li')).toHaveCount(1);
      await see(page.locator('#pool-events li')).toContainText('192.0.2.9:8080 is down: no answer within 5000 ms');
      expect(await page.locator('#pool-live-empty').isHidden()).toBe(true);
      await see(page.locator(`#pools-table tr[data-pool="${poolId}"]`)).toContainText('7');
      t.service.poolEvents.publish(me.user.id, resumedEvent(poolId, Date.now(), counts));
      await see(page.locator('#pool-events li')).toHaveCount(2);
      await see(page.locator('#pool-events li').first()).toContainText('Resumed');
      await shot('pool-live');
      expect(problems).toEqual([]);
    });

    test("the pool's gateway URLs, as `proxycheck pool gateway` prints them", async () => {
      const health = (await (await fetch(`${t.url}/health`)).json()) as { gateway: { host: string | null; port: number } };
      await see(page.locator('#pool-gateway')).toBeVisible();
      await page.click('#pool-gateway summary');
      const host = health.gateway.host ?? '127.0.0.1';
      await see(page.locator('#pool-gw-http')).toHaveText(`http://pool-${poolId}:${t.key}@${host}:${health.gateway.port}`);
      await see(page.locator('#pool-gw-socks5')).toHaveText(`socks5://pool-${poolId}:${t.key}@${host}:${health.gateway.port}`);
      await page.click('#pool-gateway summary');
    });

    test("a create or PATCH answer's warnings (balance_runs_out) show in a banner until the next change", async () => {
      const warning = { code: 'balance_runs_out', message: 'These pools cost about 7,500 checks a day; the balance of 1,000 lasts about 3 hours.', hours_left: 3.2 };
      // the answer as the service gives it when the schedule costs more than the balance
      await page.route(`**/pools/${poolId}`, async (route) => {
        if (route.request().method() !== 'PATCH') return route.fallback();
        const res = await route.fetch();
        await route.fulfill({ response: res, json: { ...((await res.json()) as object), warnings: [warning] } });
      });
      const row = page.locator(`#pools-table tr[data-pool="${poolId}"]`);
      await row.locator('button[data-act="pause"]').click();
      await see(page.locator('#pool-warnings')).toBeVisible();
      await see(page.locator('#pool-warnings li')).toHaveText(warning.message);
      await page.unroute(`**/pools/${poolId}`);
      await row.locator('button[data-act="resume"]').click();
      await see(row.locator('.badge')).toHaveText('Active');
      await page.locator('#pool-warnings').waitFor({ state: 'hidden' });
      expect(problems).toEqual([]);
    });

    test('pause, resume, and delete in two clicks', async () => {
      const row = page.locator(`#pools-table tr[data-pool="${poolId}"]`);
      await row.locator('button[data-act="pause"]').click();
      await see(row.locator('.badge')).toHaveText('Paused');
      await see(page.locator('#pool-cards')).toContainText('StatePaused');
      await row.locator('button[data-act="resume"]').click();
      await see(row.locator('.badge')).toHaveText('Active');
      // a second pool, deleted from the list
      await page.fill('#pool-name', 'spare');
      await page.fill('#pool-proxies-text', '192.0.2.1:80\n');
      await page.click('#pool-create');
      await see(page.locator('#pools-table tbody tr')).toHaveCount(2);
      await shot('pools-list');
      const spare = page.locator('#pools-table tr', { hasText: 'spare' });
      await spare.locator('button[data-act="delete"]').click();
      await see(spare.locator('button[data-act="delete"]')).toHaveText('Delete? Click again');
      await see(page.locator('#pools-table tbody tr')).toHaveCount(2);
      await spare.locator('button[data-act="delete"]').click();
      await see(page.locator('#pools-table tbody tr')).toHaveCount(1);
      await page.waitForURL(/#\/pools$/);
      expect(await page.locator('#pool-detail').isHidden()).toBe(true);
      expect(problems).toEqual([]);
      expect(foreign).toEqual([]);
    });

    test('phone width: the list and a pool fit', async () => {
      await page.setViewportSize({ width: 390, height: 844 });
      await page.goto(`${t.url}/app#/pools/${poolId}`);
      await page.locator('#pool-detail:not([hidden])').waitFor();
      await see(proxyRows()).toHaveCount(50);
      const size = await page.evaluate(() => {
        const el = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }).document.documentElement;
        return { scroll: el.scrollWidth, client: el.clientWidth };
      });
      expect(size.scroll).toBeLessThanOrEqual(size.client + 1);
      await shot('phone-pools');
      await page.setViewportSize({ width: 1280, height: 900 });
      expect(problems).toEqual([]);
    }, 20_000);
  });
}
